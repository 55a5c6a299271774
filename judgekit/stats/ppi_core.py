"""The shared parts of prediction-powered inference with clusters (:mod:`judgekit.stats.ppi`):
the :class:`Interval` type, honest t intervals clipped to a range, the split of units into
labelled and unlabelled clusters, and the cluster PPI++ ratio estimator with its power-tuned λ.

The formulas and references are in :func:`judgekit.stats.ppi.ppi_mean`'s docstring."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import t_interval as t_interval_bounds

FloatArray = NDArray[np.float64]
Bounds = tuple[float, float]

#: the range of a rate, an RCE, a mean R or a concordance
UNIT_RANGE: Bounds = (0.0, 1.0)
#: the range of a Drift(t) = RCE_t − RCE_1
DRIFT_RANGE: Bounds = (-1.0, 1.0)


def norm_zero(x: float) -> float:
    """``x`` as a float with ``-0.0`` normalised to ``0.0`` (NaN stays NaN)."""
    x = float(x)
    return 0.0 if x == 0.0 else x


def clip_to(x: float, bounds: Bounds) -> float:
    return norm_zero(min(max(float(x), bounds[0]), bounds[1])) if math.isfinite(x) else float("nan")


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


class IntervalResult:
    """What the PPI results share: ``estimate``, ``low``, ``high`` and ``reason`` (their
    dataclass fields) read as an :class:`Interval`, with :meth:`interval_se` as its ``se``."""

    estimate: float
    low: float
    high: float
    reason: str | None

    def interval_se(self) -> float:
        """The standard error behind the interval: NaN here (a bootstrap interval has none)."""
        return float("nan")

    @property
    def estimable(self) -> bool:
        return self.reason is None

    @property
    def interval(self) -> Interval:
        return Interval(self.estimate, self.low, self.high, self.interval_se(), self.reason)

    @property
    def width(self) -> float:
        return self.high - self.low


def not_estimable(reason: str) -> Interval:
    """An :class:`Interval` that says why there is no figure (one sentence)."""
    nan = float("nan")
    return Interval(nan, nan, nan, nan, reason)


def t_interval(estimate: float, se: float, df: float, level: float, bounds: Bounds,
                what: str) -> Interval:
    """``estimate ± t_{df} · se`` clipped to ``bounds``; not estimable without a positive SE."""
    if not math.isfinite(estimate):
        return not_estimable(f"the {what} estimate is not finite.")
    if not (math.isfinite(se) and se > 0.0):
        return not_estimable(f"the {what} standard error is zero or undefined (the labelled "
                             "clusters show no variation), so an interval would claim certainty "
                             "it does not have.")
    low, high = t_interval_bounds(estimate, se, df, level)
    return Interval(clip_to(estimate, bounds), clip_to(low, bounds), clip_to(high, bounds),
                    norm_zero(se))


# --------------------------------------------------------------------------------------------
# clusters


def as_float(x: ArrayLike, name: str) -> FloatArray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise JudgekitError(f"{name} must be a one-dimensional array of numbers, one per unit.")
    return a


def cluster_totals(values: FloatArray, clusters: NDArray[Any]
                    ) -> tuple[NDArray[Any], FloatArray, FloatArray]:
    """Distinct cluster ids, the per-cluster sums of ``values`` and the cluster sizes."""
    ids, inv = np.unique(clusters, return_inverse=True)
    inv = inv.reshape(-1)
    sums = np.bincount(inv, weights=values, minlength=len(ids)).astype(float)
    sizes = np.bincount(inv, minlength=len(ids)).astype(float)
    return ids, sums, sizes


@dataclass(frozen=True)
class Clustered:
    """The labelled clusters (sums of Y and f, sizes) and the unlabelled ones (sums of f,
    sizes), the unit of every computation below."""

    sy_l: FloatArray
    sf_l: FloatArray
    m_l: FloatArray
    sf_u: FloatArray
    m_u: FloatArray
    n_units: int
    big_n_units: int


def clustered(f_all: ArrayLike, clusters_all: ArrayLike, f_lab: ArrayLike, y_lab: ArrayLike,
               clusters_lab: ArrayLike) -> tuple[Clustered, FloatArray, FloatArray]:
    """Split into labelled and unlabelled clusters. Units with a missing value are dropped (in
    the labelled units: where Y or f is missing). A cluster is labelled when it has a labelled
    unit; the unlabelled clusters are the other clusters of ``clusters_all``. Also returns the
    per-cluster sums of f and sizes over all clusters (the judge's own figure)."""
    fa = as_float(f_all, "f_all")
    ca = np.asarray(clusters_all)
    fl, yl = as_float(f_lab, "f_lab"), as_float(y_lab, "y_lab")
    cl = np.asarray(clusters_lab)
    if len(ca) != len(fa):
        raise JudgekitError("f_all and clusters_all must have one entry per unit.")
    if not len(fl) == len(yl) == len(cl):
        raise JudgekitError("f_lab, y_lab and clusters_lab must have one entry per labelled unit.")
    ok_a = np.isfinite(fa)
    fa, ca = fa[ok_a], ca[ok_a]
    ok_l = np.isfinite(fl) & np.isfinite(yl)
    fl, yl, cl = fl[ok_l], yl[ok_l], cl[ok_l]
    # one sort per set of clusters: the labelled sums of Y and of f share their clusters, and
    # an unlabelled cluster's sums are its sums over all units (np.bincount adds a cluster's
    # units in the same order either way, so the figures are those of four separate passes)
    ids_l, inv_l = np.unique(cl, return_inverse=True)
    inv_l = inv_l.reshape(-1)
    sy_l = np.bincount(inv_l, weights=yl, minlength=len(ids_l)).astype(float)
    sf_l = np.bincount(inv_l, weights=fl, minlength=len(ids_l)).astype(float)
    m_l = np.bincount(inv_l, minlength=len(ids_l)).astype(float)
    ids_a, sf_a, m_a = cluster_totals(fa, ca)
    unl = ~np.isin(ids_a, ids_l)
    return (Clustered(sy_l, sf_l, m_l, sf_a[unl], m_a[unl], int(len(yl)), int(len(fa))), sf_a,
            m_a)


def sample_var(x: FloatArray) -> float:
    """``np.var(x, ddof=1)`` (NaN for fewer than 2 values), by numpy's own steps — a summed mean,
    the squared deviations summed, over n − 1 — without its dispatch overhead (a study calls this
    tens of thousands of times); the result is the same float."""
    n = len(x)
    if n < 2:
        return float("nan")
    d = x - x.sum() / n
    return float((d * d).sum() / (n - 1))


#: with fewer labelled clusters than this, λ is not tuned on them: its noise, correlated with
#: the residuals it multiplies, biases the estimate (a stratum whose few labelled clusters all
#: agree would get λ = 0 and report the people's 0 errors). Classic PPI (λ = 1) is used instead,
#: or in :func:`stratified_ppi_mean` the λ pooled over the strata.
MIN_TUNING_CLUSTERS = 10


#: below this many labelled clusters the residual variance of a bounded figure is floored
#: (:func:`floored_var`): from 40 the plain t interval covers (docs/analysis.md, small n)
SMALL_N_FLOOR_BELOW = 40
#: the fewest labelled clusters a corrected figure (and its labels-alone fallback) is reported
#: on: the smallest sample whose coverage was measured (docs/analysis.md, small n)
MIN_LABELLED_CLUSTERS = 5


def floored_var(r: FloatArray, scale: float) -> float:
    """``s²(r)`` floored by an Agresti–Coull-type pseudo-count: ``max(s²(r), q̃(1 − q̃)·scale²)``
    with ``q̃ = min((Σ (r/scale)² + 2) / (n + 4), 1/2)`` — the variance the residuals would show
    with two more clusters whose residual spans the figure's whole range (``scale``) and two
    with none (Agresti & Coull 1998, *Am. Stat.* 52:119; for a 0/1 figure at λ = 1, ``Σ r²`` is
    the number of labelled units where judge and people disagree, and ``q̃`` is Agresti–Coull's
    adjusted disagreement rate). ``sample_var`` unchanged when ``scale`` is not finite."""
    v = sample_var(r)
    n = len(r)
    if n < 2 or not (math.isfinite(scale) and scale > 0):
        return v
    q = min((float(((r / scale) ** 2).sum()) + 2.0) / (n + 4.0), 0.5)
    return max(v, q * (1.0 - q) * scale**2)


def floor_span(c: Clustered, sf_a: FloatArray, m_a: FloatArray, bounds: Bounds) -> float:
    """The range the figure's values show — the judge's per-cluster means over every cluster
    and the people's over the labelled ones — within ``bounds`` (1 for a 0/1 figure whose
    values are not all equal); infinite (no floor) for an unbounded figure or one whose cluster
    sums are not whole numbers (a figure of graded values, not of 0/1 or −1/0/1 ones, where a
    small residual means close agreement rather than few disagreements)."""
    width = bounds[1] - bounds[0]
    whole = bool(np.all(sf_a == np.round(sf_a)) and np.all(c.sy_l == np.round(c.sy_l)))
    if not (math.isfinite(width) and whole):
        return math.inf
    v = np.concatenate([sf_a / m_a, c.sy_l / c.m_l])
    return min(width, float(v.max() - v.min())) if len(v) else width


def floor_scale(span: float, sizes: FloatArray) -> float:
    """The ``scale`` of :func:`floored_var` for cluster totals: the figure's range times the
    square root of the mean labelled cluster size (a cluster as that many independent units); NaN (no floor) from :data:`SMALL_N_FLOOR_BELOW` labelled clusters
    on, or for an unbounded figure."""
    if len(sizes) >= SMALL_N_FLOOR_BELOW or not math.isfinite(span):
        return float("nan")
    return span * math.sqrt(float(sizes.sum() / len(sizes)))


def ppi_theta(c: Clustered, lam: float) -> tuple[float, float]:
    """(θ̂_λ, its denominator D) of the cluster PPI ratio estimator."""
    big_m, n = len(c.m_u), len(c.m_l)
    # x.sum() / len(x) is np.mean's own arithmetic (summed, then divided), without its overhead
    su = float(c.sf_u.sum() / big_m) if big_m else 0.0
    mu = float(c.m_u.sum() / big_m) if big_m else 0.0
    m_l = float(c.m_l.sum() / n)
    num = float(c.sy_l.sum() / n) + lam * (su - float(c.sf_l.sum() / n))
    den = m_l + lam * (mu - m_l)
    return num / den, den


def ppi_tuning(c: Clustered, theta: float) -> tuple[float, float]:
    """(Cov_L(z, w), (1 + n/N) s²(w)) at θ: λ̂ is their ratio (PPI++)."""
    n, big_m = len(c.m_l), len(c.m_u)
    z = c.sy_l - theta * c.m_l
    w_l = c.sf_l - theta * c.m_l
    var_w = sample_var(np.concatenate([w_l, c.sf_u - theta * c.m_u]))
    cov = float(np.cov(z, w_l, ddof=1)[0, 1]) if n > 1 else float("nan")
    return cov, (1.0 + n / big_m) * var_w


def lam_from(cov: float, var: float) -> float:
    ok = math.isfinite(cov) and math.isfinite(var) and var > 0
    return float(np.clip(cov / var, 0.0, 1.0)) if ok else 0.0


def tuned_lambda(c: Clustered, min_clusters: int = MIN_TUNING_CLUSTERS) -> float:
    """PPI++ λ̂ at the human-only θ, then once more at the PPI θ (classic λ = 1 with fewer
    than :data:`MIN_TUNING_CLUSTERS` labelled clusters)."""
    if len(c.m_u) == 0:
        return 0.0  # every cluster is labelled: nothing for the judge to add
    if len(c.m_l) < min_clusters:
        return 1.0
    theta = float(c.sy_l.sum() / c.m_l.sum())
    if not (sample_var(c.sy_l - theta * c.m_l) > 0 and sample_var(c.sf_l - theta * c.m_l) > 0):
        return 1.0  # no variation among the labelled clusters: nothing to tune λ on
    lam = 0.0
    for _ in range(2):
        lam = lam_from(*ppi_tuning(c, theta))
        theta, _ = ppi_theta(c, lam)
    return lam


def ppi_ratio(c: Clustered, lam: float | None, min_clusters: int = MIN_TUNING_CLUSTERS,
              span: float = math.inf) -> tuple[float, float, float]:
    """(θ̂, Var θ̂, λ) of the cluster PPI++ ratio estimator; see :func:`ppi_mean` (``span``: the
    figure's range, for the small-n floor of the labelled residuals' variance)."""
    n, big_m = len(c.m_l), len(c.m_u)
    if big_m == 0:
        lam = 0.0
    elif lam is None:
        lam = tuned_lambda(c, min_clusters)
    theta, den = ppi_theta(c, lam)
    z = c.sy_l - theta * c.m_l
    w_l = c.sf_l - theta * c.m_l
    var = floored_var(z - lam * w_l, floor_scale(span, c.m_l)) / n
    if lam > 0.0:
        w_all = np.concatenate([w_l, c.sf_u - theta * c.m_u])
        var += lam**2 * sample_var(w_all) / big_m
    return theta, var / den**2, float(lam)


def ratio_se(sums: FloatArray, sizes: FloatArray) -> tuple[float, float]:
    """(θ̂, se) of :func:`ratio_var`."""
    theta, var = ratio_var(sums, sizes)
    return theta, math.sqrt(var) if var >= 0 else float("nan")


def ratio_var(sums: FloatArray, sizes: FloatArray, span: float = math.inf
              ) -> tuple[float, float]:
    """(Σ s / Σ m, its cluster-CLT variance ``Var(s − θ m) / (n m̄²)``; with a finite ``span``
    (the figure's range) and few clusters, ``Var`` floored by :func:`floored_var`)."""
    theta = float(sums.sum() / sizes.sum())
    r = sums - theta * sizes
    return theta, floored_var(r, floor_scale(span, sizes)) / (len(sizes) * float(sizes.mean()) ** 2)
