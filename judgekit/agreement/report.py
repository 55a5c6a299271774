"""agreement_report(): each judge against the human reference, against each human, and as a
change in α when it joins the humans; the human–human ceiling beside it; overall and per slice.

Decisions (DESIGN.md, "Statistics: decisions already made"):

* Units are items. A judge asked several times (trials) is reduced to its majority label per item;
  a tie between trials, or no parseable answer at all, makes the item an abstention for it.
* Abstentions and errors are counted apart from disagreements: a judge's κ/α are computed on the
  items it rated.
* The reference is the adjudicated label (a ``reference`` rater) when there is one, else the
  consensus (majority) of the humans; items where the humans tie have no consensus and are counted.
* Weighted κ and ordinal α use the rubric's full category list.
* Every figure carries n and a bootstrap 95% CI that resamples items; undefined figures carry the
  reason instead of a number.

The result is a plain dict (``AgreementReport.to_dict()``) that renders to the terminal, JSON,
Markdown and HTML. A *figure* is ``{"value", "low", "high", "n", "undefined"}``
(:func:`judgekit.agreement.figures.fig`). Keys added for issue 10 (the older keys are unchanged):

* top level: ``ceiling_raters``, the humans of the ceiling: ``humans`` plus the reference rater
  when it is a human (``reference: annotation_1``); an adjudicated ``reference`` rater is not.
  The ceiling figures, ``alpha_humans``/``alpha_with_judge`` and ``human_label_distribution``
  use these raters (so a human reference no longer leaves an empty ceiling); ``vs_humans``
  still lists the humans other than the reference.
* per slice: ``n_in_scope`` (items with a reference label or a human rating), ``n_rated``
  (``{judge: items it rated}``, the n to show per slice; ``n_items`` counts every item);
  ``human_pairwise`` (every pair of ceiling humans: ``pairs`` with ``a, b, n`` and the pair's
  figures, ``matrix`` of point values ``{"n"|"kappa"|"percent_agreement"|"weighted_kappa": k x k}``;
  :func:`judgekit.agreement.ceiling.pairwise_table`). Slices are ordered numerically where the
  values are numbers, and a missing value is the slice ``"(missing)"`` (:mod:`.slicing`).
* ``human_ceiling``: ``kappa_name`` ("Cohen κ" for two humans, "Fleiss κ" for more),
  ``weighted_kappa_name``, and ``loo``, the leave-one-out ceiling (:mod:`.ceiling`):
  ``{"per_human": [{"human", "n", "n_ties", "percent_agreement", "kappa", "weighted_kappa"}],
  "mean": {"n", "n_humans", <the same figures>}, "raters", "kappa_name", "consensus",
  "undefined"}`` (``undefined`` is the reason with fewer than two humans).
* per judge: ``vs_loo`` (the judge against each C₋ₕ on the same items: ``per_human`` entries with
  the judge's figures, ``human_same_items`` and the paired ``difference`` judge − human;
  ``mean`` likewise; :mod:`.ceiling`), ``coverage`` (``in_scope, rated, abstained, errored,
  not_attempted, rated_out_of_scope`` and ``share`` with a Wilson CI; :mod:`.judge_figures`),
  ``bias`` (``n``, ``mean_diff`` for ordinal/interval rubrics, ``share_diff`` per label,
  ``max_abs``; :mod:`.judge_figures`) and ``per_class`` (``positive``, ``classes`` with ``support,
  predicted, precision, recall, f1``, ``macro_f1``, ``positive_class``; :mod:`.judge_figures`),
  and ``headline``, the comparison the tables lead with, like for like with the human figure
  beside it and each with its n (:mod:`.headline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from judgekit.agreement.figures import num
from judgekit.agreement.headline import add_headlines
from judgekit.agreement.rating_codes import (
    RatingCodes,
    codes_from_frame,
    codes_from_store,
    stale_hashes,
)
from judgekit.agreement.report_data import AgreementReport as AgreementReport  # re-exported
from judgekit.agreement.slice_figures import METRICS as METRICS
from judgekit.agreement.slice_figures import REF, Opts, ReportCodes, Wanted, slice_figures
from judgekit.agreement.slicing import MISSING, slice_positions, slice_positions_from_groups
from judgekit.agreement.trials import collapse_trials as collapse_trials  # re-exported
from judgekit.agreement.unit_frames import groups_frame, read_ratings, slice_meta, value_groups
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.store.variants import is_variant_rater

if TYPE_CHECKING:  # pandas only where a slice needs item metadata as a frame
    import pandas as pd

_num = num  # the report's rounding, kept under its old name
#: ``data["scope"]`` of a report of some figures only (``wanted``)
WANTED_SCOPE = "the figures of the gate policy's checks only (judgekit.gate.figures)"


# ----------------------------------------------------------------------------- report


def agreement_report(
    source: Any,
    *,
    rubric: Rubric,
    items: pd.DataFrame | None = None,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    humans: Sequence[str] | None = None,
    reference: str | None = None,
    only_items: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    codes: RatingCodes | None = None,
    wanted: Wanted | None = None,
) -> AgreementReport:
    """Agreement of judges with humans under ``rubric``.

    Parameters
    ----------
    source : Store or DataFrame
        A :class:`~judgekit.store.database.Store` (ratings under the rubric's current hash and its items),
        or a long ratings DataFrame (then pass ``items`` for slicing metadata).
    by : column names of item metadata to slice by (each separately), e.g. ``["model"]``;
        ``"model+category"`` crosses columns (one slice per combination, key ``"m1 / c2"``).
    judges, humans : rater ids to include (default: every ``judge`` / ``human`` rater).
    reference : a rater id holding the gold label, ``"consensus"`` (majority of humans), or
        None: the single ``reference`` rater if there is one, else the consensus.
    only_items : restrict to these item ids (e.g. the random share of a sample).
    codes : the ratings already read (:func:`read_codes`), so a caller computing several
        figures from one store reads them once; ``source`` then only gives the items and the
        warning about older rubric edits.
    wanted : only these figures (:class:`~judgekit.agreement.slice_figures.Wanted`; the gate
        asks for those its policy's checks read), each computed as in the full report;
        ``data["scope"]`` then says so. None: every figure.
    """
    warnings: list[str] = []
    # perturbed item copies (judgekit.store.variants) only when a variant judge is named
    variants = any(is_variant_rater(j) for j in judges or ())
    codes, frame = _codes_of(source, rubric, codes, variants, only_items)
    store_values: dict[str, list[tuple[Any, list[str]]]] | None = None
    slicing = bool(by) and (wanted is None or wanted.slices)
    if hasattr(source, "ratings"):
        warnings.extend(_stale_warning(source, rubric))
        if items is None and slicing:
            items, store_values = _store_slicing(source, by)
    _refuse_nothing_rated(source, rubric, codes, frame, variants, only_items)

    roles = _rater_roles(codes.kinds, rubric.id, humans=humans, judges=judges, reference=reference)
    if roles.reference == "consensus":
        ref = consensus_codes(codes.labels[:, [codes.column(h) for h in roles.humans]], len(rubric.codes))
    else:
        ref = codes.labels[:, codes.column(roles.reference)]
    meta = _metadata(items, by) if slicing and store_values is None else None

    opts = Opts(n_resamples=n_resamples, confidence=confidence, seed=seed)
    raters = (roles.humans, roles.ceiling_humans, roles.judges)
    rc = _report_codes(codes, ref, raters)
    slices = [slice_figures(None, "all", None, rc, rubric, raters, opts, wanted)]
    for col in by if slicing else ():
        groups, n_missing, meta = _slice_groups(col, codes, store_values, meta)
        for key, pos in groups:
            slices.append(slice_figures(col, key, pos, rc, rubric, raters, opts, wanted))
        if n_missing:
            where = f"keys with the part {MISSING}" if "+" in col else f"the slice {MISSING!r}"
            warnings.append(f"{n_missing} items have no {col!r} value; they are in the {col} {where}.")
    if wanted is None:  # the headline is a full report's: the gate's own figures hold no human ceiling
        for sl in slices:
            add_headlines(sl, consensus=roles.reference == "consensus")
    warnings.extend(_reference_warning(codes, ref, roles.reference, roles.humans))

    data = {
        **({"scope": WANTED_SCOPE} if wanted is not None else {}),
        "rubric": rubric.id, "rubric_hash": rubric.hash, "level": rubric.level, "labels": rubric.codes,
        "reference": roles.ref_info, "humans": roles.humans, "ceiling_raters": roles.ceiling_humans,
        "judges": roles.judges, "by": list(by), "confidence": confidence, "n_resamples": n_resamples,
        "slices": slices,
    }
    return AgreementReport(data=data, warnings=warnings)


def _store_slicing(source: Any, by: Sequence[str]
                   ) -> tuple[pd.DataFrame | None, dict[str, list[tuple[Any, list[str]]]] | None]:
    """What the slices of a store are read from: the keys sliced by, grouped by value (one
    query), else their item metadata key by key, else every item's."""
    store_values = value_groups(source, by)
    items = None
    if store_values is None:
        items = slice_meta(source, by)  # key by key; None: read every item
        if items is None:
            items = source.items()
    return items, store_values


def _codes_of(source: Any, rubric: Rubric, codes: RatingCodes | None, variants: bool,
              only_items: Sequence[str] | None) -> tuple[RatingCodes, pd.DataFrame | None]:
    """The ratings of ``source`` under ``rubric`` (``codes`` when already read), and the ratings
    frame when ``source`` is one."""
    if codes is not None:
        return codes, None
    if hasattr(source, "ratings"):
        return read_codes(source, rubric, variants=variants, only_items=only_items), None
    frame = source
    if "rubric" in source.columns:
        frame = source[source["rubric"] == rubric.id]
    return codes_from_frame(frame, rubric.codes, only_items), frame


def _stale_warning(source: Any, rubric: Rubric) -> list[str]:
    """The warning that older edits of the rubric have ratings the report does not use."""
    from judgekit.store.database import Store

    stale = stale_hashes(source, rubric) if isinstance(source, Store) else source.stale_rubric_hashes(rubric)
    if not stale:
        return []
    return [f"{len(stale)} older edit(s) of {rubric.id} have ratings in the store; they are not "
            "used (ratings count only under the rubric's current hash)."]


def _refuse_nothing_rated(source: Any, rubric: Rubric, codes: RatingCodes, frame: pd.DataFrame | None,
                          variants: bool, only_items: Sequence[str] | None) -> None:
    """One sentence when there is nothing to report on."""
    nothing = codes.empty
    if nothing and only_items is not None:
        # none of only_items is rated: the report goes on to say which rater is missing when
        # the rubric has ratings at all (as the per-item path did)
        nothing = (frame.empty if frame is not None
                   else read_codes(source, rubric, variants=variants).empty
                   if hasattr(source, "ratings") else True)
    if nothing:
        older = source.stale_rubric_hashes(rubric) if hasattr(source, "stale_rubric_hashes") else []
        raise _no_ratings_error(rubric.id, rubric.ref, older)


def _metadata(items: pd.DataFrame | None, by: Sequence[str]) -> pd.DataFrame:
    """The item metadata indexed by item id, with one sentence when a sliced column is missing."""
    if items is None:
        raise JudgekitError("Slicing needs item metadata; pass items= or a Store.")
    meta = items.set_index(items["item_id"].astype(str))
    for spec in by:
        for col in spec.split("+"):
            if col not in meta.columns:
                cols = [c for c in meta.columns
                        if c not in ("item_id", "prompt", "messages", "response", "content_hash")]
                raise JudgekitError(
                    f"--by {col!r}: no item metadata column of that name; available: "
                    f"{', '.join(cols) or 'none'}."
                )
    return meta


def _report_codes(codes: RatingCodes, ref: np.ndarray,
                  raters: tuple[list[str], list[str], list[str]]) -> ReportCodes:
    """The code matrix of the raters in play and the reference, and the judges' status."""
    humans, ceiling_humans, judges = raters
    in_play = [r for r in dict.fromkeys([*humans, *ceiling_humans, *judges]) if r in codes.raters]
    status_cols = [j for j in dict.fromkeys(judges) if j in codes.raters]
    return ReportCodes.build(
        [*in_play, REF], np.column_stack([codes.labels[:, [codes.column(r) for r in in_play]], ref]),
        status_cols, codes.status[:, [codes.column(j) for j in status_cols]])


def _slice_groups(col: str, codes: RatingCodes, store_values: dict[str, list[tuple[Any, list[str]]]] | None,
                  meta: pd.DataFrame | None) -> tuple[list[tuple[str, np.ndarray]], int, pd.DataFrame | None]:
    """The slices of ``col`` (``"model+prompt_safety"`` crosses two columns: one slice per
    combination of values) as (key, item positions), the number of items without a value, and
    the metadata frame (built from ``store_values`` on first need)."""
    found = None if store_values is None else slice_positions_from_groups(store_values, col.split("+"), codes.items)
    if found is None:
        if meta is None:
            assert store_values is not None
            meta = groups_frame(store_values)
        import pandas as pd

        found = slice_positions(meta, col.split("+"), pd.Index(codes.items, name="item_id", dtype=object))
    groups, n_missing = found
    return groups, n_missing, meta


def _reference_warning(codes: RatingCodes, ref: np.ndarray, reference: str, humans: list[str]) -> list[str]:
    """The warning that some items have no reference label, and why."""
    n_no_ref = int((ref < 0).sum())
    if not n_no_ref:
        return []
    if reference == "consensus":
        # a tie only where some human rated the item; where none did, say so
        rated = (codes.labels[:, [codes.column(h) for h in humans]] >= 0).any(axis=1) if humans else ref < -1
        n_tie = int(((ref < 0) & rated).sum())
        parts = ([f"the humans tie on {n_tie}"] if n_tie else []) + (
            [f"no human rated {n_no_ref - n_tie}"] if n_no_ref - n_tie else [])
        return [f"{n_no_ref} items have no reference label ({' and '.join(parts)}); judges are not "
                "scored on them."]
    return [f"{n_no_ref} items have no reference label ({reference} did not rate them); judges are "
            "not scored on them."]


# ----------------------------------------------------------------------------- roles


@dataclass(frozen=True)
class _Roles:
    """The raters of a report: ``humans`` compared with the reference (the reference left out),
    ``judges``, ``reference`` (a rater id or ``"consensus"``), ``ceiling_humans`` (a human
    reference is one of them, compared like the others) and ``ref_info`` (the report's
    ``reference`` entry)."""

    humans: list[Any]
    judges: list[Any]
    reference: Any
    ceiling_humans: list[Any]
    ref_info: dict[str, Any]


def _rater_roles(kinds: Mapping[Any, str], rubric_id: str, *, humans: Sequence[Any] | None,
                judges: Sequence[Any] | None, reference: Any) -> _Roles:
    """The :class:`_Roles` of raters of ``kinds`` (rater -> human | judge | reference).
    ``humans`` / ``judges`` None: every human / every judge but perturbed variants
    (judgekit probe); ``reference`` None: the one reference rater, else ``"consensus"``. A named
    rater without ratings, or a consensus without humans, is one :class:`JudgekitError`."""
    all_humans = [r for r, k in kinds.items() if k == "human"]
    all_judges = [r for r, k in kinds.items() if k == "judge"]
    refs = [r for r, k in kinds.items() if k == "reference"]
    humans = list(humans) if humans is not None else all_humans
    judges = list(judges) if judges is not None else [r for r in all_judges if not is_variant_rater(r)]
    for name, wanted, have in (("human", humans, all_humans + refs), ("judge", judges, all_judges)):
        missing = [r for r in wanted if r not in have]
        if missing:
            raise JudgekitError(
                f"{name.capitalize()} rater {missing[0]!r} has no ratings under {rubric_id}; "
                f"known {name} raters: {', '.join(have) or 'none'}."
            )
    if reference is None:
        reference = refs[0] if len(refs) == 1 else "consensus"
    if reference != "consensus" and reference not in kinds:
        raise JudgekitError(
            f"Reference rater {reference!r} has no ratings under {rubric_id}; use one of "
            f"{', '.join(refs + all_humans) or 'none'} or 'consensus'."
        )
    ref_is_human = reference != "consensus" and kinds[reference] == "human"
    ceiling_humans = [h for h in humans if h != reference or ref_is_human]
    if ref_is_human and reference not in ceiling_humans:
        ceiling_humans.append(reference)
    humans = [h for h in humans if h != reference]
    if reference == "consensus":
        if not humans:
            raise JudgekitError(
                f"No human ratings under {rubric_id} to form a reference; import human labels first."
            )
        ref_info: dict[str, Any] = {"rater": None, "kind": "consensus"}
    else:
        ref_info = {"rater": reference, "kind": "adjudicated" if kinds[reference] == "reference" else "human"}
    return _Roles(humans, judges, reference, ceiling_humans, ref_info)


def _no_ratings_error(rubric_id: str, rubric_ref: str, older: Sequence[str]) -> JudgekitError:
    """The sentence for a rubric (``id``, ``id@hash``) with no ratings in the store; ``older``:
    the hashes of older edits of it that do have ratings (a hint to re-import under this edit)."""
    hint = (
        f" (there are ratings under an older edit of {rubric_id}, hash {', '.join(older)}: the "
        "rubric file changed since they were made; re-import them under this edit or use the "
        "rubric file they were made with)"
        if older else ""
    )
    return JudgekitError(
        f"No ratings under rubric {rubric_ref} in the store{hint}; import some with "
        "`judgekit import` or run a panel with `judgekit judge`."
    )


def read_codes(source: Any, rubric: Rubric, *, variants: bool = False,
               only_items: Sequence[str] | None = None) -> RatingCodes:
    """The report's :class:`~judgekit.agreement.rating_codes.RatingCodes` of a store (one SQL
    scan) or of any source with ``ratings(rubric=...)`` (a rubric view: the DataFrame path)."""
    from judgekit.store.database import Store

    if isinstance(source, Store):
        codes = codes_from_store(source, rubric, variants=variants, only_items=only_items)
        if codes is not None:
            return codes
    return codes_from_frame(read_ratings(source, rubric, variants=variants), rubric.codes, only_items)


def consensus_codes(humans: np.ndarray, n_categories: int) -> np.ndarray:
    """The humans' majority code per item (N, h) -> (N,): -1 where they tie or none rated (as
    :func:`judgekit.agreement.trials.consensus` on labels)."""
    counts = np.stack([(humans == c).sum(axis=1) for c in range(n_categories)], axis=1)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    out = counts.argmax(axis=1).astype(np.int64)
    out[(top == 0) | (n_top > 1)] = -1
    return out


