"""Prediction-powered inference (PPI++) for the means a study publishes, with clusters.

The estimators live in four modules: this one (:func:`ppi_mean`, :func:`ppi_drift`),
:mod:`judgekit.stats.ppi_strata` (stratified), :mod:`judgekit.stats.ppi_pairs` (concordance),
:mod:`judgekit.stats.bounded` (a mean over a few seeds); :mod:`judgekit.stats.ppi_core` holds
their shared parts.

A judge gives a per-unit quantity ``f`` on **all** units (items); people (the reference) give the
same quantity ``Y`` on the units of a random sample of **clusters** (conversations, prompts).
The judge's own figure ``f̄`` is biased by its errors; prediction-powered inference corrects it
with the labelled units, whatever the judge's bias, and its interval carries both the sampling
noise of the labels and of the judge's figure.

Estimators (all pure functions over arrays; results are frozen dataclasses):

* :func:`ppi_mean` — PPI++ for a per-unit mean (a rate, RCE_t, a mean R), the **cluster** as
  the sampling unit (a ratio estimator when clusters differ in size), power-tuned λ
  (Angelopoulos, Duchi & Zrnic 2023, *PPI++: Efficient Prediction-Powered Inference*,
  arXiv:2311.01453; classic PPI: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023,
  *Science* 382:669–674).
* :func:`stratified_ppi_mean` — stratified PPI (Fisch, Maynez, Hofer, Dhingra, Globerson &
  Cohen 2024, *Stratified Prediction-Powered Inference for Hybrid Language Model Evaluation*,
  NeurIPS 2024, arXiv:2406.04291): one PPI++ estimate per stratum of the labelling design, each
  with its own λ, combined with the strata's known weights.
* :func:`turn_difference` + :func:`ppi_mean` (or :func:`ppi_drift`) — Drift(t) = RCE_t − RCE_1
  is the mean over conversations of ``d_i = |R_it − H_i| − |R_i1 − H_i|``, so it is the same
  estimator on ``d_i`` (range [−1, 1]).
* :func:`ppi_concordance` — a pairwise figure (concordance C(t), a U-statistic-like mean over
  pairs of units), PPI-corrected with λ on the pair indicator, with a cluster bootstrap
  interval (why not a CLT: see its docstring).
* :func:`bounded_mean_interval` — a mean over a few seeds or prompts, bounded to its range
  (Hoeffding ∩ empirical Bernstein), or "not estimable".

**Honest intervals.** Every interval is clipped to the figure's range (rates and RCE in
[0, 1], Drift in [−1, 1]); one labelled cluster, or values with no variation at all, give
"not estimable" with the reason (``reason``), never a zero-width interval; on fewer than 40
labelled clusters a bounded 0/1 figure's residual variance has an Agresti–Coull-type floor, so
labelled clusters on which judge and people agree do not give the judge's own interval (see
:func:`ppi_mean`); ``-0.0`` is normalised to ``0.0``.

**Few labelled clusters (a bounded 0/1 figure, n < 40).** With λ = 1 and a 0/1 figure, a few
labelled clusters on which the judge happens to agree with people give ``s²(z − λw) = 0``
and an interval as narrow as the judge's own (measured coverage of a biased judge's
corrected rate: 0.61 at 5 labelled conversations, 0.81 at 10). Below
:data:`~judgekit.stats.ppi_core.SMALL_N_FLOOR_BELOW` (40) labelled clusters the labelled
residuals' variance (and the human-only one's, ``s²(S^Y − θm)``) is floored by an
Agresti–Coull-type pseudo-count (Agresti & Coull 1998, *The American Statistician*
52:119–126) — two more clusters whose residual spans the figure's range and two with none:

.. math::

    s^2_\\text{floor}(r) = \\max\\big(s^2(r),\\ \\tilde q(1 - \\tilde q)\\,c^2\\big), \\qquad
    \\tilde q = \\min\\Big(\\frac{\\sum_i (r_i / c)^2 + 2}{n + 4}, \\frac12\\Big),
    \\qquad c = \\text{span} \\cdot \\sqrt{\\bar m_L},

with ``span`` the range the figure's values show (per-cluster means of the judge over
every cluster and of people over the labelled ones, within ``bounds``: 1 for a 0/1 figure)
and ``m̄_L`` the mean labelled cluster size (a cluster's pseudo-residual as that of ``m̄_L``
independent units). Only a figure of 0/1 (or −1/0/1) values is floored — whole-number cluster
sums: rates, label shares, RCE and Drift of 0/1 ratings; for graded values a small residual
means close agreement, not few disagreements. For a 0/1 figure at λ = 1 with clusters of one
unit, ``Σ r²`` is the number ``k`` of labelled units where judge and people disagree and
``q̃ = (k + 2)/(n + 4)`` is Agresti–Coull's adjusted disagreement rate. With the floor the
biased judge's coverage is 0.95–1.00 from 5 labelled conversations (docs/analysis.md,
"few labelled conversations"); from 40 the plain interval covers (0.96) and is unchanged.
An unbounded figure (``bounds`` infinite, as the strata of :func:`stratified_ppi_mean` are)
is not floored. The analysis rows (:mod:`judgekit.analysis.correction.ppi_rows`) report no
corrected or labels-alone figure on fewer than
:data:`~judgekit.stats.ppi_core.MIN_LABELLED_CLUSTERS` (5) labelled clusters.

**What the interval is for.** The variances are those of the superpopulation (clusters drawn
i.i.d. from the population the study samples); for the figure of the N clusters at hand (the
value people would give if they labelled every cluster) the same interval is conservative: its
measured coverage is in docs/analysis.md (0.97–1.00 for every figure over 200 simulated studies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgekit.errors import JudgekitError
from judgekit.stats.ppi_core import (
    DRIFT_RANGE,
    MIN_TUNING_CLUSTERS,
    UNIT_RANGE,
    Bounds,
    Clustered,
    FloatArray,
    Interval,
    IntervalResult,
    as_float,
    cluster_totals,
    clustered,
    floor_span,
    norm_zero,
    not_estimable,
    ppi_ratio,
    ratio_se,
    ratio_var,
    t_interval,
)

__all__ = ["DRIFT_RANGE", "MIN_TUNING_CLUSTERS", "UNIT_RANGE", "Interval", "PPIMean", "TurnUnits", "not_estimable", "ppi_drift", "ppi_mean", "ppi_mean_clustered", "turn_difference"]


@dataclass(frozen=True)
class PPIMean(IntervalResult):
    """A PPI++ estimate of a per-unit mean, clusters as the sampling unit.

    ``estimate``, ``low``, ``high``, ``se`` (or NaN and ``reason`` when not estimable); ``lam``
    the power-tuning weight; ``n_units``/``n_clusters`` labelled, ``big_n_units``/
    ``big_n_clusters`` all units/clusters the judge rated; ``human`` the human-only estimate on
    the same labelled units (λ = 0); ``judge`` the judge's raw figure over all units (its
    interval is sampling noise only: it knows nothing of the judge's bias);
    ``effective_clusters`` = n_clusters × Var(human-only) / Var(PPI) and ``effective_labels``
    the same in units: how many labels the human-only estimate would need for PPI's precision.
    """

    estimate: float
    low: float
    high: float
    se: float
    lam: float
    n_units: int
    n_clusters: int
    big_n_units: int
    big_n_clusters: int
    human: Interval
    judge: Interval
    effective_clusters: float
    effective_labels: float
    bounds: Bounds
    reason: str | None = None

    def interval_se(self) -> float:
        """The standard error the interval was built from."""
        return self.se


def ppi_mean(
    f_all: ArrayLike,
    clusters_all: ArrayLike,
    f_lab: ArrayLike,
    y_lab: ArrayLike,
    clusters_lab: ArrayLike,
    *,
    bounds: Bounds = UNIT_RANGE,
    level: float = 0.95,
    lam: float | None = None,
    min_tuning_clusters: int = MIN_TUNING_CLUSTERS,
) -> PPIMean:
    """PPI++ for the per-unit mean θ = E[Y] (e.g. a refusal rate, RCE_t), clusters sampled.

    ``f_all``/``clusters_all``: the judge's per-unit quantity on every unit and the unit's
    cluster (conversation); ``f_lab``/``y_lab``/``clusters_lab``: the judge's and the people's
    quantity on the labelled units. The labelled clusters are a simple random sample of the
    clusters (people label whole conversations); the *unlabelled* clusters are those of
    ``clusters_all`` with no labelled unit (units of ``f_all`` in labelled clusters are not
    used twice — this is PPI's split into ``n`` labelled and ``N`` unlabelled draws).

    **Why clusters.** The turns of one conversation share a prompt, a model and a history: they
    are not independent draws, and an item-level CLT would understate the variance by the design
    effect ``1 + (m − 1)ρ``. Since labels are drawn by conversation, the conversation is the
    sampling unit: with per-cluster sums ``S^Y_i, S^f_i`` and sizes ``m_i``, θ = E[S^Y]/E[m] is a
    ratio of cluster means, and the estimator solves the PPI++ estimating equation for the
    cluster residual ``S − θ m`` (Angelopoulos, Duchi & Zrnic 2023, §3, M-estimation):

    .. math::

        \\hat\\theta_\\lambda = \\frac{\\bar S^Y_L + \\lambda(\\bar S^f_U - \\bar S^f_L)}
                                      {\\bar m_L + \\lambda(\\bar m_U - \\bar m_L)},

    which is Ȳ_L + λ(f̄_U − f̄_L) per unit when all clusters have the same size, the human-only
    ratio ``ΣS^Y_L / Σm_L`` at λ = 0 and classic PPI at λ = 1. With ``z = S^Y − θm``,
    ``w = S^f − θm`` and ``D`` the denominator, the cluster-level CLT (delta method) gives

    .. math::

        \\widehat{\\mathrm{Var}}\\,\\hat\\theta = \\frac{1}{D^2}\\Big(\\frac{s^2(z - \\lambda w)_L}{n}
            + \\lambda^2 \\frac{s^2(w)}{N}\\Big), \\qquad
        \\hat\\lambda = \\frac{\\widehat{\\mathrm{Cov}}_L(z, w)}{(1 + n/N)\\, s^2(w)}
            \\ \\text{clipped to } [0, 1]

    (PPI++'s power tuning; ``s²(w)`` over all clusters; λ is computed at the human-only θ and
    once more at the PPI θ). ``lam`` fixes λ instead. With fewer than ``min_tuning_clusters``
    labelled clusters λ is not tuned (its noise, correlated with the residuals it multiplies,
    biases the estimate: a few labelled clusters that all agree would give λ = 0 and the
    people's "no error"); classic PPI, λ = 1, is used, valid whatever the judge. The same holds
    when the labelled clusters show no variation in ``z`` or in ``w``. The interval is ``θ̂ ± t_{n−1} se``
    clipped to ``bounds`` (the t quantile for the few clusters a study labels).

    Below 40 labelled clusters a bounded 0/1 figure's labelled residual variance (and the
    human-only one's) is floored: see "Few labelled clusters" in the module docstring.

    Not estimable (``reason`` set) with fewer than 2 labelled clusters or a zero standard error.
    """
    c, sf_a, m_a = clustered(f_all, clusters_all, f_lab, y_lab, clusters_lab)
    return ppi_mean_clustered(c, sf_a, m_a, bounds=bounds, level=level, lam=lam,
                              min_tuning_clusters=min_tuning_clusters)


def ppi_mean_clustered(c: Clustered, sf_a: FloatArray, m_a: FloatArray, *,
                       bounds: Bounds = UNIT_RANGE, level: float = 0.95,
                       lam: float | None = None,
                       min_tuning_clusters: int = MIN_TUNING_CLUSTERS) -> PPIMean:
    """:func:`ppi_mean` from the split of :func:`judgekit.stats.ppi_core.clustered` (its three
    results), for a caller that has it already (the strata of :func:`stratified_ppi_mean`)."""
    n, big_n = len(c.m_l), len(m_a)
    nan = float("nan")
    judge = (t_interval(*ratio_se(sf_a, m_a), big_n - 1, level, bounds, "judge")
             if big_n >= 2 else not_estimable("the judge rated fewer than 2 clusters."))
    if n < 2:
        reason = (f"{n} labelled cluster{'s' if n != 1 else ''}: an interval needs at least 2 "
                  "labelled clusters (one cannot show how much clusters vary).")
        return PPIMean(nan, nan, nan, nan, nan, c.n_units, n, c.big_n_units, big_n,
                       not_estimable(reason), judge, nan, nan, bounds, reason)
    span = floor_span(c, sf_a, m_a, bounds)
    th_h, var_h = ratio_var(c.sy_l, c.m_l, span)
    human = t_interval(th_h, math.sqrt(var_h), n - 1, level, bounds, "human-only")
    theta, var, la = ppi_ratio(c, lam, min_tuning_clusters, span)
    res = t_interval(theta, math.sqrt(var) if var >= 0 else nan, n - 1, level, bounds, "PPI")
    ratio = var_h / var if var > 0 and math.isfinite(var_h) else nan
    return PPIMean(res.estimate, res.low, res.high, res.se, norm_zero(la), c.n_units, n,
                   c.big_n_units, big_n, human, judge, n * ratio, c.n_units * ratio, bounds,
                   res.reason)


# --------------------------------------------------------------------------------------------
# differences within a conversation


def turn_difference(values: ArrayLike, clusters: ArrayLike, turns: ArrayLike, t: int,
                    base: int = 1) -> tuple[NDArray[Any], FloatArray]:
    """Per cluster, ``mean(values at turn t) − mean(values at turn base)``: the cluster ids that
    have both turns, and the differences. With ``values = |R − H|`` this is the per-conversation
    ``d_i`` whose mean is Drift(t) = RCE_t − RCE_1."""
    v = as_float(values, "values")
    c = np.asarray(clusters)
    tr = np.asarray(turns)
    ok = np.isfinite(v)
    ids_t, s_t, m_t = cluster_totals(v[ok & (tr == t)], c[ok & (tr == t)])
    ids_b, s_b, m_b = cluster_totals(v[ok & (tr == base)], c[ok & (tr == base)])
    common, it, ib = np.intersect1d(ids_t, ids_b, return_indices=True)
    return common, s_t[it] / m_t[it] - s_b[ib] / m_b[ib]


@dataclass(frozen=True)
class TurnUnits:
    """The units of a multi-turn study, one entry per unit: harm ``h``, the judge's R ``f``, the
    unit's conversation (``clusters``) and ``turns``, and for labelled units the people's R ``y``."""

    h: ArrayLike
    f: ArrayLike
    clusters: ArrayLike
    turns: ArrayLike
    y: ArrayLike | None = None


def ppi_drift(all_units: TurnUnits, labelled: TurnUnits, *, t: int, base: int = 1,
              level: float = 0.95, lam: float | None = None,
              min_tuning_clusters: int = MIN_TUNING_CLUSTERS) -> PPIMean:
    """PPI++ for Drift(t) = RCE_t − RCE_base: :func:`ppi_mean` on the per-conversation
    differences ``d_i = |R_it − H_i| − |R_i,base − H_i|`` (judge R = ``f`` over ``all_units``,
    people's R = ``y`` of the ``labelled`` units), range [−1, 1]. A difference of two means over
    the same conversations is the mean of the differences, so its interval is paired by
    construction (the two turns' errors co-vary)."""
    if labelled.y is None:
        raise JudgekitError("ppi_drift: the labelled units need the people's R (y).")
    ea = np.abs(as_float(all_units.f, "f_all") - as_float(all_units.h, "h_all"))
    ids_a, d_a = turn_difference(ea, all_units.clusters, all_units.turns, t, base)
    hl = as_float(labelled.h, "h_lab")
    ids_y, d_y = turn_difference(np.abs(as_float(labelled.y, "y_lab") - hl), labelled.clusters,
                                 labelled.turns, t, base)
    ids_f, d_f = turn_difference(np.abs(as_float(labelled.f, "f_lab") - hl), labelled.clusters,
                                 labelled.turns, t, base)
    common, iy, jf = np.intersect1d(ids_y, ids_f, return_indices=True)
    return ppi_mean(d_a, ids_a, d_f[jf], d_y[iy], common, bounds=DRIFT_RANGE, level=level,
                    lam=lam, min_tuning_clusters=min_tuning_clusters)
