"""Stratified prediction-powered inference (Fisch et al. 2024): one PPI++ estimate per stratum of
the labelling design, combined with the strata's known weights (see :func:`stratified_ppi_mean`)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgekit.errors import JudgekitError
from judgekit.stats.ppi import PPIMean, ppi_mean_clustered
from judgekit.stats.ppi_core import (
    MIN_TUNING_CLUSTERS,
    UNIT_RANGE,
    Bounds,
    Clustered,
    Interval,
    IntervalResult,
    as_float,
    cluster_totals,
    clustered,
    lam_from,
    ppi_ratio,
    ppi_theta,
    ppi_tuning,
    ratio_se,
    ratio_var,
    t_interval,
    tuned_lambda,
)


@dataclass(frozen=True)
class StratifiedPPIMean(IntervalResult):
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

    def interval_se(self) -> float:
        """The standard error the interval was built from."""
        return self.se


def _satterthwaite(parts: list[tuple[float, int]]) -> float:
    """Welch–Satterthwaite degrees of freedom of Σ v_k with v_k on n_k − 1 df."""
    num = sum(v for v, _ in parts) ** 2
    den = sum(v * v / (n - 1) for v, n in parts if v > 0)
    return num / den if den > 0 else float("inf")


def _pooled_lambda(cs: Mapping[Hashable, Clustered], w: Mapping[Hashable, float]) -> float:
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
            cov, v = ppi_tuning(c, theta[k])
            a = w[k] ** 2 / (len(c.m_l) * float(np.mean(c.m_l)) ** 2)
            if math.isfinite(cov) and math.isfinite(v):
                num, den = num + a * cov, den + a * v
        lam = lam_from(num, den)
        theta = {k: ppi_theta(c, lam)[0] for k, c in live.items()}
    return lam


def _strata_of_labelled(ca: NDArray[Any], sa: NDArray[Any], cl: NDArray[Any]) -> NDArray[Any]:
    """The stratum of each labelled unit, from the stratum of its cluster among all units; one
    sentence when a cluster spans strata or a labelled cluster is not among all clusters."""
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
    return np.array([stratum_of[c] for c in cl.astype(str)], dtype=sa.dtype)


def _stratum_weights(sa: NDArray[Any], levels: list[Any],
                     weights: Mapping[Hashable, float] | None) -> dict[Hashable, float]:
    """The strata's weights W_k, normalised: ``weights``, or each stratum's share of the units."""
    if weights is None:
        w = {k: float(np.sum(sa == k)) for k in levels}
    else:
        absent = [k for k in levels if k not in weights]
        if absent:
            raise JudgekitError(f"weights has no entry for stratum {absent[0]!r}; give every "
                                "stratum its known share of the population.")
        w = {k: float(weights[k]) for k in levels}
    total = sum(w.values())
    return {k: v / total for k, v in w.items()}


def _stratum(k: Hashable, all_units: tuple[NDArray[Any], ...], labelled: tuple[NDArray[Any], ...]
             ) -> tuple[tuple[Clustered, NDArray[np.float64], NDArray[np.float64]], float]:
    """Stratum ``k``'s split into clusters (:func:`clustered`) and its inclusion probability
    n_k / N_k; one sentence with fewer than 2 labelled clusters."""
    fa, ca, sa = all_units
    fl, yl, cl, sl = labelled
    ia, il = sa == k, sl == k
    n_k = len(np.unique(cl[il & np.isfinite(fl) & np.isfinite(yl)]))
    big_n_k = len(np.unique(ca[ia]))
    if n_k < 2:
        raise JudgekitError(f"stratum {k!r} has {n_k} labelled cluster"
                            f"{'s' if n_k != 1 else ''} of {big_n_k}; stratified PPI needs "
                            "at least 2 in every stratum (label more, or merge the stratum).")
    return clustered(fa[ia], ca[ia], fl[il], yl[il], cl[il]), n_k / big_n_k


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
    fa = as_float(f_all, "f_all")
    ca = np.asarray(clusters_all)
    sa = np.asarray(strata_all)
    if not len(fa) == len(ca) == len(sa):
        raise JudgekitError("f_all, clusters_all and strata_all must have one entry per unit.")
    cl = np.asarray(clusters_lab)
    fl, yl = as_float(f_lab, "f_lab"), as_float(y_lab, "y_lab")
    sl = _strata_of_labelled(ca, sa, cl)
    levels = list(dict.fromkeys(sa.tolist()))
    w = _stratum_weights(sa, levels, weights)
    per: dict[Hashable, PPIMean] = {}
    raw: dict[Hashable, tuple[float, float, float, float]] = {}
    cs: dict[Hashable, tuple[Clustered, NDArray[np.float64], NDArray[np.float64]]] = {}
    incl: dict[Hashable, float] = {}
    for k in levels:
        cs[k], incl[k] = _stratum(k, (fa, ca, sa), (fl, yl, cl, sl))
    lam_pool = _pooled_lambda({k: v[0] for k, v in cs.items()}, w)
    for k, (c, sf_k, m_k) in cs.items():
        lam_k = tuned_lambda(c) if len(c.m_l) >= MIN_TUNING_CLUSTERS else lam_pool
        per[k] = ppi_mean_clustered(c, sf_k, m_k, bounds=(-math.inf, math.inf), level=level,
                                    lam=lam_k)
        th_k, var_k, _ = ppi_ratio(c, lam_k)
        raw[k] = (th_k, var_k, *ratio_var(c.sy_l, c.m_l))
    est = sum(w[k] * raw[k][0] for k in levels)
    parts = [(w[k] ** 2 * raw[k][1], per[k].n_clusters) for k in levels]
    var = sum(v for v, _ in parts)
    df = _satterthwaite(parts)
    res = t_interval(est, math.sqrt(var), df, level, bounds, "stratified PPI")
    h_parts = [(w[k] ** 2 * raw[k][3], per[k].n_clusters) for k in levels]
    h_var = sum(v for v, _ in h_parts)
    human = t_interval(sum(w[k] * raw[k][2] for k in levels), math.sqrt(h_var),
                        _satterthwaite(h_parts), level, bounds, "human-only")
    _, sf_a, m_a = cluster_totals(fa[np.isfinite(fa)], ca[np.isfinite(fa)])
    judge = t_interval(*ratio_se(sf_a, m_a), len(m_a) - 1, level, bounds, "judge")
    n_lab = sum(p.n_clusters for p in per.values())
    eff = n_lab * h_var / var if var > 0 else float("nan")
    return StratifiedPPIMean(res.estimate, res.low, res.high, res.se, df, human, judge, eff, w,
                             incl, per, bounds, res.reason)
