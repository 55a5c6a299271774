"""Gate policies: the YAML file that names the rubric, the judges, the reference and the
thresholds a judge must clear (see :mod:`judgekit.gate.run` for an example and the checks' rules).

Read strictly (unknown keys, duplicate keys and wrong types are one sentence naming the file), and
checked against the store it is applied to (:func:`check_policy_raters`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, model_validator

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Rubric
from judgekit.verdict import policy_rules
from judgekit.verdict.fidelity_policy import AnalysisFidelity
from judgekit.verdict.probe_policy import (
    MaxCovariateEffect,
    MaxFlipRate,
    MaxSelfPreference,
    MinStability,
)

if TYPE_CHECKING:
    import pandas as pd

Metric = Literal["kappa", "weighted_kappa", "alpha", "ac1", "percent_agreement"]


class _Strict(ConfigModel):
    """Unknown keys are errors, values are kept as written or refused (:class:`ConfigModel`)."""


class ClassRecall(_Strict):
    min: float = Field(ge=0, le=1)
    min_support: int = Field(default=10, ge=1)


class PerSlice(_Strict):
    min_items: int = Field(default=30, ge=1)
    min_value: float


class HumanNoise(_Strict):
    margin: float = Field(ge=0)


class MaxAbsBias(_Strict):
    """``max_abs_bias``: the judge's signed bias against the reference (|mean difference| on the
    rubric's values for ordinal/interval rubrics, the largest |difference of a label's share| for
    nominal ones) must stay within ``max``; with ``per_slice`` also in every slice of ``by``
    (slices with fewer than ``min_items`` rated items are inconclusive)."""

    max: float = Field(ge=0)
    per_slice: bool = False
    min_items: int = Field(default=30, ge=1)


class AltTest(_Strict):
    """``alt_test``: the alternative annotator test (:func:`judgekit.agreement.alt_test`); the
    judge passes when its winning rate is at least ``min_winning_rate``."""

    epsilon: float = Field(default=0.2, ge=0, lt=1)
    q: float = Field(default=0.05, gt=0, le=1)
    min_winning_rate: float = Field(default=0.5, ge=0, le=1)
    min_units_per_human: int = Field(default=30, ge=2)


class Checks(_Strict):
    min_items: int | None = Field(default=None, ge=1)
    metric: Metric = "kappa"
    min_value: float | None = None
    min_lower_bound: float | None = None
    max_abstention_rate: float | None = Field(default=None, ge=0, le=1)
    max_error_rate: float | None = Field(default=None, ge=0, le=1)
    min_class_recall: ClassRecall | None = None
    per_slice: PerSlice | None = None
    within_human_noise: HumanNoise | None = None
    min_coverage: float | None = Field(default=None, ge=0, le=1)
    max_abs_bias: MaxAbsBias | None = None
    alt_test: AltTest | None = None
    # the probes (judgekit.probes, docs/probes.md)
    max_covariate_effect: MaxCovariateEffect | None = None
    max_self_preference: MaxSelfPreference | None = None
    min_stability: MinStability | None = None
    max_flip_rate: MaxFlipRate | None = None
    #: the study's figures from the judge vs from the reference (:mod:`judgekit.gate.fidelity`)
    analysis_fidelity: AnalysisFidelity | None = None


#: the largest seed a policy may give (numpy's legacy generators take 32 bits)
MAX_SEED = 2**32 - 1


class Policy(_Strict):
    """A gate policy (see the module docstring)."""

    rubric: str
    #: a view of the rubric (``views:`` in the rubric file) to gate under: the judges' full-rubric
    #: labels are collapsed into it and compared with labels given in the view's codes
    view: str | None = None
    judges: list[str] = Field(min_length=1)
    reference: str | None = None
    humans: list[str] | None = None
    by: list[str] = Field(default_factory=list)
    checks: Checks
    #: check kinds reported but not blocking a figure's certification (:mod:`judgekit.verdict.certify`);
    #: default none: every check is primary
    secondary: list[str] = Field(default_factory=list)
    n_resamples: int = Field(default=1000, ge=100)  # at most policy_rules.MAX_RESAMPLES
    #: numpy's seeds: 0 to 2**32 − 1
    seed: int = Field(default=0, ge=0, le=MAX_SEED)

    _rules = model_validator(mode="after")(policy_rules.validate_policy)


def load_policy(path: str | Path) -> tuple[Policy, dict[str, Any]]:
    """Read and validate a policy file; returns the model and the raw mapping."""
    p = Path(path)
    raw = read_yaml_mapping(p, what="Policy file", expect="rubric, judges and checks")
    try:
        policy = Policy(**raw)
    except ValidationError as exc:
        raise JudgekitError(f"Policy file {p}: {first_error(exc)}.") from None
    return policy, raw


def check_policy_raters(policy: Policy, policy_path: str | Path, store: Any,
                        rubric: Rubric, *, read_items: bool = True) -> pd.DataFrame | None:
    """The policy's ``humans``, ``reference`` and ``by`` must exist in ``store``; otherwise one
    sentence naming the policy file and the key to fix. Returns the items (for slicing) when the
    policy has ``by`` and ``read_items``, else None (on a plain store the checks then read only
    the raters' kinds and the metadata keys, by SQL: :mod:`judgekit.store.digests`)."""
    from judgekit.store import digests

    where = f"Policy file {policy_path}"
    ref = policy.reference
    plain = digests.plain_store(store)
    if policy.humans or ref not in (None, "consensus"):
        if plain:
            kinds = digests.rater_kinds(store, rubric)
        else:
            ratings = store.ratings(rubric=rubric)
            kinds = dict(zip(ratings["rater_id"].astype(str), ratings["rater_kind"], strict=True))
        people = ", ".join(sorted(r for r, k in kinds.items() if k in ("human", "reference"))) or "none"
        for h in policy.humans or []:
            if kinds.get(h) not in ("human", "reference"):
                why = (f"a {kinds[h]} rater, not a human" if h in kinds
                       else f"a rater with no ratings under {rubric.ref} in {store.path}")
                raise JudgekitError(
                    f"{where}: humans names {excerpt(h)}, {why}; fix 'humans' (human raters: {people})."
                )
        if ref is not None and ref != "consensus" and ref not in kinds:
            raise JudgekitError(
                f"{where}: reference {excerpt(ref)} has no ratings under {rubric.ref} in {store.path}; "
                f"fix 'reference' (use one of {people} or 'consensus')."
            )
        policy_rules.check_reference(policy, policy_path, store, rubric)
    if not policy.by:
        return None
    if plain and not read_items:
        keys = digests.meta_keys(store) - {"item_id", "prompt", "messages", "response", "content_hash"}
        if all(col in keys for spec in policy.by for col in spec.split("+")):
            return None
    items = store.items()  # (also for the message: the columns in the frame's order)
    cols = [c for c in items.columns if c not in ("item_id", "prompt", "messages", "response", "content_hash")]
    for spec in policy.by:
        for col in spec.split("+"):
            if col not in cols:
                raise JudgekitError(
                    f"{where}: by names {excerpt(col)}, which is not an item metadata column in "
                    f"{store.path}; fix 'by' (available: {', '.join(map(str, cols)) or 'none'})."
                )
    return items if read_items else None
