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
  not_attempted, rated_out_of_scope`` and ``share`` with a Wilson CI; :mod:`.coverage`),
  ``bias`` (``n``, ``mean_diff`` for ordinal/interval rubrics, ``share_diff`` per label,
  ``max_abs``; :mod:`.bias`) and ``per_class`` (``positive``, ``classes`` with ``support,
  predicted, precision, recall, f1``, ``macro_f1``, ``positive_class``; :mod:`.classes`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgekit.agreement import (
    ac1_ci,
    alpha_ci,
    cohen_kappa,
    confusion_matrix,
    fleiss_ci,
    fleiss_kappa,
    gwet_ac1,
    kappa_ci,
    krippendorff_alpha,
    percent_agreement,
    percent_agreement_ci,
    undefined_reason,
)
from judgekit.agreement.bias import signed_bias
from judgekit.agreement.ceiling import code_matrix, loo_figures, pairwise_table
from judgekit.agreement.classes import per_class
from judgekit.agreement.coverage import coverage
from judgekit.agreement.figures import fig, num
from judgekit.agreement.slicing import MISSING, slice_groups
from judgekit.agreement.trials import collapse_trials as collapse_trials  # re-exported
from judgekit.agreement.trials import consensus as _consensus
from judgekit.agreement.unit_frames import label_frames, read_ratings, slice_meta
from judgekit.errors import JudgekitError
from judgekit.rubric import Rubric
from judgekit.variants import is_variant_rater

_num = num  # the report's rounding, kept under its old name

METRICS = ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")


@dataclass
class _Opts:
    n_resamples: int
    confidence: float
    seed: int


# ----------------------------------------------------------------------------- report
@dataclass
class AgreementReport:
    """The result of :func:`agreement_report`; ``to_dict()`` is the JSON form."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.data, "warnings": list(self.warnings)}

    def slice(self, by: str | None = None, key: str = "all") -> dict[str, Any]:
        for s in self.data["slices"]:
            if s["by"] == by and s["key"] == key:
                return s
        raise KeyError((by, key))

    def judge(self, judge: str, by: str | None = None, key: str = "all") -> dict[str, Any]:
        return self.slice(by, key)["judges"][judge]


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
) -> AgreementReport:
    """Agreement of judges with humans under ``rubric``.

    Parameters
    ----------
    source : Store or DataFrame
        A :class:`~judgekit.store.Store` (ratings under the rubric's current hash and its items),
        or a long ratings DataFrame (then pass ``items`` for slicing metadata).
    by : column names of item metadata to slice by (each separately), e.g. ``["model"]``;
        ``"model+category"`` crosses columns (one slice per combination, key ``"m1 / c2"``).
    judges, humans : rater ids to include (default: every ``judge`` / ``human`` rater).
    reference : a rater id holding the gold label, ``"consensus"`` (majority of humans), or
        None: the single ``reference`` rater if there is one, else the consensus.
    only_items : restrict to these item ids (e.g. the random share of a sample).
    """
    warnings: list[str] = []
    if hasattr(source, "ratings"):
        # perturbed item copies (judgekit.variants) only when a variant judge is named
        named_variant = any(is_variant_rater(j) for j in judges or ())
        ratings: Any = read_ratings(source, rubric, variants=named_variant)
        stale = source.stale_rubric_hashes(rubric)
        if stale:
            warnings.append(
                f"{len(stale)} older edit(s) of {rubric.id} have ratings in the store; they are not "
                "used (ratings count only under the rubric's current hash)."
            )
        if items is None and by:
            items = slice_meta(source, by)  # only the keys sliced by; None: read every item
            if items is None:
                items = source.items()
    else:
        ratings = source
        if "rubric" in ratings.columns:
            ratings = ratings[ratings["rubric"] == rubric.id]
    if ratings.empty:
        older = source.stale_rubric_hashes(rubric) if hasattr(source, "stale_rubric_hashes") else []
        hint = (
            f" (there are ratings under an older edit of {rubric.id}, hash {', '.join(older)}: the "
            "rubric file changed since they were made; re-import them under this edit or use the "
            "rubric file they were made with)"
            if older else ""
        )
        raise JudgekitError(
            f"No ratings under rubric {rubric.ref} in the store{hint}; import some with "
            "`judgekit import` or run a panel with `judgekit judge`."
        )
    if only_items is not None:
        ratings = ratings[ratings["item_id"].isin(set(map(str, only_items)))]

    kinds = ratings.drop_duplicates("rater_id").set_index("rater_id")["rater_kind"]
    all_humans = [r for r, k in kinds.items() if k == "human"]
    all_judges = [r for r, k in kinds.items() if k == "judge"]
    # perturbed variants of a judge (judgekit probe) are left out unless named
    default_judges = [r for r in all_judges if not is_variant_rater(r)]
    refs = [r for r, k in kinds.items() if k == "reference"]
    humans = list(humans) if humans is not None else all_humans
    judges = list(judges) if judges is not None else default_judges
    for name, wanted, have in (("human", humans, all_humans + refs), ("judge", judges, all_judges)):
        missing = [r for r in wanted if r not in have]
        if missing:
            raise JudgekitError(
                f"{name.capitalize()} rater {missing[0]!r} has no ratings under {rubric.id}; "
                f"known {name} raters: {', '.join(have) or 'none'}."
            )
    if reference is None:
        reference = refs[0] if len(refs) == 1 else "consensus"
    if reference != "consensus" and reference not in kinds.index:
        raise JudgekitError(
            f"Reference rater {reference!r} has no ratings under {rubric.id}; use one of "
            f"{', '.join(refs + all_humans) or 'none'} or 'consensus'."
        )
    # the humans of the ceiling: a human reference is one of them, compared like the others
    ref_is_human = reference != "consensus" and kinds[reference] == "human"
    ceiling_humans = [h for h in humans if h != reference or ref_is_human]
    if ref_is_human and reference not in ceiling_humans:
        ceiling_humans.append(reference)
    humans = [h for h in humans if h != reference]

    labels, status = label_frames(ratings)
    if reference == "consensus":
        if not humans:
            raise JudgekitError(
                f"No human ratings under {rubric.id} to form a reference; import human labels first."
            )
        ref = _consensus(labels[humans], rubric.codes)
        ref_info = {"rater": None, "kind": "consensus"}
    else:
        ref = labels[reference]
        ref_info = {"rater": reference, "kind": "adjudicated" if kinds[reference] == "reference" else "human"}
    labels = labels.assign(__ref__=ref)

    meta = None
    if by:
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

    opts = _Opts(n_resamples=n_resamples, confidence=confidence, seed=seed)
    nums = _numeric_views(labels, rubric)
    raters = (humans, ceiling_humans, judges)
    slices = [_slice(None, "all", labels, nums, status, rubric, raters, opts)]
    for col in by:
        assert meta is not None
        # "model+prompt_safety" crosses two columns: one slice per combination of values
        groups, n_missing = slice_groups(meta, col.split("+"), labels.index)
        for key, idx in groups:
            part = (nums[0].loc[idx], nums[1].loc[idx])
            slices.append(_slice(col, key, labels.loc[idx], part, status.loc[idx], rubric, raters, opts))
        if n_missing:
            where = f"keys with the part {MISSING}" if "+" in col else f"the slice {MISSING!r}"
            warnings.append(f"{n_missing} items have no {col!r} value; they are in the {col} {where}.")
    n_no_ref = int(labels["__ref__"].isna().sum())
    if n_no_ref:
        why = "the humans tie" if reference == "consensus" else f"{reference} did not rate them"
        warnings.append(f"{n_no_ref} items have no reference label ({why}); judges are not scored on them.")

    data = {
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "level": rubric.level,
        "labels": rubric.codes,
        "reference": ref_info,
        "humans": humans,
        "ceiling_raters": ceiling_humans,
        "judges": judges,
        "by": list(by),
        "confidence": confidence,
        "n_resamples": n_resamples,
        "slices": slices,
    }
    return AgreementReport(data=data, warnings=warnings)


# ----------------------------------------------------------------------------- one slice
def _numeric_views(labels: pd.DataFrame, rubric: Rubric) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The labels as numbers, once per report: each label's position in the rubric (0..V-1, NaN
    missing) for κ, AC1 and % agreement, and for α the positions or, at interval level, the
    rubric's values. Encoding strings inside every statistic and every bootstrap would dominate
    the cost on large stores; labels are only used for the reasons of undefined figures, the
    confusion matrix and the distributions."""
    pos = {c: float(i) for i, c in enumerate(rubric.codes)}
    idx = pd.DataFrame({c: labels[c].map(pos) for c in labels.columns}, index=labels.index, dtype=float)
    if rubric.level != "interval":
        return idx, idx
    vals = pd.DataFrame({c: labels[c].map(rubric.values) for c in labels.columns}, index=labels.index,
                        dtype=float)
    return idx, vals


def _slice(
    by: str | None,
    key: str,
    labels: pd.DataFrame,
    nums: tuple[pd.DataFrame, pd.DataFrame],
    status: pd.DataFrame,
    rubric: Rubric,
    raters: tuple[list[str], list[str], list[str]],
    o: _Opts,
) -> dict[str, Any]:
    humans, ceiling_humans, judges = raters
    codes = rubric.codes
    level = rubric.level
    weights = "quadratic" if level in ("ordinal", "interval") else None
    ci_kw: dict[str, Any] = {"n_resamples": o.n_resamples, "confidence": o.confidence, "seed": o.seed}
    idx, alpha_frame = nums
    cats: list[Any] = [float(i) for i in range(len(codes))]
    alpha_cats = None if level == "interval" else cats

    def reason(cols: list[str], frame: pd.DataFrame) -> str | None:
        return undefined_reason(frame[cols].to_numpy(dtype=object).T, categories=codes)

    def alpha_fig(cols: list[str], rows: pd.Index) -> dict:
        arr = alpha_frame.loc[rows, cols].to_numpy(dtype=float).T
        n = int((~np.isnan(arr)).sum(axis=0).__ge__(2).sum()) if len(cols) else 0
        if n == 0:
            return fig(float("nan"), None, 0, "no item was rated by two of these raters")
        val = krippendorff_alpha(arr, level=level, categories=alpha_cats)
        if math.isnan(val):
            return fig(val, None, n, reason(cols, labels.loc[rows]))
        return fig(val, alpha_ci(arr, level=level, categories=alpha_cats, **ci_kw), n)

    pair_cache: dict[tuple[str, str], dict[str, Any]] = {}

    def pair_figs(a: str, b: str) -> dict[str, Any]:
        if (a, b) not in pair_cache:
            pair_cache[a, b] = _pair_figs(a, b)
        return pair_cache[a, b]

    def _pair_figs(a: str, b: str) -> dict[str, Any]:
        both = idx[a].notna() & idx[b].notna()
        n = int(both.sum())
        out: dict[str, Any] = {}
        if n == 0:
            for m in METRICS:
                out[m] = fig(float("nan"), None, 0, "no item rated by both")
            out["weighted_kappa"] = out["weighted_kappa"] if weights else None
            return out
        x, y = idx.loc[both, a].to_numpy(), idx.loc[both, b].to_numpy()
        pair = np.vstack([x, y])
        why: list[str | None] = []

        def why_once() -> str | None:
            if not why:
                why.append(reason([a, b], labels.loc[both]))
            return why[0]

        def one(value: float, ci: Any) -> dict:
            return fig(value, None, n, why_once()) if math.isnan(value) else fig(value, ci(), n)

        out["percent_agreement"] = one(percent_agreement(pair), lambda: percent_agreement_ci(pair, **ci_kw))
        out["kappa"] = one(cohen_kappa(x, y, labels=cats), lambda: kappa_ci(x, y, labels=cats, **ci_kw))
        out["weighted_kappa"] = (
            one(cohen_kappa(x, y, labels=cats, weights=weights),
                lambda: kappa_ci(x, y, labels=cats, weights=weights, **ci_kw))
            if weights else None
        )
        apair = alpha_frame.loc[both, [a, b]].to_numpy(dtype=float).T
        out["alpha"] = one(krippendorff_alpha(apair, level=level, categories=alpha_cats),
                           lambda: alpha_ci(apair, level=level, categories=alpha_cats, **ci_kw))
        out["ac1"] = one(gwet_ac1(pair, categories=cats), lambda: ac1_ci(pair, categories=cats, **ci_kw))
        return out

    def distribution(values: pd.Series) -> dict[str, float]:
        v = values.dropna()
        if v.empty:
            return {c: 0.0 for c in codes}
        counts = v.value_counts()
        return {c: round(float(counts.get(c, 0)) / len(v), 6) for c in codes}

    # human ceiling ------------------------------------------------------------------------
    hcols = [h for h in ceiling_humans if h in labels.columns]
    hum = labels[hcols] if hcols else pd.DataFrame(index=labels.index)
    n_pairable = int((hum.notna().sum(axis=1) >= 2).sum()) if hcols else 0
    ceiling: dict[str, Any] = {"n": n_pairable, "raters": hcols, **_ceiling_names(len(hcols), weights)}
    if len(hcols) >= 2:
        mat = idx[hcols].to_numpy(dtype=float).T
        pa = percent_agreement(mat)
        ceiling["percent_agreement"] = fig(pa, percent_agreement_ci(mat, **ci_kw) if not math.isnan(pa) else None,
                                           n_pairable, "no item was rated by two humans")
        if len(hcols) == 2:
            pf = pair_figs(hcols[0], hcols[1])
            ceiling["kappa"] = pf["kappa"]
            ceiling["weighted_kappa"] = pf["weighted_kappa"]
        else:
            # several humans: Fleiss' kappa (each unit with the humans who rated it), and for
            # ordinal rubrics the mean pairwise weighted kappa (Light's approach), without a CI
            fk = fleiss_kappa(mat, categories=cats)
            ceiling["kappa"] = (fig(fk, None, n_pairable, reason(hcols, labels)) if math.isnan(fk)
                                else fig(fk, fleiss_ci(mat, categories=cats, **ci_kw), n_pairable))
            if weights:
                pairs = [pair_figs(a, b)["weighted_kappa"] for i, a in enumerate(hcols) for b in hcols[i + 1:]]
                vals = [f["value"] for f in pairs if f and f["value"] is not None]
                ceiling["weighted_kappa"] = fig(float(np.mean(vals)) if vals else float("nan"), None,
                                                n_pairable, "no pair of humans has a defined weighted kappa")
            else:
                ceiling["weighted_kappa"] = None
        ceiling["alpha"] = alpha_fig(hcols, labels.index)
        ac = gwet_ac1(mat, categories=cats)
        ceiling["ac1"] = (fig(ac, None, n_pairable, reason(hcols, labels)) if math.isnan(ac)
                          else fig(ac, ac1_ci(mat, categories=cats, **ci_kw), n_pairable))
    else:
        why = "fewer than two human raters"
        for m in ("percent_agreement", "kappa", "alpha", "ac1"):
            ceiling[m] = fig(float("nan"), None, 0, why)
        ceiling["weighted_kappa"] = fig(float("nan"), None, 0, why) if weights else None

    human_vals = pd.concat([labels[h] for h in hcols]) if hcols else pd.Series(dtype=object)
    js = [j for j in judges if j in labels.columns]
    ceiling["loo"], vs_loo = loo_figures(
        code_matrix(idx[hcols].to_numpy()), hcols, code_matrix(idx[js].to_numpy()), js,
        n_categories=len(codes), weights=weights, n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)
    pairwise = pairwise_table(hcols, pair_figs)
    if len(hcols) < 2:
        pairwise["undefined"] = "fewer than two human raters"
    in_scope = (labels["__ref__"].notna() | labels[hcols].notna().any(axis=1)).to_numpy()
    ref_codes = code_matrix(idx["__ref__"].to_numpy())

    # judges -------------------------------------------------------------------------------
    jout: dict[str, Any] = {}
    for j in judges:
        if j not in labels.columns:
            continue
        asked = status[j].notna()
        n_items = int(asked.sum())
        n_abstain = int((status[j] == "abstain").sum())
        n_error = int((status[j] == "error").sum())
        rated = labels[j].notna()
        vs_ref = pair_figs("__ref__", j)
        both = labels["__ref__"].notna() & rated
        cm = confusion_matrix(labels.loc[both, "__ref__"].tolist(), labels.loc[both, j].tolist(), labels=codes)
        vs_ref["confusion"] = cm.to_dict()
        vs_ref["n"] = int(both.sum())
        vs_h = {}
        for h in [h for h in humans if h in labels.columns]:
            f = pair_figs(h, j)
            vs_h[h] = {"n": f["kappa"]["n"], "kappa": f["kappa"], "percent_agreement": f["percent_agreement"]}
        on_judged = labels.index[rated.to_numpy()]
        a_h = alpha_fig(hcols, on_judged) if len(hcols) >= 2 else fig(float("nan"), None, 0, "fewer than two human raters")
        a_hj = alpha_fig([*hcols, j], on_judged) if hcols else fig(float("nan"), None, 0, "no human raters")
        delta = None
        if a_h["value"] is not None and a_hj["value"] is not None:
            delta = round(a_hj["value"] - a_h["value"], 6)
        jout[j] = {
            "n_items": n_items,
            "n_rated": int(rated.sum()),
            "n_abstain": n_abstain,
            "n_error": n_error,
            "abstain_rate": _num(n_abstain / n_items) if n_items else None,
            "error_rate": _num(n_error / n_items) if n_items else None,
            "vs_reference": vs_ref,
            "vs_humans": vs_h,
            "alpha_humans": a_h,
            "alpha_with_judge": a_hj,
            "alpha_delta": delta,
            "label_distribution": distribution(labels[j]),
            "coverage": coverage(in_scope, rated.to_numpy(), status[j].to_numpy(dtype=object),
                                 confidence=o.confidence),
            "vs_loo": vs_loo[j],
            "bias": signed_bias(ref_codes, code_matrix(idx[j].to_numpy()), codes=codes,
                                values=[rubric.values[c] for c in codes], level=level, **ci_kw),
            "per_class": per_class(cm.matrix, codes, [rubric.values[c] for c in codes], **ci_kw),
        }
    return {
        "by": by,
        "key": key,
        "n_items": len(labels),
        "n_reference": int(labels["__ref__"].notna().sum()),
        "n_in_scope": int(in_scope.sum()),
        "n_rated": {j: jout[j]["n_rated"] for j in jout},
        "human_ceiling": ceiling,
        "human_pairwise": pairwise,
        "human_label_distribution": distribution(human_vals),
        "reference_label_distribution": distribution(labels["__ref__"]),
        "judges": jout,
    }


def _ceiling_names(n_humans: int, weights: str | None) -> dict[str, str | None]:
    """What the pooled ceiling's κ figures are: Cohen's for two humans, Fleiss' (and the mean
    pairwise weighted κ, Light's approach) for more."""
    if n_humans > 2:
        return {"kappa_name": "Fleiss κ",
                "weighted_kappa_name": f"mean pairwise {weights}-weighted Cohen κ" if weights else None}
    return {"kappa_name": "Cohen κ", "weighted_kappa_name": f"{weights}-weighted Cohen κ" if weights else None}
