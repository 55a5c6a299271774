"""The verdict's schema (version 4), as :func:`judgekit.verdict.read.validate_verdict` reads it:
strict types (no coercion), no unknown or missing keys, finite numbers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: a check's, a judge's and the verdict's state
State = Literal["pass", "fail", "inconclusive"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Number = Annotated[float, Field(allow_inf_nan=False)]


class Budget(_Strict):
    """The label budget of an inconclusive check or judge: about how many more human-rated
    items (``items``; None when more labels would not decide it at the current estimate) and
    per slice (``slices``, ``"by=key"`` → items) would likely decide it, in one ``sentence``."""

    items: Annotated[int, Field(ge=0)] | None
    slices: dict[str, Annotated[int, Field(ge=0)]]
    sentence: str = Field(min_length=1)
    #: the need in the unit its check counts (conversations, items judged …), and that unit
    need: Annotated[int, Field(ge=0)] | None
    unit: str | None


class CheckV4(_Strict):
    """One check as :func:`judgekit.verdict.check.check_json` writes it."""

    name: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    rule: Literal["point>=", "ci>=", "ci<="]
    metric: str | None
    #: what it is about (:class:`judgekit.verdict.check.Subject`): only the keys it has
    subject: dict[str, str]
    state: State
    passed: bool
    figure: Number | None
    threshold: Number | None
    ci: Annotated[list[Number], Field(min_length=2, max_length=2)] | None
    ci_method: str | None
    ci_level: Annotated[float, Field(gt=0, lt=1)] | None
    n: Annotated[int, Field(ge=0)] | None
    unit: str = Field(min_length=1)
    min_n: Annotated[int, Field(ge=0)] | None
    undefined: str | None
    detail: str
    budget: Budget | None


class FigureCert(_Strict):
    """Whether a verdict certifies a figure for a judge (:mod:`judgekit.verdict.certify`): its
    state and one sentence (what would establish it when it is not), and its state per model
    (absent in verdicts written before it)."""

    state: State
    sentence: str = Field(min_length=1)
    models: dict[str, State] | None = None


class JudgeV4(_Strict):
    judge: str = Field(min_length=1)
    state: State
    passed: bool
    checks: list[CheckV4]
    budget: Budget | None
    spec: str | None
    params: dict[str, Any] | None
    judge_hash: str = Field(min_length=1)
    judge_ratings_hash: str = Field(min_length=1)
    #: where the judge's ratings came from, ``{group: digest}`` (:mod:`judgekit.store.provenance`;
    #: an optional key of version 3: a verdict without it is refused as made by an older judgekit)
    provenance: dict[str, str] | None = None
    #: the one source of its ratings the gate certified (``panel``, ``import:<id>``; a derived
    #: rater's ``panel aggregate``): :mod:`judgekit.gate.provenance`; absent when it found more than
    #: one (the judge then has a failing ``one_provenance`` check) or in a verdict written before
    source: str | None = None
    #: per figure of ``analysis_fidelity``: computed once by the gate and stored; reading a verdict
    #: checks them against its checks (:func:`judgekit.verdict.certify.certify`)
    figures: dict[str, FigureCert] | None = None
    #: one sentence per policy check that cannot apply to the judge (a derived rater's call rates;
    #: :func:`judgekit.gate.checks.not_applied`); absent when every check applies
    not_applied: list[str] | None = None


class ViewRef(_Strict):
    """The view a verdict was made under (:mod:`judgekit.rubric.views`): its name and the full
    rubric's id and hash; the verdict's own ``rubric``/``rubric_hash`` are the view's."""

    name: str = Field(min_length=1)
    rubric: str = Field(min_length=1)
    rubric_hash: str = Field(min_length=1)


class VerdictV4(_Strict):
    schema_version: Literal[4]
    judgekit_version: str
    created_at: str
    policy: dict[str, Any]
    policy_hash: str
    rubric: str
    rubric_hash: str
    reference: str
    items_hash: str
    human_ratings_hash: str
    state: State
    passed: bool
    judges: list[JudgeV4] = Field(min_length=1)
    #: only in a verdict whose policy gates under a view (an optional key of version 3)
    view: ViewRef | None = None
    #: ``{metadata column: digest}`` of the items with human or reference ratings
    #: (:func:`judgekit.store.provenance.meta_hashes`; optional in version 3, see ``provenance``)
    meta_hashes: dict[str, str] | None = None
    #: only in a verdict of ``judgekit gate --sequential``: its rounds (:mod:`judgekit.gate.sequential`)
    sequential: dict[str, Any] | None = None
    #: only in a verdict whose policy has ``analysis_fidelity`` with ``analysis: criteria``: criterion
    #: name → the digest of its definition (:func:`judgekit.analysis.criteria.spec.criterion_digest`;
    #: an optional key of version 3: a verdict without it certifies no criterion on its own)
    criteria_digests: dict[str, Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]] | None = None


def criteria_digest_problem(v: dict[str, Any], analysis: str | None) -> str | None:
    """Why verdict ``v`` is inconsistent about ``criteria_digests`` (a phrase), or None: it has the
    key only when its policy's ``analysis_fidelity`` is ``analysis`` ``"criteria"``, with a digest
    for exactly the criteria its judges' fidelity checks are about. (A verdict of such a policy
    without the key was written before judgekit recorded them: it stays readable.)"""
    digests = v.get("criteria_digests")
    if digests is None:
        return "it has 'criteria_digests' set to null" if "criteria_digests" in v else None
    if analysis != "criteria":
        return "it has 'criteria_digests' but its policy has no analysis_fidelity with analysis: criteria"
    for j in v["judges"]:
        checked = {ch["subject"]["criterion"] for ch in j["checks"]
                   if ch["kind"] == "analysis_fidelity" and ch["subject"].get("criterion") is not None}
        if checked != set(digests):
            odd = sorted(set(digests) ^ checked)[0]
            return (f"its criteria_digests and the criteria fidelity checks of judge {j['judge']!r} differ "
                    f"(criterion {odd!r} is in one only)")
    return None


def view_problem(v: dict[str, Any], policy_view: str | None) -> str | None:
    """Why verdict ``v`` is inconsistent about its view (a phrase), or None: it has ``view``
    exactly when its policy gates under one (``policy_view``), naming that view, and its
    ``rubric`` is then the view's id (``<rubric>:<view>``), so it never matches the full rubric."""
    view = v.get("view")
    if policy_view is None:
        return "it has a 'view' but its policy gates under no view" if "view" in v else None
    if view is None:
        return f"its policy gates under the view {policy_view!r} but it has no 'view'"
    if view["name"] != policy_view:
        return f"its view is {view['name']!r} but its policy gates under {policy_view!r}"
    if v["rubric"] != f"{view['rubric']}:{view['name']}":
        return f"its rubric {v['rubric']!r} is not the view {view['rubric']}:{view['name']}"
    return None
