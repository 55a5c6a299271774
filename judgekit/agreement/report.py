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
Markdown and HTML.
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
from judgekit.errors import JudgekitError
from judgekit.rubric import Rubric

METRICS = ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")


# ----------------------------------------------------------------------------- figures
def _num(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round(x, 6)


def fig(value: float, ci: tuple[float, float] | None, n: int, undefined: str | None = None) -> dict:
    """A reported figure: value, CI, n, and the reason when undefined."""
    v = _num(value)
    if v is None and undefined is None:
        undefined = "undefined on these items"
    lo, hi = (None, None) if ci is None or v is None else (_num(ci[0]), _num(ci[1]))
    return {"value": v, "low": lo, "high": hi, "n": int(n), "undefined": None if v is not None else undefined}


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


def collapse_trials(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, rater): the majority ok label over trials.

    Columns ``item_id, rater_id, rater_kind, label, status``; status is ``ok`` when a majority
    label exists, ``abstain`` when the trials tie or none was parseable, ``error`` when every trial
    failed with an error.
    """
    if ratings.empty:
        return pd.DataFrame(columns=["item_id", "rater_id", "rater_kind", "label", "status"])
    single = ratings.groupby(["item_id", "rater_id"], sort=False)["trial"].transform("size") == 1
    simple = ratings.loc[single, ["item_id", "rater_id", "rater_kind", "label", "status"]]
    multi = ratings.loc[~single]
    if multi.empty:
        return simple.reset_index(drop=True)
    keys = ["item_id", "rater_id"]
    groups = (
        multi.assign(_err=multi["status"].eq("error"))
        .groupby(keys, sort=False)
        .agg(rater_kind=("rater_kind", "first"), all_error=("_err", "all"))
        .reset_index()
    )
    ok = multi[multi["status"] == "ok"]
    counts = ok.groupby([*keys, "label"], sort=False).size().rename("n").reset_index()
    top = counts[counts["n"] == counts.groupby(keys)["n"].transform("max")]
    unique_top = top.groupby(keys)["label"].transform("size") == 1
    winners = top.loc[unique_top, [*keys, "label"]]
    out = groups.merge(winners, on=keys, how="left")
    has_label = out["label"].notna()
    out["status"] = np.where(has_label, "ok", np.where(out["all_error"], "error", "abstain"))
    out["label"] = out["label"].astype(object).where(has_label, None)
    out = out[["item_id", "rater_id", "rater_kind", "label", "status"]]
    return pd.concat([simple, out], ignore_index=True)


def _consensus(humans: pd.DataFrame, codes: Sequence[str]) -> pd.Series:
    """Majority label across human columns per item; None where the humans tie or none rated."""
    arr = humans.to_numpy(dtype=object)
    counts = np.stack([(arr == c).sum(axis=1) for c in codes], axis=1)  # (N, V)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    out = np.asarray(codes, dtype=object)[counts.argmax(axis=1)]
    out[(top == 0) | (n_top > 1)] = None
    return pd.Series(out, index=humans.index, dtype=object)


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
        ratings = source.ratings(rubric=rubric)
        stale = source.stale_rubric_hashes(rubric)
        if stale:
            warnings.append(
                f"{len(stale)} older edit(s) of {rubric.id} have ratings in the store; they are not "
                "used (ratings count only under the rubric's current hash)."
            )
        if items is None and by:
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
    refs = [r for r, k in kinds.items() if k == "reference"]
    humans = list(humans) if humans is not None else all_humans
    judges = list(judges) if judges is not None else all_judges
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
    humans = [h for h in humans if h != reference]

    collapsed = collapse_trials(ratings)
    labels = collapsed.pivot(index="item_id", columns="rater_id", values="label").astype(object)
    labels = labels.where(labels.notna(), None)
    status = collapsed.pivot(index="item_id", columns="rater_id", values="status")
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
    slices = [_slice(None, "all", labels, nums, status, rubric, humans, judges, opts)]
    for col in by:
        assert meta is not None
        # "model+prompt_safety" crosses two columns: one slice per combination of values
        parts = col.split("+")
        sub = meta[parts].reindex(labels.index)
        complete = sub.notna().all(axis=1)
        col_values = sub.astype(object).where(sub.notna(), "").astype(str).agg(" / ".join, axis=1)
        col_values = col_values.where(complete)
        for key in sorted(col_values.dropna().unique(), key=str):
            idx = col_values.index[col_values == key]
            part = (nums[0].loc[idx], nums[1].loc[idx])
            slices.append(_slice(col, str(key), labels.loc[idx], part, status.loc[idx], rubric, humans, judges, opts))
        n_missing = int(col_values.isna().sum())
        if n_missing:
            warnings.append(f"{n_missing} items have no {col!r} value and are in no {col} slice.")
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
    humans: list[str],
    judges: list[str],
    o: _Opts,
) -> dict[str, Any]:
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

    def pair_figs(a: str, b: str) -> dict[str, Any]:
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
    hcols = [h for h in humans if h in labels.columns]
    hum = labels[hcols] if hcols else pd.DataFrame(index=labels.index)
    n_pairable = int((hum.notna().sum(axis=1) >= 2).sum()) if hcols else 0
    ceiling: dict[str, Any] = {"n": n_pairable, "raters": hcols}
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
        for h in hcols:
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
        }
    return {
        "by": by,
        "key": key,
        "n_items": len(labels),
        "n_reference": int(labels["__ref__"].notna().sum()),
        "human_ceiling": ceiling,
        "human_label_distribution": distribution(human_vals),
        "reference_label_distribution": distribution(labels["__ref__"]),
        "judges": jout,
    }
