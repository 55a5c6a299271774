"""What an analysis reads from the store and writes to its output folder.

The analyses themselves (:mod:`~judgekit.analysis.distribution.estimate`,
:mod:`~judgekit.analysis.calibration.estimate`, :mod:`~judgekit.analysis.criteria.estimate`) are pure functions over
DataFrames. This module gathers their inputs — one rater's ratings, the judges' identity hashes a
verdict is matched against, the verdicts, the harm H of each item. A result is written as JSON,
Markdown, HTML, SVG and CSV by :func:`judgekit.report.analysis.write_results`. ``judgekit analyze``
and ``judgekit demo`` both go through them.

Example::

    from judgekit.analysis import inputs
    from judgekit.analysis.calibration.estimate import calibration
    from judgekit.report.analysis import write_results

    with Store("judgekit.db") as store:
        data = inputs.calibration_inputs(store, load_rubric("restrictiveness"), "judge-a",
                                         harm_column="severity")
        result = calibration(data.ratings, data.items, data.harm,
                             rubric=load_rubric("restrictiveness"),
                             verdicts=inputs.load_verdicts(["verdict.json"]), store=store,
                             judge_hashes=data.judge_hashes, harm_source=data.harm_source)
    write_results(result, Path("results/calibration"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.analysis.distribution.estimate import FormRatings
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.rubric.model import Rubric, load_rubric
from judgekit.store.database import Store
from judgekit.verdict.policy_rules import people as people_of
from judgekit.verdict.policy_rules import reference_kinds, reference_problem


# --------------------------------------------------------------------------- reading
def load_verdicts(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The verdicts written by ``judgekit gate`` at ``paths``, read strictly (one per rubric)."""
    from judgekit.verdict.read import load_verdict

    return [load_verdict(p) for p in paths]


def rater_ratings(store: Store, rubric: Rubric, rater: str, *, required: bool = True) -> pd.DataFrame:
    """The ratings of ``rater`` under ``rubric`` (its current hash) in ``store``.

    With ``required`` (the default), no ratings is an error naming the raters that do have
    ratings under the rubric, and any older edits of the rubric that still hold ratings; without
    it an empty frame is returned.
    """
    df = store.ratings(rubric=rubric, rater_ids=[rater])
    if df.empty and required:
        known = sorted(store.ratings(rubric=rubric)["rater_id"].astype(str).unique())
        stale = store.stale_rubric_hashes(rubric)
        hint = (f" (there are ratings under an older edit of the rubric: hash {', '.join(stale)})"
                if stale else "")
        raise JudgekitError(
            f"Rater {rater!r} has no ratings under {rubric.ref} in {store.path}{hint}; raters with "
            f"ratings: {', '.join(known) or 'none'}."
        )
    return df


def _gated_only(store: Store, ratings: pd.DataFrame, verdicts: Sequence[Any]) -> tuple[pd.DataFrame, list[str]]:
    """``ratings`` without the judge ratings the verdicts do not cover, and one sentence per judge
    saying how many were left out (issue 20): ratings imported under a gated judge's name after
    the gate, or panel ratings another configuration made or edited after their call
    (:func:`judgekit.verdict.log.foreign_ratings`). A judge no verdict covers keeps its ratings
    (the analysis then refuses it, or stamps it UNTRUSTED)."""
    from types import SimpleNamespace

    from judgekit.verdict.log import check_provenance, foreign_ratings
    from judgekit.verdict.read import load_verdict

    judged = ratings.loc[ratings["rater_kind"] == "judge", ["rater_id", "rubric", "rubric_hash"]]
    if judged.empty or not verdicts:
        return ratings, []
    loaded = [v if isinstance(v, dict) else load_verdict(v) for v in verdicts]
    drop: set[tuple[str, str, str, int]] = set()
    notes: list[str] = []
    for judge, rid, rhash in judged.drop_duplicates().itertuples(index=False, name=None):
        entry = next((j for v in loaded if (v["rubric"], v["rubric_hash"]) == (rid, rhash)
                      for j in v["judges"] if j["judge"] == judge and (j["passed"] or v.get("criteria_digests") or any(
                          f.get("state") == "pass" for f in (j.get("figures") or {}).values()))), None)
        if entry is None:
            continue
        rubric = SimpleNamespace(id=rid, hash=rhash)
        try:  # a verdict whose imports changed is refused by the analysis itself (or stamped)
            check_provenance({"judges": [entry]}, store, rubric, str(judge), where="")
        except JudgekitError:
            continue
        foreign = foreign_ratings(store, rubric, str(judge), entry)
        if not foreign:
            continue
        keys = {(str(judge), str(rid), i, t) for i, t, _ in foreign}
        mine = ratings.loc[(ratings["rater_id"] == judge) & (ratings["rubric"] == rid) & (ratings["rubric_hash"] == rhash)]
        hit = [k for k in zip(mine["rater_id"].astype(str), mine["rubric"].astype(str),
                              mine["item_id"].astype(str), mine["trial"].astype(int), strict=True) if k in keys]
        if not hit:
            continue
        drop.update(hit)
        groups = sorted({g for _, _, g in foreign})
        notes.append(
            f"{len(hit)} of the {len(mine)} ratings of judge {judge!r} under {rid} in {store.path} were "
            f"left out: the verdict does not cover them (from {', '.join(groups)}: imported under the "
            "judge's name after the gate, or panel ratings of another configuration or edited after "
            "their call); run the gate again to use them.")
    if not drop:
        return ratings, notes
    key = zip(ratings["rater_id"].astype(str), ratings["rubric"].astype(str), ratings["item_id"].astype(str),
              ratings["trial"].astype(int), strict=True)
    keep = [k not in drop for k in key]
    return ratings.loc[keep].reset_index(drop=True), notes


def judge_hashes(store: Store, ratings: pd.DataFrame) -> dict[str, str]:
    """``{judge rater id: judge hash}`` for the judges among ``ratings`` (humans are left out).

    The hash identifies the judge's spec and parameters as :func:`judgekit.gate.run.judge_identity`
    records them, so a verdict made for another configuration of the same rater id does not
    count (:func:`judgekit.analysis.trust.check_trust`).
    """
    from judgekit.store.judge_identity import judge_identity

    judged = ratings.loc[ratings["rater_kind"] == "judge"].drop_duplicates("rater_id")
    return {str(r.rater_id): str(judge_identity(store, str(r.rater_id), str(r.rubric),
                                                str(r.rubric_hash))["judge_hash"])
            for r in judged.itertuples()}


def rated_items(store: Store, ratings: pd.DataFrame) -> pd.DataFrame:
    """The items ``ratings`` are about, in ``item_id`` order."""
    return store.items(sorted(ratings["item_id"].astype(str).unique()))


@dataclass
class DistributionInputs:
    """What :func:`judgekit.analysis.distribution.estimate.refusal_distribution` reads from a store."""

    ratings: pd.DataFrame
    items: pd.DataFrame
    judge_hashes: dict[str, str]
    #: the rater's refusal-form ratings; None when not asked for or the rater has none
    forms: pd.DataFrame | None = None
    #: the rubric of ``forms``; None when the forms were not asked for
    form_rubric: Rubric | None = None
    #: ``forms`` with what a rule judge matched (match_rule, match_string); None without forms
    form_matches: pd.DataFrame | None = None
    #: what was left out, one sentence each (:func:`_gated_only`)
    notes: list[str] = field(default_factory=list)

    @property
    def form_ratings(self) -> FormRatings | None:
        """The forms as the distribution takes them (None without forms)."""
        if self.forms is None or self.form_rubric is None:
            return None
        return FormRatings(self.forms, self.form_rubric, self.form_matches)


def form_ratings(
    store: Store,
    form_rubric: Rubric,
    rater: str,
    verdicts: Sequence[Any],
    *,
    untrusted: bool = False,
    notes: list[str] | None = None,
) -> pd.DataFrame | None:
    """The refusal-form ratings of ``rater``, or None when the rater has none under the rubric.

    A judge's forms need a passing verdict of their own (unless ``untrusted``): the error says
    that the ratings feed the refusal-form distribution and how to leave them out. Forms their
    verdict does not cover are left out (:func:`_gated_only`; its sentences added to ``notes``).
    """
    from judgekit.analysis.trust import check_trust

    forms = rater_ratings(store, form_rubric, rater, required=False)
    if forms.empty:
        return None
    forms, left_out = _gated_only(store, forms, verdicts)
    if notes is not None:
        notes += left_out
    if not untrusted:
        try:
            check_trust(forms, form_rubric, verdicts, judge_hashes=judge_hashes(store, forms),
                        store=store)
        except UntrustedJudgeError as exc:
            raise UntrustedJudgeError(
                f"{exc} (The {form_rubric.id} ratings of {rater!r} feed the refusal-form "
                "distribution: pass a verdict for them too, or leave the forms out.)",
                cli_hint=" ".join(h for h in (exc.cli_hint, "--no-forms leaves the forms out.") if h),
            ) from None
    return forms


def distribution_inputs(
    store: Store,
    rubric: Rubric,
    rater: str,
    *,
    form_rubric: str | Path | Rubric | None = "refusal_form",
    verdicts: Sequence[Any] = (),
    untrusted: bool = False,
) -> DistributionInputs:
    """The ratings, items and judge hashes of a refusal distribution, plus the refusal forms.

    ``form_rubric`` None skips the forms; otherwise the rater's ratings under it (if any) are
    checked against ``verdicts`` as :func:`form_ratings` does.
    """
    ratings, notes = _gated_only(store, rater_ratings(store, rubric, rater), verdicts)
    forms = None
    frub = None
    if form_rubric is not None:
        frub = load_rubric(form_rubric)
        forms = form_ratings(store, frub, rater, verdicts, untrusted=untrusted, notes=notes)
    hashes = judge_hashes(store, ratings)
    matches = None
    if forms is not None:
        from judgekit.judges.matches import attach_matches

        keyed = forms.merge(store.rating_call_keys(), how="left",
                            on=["item_id", "rater_id", "rubric", "rubric_hash", "trial"])
        matches = attach_matches(store, keyed)
    return DistributionInputs(ratings=ratings, items=rated_items(store, ratings),
                              judge_hashes=hashes, forms=forms, form_rubric=frub,
                              form_matches=matches, notes=notes)


@dataclass
class Harm:
    """H in [0, 1] per ``item_id``, and a sentence saying where it came from."""

    values: pd.Series
    source: str


def _harm_from_store(
    store: Store,
    items: pd.DataFrame,
    *,
    harm_column: str | None = None,
    harm_rubric: str | Path | Rubric = "harm_severity",
    harm_key: str | None = "prompt_id",
) -> Harm:
    """The harm H of ``items``: from an item column of tiers 1–5, or from human ratings.

    With ``harm_column`` the tiers 1–5 of that column become H = 0, .25, .5, .75, 1
    (:func:`~judgekit.analysis.frames.harm_from_column`). Otherwise the human (and reference)
    ratings under ``harm_rubric`` are used (:func:`~judgekit.analysis.frames.harm_from_ratings`),
    spread to every item sharing the ``harm_key`` column (harm rates the request, so one rated
    item per prompt is enough; None or ``"none"`` keeps them per item).
    """
    from judgekit.analysis.frames import harm_from_column, harm_from_ratings, spread_harm

    if harm_column:
        return Harm(harm_from_column(items, harm_column),
                    f"item column {harm_column!r}: tiers 1–5 → H = 0, .25, .5, .75, 1")
    hrub = load_rubric(harm_rubric)
    hr = store.ratings(rubric=hrub, rater_kind=["human", "reference"])
    if hr.empty:
        raise JudgekitError(
            f"There are no human {hrub.id} ratings in {store.path} to take H from; "
            "import them (judgekit import FILE --rubric harm_severity) or give "
            "--harm-column COLUMN (e.g. severity)."
        )
    key = None if harm_key is None or harm_key.lower() == "none" else harm_key
    rated = set(items["item_id"].astype(str)) | set(hr["item_id"].astype(str))
    harm = spread_harm(harm_from_ratings(hr, hrub), store.items(sorted(rated)), key)
    source = (f"human {hrub.id} ratings (adjudicated label where present, else the mean "
              "of the annotators)"
              + (f", shared by every item with the same {key}" if key else ""))
    return Harm(harm, source)


def harm_tiers(store: Store, items: pd.DataFrame, *,
               harm_rubric: str | Path | Rubric = "harm_severity",
               harm_key: str | None = "prompt_id") -> pd.DataFrame:
    """``item_id, harm_tier``: each item's harm tier 1–5 from the human ratings under
    ``harm_rubric`` (as the analysis takes H: :func:`_harm_from_store`), so a sample can be
    stratified by the analysis's own tiers; items without H have none (NA)."""
    from judgekit.analysis.frames import HARM_TIER, harm_tier_column

    harm = _harm_from_store(store, items, harm_rubric=harm_rubric, harm_key=harm_key).values
    ids = items["item_id"].astype(str)
    return pd.DataFrame({"item_id": ids.to_numpy(), HARM_TIER: harm_tier_column(harm, ids)})


@dataclass
class CalibrationInputs:
    """What :func:`judgekit.analysis.calibration.estimate.calibration` reads from a store."""

    ratings: pd.DataFrame
    items: pd.DataFrame
    judge_hashes: dict[str, str]
    harm: pd.Series
    harm_source: str
    #: what was left out, one sentence each (:func:`_gated_only`)
    notes: list[str] = field(default_factory=list)


def calibration_inputs(
    store: Store,
    rubric: Rubric,
    rater: str,
    *,
    harm_column: str | None = None,
    harm_rubric: str | Path | Rubric = "harm_severity",
    harm_key: str | None = "prompt_id",
    verdicts: Sequence[Any] = (),
) -> CalibrationInputs:
    """The restrictiveness ratings of ``rater``, their items and judge hashes, and H per item
    (chosen as :func:`_harm_from_store` says); a judge's ratings its verdict in ``verdicts`` does
    not cover are left out (:func:`_gated_only`)."""
    ratings, notes = _gated_only(store, rater_ratings(store, rubric, rater), verdicts)
    hashes = judge_hashes(store, ratings)
    items = rated_items(store, ratings)
    harm = _harm_from_store(store, items, harm_column=harm_column, harm_rubric=harm_rubric,
                           harm_key=harm_key)
    return CalibrationInputs(ratings=ratings, items=items, judge_hashes=hashes,
                             harm=harm.values, harm_source=harm.source, notes=notes)


@dataclass
class CriteriaInputs:
    """What :func:`judgekit.analysis.criteria.estimate.evaluate_criteria` reads from a store: every
    rating and item (each criterion names its own rater, rubric and group)."""

    ratings: pd.DataFrame
    items: pd.DataFrame
    judge_hashes: dict[str, str]
    #: what was left out, one sentence each (:func:`_gated_only`)
    notes: list[str] = field(default_factory=list)


def criteria_inputs(store: Store, verdicts: Sequence[Any] = ()) -> CriteriaInputs:
    """Every rating in ``store`` (but the judge ratings their verdict in ``verdicts`` does not
    cover, :func:`_gated_only`), the judge hashes among them, and every item."""
    ratings, notes = _gated_only(store, store.ratings(), verdicts)
    hashes = judge_hashes(store, ratings)
    return CriteriaInputs(ratings=ratings, items=store.items(), judge_hashes=hashes, notes=notes)


def optional_reference_ratings(store: Store, rubric: Rubric, reference: str) -> pd.DataFrame:
    """The ratings of the reference ``reference`` (a rater id or ``consensus``, as
    :func:`reference_ratings` resolved it) under a further ``rubric`` (e.g. the refusal forms),
    empty when it has none there: for ``consensus``, the human raters' majority under ``rubric``."""
    if reference != "consensus":
        return rater_ratings(store, rubric, reference, required=False)
    from judgekit.agreement.adjudicate import consensus_ratings

    kinds = reference_kinds(store, rubric)
    if "human" not in kinds.values():
        return rater_ratings(store, rubric, reference, required=False)
    return consensus_ratings(store.ratings(rubric=rubric), kinds, rubric)


def reference_ratings(store: object, rubric: Rubric, reference: str | None) -> tuple[pd.DataFrame, str]:
    """The reference's ratings under ``rubric`` and its rater id: ``reference``, or the store's
    one rater of kind ``reference`` when None (an error naming the candidates otherwise).

    A given ``reference`` must be one the gate accepts
    (:func:`judgekit.verdict.policy_rules.reference_problem`: a human or reference rater): a judge's
    error measured against a judge, or against itself, corrects nothing. ``consensus`` is the
    human raters' majority (ties left out), as in ``agree``
    (:func:`judgekit.agreement.adjudicate.consensus_ratings`)."""
    if reference == "consensus":
        from judgekit.agreement.adjudicate import consensus_ratings

        return consensus_ratings(store.ratings(rubric=rubric), reference_kinds(store, rubric), rubric), reference  # type: ignore[attr-defined]
    if reference is None:
        every = store.ratings(rubric=rubric)  # type: ignore[attr-defined]
        refs = sorted(every.loc[every["rater_kind"] == "reference", "rater_id"].astype(str).unique())
        people = sorted(every.loc[every["rater_kind"].isin(["human", "reference"]), "rater_id"]
                        .astype(str).unique())
        if len(refs) != 1:
            raise JudgekitError(
                f"--correct needs the reference rater: the store has {len(refs)} raters of kind "
                f"reference under {rubric.id}; pass --reference with one of "
                f"{', '.join(people) or 'none (import human labels first)'}"
                + (", or consensus (the human raters' majority; `judgekit adjudicate` writes it as "
                   "a rater)" if people else "") + "."
            )
        reference = refs[0]
    else:
        kinds = reference_kinds(store, rubric)
        problem = reference_problem(reference, kinds)
        if problem is not None:
            raise JudgekitError(f"--reference: {problem}; pass one of {people_of(kinds)} or consensus.")
    return rater_ratings(store, rubric, reference), reference  # type: ignore[arg-type]
