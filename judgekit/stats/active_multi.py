"""Several judges in one corrected estimate under an active design (MultiPPI): the judges of a
panel rated the same clusters, people labelled some of them with known probabilities.

With judges ``k = 1..K`` giving per-cluster sums ``S^{f_k}_i``, the estimating equation of
:mod:`judgekit.stats.active` takes one λ per judge,

.. math::

    \\psi_i(\\theta) = \\sum_k \\lambda_k w_{ki} + \\Big(z_i - \\sum_k \\lambda_k w_{ki}\\Big)
    \\frac{\\xi_i}{\\pi_i}, \\qquad w_{ki} = S^{f_k}_i - \\theta m_i ,

unbiased for any λ (``E[ψ_i | cluster] = z_i``), rounds combined as there. ψ is affine in the
vector λ, ``ψ = P + Σ_k λ_k Q_k``, so the λ minimising ``s²(ψ)`` is the regression
``λ̂ = −Cov(Q)⁻¹ Cov(Q, P)`` (the multi-predictor PPI++ of Angelopoulos, Duchi & Zrnic 2023,
arXiv:2311.01453, §6; the several-model setting of MultiPPI), computed at the λ = 0 estimate and
again at the tuned one — not clipped: a judge that only adds noise gets λ near 0, and two
judges' errors may offset. With fewer than
:data:`~judgekit.stats.ppi_core.MIN_TUNING_CLUSTERS` labelled clusters every judge gets
λ = 1/K (classic PPI on the panel's mean). The variance and interval are the one-judge
estimator's (superpopulation: ``s²(ψ)/(N D²)``, ``t_{n−1}``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from judgekit.errors import JudgekitError
from judgekit.stats.active import ActiveDesign, round_parts
from judgekit.stats.ppi_core import (
    MIN_TUNING_CLUSTERS,
    UNIT_RANGE,
    Bounds,
    FloatArray,
    IntervalResult,
    as_float,
    t_interval,
)


@dataclass(frozen=True)
class MultiActiveMean(IntervalResult):
    """A several-judge active estimate: ``estimate``, ``low``, ``high``, ``se`` (NaN and
    ``reason`` when not estimable), ``lams`` (one per judge), ``n_clusters`` labelled of
    ``big_n_clusters``."""

    estimate: float
    low: float
    high: float
    se: float
    lams: tuple[float, ...]
    n_clusters: int
    big_n_clusters: int
    bounds: Bounds
    reason: str | None = None

    def interval_se(self) -> float:
        return self.se


def _theta(a0: FloatArray, b0: FloatArray, a1: list[FloatArray], b1: FloatArray,
           lams: FloatArray) -> tuple[float, FloatArray, float]:
    num = a0 + sum((lk * ak for lk, ak in zip(lams, a1, strict=True)), np.zeros_like(a0))
    den = b0 + float(lams.sum()) * b1
    theta = float(num.sum() / den.sum())
    return theta, num - theta * den, float(den.mean())


def _tuned(a0: FloatArray, b0: FloatArray, a1: list[FloatArray], b1: FloatArray
           ) -> FloatArray:
    k = len(a1)
    lams = np.zeros(k)
    for _ in range(3):  # at λ = 0, then twice at the tuned estimate
        theta = _theta(a0, b0, a1, b1, lams)[0]
        p = a0 - theta * b0
        q = np.vstack([ak - theta * b1 for ak in a1])
        cov = np.cov(np.vstack([q, p]), ddof=1)
        cq, cqp = cov[:k, :k], cov[:k, k]
        ridge = 1e-12 * max(float(np.trace(cq)), 1e-300)
        lams = -np.linalg.solve(cq + ridge * np.eye(k), cqp)
    return lams


def active_multi_ppi(sy: ArrayLike, sf_judges: Sequence[ArrayLike], m: ArrayLike,
                     design: ActiveDesign, *, bounds: Bounds = UNIT_RANGE, level: float = 0.95,
                     lams: Sequence[float] | None = None) -> MultiActiveMean:
    """The several-judge estimate of ``θ = ΣS^Y / Σm`` (module doc): ``sy`` the people's
    per-cluster sums (anything where unlabelled), ``sf_judges`` one array of per-cluster sums
    per judge, ``m`` the sizes, over all ``N`` clusters, and the ``design``; ``lams`` fixes λ."""
    m_ = as_float(m, "m")
    sfs = [as_float(s, "sf_judges") for s in sf_judges]
    lab = np.asarray(design.round_of) >= 0
    sy_ = np.where(lab, np.nan_to_num(as_float(sy, "sy")), 0.0)
    big_n, n, k = len(m_), int(lab.sum()), len(sfs)
    if k < 1 or any(len(s) != big_n for s in sfs) or len(sy_) != big_n \
            or design.probs.shape[1] != big_n:
        raise JudgekitError("sy, every judge's sums, m and the design need one entry per "
                            "cluster, and there must be at least one judge.")
    nan = float("nan")
    if n < 2:
        return MultiActiveMean(nan, nan, nan, nan, (nan,) * k, n, big_n, bounds,
                               f"{n} labelled clusters: an interval needs at least 2.")
    parts = [round_parts(sy_, s, m_, design) for s in sfs]
    a0, b0, _, b1 = parts[0]
    a1 = [p[2] for p in parts]
    if lams is not None:
        lam = np.asarray(lams, dtype=float)
    elif n < MIN_TUNING_CLUSTERS:
        lam = np.full(k, 1.0 / k)
    else:
        lam = _tuned(a0, b0, a1, b1)
    theta, psi, d = _theta(a0, b0, a1, b1, lam)
    var = float(np.var(psi, ddof=1)) / (big_n * d * d)
    res = t_interval(theta, math.sqrt(var) if var >= 0 else nan, n - 1, level, bounds,
                     "several-judge active PPI")
    return MultiActiveMean(res.estimate, res.low, res.high, res.se,
                           tuple(float(x) for x in lam), n, big_n, bounds, res.reason)
