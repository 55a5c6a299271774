"""Prediction-powered inference (PPI++) for the means a study publishes, with clusters.

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
[0, 1], Drift in [−1, 1]); one labelled cluster, or labelled clusters with no variation, give
"not estimable" with the reason (``reason``), never a zero-width interval; ``-0.0`` is
normalised to ``0.0``.

**What the interval is for.** The variances are those of the superpopulation (clusters drawn
i.i.d. from the population the study samples); for the figure of the N clusters at hand (the
value people would give if they labelled every cluster) the same interval is conservative by
about the finite-population factor ``1/sqrt(1 − n/N)``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from judgekit.errors import JudgekitError

FloatArray = NDArray[np.float64]
Bounds = tuple[float, float]

#: the range of a rate, an RCE, a mean R or a concordance
UNIT_RANGE: Bounds = (0.0, 1.0)
#: the range of a Drift(t) = RCE_t − RCE_1
DRIFT_RANGE: Bounds = (-1.0, 1.0)


def _norm(x: float) -> float:
    """``x`` as a float with ``-0.0`` normalised to ``0.0`` (NaN stays NaN)."""
    x = float(x)
    return 0.0 if x == 0.0 else x


def _clip(x: float, bounds: Bounds) -> float:
    return _norm(min(max(float(x), bounds[0]), bounds[1])) if math.isfinite(x) else float("nan")


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval ``[low, high]``, or "not estimable" with ``reason``.

    When ``reason`` is set the three numbers are NaN. ``se`` is the standard error the interval
    was built from (NaN for bootstrap and finite-sample intervals)."""

    estimate: float
    low: float
    high: float
    se: float = float("nan")
    reason: str | None = None

    @property
    def estimable(self) -> bool:
        return self.reason is None

    @property
    def width(self) -> float:
        return self.high - self.low


def not_estimable(reason: str) -> Interval:
    """An :class:`Interval` that says why there is no figure (one sentence)."""
    nan = float("nan")
    return Interval(nan, nan, nan, nan, reason)


def _t_interval(estimate: float, se: float, df: float, level: float, bounds: Bounds,
                what: str) -> Interval:
    """``estimate ± t_{df} · se`` clipped to ``bounds``; not estimable without a positive SE."""
    if not math.isfinite(estimate):
        return not_estimable(f"the {what} estimate is not finite.")
    if not (math.isfinite(se) and se > 0.0):
        return not_estimable(f"the {what} standard error is zero or undefined (the labelled "
                             "clusters show no variation), so an interval would claim certainty "
                             "it does not have.")
    q = float(stats.t.ppf(0.5 + level / 2.0, df)) if math.isfinite(df) else float(
        stats.norm.ppf(0.5 + level / 2.0))
    return Interval(_clip(estimate, bounds), _clip(estimate - q * se, bounds),
                    _clip(estimate + q * se, bounds), _norm(se))


# --------------------------------------------------------------------------------------------
# clusters


def _as_float(x: ArrayLike, name: str) -> FloatArray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise JudgekitError(f"{name} must be a one-dimensional array of numbers, one per unit.")
    return a


def _cluster_totals(values: FloatArray, clusters: NDArray[Any]
                    ) -> tuple[NDArray[Any], FloatArray, FloatArray]:
    """Distinct cluster ids, the per-cluster sums of ``values`` and the cluster sizes."""
    ids, inv = np.unique(clusters, return_inverse=True)
    inv = inv.reshape(-1)
    sums = np.bincount(inv, weights=values, minlength=len(ids)).astype(float)
    sizes = np.bincount(inv, minlength=len(ids)).astype(float)
    return ids, sums, sizes


@dataclass(frozen=True)
class _Clustered:
    """The labelled clusters (sums of Y and f, sizes) and the unlabelled ones (sums of f,
    sizes), the unit of every computation below."""

    sy_l: FloatArray
    sf_l: FloatArray
    m_l: FloatArray
    sf_u: FloatArray
    m_u: FloatArray
    n_units: int
    big_n_units: int


def _clustered(f_all: ArrayLike, clusters_all: ArrayLike, f_lab: ArrayLike, y_lab: ArrayLike,
               clusters_lab: ArrayLike) -> tuple[_Clustered, FloatArray, FloatArray]:
    """Split into labelled and unlabelled clusters. Units with a missing value are dropped (in
    the labelled units: where Y or f is missing). A cluster is labelled when it has a labelled
    unit; the unlabelled clusters are the other clusters of ``clusters_all``. Also returns the
    per-cluster sums of f and sizes over all clusters (the judge's own figure)."""
    fa = _as_float(f_all, "f_all")
    ca = np.asarray(clusters_all)
    fl, yl = _as_float(f_lab, "f_lab"), _as_float(y_lab, "y_lab")
    cl = np.asarray(clusters_lab)
    if len(ca) != len(fa):
        raise JudgekitError("f_all and clusters_all must have one entry per unit.")
    if not len(fl) == len(yl) == len(cl):
        raise JudgekitError("f_lab, y_lab and clusters_lab must have one entry per labelled unit.")
    ok_a = np.isfinite(fa)
    fa, ca = fa[ok_a], ca[ok_a]
    ok_l = np.isfinite(fl) & np.isfinite(yl)
    fl, yl, cl = fl[ok_l], yl[ok_l], cl[ok_l]
    ids_l, sy_l, m_l = _cluster_totals(yl, cl)
    _, sf_l, _ = _cluster_totals(fl, cl)
    unl = ~np.isin(ca, ids_l)
    _, sf_u, m_u = _cluster_totals(fa[unl], ca[unl])
    _, sf_a, m_a = _cluster_totals(fa, ca)
    return _Clustered(sy_l, sf_l, m_l, sf_u, m_u, int(len(yl)), int(len(fa))), sf_a, m_a


def _var(x: FloatArray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else float("nan")


#: with fewer labelled clusters than this, λ is not tuned on them: its noise, correlated with
#: the residuals it multiplies, biases the estimate (a stratum whose few labelled clusters all
#: agree would get λ = 0 and report the people's 0 errors). Classic PPI (λ = 1) is used instead,
#: or in :func:`stratified_ppi_mean` the λ pooled over the strata.
MIN_TUNING_CLUSTERS = 10


def _theta(c: _Clustered, lam: float) -> tuple[float, float]:
    """(θ̂_λ, its denominator D) of the cluster PPI ratio estimator."""
    big_m = len(c.m_u)
    su = float(np.mean(c.sf_u)) if big_m else 0.0
    mu = float(np.mean(c.m_u)) if big_m else 0.0
    num = float(np.mean(c.sy_l)) + lam * (su - float(np.mean(c.sf_l)))
    den = float(np.mean(c.m_l)) + lam * (mu - float(np.mean(c.m_l)))
    return num / den, den


def _tuning(c: _Clustered, theta: float) -> tuple[float, float]:
    """(Cov_L(z, w), (1 + n/N) s²(w)) at θ: λ̂ is their ratio (PPI++)."""
    n, big_m = len(c.m_l), len(c.m_u)
    z = c.sy_l - theta * c.m_l
    w_l = c.sf_l - theta * c.m_l
    var_w = _var(np.concatenate([w_l, c.sf_u - theta * c.m_u]))
    cov = float(np.cov(z, w_l, ddof=1)[0, 1]) if n > 1 else float("nan")
    return cov, (1.0 + n / big_m) * var_w


def _lam_from(cov: float, var: float) -> float:
    ok = math.isfinite(cov) and math.isfinite(var) and var > 0
    return float(np.clip(cov / var, 0.0, 1.0)) if ok else 0.0


def _tuned_lambda(c: _Clustered, min_clusters: int = MIN_TUNING_CLUSTERS) -> float:
    """PPI++ λ̂ at the human-only θ, then once more at the PPI θ (classic λ = 1 with fewer
    than :data:`MIN_TUNING_CLUSTERS` labelled clusters)."""
    if len(c.m_u) == 0:
        return 0.0  # every cluster is labelled: nothing for the judge to add
    if len(c.m_l) < min_clusters:
        return 1.0
    theta = float(c.sy_l.sum() / c.m_l.sum())
    if not (_var(c.sy_l - theta * c.m_l) > 0 and _var(c.sf_l - theta * c.m_l) > 0):
        return 1.0  # no variation among the labelled clusters: nothing to tune λ on
    lam = 0.0
    for _ in range(2):
        lam = _lam_from(*_tuning(c, theta))
        theta, _ = _theta(c, lam)
    return lam


def _ppi_ratio(c: _Clustered, lam: float | None, min_clusters: int = MIN_TUNING_CLUSTERS
               ) -> tuple[float, float, float]:
    """(θ̂, Var θ̂, λ) of the cluster PPI++ ratio estimator; see :func:`ppi_mean`."""
    n, big_m = len(c.m_l), len(c.m_u)
    if big_m == 0:
        lam = 0.0
    elif lam is None:
        lam = _tuned_lambda(c, min_clusters)
    theta, den = _theta(c, lam)
    z = c.sy_l - theta * c.m_l
    w_l = c.sf_l - theta * c.m_l
    var = _var(z - lam * w_l) / n
    if lam > 0.0:
        w_all = np.concatenate([w_l, c.sf_u - theta * c.m_u])
        var += lam**2 * _var(w_all) / big_m
    return theta, var / den**2, float(lam)


def _ratio_se(sums: FloatArray, sizes: FloatArray) -> tuple[float, float]:
    """(θ̂, se) of :func:`_ratio`."""
    theta, var = _ratio(sums, sizes)
    return theta, math.sqrt(var) if var >= 0 else float("nan")


def _ratio(sums: FloatArray, sizes: FloatArray) -> tuple[float, float]:
    """(Σ s / Σ m, its cluster-CLT variance ``Var(s − θ m) / (n m̄²)``)."""
    theta = float(sums.sum() / sizes.sum())
    return theta, _var(sums - theta * sizes) / (len(sizes) * float(sizes.mean()) ** 2)


@dataclass(frozen=True)
class PPIMean:
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

    @property
    def estimable(self) -> bool:
        return self.reason is None

    @property
    def interval(self) -> Interval:
        return Interval(self.estimate, self.low, self.high, self.se, self.reason)

    @property
    def width(self) -> float:
        return self.high - self.low


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

    Not estimable (``reason`` set) with fewer than 2 labelled clusters or a zero standard error.
    """
    c, sf_a, m_a = _clustered(f_all, clusters_all, f_lab, y_lab, clusters_lab)
    n, big_n = len(c.m_l), len(m_a)
    nan = float("nan")
    judge = (_t_interval(*_ratio_se(sf_a, m_a), big_n - 1, level, bounds, "judge")
             if big_n >= 2 else not_estimable("the judge rated fewer than 2 clusters."))
    if n < 2:
        reason = (f"{n} labelled cluster{'s' if n != 1 else ''}: an interval needs at least 2 "
                  "labelled clusters (one cannot show how much clusters vary).")
        return PPIMean(nan, nan, nan, nan, nan, c.n_units, n, c.big_n_units, big_n,
                       not_estimable(reason), judge, nan, nan, bounds, reason)
    th_h, var_h = _ratio(c.sy_l, c.m_l)
    human = _t_interval(th_h, math.sqrt(var_h), n - 1, level, bounds, "human-only")
    theta, var, la = _ppi_ratio(c, lam, min_tuning_clusters)
    res = _t_interval(theta, math.sqrt(var) if var >= 0 else nan, n - 1, level, bounds, "PPI")
    ratio = var_h / var if var > 0 and math.isfinite(var_h) else nan
    return PPIMean(res.estimate, res.low, res.high, res.se, _norm(la), c.n_units, n,
                   c.big_n_units, big_n, human, judge, n * ratio, c.n_units * ratio, bounds,
                   res.reason)


# --------------------------------------------------------------------------------------------
# stratified


@dataclass(frozen=True)
class StratifiedPPIMean:
    """Stratified PPI: the combined estimate and interval, the human-only and judge figures,
    and per stratum its weight, inclusion probability (labelled / all clusters) and
    :class:`PPIMean` (with its own λ)."""

    estimate: float
    low: float
    high: float
    se: float
    df: float
    human: Interval
    judge: Interval
    effective_clusters: float
    weights: dict[Hashable, float]
    inclusion: dict[Hashable, float]
    strata: dict[Hashable, PPIMean] = field(repr=False)
    bounds: Bounds = UNIT_RANGE
    reason: str | None = None

    @property
    def estimable(self) -> bool:
        return self.reason is None

    @property
    def interval(self) -> Interval:
        return Interval(self.estimate, self.low, self.high, self.se, self.reason)

    @property
    def width(self) -> float:
        return self.high - self.low


def _satterthwaite(parts: list[tuple[float, int]]) -> float:
    """Welch–Satterthwaite degrees of freedom of Σ v_k with v_k on n_k − 1 df."""
    num = sum(v for v, _ in parts) ** 2
    den = sum(v * v / (n - 1) for v, n in parts if v > 0)
    return num / den if den > 0 else float("inf")


def _pooled_lambda(cs: Mapping[Hashable, _Clustered], w: Mapping[Hashable, float]) -> float:
    """One λ for all strata, minimising ``Σ_k W_k² Var θ̂_k(λ)``: ``Σ a_k Cov_k / Σ a_k V_k`` with
    ``a_k = W_k² / (n_k D_k²)``, ``V_k = (1 + n_k/N_k) s²_k(w)`` (PPI++ over the strata; classic
    λ = 1 with fewer than :data:`MIN_TUNING_CLUSTERS` labelled clusters in all)."""
    live = {k: c for k, c in cs.items() if len(c.m_u) > 0}
    if not live:
        return 0.0
    if sum(len(c.m_l) for c in cs.values()) < MIN_TUNING_CLUSTERS:
        return 1.0
    theta = {k: float(c.sy_l.sum() / c.m_l.sum()) for k, c in live.items()}
    lam = 0.0
    for _ in range(2):
        num = den = 0.0
        for k, c in live.items():
            cov, v = _tuning(c, theta[k])
            a = w[k] ** 2 / (len(c.m_l) * float(np.mean(c.m_l)) ** 2)
            if math.isfinite(cov) and math.isfinite(v):
                num, den = num + a * cov, den + a * v
        lam = _lam_from(num, den)
        theta = {k: _theta(c, lam)[0] for k, c in live.items()}
    return lam


def stratified_ppi_mean(
    f_all: ArrayLike,
    clusters_all: ArrayLike,
    strata_all: ArrayLike,
    f_lab: ArrayLike,
    y_lab: ArrayLike,
    clusters_lab: ArrayLike,
    *,
    weights: Mapping[Hashable, float] | None = None,
    bounds: Bounds = UNIT_RANGE,
    level: float = 0.95,
) -> StratifiedPPIMean:
    """Stratified PPI++ for a per-unit mean (Fisch et al. 2024, StratPPI).

    The labelling design drew a simple random sample of clusters within each stratum ``k``
    (``strata_all``: the stratum of each unit, constant within a cluster), ``n_k`` of its
    ``N_k`` clusters: inclusion probability ``π_k = n_k / N_k``, possibly different per stratum
    (e.g. more labels where harm is high). Within each stratum :func:`ppi_mean` gives
    ``θ̂_k`` with its own λ_k and variance ``v_k``; the strata have known weights ``W_k``
    (``weights``, normalised; by default each stratum's share of the units in ``f_all``), and

    .. math::

        \\hat\\theta = \\sum_k W_k \\hat\\theta_k, \\qquad
        \\widehat{\\mathrm{Var}}\\,\\hat\\theta = \\sum_k W_k^2 v_k,

    strata being sampled independently. Choosing each λ_k to minimise v_k minimises the total
    (the per-stratum tuning of Fisch et al. §3). Interval: ``t`` with Welch–Satterthwaite
    degrees of freedom, clipped to ``bounds``. A stratum with fewer than
    :data:`MIN_TUNING_CLUSTERS` labelled clusters cannot tune its own λ without bias; it takes
    the λ pooled over all strata (the common λ minimising the total variance). The human-only figure is the same with every
    λ_k = 0 (the classical stratified ratio estimator).

    Raises :class:`~judgekit.errors.JudgekitError` when a stratum has fewer than 2 labelled
    clusters (no labelled cluster: its θ_k is unknown; one: its variance is).
    """
    fa = _as_float(f_all, "f_all")
    ca = np.asarray(clusters_all)
    sa = np.asarray(strata_all)
    if not len(fa) == len(ca) == len(sa):
        raise JudgekitError("f_all, clusters_all and strata_all must have one entry per unit.")
    cl = np.asarray(clusters_lab)
    fl, yl = _as_float(f_lab, "f_lab"), _as_float(y_lab, "y_lab")
    # the stratum of each cluster, from the units of all clusters
    pair_ids, first = np.unique(np.stack([ca.astype(str), sa.astype(str)]), axis=1,
                                return_index=True)
    cids, counts = np.unique(pair_ids[0], return_counts=True)
    if (counts > 1).any():
        raise JudgekitError(f"cluster {cids[counts > 1][0]!r} lies in more than one stratum; "
                            "a stratum of the labelling design must hold whole clusters.")
    missing = ~np.isin(cl.astype(str), ca.astype(str))
    if missing.any():
        raise JudgekitError(f"labelled cluster {cl[missing][0]!r} is not among clusters_all; "
                            "pass the judge's values on every unit, labelled ones included.")
    stratum_of = dict(zip(ca.astype(str)[first], sa[first], strict=True))
    sl = np.array([stratum_of[c] for c in cl.astype(str)], dtype=sa.dtype)
    levels = list(dict.fromkeys(sa.tolist()))
    if weights is None:
        w = {k: float(np.sum(sa == k)) for k in levels}
    else:
        absent = [k for k in levels if k not in weights]
        if absent:
            raise JudgekitError(f"weights has no entry for stratum {absent[0]!r}; give every "
                                "stratum its known share of the population.")
        w = {k: float(weights[k]) for k in levels}
    total = sum(w.values())
    w = {k: v / total for k, v in w.items()}
    per: dict[Hashable, PPIMean] = {}
    incl: dict[Hashable, float] = {}
    raw: dict[Hashable, tuple[float, float, float, float]] = {}
    cs: dict[Hashable, tuple[NDArray[np.bool_], NDArray[np.bool_], _Clustered]] = {}
    for k in levels:
        ia, il = sa == k, sl == k
        n_k = len(np.unique(cl[il & np.isfinite(fl) & np.isfinite(yl)]))
        big_n_k = len(np.unique(ca[ia]))
        if n_k < 2:
            raise JudgekitError(f"stratum {k!r} has {n_k} labelled cluster"
                                f"{'s' if n_k != 1 else ''} of {big_n_k}; stratified PPI needs "
                                "at least 2 in every stratum (label more, or merge the stratum).")
        cs[k] = (ia, il, _clustered(fa[ia], ca[ia], fl[il], yl[il], cl[il])[0])
        incl[k] = n_k / big_n_k
    lam_pool = _pooled_lambda({k: v[2] for k, v in cs.items()}, w)
    for k, (ia, il, c) in cs.items():
        lam_k = _tuned_lambda(c) if len(c.m_l) >= MIN_TUNING_CLUSTERS else lam_pool
        per[k] = ppi_mean(fa[ia], ca[ia], fl[il], yl[il], cl[il], bounds=(-math.inf, math.inf),
                          level=level, lam=lam_k)
        th_k, var_k, _ = _ppi_ratio(c, lam_k)
        raw[k] = (th_k, var_k, *_ratio(c.sy_l, c.m_l))
    est = sum(w[k] * raw[k][0] for k in levels)
    parts = [(w[k] ** 2 * raw[k][1], per[k].n_clusters) for k in levels]
    var = sum(v for v, _ in parts)
    df = _satterthwaite(parts)
    res = _t_interval(est, math.sqrt(var), df, level, bounds, "stratified PPI")
    h_parts = [(w[k] ** 2 * raw[k][3], per[k].n_clusters) for k in levels]
    h_var = sum(v for v, _ in h_parts)
    human = _t_interval(sum(w[k] * raw[k][2] for k in levels), math.sqrt(h_var),
                        _satterthwaite(h_parts), level, bounds, "human-only")
    _, sf_a, m_a = _cluster_totals(fa[np.isfinite(fa)], ca[np.isfinite(fa)])
    judge = _t_interval(*_ratio_se(sf_a, m_a), len(m_a) - 1, level, bounds, "judge")
    n_lab = sum(p.n_clusters for p in per.values())
    eff = n_lab * h_var / var if var > 0 else float("nan")
    return StratifiedPPIMean(res.estimate, res.low, res.high, res.se, df, human, judge, eff, w,
                             incl, per, bounds, res.reason)


# --------------------------------------------------------------------------------------------
# differences within a conversation


def turn_difference(values: ArrayLike, clusters: ArrayLike, turns: ArrayLike, t: int,
                    base: int = 1) -> tuple[NDArray[Any], FloatArray]:
    """Per cluster, ``mean(values at turn t) − mean(values at turn base)``: the cluster ids that
    have both turns, and the differences. With ``values = |R − H|`` this is the per-conversation
    ``d_i`` whose mean is Drift(t) = RCE_t − RCE_1."""
    v = _as_float(values, "values")
    c = np.asarray(clusters)
    tr = np.asarray(turns)
    ok = np.isfinite(v)
    ids_t, s_t, m_t = _cluster_totals(v[ok & (tr == t)], c[ok & (tr == t)])
    ids_b, s_b, m_b = _cluster_totals(v[ok & (tr == base)], c[ok & (tr == base)])
    common, it, ib = np.intersect1d(ids_t, ids_b, return_indices=True)
    return common, s_t[it] / m_t[it] - s_b[ib] / m_b[ib]


def ppi_drift(
    h_all: ArrayLike, f_all: ArrayLike, clusters_all: ArrayLike, turns_all: ArrayLike,
    h_lab: ArrayLike, f_lab: ArrayLike, y_lab: ArrayLike, clusters_lab: ArrayLike,
    turns_lab: ArrayLike, *, t: int, base: int = 1, level: float = 0.95,
    lam: float | None = None,
    min_tuning_clusters: int = MIN_TUNING_CLUSTERS,
) -> PPIMean:
    """PPI++ for Drift(t) = RCE_t − RCE_base: :func:`ppi_mean` on the per-conversation
    differences ``d_i = |R_it − H_i| − |R_i,base − H_i|`` (judge R = ``f``, people's R = ``y``),
    range [−1, 1]. A difference of two means over the same conversations is the mean of the
    differences, so its interval is paired by construction (the two turns' errors co-vary)."""
    ea = np.abs(_as_float(f_all, "f_all") - _as_float(h_all, "h_all"))
    ids_a, d_a = turn_difference(ea, clusters_all, turns_all, t, base)
    hl = _as_float(h_lab, "h_lab")
    ids_y, d_y = turn_difference(np.abs(_as_float(y_lab, "y_lab") - hl), clusters_lab,
                                 turns_lab, t, base)
    ids_f, d_f = turn_difference(np.abs(_as_float(f_lab, "f_lab") - hl), clusters_lab,
                                 turns_lab, t, base)
    common, iy, jf = np.intersect1d(ids_y, ids_f, return_indices=True)
    return ppi_mean(d_a, ids_a, d_f[jf], d_y[iy], common, bounds=DRIFT_RANGE, level=level,
                    lam=lam)


# --------------------------------------------------------------------------------------------
# pairwise figures


@dataclass(frozen=True)
class PPIPairwise:
    """A PPI-corrected pairwise figure (concordance) with its cluster-bootstrap interval.

    ``lam`` is λ on the pair indicator (overlap form, see :func:`ppi_concordance`);
    ``human`` and ``judge`` the human-only (labelled pairs) and judge (all pairs) figures with
    intervals from the same bootstrap; ``n_pairs_labelled``/``n_pairs`` the pair counts."""

    estimate: float
    low: float
    high: float
    lam: float
    n_clusters: int
    big_n_clusters: int
    n_pairs_labelled: float
    n_pairs: float
    human: Interval
    judge: Interval
    effective_clusters: float
    n_resamples: int
    reason: str | None = None

    @property
    def estimable(self) -> bool:
        return self.reason is None

    @property
    def interval(self) -> Interval:
        return Interval(self.estimate, self.low, self.high, float("nan"), self.reason)

    @property
    def width(self) -> float:
        return self.high - self.low


def _order_kernel(a: FloatArray, ties: float) -> FloatArray:
    """``K[p, q] = 1[a_p > a_q] + ties · 1[a_p = a_q]``."""
    return (a[:, None] > a[None, :]) + ties * (a[:, None] == a[None, :])


def _quad(c: FloatArray, k: FloatArray) -> FloatArray:
    """``Σ_pq c_bp K_pq c_bq`` for each row b of ``c``."""
    return np.einsum("bp,bp->b", c @ k, c)


def ppi_concordance(
    h: ArrayLike,
    f: ArrayLike,
    y: ArrayLike,
    clusters: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    ties: float = 1.0,
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    lam: float | None = None,
) -> PPIPairwise:
    """PPI-corrected concordance ``C = P(R(q1) ≥ R(q2) | H(q1) > H(q2))`` over pairs of units.

    Per unit (e.g. the units of turn t): harm ``h``, the judge's R ``f`` (every unit), the
    people's R ``y`` (NaN where unlabelled), the unit's ``clusters`` (conversation/prompt).
    A pair with ``h_i > h_j`` scores ``1[R_i > R_j] + ties · 1[R_i = R_j]`` (``ties=1``: the
    project's C, ties count as concordant; ``ties=0.5``: ``C_half``). With ``C_f`` the judge's
    figure over all pairs, and ``Ĉ_Y``, ``Ĉ_f`` the people's and the judge's figures over the
    pairs whose two units are labelled (each labelled pair weighted by ``1/(π_i π_j)``, π the
    labelling's inclusion probability of the unit's cluster in its stratum, ``strata``):

    .. math::

        \\hat C_\\lambda = \\lambda\\, C_f + \\hat C_Y - \\lambda\\, \\hat C_f, \\qquad
        \\hat\\lambda = \\frac{\\widehat{\\mathrm{Cov}}(Y_{pair}, f_{pair})}
                             {\\widehat{\\mathrm{Var}}(f_{pair})} \\text{ clipped to } [0, 1],

    over the labelled pairs. This is PPI with the judge's figure over *all* pairs (labelled
    ones included): in that overlap form the PPI++ optimum ``Cov/((1 + n/N_u) Var)`` of the
    disjoint form becomes ``Cov/Var`` (the two forms are the same family, ``λ_disjoint =
    λ_overlap · N_u / N``). λ = 0 is the human-only figure, λ = 1 classic PPI. ``lam`` fixes λ.

    **Why a bootstrap, not a CLT.** C is a ratio of U-statistics: every pair shares its units
    with ~2N other pairs, so pair indicators are strongly dependent and a CLT over pairs would
    be far too narrow; the valid CLT needs the Hoeffding projections and a delta method for the
    ratio, plus the randomness of λ and of the design weights. Resampling whole clusters
    (Field & Welsh 2007, *JRSS B* 69:369) carries all of it at once: within each stratum, the
    labelled clusters and the unlabelled clusters are resampled separately with replacement at
    their own sizes (so the design's n_k, N_k are kept), λ is re-estimated on every replicate,
    and the interval is the percentile interval, clipped to [0, 1]. Pair weights for two units
    of one stratum use ``π_k²`` for ``n_k(n_k − 1)/(N_k(N_k − 1))`` (exact across strata).

    Not estimable with fewer than 2 labelled clusters, no labelled pair with different H, or a
    degenerate (zero-width) bootstrap distribution. With ``strata`` a stratum with fewer than 2
    labelled clusters raises :class:`~judgekit.errors.JudgekitError`.
    """
    hv, fv, yv = _as_float(h, "h"), _as_float(f, "f"), _as_float(y, "y")
    cv = np.asarray(clusters)
    if not len(hv) == len(fv) == len(yv) == len(cv):
        raise JudgekitError("h, f, y and clusters must have one entry per unit.")
    sv = np.zeros(len(hv), dtype=int) if strata is None else np.asarray(strata)
    if len(sv) != len(hv):
        raise JudgekitError("strata must have one entry per unit.")
    ok = np.isfinite(hv) & np.isfinite(fv)
    hv, fv, yv, cv, sv = hv[ok], fv[ok], yv[ok], cv[ok], sv[ok]
    lab_u = np.isfinite(yv)
    cids, cinv = np.unique(cv, return_inverse=True)
    cinv = cinv.reshape(-1)
    nc = len(cids)
    lab_c = np.zeros(nc, dtype=bool)
    lab_c[cinv[lab_u]] = True
    strat_c = np.empty(nc, dtype=sv.dtype)
    strat_c[cinv] = sv
    n_lab = int(lab_c.sum())
    nan = float("nan")

    def refuse(reason: str) -> PPIPairwise:
        return PPIPairwise(nan, nan, nan, nan, n_lab, nc, nan, nan, not_estimable(reason),
                           not_estimable(reason), nan, n_resamples, reason)

    if n_lab < 2:
        return refuse(f"{n_lab} labelled cluster{'s' if n_lab != 1 else ''}: a pairwise "
                      "interval needs at least 2 labelled clusters.")
    # design weight of a labelled cluster: N_k / n_k in its stratum
    w_c = np.zeros(nc)
    groups: list[NDArray[np.intp]] = []
    for k in list(dict.fromkeys(strat_c.tolist())):
        in_k = strat_c == k
        n_k, big_n_k = int((in_k & lab_c).sum()), int(in_k.sum())
        if strata is not None and n_k < 2:
            raise JudgekitError(f"stratum {k!r} has {n_k} labelled cluster"
                                f"{'s' if n_k != 1 else ''} of {big_n_k}; the pairwise "
                                "estimate needs at least 2 in every stratum (label more, or "
                                "merge the stratum).")
        w_c[in_k & lab_c] = big_n_k / n_k
        groups += [np.flatnonzero(in_k & lab_c), np.flatnonzero(in_k & ~lab_c)]
    # distinct unit patterns (h, f, y, labelled, weight): the kernels are pattern × pattern
    wu = np.where(lab_u, w_c[cinv], 0.0)
    key = np.stack([hv, fv, np.where(lab_u, yv, 0.0), lab_u.astype(float), wu], axis=1)
    pats, pinv = np.unique(key, axis=0, return_inverse=True)
    pinv = pinv.reshape(-1)
    a = np.zeros((nc, len(pats)))
    np.add.at(a, (cinv, pinv), 1.0)  # units of cluster c in pattern p
    kd = (pats[:, 0][:, None] > pats[:, 0][None, :]).astype(float)
    kf = kd * _order_kernel(pats[:, 1], ties)
    ky = kd * _order_kernel(pats[:, 2], ties)
    pw = pats[:, 3] * pats[:, 4]  # labelled weight per pattern (0 for unlabelled)

    rng = np.random.default_rng(seed)
    mult = np.ones((n_resamples + 1, nc))
    for g in groups:
        if len(g):
            mult[1:, g] = rng.multinomial(len(g), np.full(len(g), 1.0 / len(g)),
                                          size=n_resamples)
    cnt = mult @ a
    cl_ = cnt * pw
    with np.errstate(invalid="ignore", divide="ignore"):
        d_all = _quad(cnt, kd)
        c_f = _quad(cnt, kf) / d_all
        d_l = _quad(cl_, kd)
        c_y = _quad(cl_, ky) / d_l
        c_fl = _quad(cl_, kf) / d_l
        e_yf = _quad(cl_, ky * kf) / d_l
        e_ff = _quad(cl_, kf * kf) / d_l
        cov, var = e_yf - c_y * c_fl, e_ff - c_fl**2
        lam_b: FloatArray
        if lam is None and n_lab < MIN_TUNING_CLUSTERS:
            lam_b = np.ones(len(cnt))
        elif lam is None:
            lam_b = np.where(var > 1e-12, np.clip(cov / np.where(var > 1e-12, var, 1.0), 0, 1), 0.0)
        else:
            lam_b = np.full(len(cnt), float(lam))
        est_b = lam_b * c_f + c_y - lam_b * c_fl
    if not (d_l[0] > 0):
        return refuse("no pair of labelled units with different H: the people's figure is "
                      "undefined.")
    alpha = 1.0 - level
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]

    def boot(x: FloatArray, what: str) -> Interval:
        rep = x[1:][np.isfinite(x[1:])]
        if len(rep) < 0.99 * n_resamples:
            return not_estimable(f"the {what} figure is undefined on over 1% of the cluster "
                                 "resamples (too few labelled pairs with different H).")
        lo, hi = np.percentile(np.clip(rep, 0.0, 1.0), q)
        if hi - lo <= 0.0:
            return not_estimable(f"the {what} figure does not vary over the cluster resamples, "
                                 "so an interval would claim certainty it does not have.")
        return Interval(_clip(x[0], UNIT_RANGE), _norm(lo), _norm(hi), float(np.std(rep)))

    res = boot(est_b, "PPI")
    human = boot(c_y, "human-only")
    judge = boot(c_f, "judge")
    eff = (n_lab * human.se**2 / res.se**2
           if res.estimable and human.estimable and res.se > 0 else nan)
    return PPIPairwise(res.estimate, res.low, res.high, _norm(float(lam_b[0])), n_lab, nc,
                       float(d_l[0]), float(d_all[0]), human, judge, eff, n_resamples,
                       res.reason)


# --------------------------------------------------------------------------------------------
# a mean over a few seeds or prompts


def bounded_mean_interval(values: ArrayLike, *, bounds: Bounds = UNIT_RANGE,
                          level: float = 0.95) -> Interval:
    """A confidence interval for the mean of a few values known to lie in ``bounds`` (a figure
    over 3 seeds, 5 prompts), valid in finite samples whatever their distribution.

    A t interval over 3 seeds assumes normality it cannot check and leaves the range; here the
    interval is the intersection of Hoeffding's (Hoeffding 1963, *JASA* 58:13) and the
    empirical-Bernstein bound of Maurer & Pontil (2009, *COLT*, Thm 4), each at level
    ``1 − α/2`` (so the intersection holds at ``1 − α`` by the union bound): with ``b − a`` the
    range width, ``V`` the sample variance and ``δ = α/4`` per side,

    .. math::

        \\bar x \\pm (b-a)\\sqrt{\\frac{\\ln(1/\\delta)}{2n}} \\ \\cap\\
        \\bar x \\pm \\Big(\\sqrt{\\frac{2V\\ln(2/\\delta)}{n}} + \\frac{7(b-a)\\ln(2/\\delta)}{3(n-1)}\\Big),

    clipped to ``bounds``. With 3 values it is wide — honestly so. Not estimable with fewer
    than 2 finite values or a value outside ``bounds``.
    """
    x = _as_float(values, "values")
    x = x[np.isfinite(x)]
    lo_b, hi_b = bounds
    if len(x) < 2:
        return not_estimable(f"{len(x)} value{'s' if len(x) != 1 else ''}: an interval needs at "
                             "least 2 (one value cannot show how much they vary).")
    if (x < lo_b).any() or (x > hi_b).any():
        return not_estimable(f"a value lies outside the range [{lo_b}, {hi_b}] the interval "
                             "relies on.")
    n, span = len(x), hi_b - lo_b
    delta = (1.0 - level) / 4.0
    mean = float(x.mean())
    hoeff = span * math.sqrt(math.log(1.0 / delta) / (2.0 * n))
    var = float(np.var(x, ddof=1))
    bern = math.sqrt(2.0 * var * math.log(2.0 / delta) / n) + 7.0 * span * math.log(
        2.0 / delta) / (3.0 * (n - 1))
    half = min(hoeff, bern)
    return Interval(_clip(mean, bounds), _clip(mean - half, bounds), _clip(mean + half, bounds))
