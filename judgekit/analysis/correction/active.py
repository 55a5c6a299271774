"""Corrected figures under an active labelling design (``judgekit sample --active``): the refusal
rate and the mean restrictiveness R per model (and overall), RCE_t and Drift(t) per turn, by the
inverse-probability-weighted PPI++ of :mod:`judgekit.stats.active`.

The recorded sample (:mod:`judgekit.annotation.active`) gives, for every labelled item, its
round, its inclusion probability (``1 / weight``) and its round's budget; :func:`active_design`
turns that into the per-cluster :class:`~judgekit.stats.active.ActiveDesign` (the cluster is the
conversation, or the item when there is none). Every item of a labelled cluster must carry the
same probability: the unit of the draw is the cluster.

A figure over a subset of the clusters (one model) is a domain estimate under the same design:
the same probabilities, the subset's clusters (the estimator is a ratio, so the domain's size
need not be known in advance).

Calibration figures under the design: :mod:`judgekit.analysis.calibration.corrected_active`
(``analyze calibration``), with :func:`active_mean_row` for every figure. Not here: C(t) and the
look-alike figures, the criteria and the form shares under an active design; ``analyze
criteria`` refuses an active sample
(:func:`judgekit.analysis.correction.ppi_attach.labelling_design`) rather than weight it wrongly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.correction.ppi_rows import ROW_COLUMNS
from judgekit.annotation.active import (
    ACTIVE_REASON,
    least_probability,
    parse_active_stratum,
    round_units,
)
from judgekit.errors import JudgekitError
from judgekit.stats.active import ActiveDesign, active_ppi_clusters
from judgekit.stats.ppi_core import DRIFT_RANGE, UNIT_RANGE, Bounds, ratio_se, t_interval

#: the columns of :func:`corrected_active`'s table: the group, the PPI rows' columns
#: (:data:`judgekit.analysis.correction.ppi_rows.ROW_COLUMNS`), the design's budget and the
#: labelled clusters a uniform design would need for the same interval width
ACTIVE_COLUMNS = ["model", *ROW_COLUMNS, "expected_labels", "uniform_labels"]


def cluster_of(items: pd.DataFrame, cluster_col: str | None) -> pd.Series:
    """``item_id →`` its cluster (the conversation; the item itself when it has none)."""
    ids = items["item_id"].astype(str)
    if cluster_col is None or cluster_col not in items.columns:
        return pd.Series(ids.to_numpy(), index=ids.to_numpy())
    col = items[cluster_col]
    ok = col.notna() & (col.astype(str) != "")
    vals = np.where(ok.to_numpy(), col.astype(str).to_numpy(dtype=object),
                    ("item:" + ids).to_numpy(dtype=object))
    return pd.Series(vals, index=ids.to_numpy())


def active_design(clusters: pd.Series, design: pd.DataFrame) -> tuple[ActiveDesign, np.ndarray]:
    """The :class:`ActiveDesign` of a recorded active sample over the clusters of ``clusters``
    (``item_id → cluster``), and the cluster ids in the design's column order. Raises
    :class:`~judgekit.errors.JudgekitError` (one sentence) when a chosen item has no recorded
    probability, or the items of one cluster disagree about it."""
    d = design[design["reason"] == ACTIVE_REASON]
    if len(d) != len(design):
        raise JudgekitError("the sample mixes active rows with rows of another design; an active "
                            "sample must be drawn by `judgekit sample --active` alone.")
    w = d["weight"].astype(float)
    bad = ~(np.isfinite(w) & (w >= 1.0))
    if bad.any():
        raise JudgekitError(f"item {d['item_id'][bad].iloc[0]!s} of the active sample has no "
                            "recorded probability (its weight 1/π is missing or below 1), so "
                            "its labels cannot be weighted; draw the sample again.")
    least = d["stratum"].map({s: least_probability(s) for s in d["stratum"].unique()})
    # the round's floor kept every probability at least F·B/N (recorded g-rounded: a tolerance)
    below = least.notna() & (1.0 / w < least.astype(float) * (1.0 - 1e-4))
    if below.any():
        at = int(below.to_numpy().argmax())
        raise JudgekitError(f"item {d['item_id'].iloc[at]!s} of the active sample carries "
                            f"probability 1/weight = {1.0 / w.iloc[at]:.3g}, below the least "
                            f"{float(least.iloc[at]):.3g} its round's recorded floor allows (the "
                            "weight was edited), so its labels cannot be weighted; draw the "
                            "sample again.")
    parsed = {s: parse_active_stratum(s) for s in d["stratum"].unique()}
    strata = d["stratum"].to_numpy()
    rows = pd.DataFrame({"cluster": clusters.reindex(d["item_id"].astype(str)).to_numpy(),
                         "round": [parsed[s][0] for s in strata],
                         "share": [parsed[s][1] for s in strata], "pi": 1.0 / w.to_numpy(),
                         "stratum": strata})
    if rows["cluster"].isna().any():
        raise JudgekitError("an item of the active sample is not among the items analysed.")
    per = rows.groupby("cluster").agg(round=("round", "min"), pi=("pi", "mean"),
                                      hi=("pi", "max"), lo=("pi", "min"))
    if ((per["hi"] - per["lo"]) > 1e-9).any():
        raise JudgekitError("the items of one conversation carry different probabilities in the "
                            "active sample; a conversation is drawn whole, with one probability.")
    ids = np.array(sorted(set(clusters.to_numpy())), dtype=object)
    rounds = sorted(rows["round"].unique())
    shares = rows.drop_duplicates("round").set_index("round")["share"]
    recorded = per["round"].reindex(ids).fillna(-1).astype(int).to_numpy()
    pi = per["pi"].reindex(ids).fillna(1.0).to_numpy()
    # rounds renumbered 0..R-1; a placeholder 0.5 where a cluster was not drawn (ξ = 0)
    order = {r: k for k, r in enumerate(rounds)}
    rnd = np.array([order[r] if r >= 0 else -1 for r in recorded])
    drew = rows.drop_duplicates("round").set_index("round")["stratum"].map(round_units)
    for r in rounds:
        free = int(((rnd < 0) | (rnd >= order[r])).sum())
        if pd.notna(drew[r]) and free > drew[r]:
            raise JudgekitError(
                f"the analysis has {free} units not labelled before round {r} of the active "
                f"sample, but that round drew from {int(drew[r])}: the units added since the draw "
                "(or counted by another unit than the draw's) had no chance of a label, so the "
                "design cannot weight them; analyse only the units the sample was drawn from "
                "or draw a new active sample.")
    probs = np.full((len(rounds), len(ids)), 0.5)
    for k in range(len(rounds)):
        probs[k, rnd < k] = 1.0
        probs[k, (rnd == k)] = pi[rnd == k]
    probs[:, rnd < 0] = 0.5
    weights = np.array([float(shares[r]) for r in rounds])
    return ActiveDesign(probs, np.where(rnd >= 0, rnd, -1), weights), ids


@dataclass(frozen=True)
class ActiveRead:
    """A recorded active sample read once for several figures: ``clusters`` (``item_id →``
    cluster), the per-cluster ``design`` and the cluster ``ids`` in its column order."""

    clusters: pd.Series
    design: ActiveDesign
    ids: np.ndarray


def read_active(items: pd.DataFrame, design: pd.DataFrame, cluster_col: str | None
                ) -> ActiveRead:
    """:func:`active_design` over the clusters of ``items`` (``cluster_col``; None: items)."""
    clusters = cluster_of(items, cluster_col)
    return ActiveRead(clusters, *active_design(clusters, design))


def active_mean_row(figure: str, f_all: np.ndarray, clusters_all: np.ndarray,
                    y_all: np.ndarray, read: ActiveRead, *, bounds: Bounds = UNIT_RANGE,
                    unit: str = "conversation") -> dict[str, Any]:
    """The corrected-figure row (:data:`~judgekit.analysis.correction.ppi_rows.ROW_COLUMNS`
    ``expected_labels`` and ``uniform_labels``) of the mean of a per-unit quantity under the active design
    ``read``: ``f_all`` the judge's value on every unit (NaN: left out), ``y_all`` the
    reference's (read on the units of labelled clusters), ``clusters_all`` each unit's cluster
    (the design's). A domain estimate over the clusters the units touch. A unit of a labelled
    cluster without a reference value refuses the figure (``note``): the cluster was drawn
    whole, so every unit of it needs its label."""
    f = np.asarray(f_all, dtype=float)
    ok = np.isfinite(f)
    idx = pd.Index(read.ids).get_indexer(np.asarray(clusters_all)[ok].astype(str))
    if (idx < 0).any():
        raise JudgekitError("a unit's conversation is not among the active design's clusters.")
    k = len(read.ids)
    f, y = f[ok], np.asarray(y_all, dtype=float)[ok]
    keep = np.bincount(idx, minlength=k) > 0
    lab = read.design.round_of[idx] >= 0
    missing = int((lab & ~np.isfinite(y)).sum())
    sf = np.bincount(idx, weights=f, minlength=k).astype(float)[keep]
    m = np.bincount(idx, minlength=k).astype(float)[keep]
    sy = np.bincount(idx, weights=np.where(lab, np.nan_to_num(y), 0.0), minlength=k)[keep]
    sub = ActiveDesign(read.design.probs[:, keep], read.design.round_of[keep],
                       read.design.weights)
    res = active_ppi_clusters(sy, sf, m, sub, bounds=bounds)
    human = active_ppi_clusters(sy, sf, m, sub, bounds=bounds, lam=0.0)
    raw = (t_interval(*ratio_se(sf, m), len(m) - 1, 0.95, bounds, "judge") if len(m) >= 2
           else None)
    nan = float("nan")
    rv = (raw.estimate, raw.low, raw.high) if raw is not None else (nan, nan, nan)
    note = res.reason or ""
    if missing:
        note = (f"refused: {missing} unit{'s' if missing != 1 else ''} of labelled {unit}s "
                "have no reference rating; an active design labels a whole cluster.")
        res = replace(res, estimate=nan, low=nan, high=nan, se=nan)
        human = replace(human, estimate=nan, low=nan, high=nan, se=nan)
    return {"figure": figure, "unit": unit, "estimator": "active PPI++ (1/π-weighted)",
            "n_labelled": res.n_clusters, "n_clusters": res.big_n_clusters,
            "n_units_labelled": int(m[sub.round_of >= 0].sum()), "n_units": int(m.sum()),
            "raw": rv[0], "raw_ci_low": rv[1], "raw_ci_high": rv[2], "human": human.estimate,
            "human_ci_low": human.low, "human_ci_high": human.high, "corrected": res.estimate,
            "ci_low": res.low, "ci_high": res.high, "judge_error": rv[0] - res.estimate,
            "lam": res.lam, "effective_labels": res.effective_clusters, "note": note,
            "expected_labels": res.expected_labels, "uniform_labels": res.uniform_labels}


def corrected_active(items: pd.DataFrame, judge_values: pd.Series, reference_values: pd.Series,
                     design: pd.DataFrame | ActiveRead, *, figure: str,
                     cluster_col: str | None = None, group_col: str | None = "model",
                     bounds: Bounds = UNIT_RANGE) -> pd.DataFrame:
    """One row per group (``group_col`` of the items, and ``all``) of ``figure``: the judge's
    raw mean of ``judge_values`` (``item_id →`` value) and its active-design PPI++ correction by
    ``reference_values`` (the labelled items' values), columns :data:`ACTIVE_COLUMNS`.
    ``design``: the recorded sample's rows, or :func:`read_active` of them."""
    its = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    f = judge_values.copy()
    f.index = f.index.astype(str)
    f = f[f.notna() & f.index.isin(its.index)].astype(float)
    y = reference_values.copy()
    y.index = y.index.astype(str)
    read = design if isinstance(design, ActiveRead) else read_active(
        its.reset_index(), design, cluster_col)
    clusters = read.clusters
    groups: list[tuple[str, Any]] = [("all", None)]
    if group_col and group_col in its.columns:
        groups += [(str(g), g) for g in sorted(its[group_col].dropna().unique(), key=str)]
    out = []
    unit = (cluster_col or "item").removesuffix("_id")
    yv = y.reindex(f.index).to_numpy(dtype=float)
    cl = clusters.reindex(f.index).to_numpy()
    for name, g in groups:
        sel = np.ones(len(f), bool) if g is None else (its.loc[f.index, group_col] == g).to_numpy()
        row = active_mean_row(figure, f.to_numpy()[sel], cl[sel], yv[sel], read,
                              bounds=bounds, unit=unit)
        out.append({"model": name, **row})
    return pd.DataFrame(out, columns=ACTIVE_COLUMNS)


def item_means(ratings: pd.DataFrame, value: Callable[[pd.Series], Any]) -> pd.Series:
    """``item_id →`` the mean of ``value(label)`` over its ok ratings (trials)."""
    r = ratings
    if "status" in r.columns:
        r = r[r["status"].eq("ok")]
    r = r[r["label"].notna()]
    x = pd.Series(np.asarray(value(r["label"]), dtype=float), index=r.index)
    return x.groupby(r["item_id"].astype(str)).mean()


def active_refusal_and_r(items: pd.DataFrame, judge: pd.DataFrame, reference: pd.DataFrame,
                         design: pd.DataFrame, *, indicator: Callable[[pd.Series], Any],
                         values: dict[str, float], cluster_col: str | None = None,
                         group_col: str | None = "model") -> pd.DataFrame:
    """The refusal rate (``indicator``: label → 0/1) and the mean R (``values``: label → R)
    per group, corrected under the active ``design``: :func:`corrected_active` twice."""
    def r_of(labels: pd.Series) -> pd.Series:
        return labels.map(values).astype(float)
    read = read_active(items, design, cluster_col)
    tables = [corrected_active(items, item_means(judge, fn), item_means(reference, fn), read,
                               figure=fig, cluster_col=cluster_col, group_col=group_col)
              for fig, fn in (("refusal_rate", indicator), ("mean_R", r_of))]
    return pd.concat(tables, ignore_index=True)


def add_active_rates(result: Any, design: Any, ratings: pd.DataFrame, reference: Any,
                     items: pd.DataFrame, *, indicator: Callable[[pd.Series], Any],
                     cluster_col: str | None, model_col: str) -> None:
    """``analyze distribution --correct ppi`` on an active sample: the table ``ppi_active_rates``
    (the refusal rate per model and overall, :func:`corrected_active`) on ``result``, with the
    design's description in the notes (``design``: the
    :class:`~judgekit.analysis.correction.design.LabellingDesign` with its ``active`` rows;
    ``reference``: the :class:`~judgekit.analysis.correction.design.Reference`)."""
    from judgekit.analysis.correction.ppi_attach import attach_ppi
    from judgekit.analysis.result import Table

    frame = corrected_active(items, item_means(ratings, indicator),
                             item_means(reference.ratings, indicator), design.active,
                             figure="refusal_rate", cluster_col=cluster_col, group_col=model_col)
    desc = ("Refusal rate per model, corrected under the active labelling design: PPI++ with "
            "each labelled conversation weighted by 1/its recorded probability (Zrnic & Candès "
            "2024); effective labels = uniformly drawn conversations the human-only figure would "
            "need for this precision.")
    dropped = [t for t in result.tables if t.key == "corrected" or t.key.startswith("corrected_by_")]
    result.tables[:] = [t for t in result.tables if t not in dropped]
    if dropped:
        result.notes.append("The unweighted corrected-rate tables are left out: the labels come "
                            "from an active design, which only the weighted table corrects for.")
    attach_ppi(result, [Table("ppi_active_rates", "Corrected refusal rates (active design)",
                              frame, desc)], design, reference.name)


def active_turn_figures(items: pd.DataFrame, judge_r: pd.Series, reference_r: pd.Series,
                        harm: pd.Series, design: pd.DataFrame | ActiveRead, *,
                        turns: Sequence[int],
                        cluster_col: str = "conversation_id", turn_col: str = "turn",
                        base: int = 1) -> pd.DataFrame:
    """RCE_t (the mean of ``|R − H|`` over the units at turn t) and Drift(t) = RCE_t − RCE_base
    (the mean over conversations of ``d_i = |R_it − H_i| − |R_i,base − H_i|``, range [−1, 1])
    for each of ``turns``, corrected under the active ``design`` whose unit is the conversation:
    each figure is a domain estimate over the conversations that have the turn(s).
    ``judge_r``/``reference_r``/``harm``: ``item_id →`` R and H. Rows: ``figure, turn`` and
    :func:`corrected_active`'s numbers (``corrected, ci_low, ci_high, lam, n_labelled,
    n_clusters, note``)."""
    its = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    read = design if isinstance(design, ActiveRead) else read_active(
        its.reset_index(), design, cluster_col)
    clusters, ad, ids = read.clusters, read.design, read.ids
    pos = pd.Series(np.arange(len(ids)), index=ids)

    def err(r: pd.Series) -> pd.Series:
        v = r.copy()
        v.index = v.index.astype(str)
        return (v.reindex(its.index) - harm.reindex(its.index).to_numpy()).abs()

    ef, ey = err(judge_r), err(reference_r)
    turn = its[turn_col].to_numpy()
    idx = pos.reindex(clusters.reindex(its.index).to_numpy()).to_numpy()

    def per_conv(e: pd.Series, t: int) -> tuple[np.ndarray, np.ndarray]:
        ok = (turn == t) & e.notna().to_numpy()
        s = np.bincount(idx[ok], weights=e.to_numpy()[ok], minlength=len(ids))
        n = np.bincount(idx[ok], minlength=len(ids)).astype(float)
        return s, n

    rows = []
    lab = ad.round_of >= 0
    fb, nb = per_conv(ef, base)
    yb, ny_b = per_conv(ey, base)
    for t in turns:
        ft, nt = per_conv(ef, t)
        yt, ny_t = per_conv(ey, t)
        # a labelled conversation short of a reference rating at t (or base): its sum is not its
        # error, so the figure is refused (as active_mean_row does), not computed with a 0
        short_t, short_b = lab & (ny_t < nt), lab & (ny_b < nb)
        keep = nt > 0
        figs = [("RCE_t", ft, yt, nt, keep, UNIT_RANGE)]
        if t != base:
            both = keep & (nb > 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                d_f = ft / nt - fb / nb
                d_y = yt / nt - yb / nb
            figs.append(("Drift(t)", d_f, d_y, np.ones(len(ids)), both, DRIFT_RANGE))
        for name, sf, sy, m, k, bounds in figs:
            sub = ActiveDesign(ad.probs[:, k], ad.round_of[k], ad.weights)
            res = active_ppi_clusters(sy[k], sf[k], m[k], sub, bounds=bounds)
            short = int((k & (short_t | (short_b if name == "Drift(t)" else False))).sum())
            if short:
                res = replace(res, estimate=float("nan"), low=float("nan"), high=float("nan"),
                              reason=f"refused: {short} labelled conversation"
                              f"{'s' if short != 1 else ''} have no reference rating on a unit "
                              "of the figure; an active design labels a whole conversation.")
            rows.append({"figure": name, "turn": t, "corrected": res.estimate,
                         "ci_low": res.low, "ci_high": res.high, "lam": res.lam,
                         "n_labelled": res.n_clusters, "n_clusters": res.big_n_clusters,
                         "note": res.reason or ""})
    return pd.DataFrame(rows)
