"""One corrected figure as one table row: raw, human-only and PPI-corrected, with n, unit and CI.

Every figure an analysis publishes is a mean of a per-unit quantity (a rate, |R − H|, R) or of a
per-conversation difference (Drift), or a pairwise figure (concordance C). Given the judge's
quantity on every unit and the reference's on the labelled units, the functions here return one
row (a dict) with

* ``raw`` — the judge's figure over every unit, with the interval of its sampling noise only
  (it knows nothing of the judge's bias);
* ``human`` — the human-only figure on the labelled units (what the labels alone say);
* ``corrected`` — the prediction-powered figure (PPI++; stratified PPI under a stratified
  labelling design), whose interval carries the judge's error;
* ``n_labelled`` / ``n_clusters`` (labelled and all resampling units: conversations, or
  prompts), ``n_units_labelled`` / ``n_units``, the ``unit`` of resampling, the ``estimator``,
  λ, ``effective_labels`` (how many labelled units the human-only figure would need for the
  corrected figure's precision: the PPI gain) and ``judge_error`` = raw − corrected;
* ``note`` — why a figure is not estimable or was refused (one sentence), else empty; or that
  the labels alone are reported: a correction is never worse than the labels alone, so where
  the human-only interval on the same labels is narrower than the corrected one (a cell of few
  labelled clusters, where λ cannot be tuned and classic PPI's λ = 1 costs more than it gives)
  the row reports the human-only figure (λ = 0) and says so; or, on fewer than
  :data:`~judgekit.stats.ppi_core.MIN_LABELLED_CLUSTERS` (5) labelled clusters (in a comparison:
  in either group), "too few labelled <unit>s (n = k < 5) for a valid interval": neither the
  corrected nor the labels-alone figure is reported there (coverage below 5 was not measured;
  from 5 the floored interval of :func:`judgekit.stats.ppi.ppi_mean` covers, docs/analysis.md).

The estimators are :func:`judgekit.stats.ppi.ppi_mean` (cluster PPI++, t interval),
:func:`judgekit.stats.ppi_strata.stratified_ppi_mean` (Fisch et al. 2024) and
:func:`judgekit.stats.ppi_pairs.ppi_concordance` (cluster bootstrap).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.stats.concordance import concordance
from judgekit.stats.ppi import UNIT_RANGE, Interval, PPIMean, ppi_mean, turn_difference
from judgekit.stats.ppi_core import MIN_LABELLED_CLUSTERS, Bounds, norm_zero, t_interval
from judgekit.stats.ppi_pairs import Bootstrap, ppi_concordance
from judgekit.stats.ppi_strata import StratifiedPPIMean, stratified_ppi_mean

#: the columns of a corrected-figure row (after the figure's own keys: model, turn, tier, ...)
ROW_COLUMNS = (
    "figure", "unit", "estimator", "n_labelled", "n_clusters", "n_units_labelled", "n_units",
    "raw", "raw_ci_low", "raw_ci_high", "human", "human_ci_low", "human_ci_high", "corrected",
    "ci_low", "ci_high", "judge_error", "lam", "effective_labels", "note",
)


def _iv(prefix: str, iv: Interval | None) -> dict[str, float]:
    nan = float("nan")
    if iv is None or not iv.estimable:
        return {prefix: nan, f"{prefix}_ci_low": nan, f"{prefix}_ci_high": nan}
    return {prefix: norm_zero(iv.estimate), f"{prefix}_ci_low": norm_zero(iv.low),
            f"{prefix}_ci_high": norm_zero(iv.high)}


class _Head(NamedTuple):
    """What a row is about: the figure, its unit of resampling, its estimator and its counts
    (labelled clusters, clusters, labelled units, units)."""

    figure: str
    unit: str
    estimator: str
    counts: tuple[int, int, int, int]


def _row(head: _Head, raw: Interval | None, human: Interval | None,
         corrected: Interval | None, lam: float, eff: float, note: str,
         raw_point: float = math.nan) -> dict[str, Any]:
    counts = head.counts
    row: dict[str, Any] = {"figure": head.figure, "unit": head.unit,
                           "estimator": head.estimator,
                           "n_labelled": counts[0], "n_clusters": counts[1],
                           "n_units_labelled": counts[2], "n_units": counts[3]}
    row.update(_iv("raw", raw))
    if not math.isfinite(row["raw"]) and math.isfinite(raw_point):
        row["raw"] = norm_zero(raw_point)  # the judge's figure, without an interval
    row.update(_iv("human", human))
    c = _iv("corrected", corrected)
    row.update({"corrected": c["corrected"], "ci_low": c["corrected_ci_low"],
                "ci_high": c["corrected_ci_high"]})
    err = row["raw"] - row["corrected"]
    row.update(judge_error=norm_zero(err) if math.isfinite(err) else float("nan"),
               lam=norm_zero(lam) if math.isfinite(lam) else float("nan"),
               # without a human-only interval there is no precision to compare with
               effective_labels=(eff if math.isfinite(eff) and human is not None
                                 and human.estimable else float("nan")),
               note=note)
    return row


def _counts(clusters_all: np.ndarray, clusters_lab: np.ndarray) -> tuple[int, int, int, int]:
    return (len(np.unique(clusters_lab)), len(np.unique(clusters_all)), len(clusters_lab),
            len(clusters_all))


def _estimate(f: np.ndarray, c: np.ndarray, y: np.ndarray, strata: Mapping[Any, str] | None,
              bounds: Bounds) -> tuple[PPIMean | StratifiedPPIMean | None, str, str]:
    """(result or None, estimator, refusal sentence) of a per-unit mean (see :func:`mean_row`)."""
    lab = np.isfinite(y) & np.isfinite(f)
    if strata is None:
        n = len(np.unique(c[lab]))
        res = ppi_mean(f, c, f[lab], y[lab], c[lab], bounds=bounds)
        return res, f"PPI++ (cluster CLT, t on {max(n - 1, 0)} df)", ""
    s = np.array([strata.get(k, "") for k in c], dtype=object)
    try:
        st = stratified_ppi_mean(f, c, s, f[lab], y[lab], c[lab], bounds=bounds)
    except JudgekitError as exc:
        return None, "stratified PPI++", f"refused: {exc}"
    return st, f"stratified PPI++ ({len(st.weights)} strata, Satterthwaite t)", ""


def _no_worse(corrected: Interval | None, human: Interval | None) -> tuple[Interval | None, bool]:
    """The corrected interval, or the human-only one on the same labels when that is narrower
    (and whether it is): λ = 0 lies in PPI++'s own range, and a correction is never worth fewer
    labels than it uses (in a cell of few labelled clusters λ cannot be tuned, and classic PPI's
    λ = 1 can cost more than it gives)."""
    if (corrected is not None and corrected.estimable and human is not None and human.estimable
            and human.width < corrected.width):
        return human, True
    return corrected, False


def too_few_labelled(n_labelled: int, unit: str) -> str:
    """The note of a row with fewer than :data:`MIN_LABELLED_CLUSTERS` labelled clusters (or an
    empty string): neither the corrected nor the labels-alone figure is reported there."""
    if n_labelled >= MIN_LABELLED_CLUSTERS:
        return ""
    return (f"too few labelled {unit}s (n = {n_labelled} < {MIN_LABELLED_CLUSTERS}) for a valid "
            "interval.")


def _human_only_note(n_labelled: int, unit: str) -> str:
    return (f"human-only: on these {n_labelled} labelled {unit}s the correction's interval would "
            "be wider than the labels' alone, so the labels alone are reported.")


def mean_row(
    figure: str,
    f_all: np.ndarray,
    clusters_all: np.ndarray,
    y_all: np.ndarray,
    *,
    strata: Mapping[Any, str] | None = None,
    bounds: Bounds = UNIT_RANGE,
    unit: str = "conversation",
) -> dict[str, Any]:
    """The row of a per-unit mean (a rate, RCE_t, mean R, a Drift's per-conversation
    differences): ``f_all`` the judge's value on every unit, ``y_all`` the reference's (NaN
    where unlabelled), ``clusters_all`` each unit's cluster. With ``strata`` (cluster → stratum
    of the labelling design) the estimate is stratified PPI, weighted by each stratum's share of
    the units; a stratum with fewer than 2 labelled clusters refuses the figure (``note``)."""
    f = np.asarray(f_all, dtype=float)
    y = np.asarray(y_all, dtype=float)
    c = np.asarray(clusters_all)
    lab = np.isfinite(y) & np.isfinite(f)
    counts = _counts(c[np.isfinite(f)], c[lab])
    fin = f[np.isfinite(f)]
    if not len(fin):
        return _row(_Head(figure, unit, "PPI++", counts), None, None, None, math.nan, math.nan,
                    "not estimable: no unit has a rating.")
    raw_point = float(fin.mean())
    if too_few_labelled(counts[0], unit):
        judge = ppi_mean(f, c, f[lab], y[lab], c[lab], bounds=bounds).judge
        return _row(_Head(figure, unit, "PPI++", counts), judge, None, None, math.nan, math.nan,
                    too_few_labelled(counts[0], unit), raw_point)
    res, est, refused = _estimate(f, c, y, strata, bounds)
    if res is None:
        judge = ppi_mean(f, c, f[lab], y[lab], c[lab], bounds=bounds).judge
        return _row(_Head(figure, unit, est, counts), judge, None, None, math.nan, math.nan,
                    refused, raw_point)
    if isinstance(res, PPIMean):
        lam, eff_units = res.lam, res.effective_labels
    else:
        lam = math.nan
        eff_units = res.effective_clusters * counts[2] / counts[0] if counts[0] else math.nan
    note = "" if res.estimable else f"not estimable: {res.reason}"
    corrected, alone = _no_worse(res.interval if res.estimable else None, res.human)
    if alone:
        lam, eff_units, est = 0.0, float(counts[2]), f"human-only (λ = 0; {est} would be wider)"
        note = _human_only_note(counts[0], unit)
    return _row(_Head(figure, unit, est, counts), res.judge, res.human, corrected, lam,
                eff_units, note, raw_point)


def difference_row(
    figure: str,
    a: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    strata: Mapping[Any, str] | None = None,
    unit: str = "conversation",
    level: float = 0.95,
) -> dict[str, Any]:
    """The row of a difference of two means over **disjoint** sets of clusters (a criterion's
    ``compare``: rate(a) − rate(b)): ``a`` and ``b`` are ``(f, clusters, y)`` as in
    :func:`mean_row`. The two PPI estimates are independent, so the difference has variance
    ``se_a² + se_b²``; the interval is ``d ± t · se`` on ``min(n_a, n_b) − 1`` degrees of
    freedom (conservative), clipped to [−1, 1]. The raw and human-only differences are built
    the same way from their own figures. Clusters in both groups refuse the figure (the two
    estimates would not be independent)."""
    fa, ca, ya = (np.asarray(x) for x in a)
    fb, cb, yb = (np.asarray(x) for x in b)
    fa, ya, fb, yb = (np.asarray(x, dtype=float) for x in (fa, ya, fb, yb))
    lab_a, lab_b = np.isfinite(ya), np.isfinite(yb)
    counts = (len(np.unique(ca[lab_a])) + len(np.unique(cb[lab_b])),
              len(np.unique(ca)) + len(np.unique(cb)), int(lab_a.sum() + lab_b.sum()),
              len(fa) + len(fb))
    raw_point = (float(np.nanmean(fa)) - float(np.nanmean(fb))
                 if len(fa) and len(fb) else math.nan)
    est = "difference of two independent PPI++ estimates (t on min(n_a, n_b) − 1 df)"
    if np.intersect1d(ca, cb).size:
        return _row(_Head(figure, unit, est, counts), None, None, None, math.nan, math.nan,
                    "refused: the two groups share conversations, so their estimates are not "
                    "independent; compare groups that are whole conversations (or prompts).",
                    raw_point)
    n_min = min(len(np.unique(ca[lab_a])), len(np.unique(cb[lab_b])))
    if too_few_labelled(n_min, unit):
        return _row(_Head(figure, unit, est, counts), None, None, None, math.nan, math.nan,
                    "in one group " + too_few_labelled(n_min, unit), raw_point)
    ra, _, refused_a = _estimate(fa, ca, ya, strata, (-math.inf, math.inf))
    rb, _, refused_b = _estimate(fb, cb, yb, strata, (-math.inf, math.inf))
    if ra is None or rb is None:
        return _row(_Head(figure, unit, est, counts), None, None, None, math.nan, math.nan,
                    refused_a or refused_b, raw_point)

    def diff(x: Interval, z: Interval, what: str) -> Interval:
        se = math.sqrt(x.se**2 + z.se**2) if x.estimable and z.estimable else math.nan
        return t_interval(x.estimate - z.estimate, se, max(n_min - 1, 1), level, (-1.0, 1.0),
                          what)

    # each group as its own row reports it: corrected, or the labels alone where narrower
    ia, alone_a = _no_worse(ra.interval, ra.human)
    ib, alone_b = _no_worse(rb.interval, rb.human)
    corrected = diff(ia or ra.interval, ib or rb.interval, "PPI difference")
    human = diff(ra.human, rb.human, "human-only difference")
    raw = diff(ra.judge, rb.judge, "judge difference")
    note = "" if corrected.estimable else f"not estimable: {corrected.reason}"
    if corrected.estimable and (alone_a or alone_b):
        est += "; " + ("both groups" if alone_a and alone_b else "one group") + " human-only"
        note = ("human-only in " + ("both groups" if alone_a and alone_b else "one group")
                + ": there the correction's interval would be wider than the labels' alone.")
    return _row(_Head(figure, unit, est, counts), raw, human,
                corrected if corrected.estimable else None, math.nan, math.nan, note, raw_point)


def drift_row(
    figure: str,
    err_f: np.ndarray,
    err_y: np.ndarray,
    clusters: np.ndarray,
    turns: np.ndarray,
    t: float,
    *,
    base: float = 1.0,
    strata: Mapping[Any, str] | None = None,
    unit: str = "conversation",
) -> dict[str, Any]:
    """Drift(t) = RCE_t − RCE_base as the mean over conversations of ``d_i = e_it − e_i,base``
    (``err_f`` the judge's |R − H| per unit, ``err_y`` the reference's, NaN where unlabelled):
    :func:`mean_row` on the differences, range [−1, 1]. Conversations are the units here, so
    ``n_units`` counts conversations with both turns."""
    c = np.asarray(clusters)
    tr = np.asarray(turns, dtype=float)
    ids_f, d_f = turn_difference(err_f, c, tr, t, base)  # type: ignore[arg-type]
    ids_y, d_y = turn_difference(err_y, c, tr, t, base)  # type: ignore[arg-type]
    y = np.full(len(ids_f), np.nan)
    _, i_f, i_y = np.intersect1d(ids_f, ids_y, assume_unique=True, return_indices=True)
    y[i_f] = d_y[i_y]
    return mean_row(figure, d_f, ids_f, y, strata=strata, bounds=(-1.0, 1.0), unit=unit)


def concordance_row(
    figure: str,
    h: np.ndarray,
    f: np.ndarray,
    y: np.ndarray,
    clusters: np.ndarray,
    *,
    strata: Mapping[Any, str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    unit: str = "conversation",
) -> dict[str, Any]:
    """Concordance C = P(R(q1) ≥ R(q2) | H(q1) > H(q2)) over pairs of units, PPI-corrected
    with a cluster-bootstrap interval (:func:`judgekit.stats.ppi_pairs.ppi_concordance`);
    under a stratified design the bootstrap resamples within strata and weights pairs by
    1/(π_i π_j)."""
    c = np.asarray(clusters)
    yv = np.asarray(y, dtype=float)
    lab = np.isfinite(yv)
    counts = _counts(c, c[lab])
    s = None if strata is None else np.array([strata.get(k, "") for k in c], dtype=object)
    est = ("PPI (pairs; cluster bootstrap" + (", within strata" if s is not None else "")
           + f", {n_boot} resamples)")
    raw_point = float(concordance(np.asarray(f, dtype=float), np.asarray(h, dtype=float)).c)
    if too_few_labelled(counts[0], unit):
        return _row(_Head(figure, unit, est, counts), None, None, None, math.nan, math.nan,
                    too_few_labelled(counts[0], unit), raw_point)
    try:
        res = ppi_concordance(h, f, yv, c, strata=s,
                              bootstrap=Bootstrap(max(n_boot, 1), seed))
    except JudgekitError as exc:
        return _row(_Head(figure, unit, est, counts), None, None, None, math.nan, math.nan,
                    f"refused: {exc}", raw_point)
    note = "" if res.estimable else f"not estimable: {res.reason}"
    eff = (res.effective_clusters * counts[2] / counts[0] if counts[0] else math.nan)
    lam = res.lam
    corrected, alone = _no_worse(res.interval if res.estimable else None, res.human)
    if alone:
        lam, eff, est = 0.0, float(counts[2]), f"human-only (λ = 0; {est} would be wider)"
        note = _human_only_note(counts[0], unit)
    return _row(_Head(figure, unit, est, counts), res.judge, res.human, corrected, lam, eff,
                note, raw_point)
