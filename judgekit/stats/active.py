"""Active statistical inference: a corrected mean when people label the clusters the judge is
unsure of, with known probabilities, in one round or several.

A judge gives a per-unit quantity ``f`` on every unit; people give ``Y`` on the units of the
clusters (conversations, prompts) a labelling design chose. Under an *active* design cluster
``i`` is labelled with a known probability ``π_i`` that grows with the judge's predicted error
(Zrnic & Candès 2024, *Active Statistical Inference*, ICML 2024, arXiv:2403.03208). The estimate
stays unbiased whatever the judge and whatever the rule, because every labelled cluster is
weighted by ``1/π_i`` (inverse-probability weighting, Horvitz & Thompson 1952) and every cluster
has ``π_i > 0`` (the floor of :func:`inclusion_probabilities`).

**Estimator (one round).** With per-cluster sums ``S^Y_i, S^f_i``, sizes ``m_i`` and the
labelling indicator ``ξ_i ~ Bernoulli(π_i)``, the PPI++ estimating equation weighted by the design
is ``Σ_i ψ_i(θ) = 0`` with

.. math::

    \\psi_i(\\theta) = \\lambda w_i + (z_i - \\lambda w_i)\\,\\frac{\\xi_i}{\\pi_i}, \\qquad
    z_i = S^Y_i - \\theta m_i, \\quad w_i = S^f_i - \\theta m_i,

so ``E[ψ_i | cluster] = z_i`` and

.. math::

    \\hat\\theta_\\lambda = \\frac{\\sum_i \\lambda S^f_i + (S^Y_i - \\lambda S^f_i)\\,\\xi_i/\\pi_i}
                                  {\\sum_i m_i\\,(\\lambda + (1 - \\lambda)\\,\\xi_i/\\pi_i)}

(the Hájek ratio of the labelled clusters at λ = 0, the judge's figure corrected by the weighted
residuals at λ = 1). Its variance, by the cluster CLT and the delta method, is
``s²(ψ(θ̂)) / (N D²)`` with ``D`` the mean denominator term and ``s²`` the sample variance over
all ``N`` clusters; ``E[ψ²] = E[z²] + E[(z − λw)² (1 − π)/π]``, so the design pays only for the
residual the judge leaves. λ is power-tuned (Angelopoulos, Duchi & Zrnic 2023, PPI++,
arXiv:2311.01453): ψ is affine in λ, ``ψ = P + λQ``, and ``λ̂ = −Cov(P, Q) / Var(Q)`` clipped to
[0, 1] minimises ``s²(ψ)``; it is computed at the λ = 0 estimate and once more at the tuned one.
With fewer than :data:`~judgekit.stats.ppi_core.MIN_TUNING_CLUSTERS` labelled clusters λ = 1
(classic PPI), as :func:`judgekit.stats.ppi.ppi_mean` does.

**The probability rule.** The variance term ``E[(z − λw)²(1 − π)/π]`` at a fixed expected number
of labels ``Σπ = n`` is smallest for ``π_i ∝ sqrt(E[(z_i − λ w_i)² | x_i])``, the square root of
the judge's predicted squared error (Angelopoulos, Zrnic et al. 2025, *Cost-Optimal Active AI
Model Evaluation*, arXiv:2506.07949; Neyman allocation per unit). ``rule="sqrt"`` is that rule
and the default; ``rule="linear"`` makes ``π ∝`` the predicted error (the uncertainty-
proportional rule of Zrnic & Candès 2024; Gligorić et al. 2025, *Can Unconfident LLM
Annotations Be Used for Confident Conclusions?*, NAACL 2025).

**Rounds.** In round ``r`` every cluster not labelled before it is labelled with probability
``π^r_i``, computed from what was known before the round (earlier labels included); a cluster
labelled before round ``r`` has ``π^r_i = 1`` and contributes its exact ``z_i``. Each round's
``ψ^r_i`` has conditional mean ``z_i`` given the past, so the noise terms of the rounds are
martingale differences (uncorrelated), and the rounds are combined with fixed weights ``ω_r``
(the round's share of the budget, fixed before labelling):
``ψ̄_i = Σ_r ω_r ψ^r_i``; the estimator and its variance are those above with ``ψ̄`` for ``ψ``.

**What the interval is for.** As in :mod:`judgekit.stats.ppi`, the variance is by default the
superpopulation one (clusters drawn i.i.d.), conservative for the figure of the ``N`` clusters
at hand; ``finite=True`` gives the design variance given the clusters,
``Σ_r ω_r² Σ_i (z_i − λw_i)²(1 − π^r_i)/π^r_i / (N D)²`` (Poisson sampling, estimated by
Horvitz–Thompson): the interval for the figure people would give on all ``N`` clusters. The interval is ``θ̂ ± t_{n−1} se`` (``n`` labelled clusters), clipped to ``bounds``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from judgekit.errors import JudgekitError
from judgekit.stats.ppi_core import (
    MIN_TUNING_CLUSTERS,
    UNIT_RANGE,
    Bounds,
    FloatArray,
    IntervalResult,
    as_float,
    lam_from,
    norm_zero,
    t_interval,
)

#: the probability rules: π ∝ sqrt(predicted error) (cost-optimal) or ∝ predicted error
RULES = ("sqrt", "linear")
#: by default no cluster's probability is below this share of the uniform rate n/N
DEFAULT_FLOOR = 0.2


def inclusion_probabilities(predicted_error: ArrayLike, budget: float, *, rule: str = "sqrt",
                            floor: float = DEFAULT_FLOOR) -> FloatArray:
    """Per unit (cluster) the probability of being labelled: ``π_i = clip(c · g(e_i), π_min, 1)``
    with ``g(e) = sqrt(e)`` (``rule="sqrt"``, the cost-optimal rule) or ``g(e) = e``
    (``rule="linear"``), ``e_i ≥ 0`` the judge's predicted (squared) error, and ``c`` found so
    that ``Σ π_i = budget`` (the expected number of labels). ``π_min = floor · budget / N``: every
    unit keeps a positive probability, so the inverse-probability weights stay bounded by
    ``N / (floor · budget)``. When the floor leaves budget unspent even with every unit of some
    predicted error at 1 (most errors zero), the units of zero predicted error share the rest
    equally, so ``Σ π_i = budget`` always. ``floor = 1`` gives the uniform design. Raises
    :class:`~judgekit.errors.JudgekitError` for a budget outside (0, N] or a floor outside (0, 1].
    """
    e = as_float(predicted_error, "predicted_error")
    n_all = len(e)
    if rule not in RULES:
        raise JudgekitError(f"probability rule {rule!r} is unknown; use one of {', '.join(RULES)}.")
    if not 0.0 < budget <= n_all:
        raise JudgekitError(f"a budget of {budget:g} labels must be positive and at most the "
                            f"{n_all} units there are.")
    if not 0.0 < floor <= 1.0:
        raise JudgekitError(f"the probability floor {floor:g} must be in (0, 1] (a share of the "
                            "uniform rate budget/N).")
    e = np.where(np.isfinite(e), np.maximum(e, 0.0), float(np.nanmax(e)) if np.isfinite(e).any()
                 else 1.0)
    g = np.sqrt(e) if rule == "sqrt" else e
    lo = min(1.0, floor * budget / n_all)
    if not (g > 0).any() or floor >= 1.0:
        return np.full(n_all, budget / n_all)
    some = g > 0
    n_some = int(some.sum())
    if n_some + (n_all - n_some) * lo < budget:
        # even with every unit of some predicted error at 1 the floor leaves budget unspent: the
        # units of no predicted error share the rest equally (a floor raised to meet the budget)
        return np.where(some, 1.0, (budget - n_some) / (n_all - n_some))
    # Σ clip(c g, lo, 1) is increasing in c: bisect on log c
    a, b = 0.0, budget / float(g[g > 0].min()) * 2.0
    for _ in range(100):
        c = 0.5 * (a + b)
        if np.clip(c * g, lo, 1.0).sum() < budget:
            a = c
        else:
            b = c
    return np.clip(b * g, lo, 1.0)


@dataclass(frozen=True)
class ActiveDesign:
    """A labelling design of ``R`` rounds over ``N`` clusters: ``probs[r, i]`` the probability
    cluster ``i`` had in round ``r`` (1 once it was labelled in an earlier round),
    ``round_of[i]`` the round that labelled it (−1: never), ``weights[r]`` the round's budget
    (its expected labels; ω_r is its share of the total; default: ``Σ_i π^r_i`` over the clusters
    not labelled before round r)."""

    probs: FloatArray
    round_of: np.ndarray
    weights: FloatArray | None = None

    @classmethod
    def one_round(cls, probs: ArrayLike, labelled: ArrayLike) -> ActiveDesign:
        """A one-round design from per-cluster probabilities and a labelled mask."""
        p = as_float(probs, "probs")
        lab = np.asarray(labelled, dtype=bool)
        return cls(p[None, :], np.where(lab, 0, -1))

    def round_weights(self) -> FloatArray:
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=float)
        else:
            w = np.array([float(np.where(p < 1.0, p, 0.0).sum()) for p in self.probs])
            if w.sum() <= 0:
                w = np.ones(len(self.probs))
        return w / w.sum()


@dataclass(frozen=True)
class ActiveMean(IntervalResult):
    """An active-design PPI++ estimate: ``estimate``, ``low``, ``high``, ``se`` (NaN and
    ``reason`` when not estimable); ``lam``; ``n_clusters`` labelled of ``big_n_clusters``;
    ``n_units`` labelled units; ``expected_labels`` the design's budget (Σπ over the rounds);
    ``effective_clusters``: how many uniformly drawn labelled clusters the human-only estimate
    would need for this precision (its estimated ``s²(z) / (Var θ̂ · D²)``)."""

    estimate: float
    low: float
    high: float
    se: float
    lam: float
    n_clusters: int
    n_units: int
    big_n_clusters: int
    expected_labels: float
    effective_clusters: float
    bounds: Bounds
    reason: str | None = None
    #: the labelled clusters a uniform design would need, same estimator, for this variance
    #: (inf: more than there are)
    uniform_labels: float = float("nan")

    def interval_se(self) -> float:
        return self.se


def round_parts(sy: FloatArray, sf: FloatArray, m: FloatArray, design: ActiveDesign
                 ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per cluster, ``Σ_r ω_r`` of the round terms, split as ``ψ̄ = (a0 − θ b0) + λ (a1 − θ b1)``
    where ``a`` is the Y/f part and ``b`` the size part."""
    w = design.round_weights()
    a0 = np.zeros_like(m)
    b0 = np.zeros_like(m)
    a1 = np.zeros_like(m)
    b1 = np.zeros_like(m)
    rnd = np.asarray(design.round_of)
    for r, p in enumerate(design.probs):
        known = (rnd >= 0) & (rnd < r)
        now = rnd == r
        ipw = np.where(now, 1.0 / np.where(p > 0, p, 1.0), 0.0)
        # unknown before r: ψ = z ξ/π + λ w (1 − ξ/π); known: ψ = z
        a0 += w[r] * np.where(known, sy, sy * ipw)
        b0 += w[r] * np.where(known, m, m * ipw)
        a1 += w[r] * np.where(known, 0.0, sf * (1.0 - ipw))
        b1 += w[r] * np.where(known, 0.0, m * (1.0 - ipw))
    return a0, b0, a1, b1


def _finite_var(z: FloatArray, w: FloatArray, lam: float, design: ActiveDesign) -> float:
    """The design variance of ``Σ_i ψ̄_i`` given the clusters, ``Σ_r ω_r² Σ_{i free at r}
    (z_i − λw_i)² (1 − π^r_i)/π^r_i``, estimated without bias by weighting the clusters labelled
    in round r by ``1/π^r_i`` (Horvitz–Thompson)."""
    om = design.round_weights()
    rnd = np.asarray(design.round_of)
    e2 = np.nan_to_num((z - lam * w) ** 2)
    total = 0.0
    for r, p in enumerate(design.probs):
        now = rnd == r
        total += om[r] ** 2 * float((e2[now] * (1.0 - p[now]) / p[now] ** 2).sum())
    return total


def _theta(a0: FloatArray, b0: FloatArray, a1: FloatArray, b1: FloatArray, lam: float
           ) -> tuple[float, FloatArray, float]:
    num = a0 + lam * a1
    den = b0 + lam * b1
    theta = float(num.sum() / den.sum())
    return theta, num - theta * den, float(den.mean())


def active_ppi_clusters(sy: ArrayLike, sf: ArrayLike, m: ArrayLike, design: ActiveDesign, *,
                        bounds: Bounds = UNIT_RANGE, level: float = 0.95,
                        lam: float | None = None,
                        min_tuning_clusters: int = MIN_TUNING_CLUSTERS,
                        finite: bool = False) -> ActiveMean:
    """The active-design PPI++ estimate of ``θ = ΣS^Y / Σm`` from per-cluster sums: ``sy`` the
    people's sums (any value, e.g. NaN, where unlabelled), ``sf`` the judge's sums, ``m`` the
    sizes, over all ``N`` clusters, and the ``design``. ``lam`` fixes λ. Formulas: the module
    docstring. ``finite``: the interval is for the figure of these ``N`` clusters (the design
    variance only, :func:`_finite_var`) rather than the superpopulation's (the default,
    conservative for the clusters at hand); it needs enough labelled clusters with a non-zero
    residual (with a few rare judge errors among the labels it undercovers). Not estimable with
    fewer than 2 labelled clusters or a zero standard error."""
    sf_, m_ = as_float(sf, "sf"), as_float(m, "m")
    lab = np.asarray(design.round_of) >= 0
    sy_ = np.where(lab, np.nan_to_num(as_float(sy, "sy")), 0.0)
    big_n, n = len(m_), int(lab.sum())
    if not (len(sy_) == len(sf_) == big_n == design.probs.shape[1]):
        raise JudgekitError("sy, sf, m and the design need one entry per cluster.")
    nan = float("nan")
    expected = (float(np.sum(design.weights)) if design.weights is not None
                else float(np.where(design.probs < 1.0, design.probs, 0.0).sum()
                           + (design.probs[0] >= 1.0).sum()))
    if n < 2:
        reason = (f"{n} labelled cluster{'s' if n != 1 else ''}: an interval needs at least 2 "
                  "labelled clusters.")
        return ActiveMean(nan, nan, nan, nan, nan, n, 0, big_n, expected, nan, bounds, reason)
    parts = round_parts(sy_, sf_, m_, design)
    a0, b0, a1, b1 = parts
    if lam is None:
        lam = 1.0 if n < min_tuning_clusters else 0.0
        if n >= min_tuning_clusters:
            theta = _theta(a0, b0, a1, b1, 0.0)[0]
            for _ in range(2):
                p, q = a0 - theta * b0, a1 - theta * b1
                lam = lam_from(-float(np.cov(p, q, ddof=1)[0, 1]), float(np.var(q, ddof=1)))
                theta = _theta(a0, b0, a1, b1, lam)[0]
    theta, psi, d = _theta(a0, b0, a1, b1, lam)
    var = float(np.var(psi, ddof=1)) / (big_n * d * d)
    if finite:
        var = _finite_var(sy_ - theta * m_, sf_ - theta * m_, lam, design) / (big_n * d) ** 2
    res = t_interval(theta, math.sqrt(var) if var >= 0 else nan, n - 1, level, bounds,
                     "active PPI")
    # human-only, uniform: s²(z) per cluster, estimated by the design's weights (Hájek)
    z = (sy_ - theta * m_)
    hw = np.where(lab, b0 / np.where(m_ > 0, m_, 1.0), 0.0)
    s2z = float((hw * z * z).sum() / hw.sum()) if hw.sum() > 0 else nan
    eff = s2z / (var * d * d) if var > 0 else nan
    n_units = int(m_[lab].sum())
    return ActiveMean(res.estimate, res.low, res.high, res.se, norm_zero(lam), n, n_units, big_n,
                      expected, eff, bounds, res.reason,
                      _uniform_labels(z, sf_ - theta * m_, hw, var * d * d, big_n,
                                      finite=finite))


def _uniform_labels(z: FloatArray, w: FloatArray, hw: FloatArray, var_d2: float,
                    big_n: int, *, finite: bool) -> float:
    """The labelled clusters a uniform design needs for the variance ``var_d2 / D²`` with the
    same estimator, PPI++ tuned for that design: uniform sampling's ``(E z² − E r²)/N + E r²/n``
    (``r = z − λ_u w``; with ``finite``, the design variance ``E r² (1/n − 1/N)``) solved for
    ``n``, ``E z²``, ``E r²`` and ``E zw``, ``E w²`` estimated by the design's weights ``hw``
    (Hájek). Both forms grow with ``E r²``, so ``λ_u = E zw / E w²`` clipped to [0, 1] (the
    uniform design's own power-tuned λ), not the active design's λ: that λ would
    charge uniform sampling a residual it need not leave, and overstate the saving."""
    if hw.sum() <= 0 or not var_d2 > 0:
        return float("nan")
    s2z = float((hw * z * z).sum() / hw.sum())
    ww = float((hw * w * w).sum())
    lam_u = min(max(float((hw * z * w).sum()) / ww, 0.0), 1.0) if ww > 0 else 0.0
    r = z - lam_u * w
    s2r = float((hw * r * r).sum() / hw.sum())
    room = var_d2 + s2r / big_n if finite else var_d2 - (s2z - s2r) / big_n
    if not s2r > 0:
        return float("nan")
    # beyond every cluster labelled, uniform sampling does not reach this variance: infinite
    return s2r / room if room > 0 and s2r / room <= big_n else float("inf")


def active_ppi_mean(f_all: ArrayLike, y_all: ArrayLike, clusters_all: ArrayLike,
                    cluster_ids: ArrayLike, design: ActiveDesign, *, bounds: Bounds = UNIT_RANGE,
                    level: float = 0.95, lam: float | None = None) -> ActiveMean:
    """:func:`active_ppi_clusters` from units: the judge's ``f_all`` and the people's ``y_all``
    (NaN on unlabelled units) per unit, the unit's cluster, and ``cluster_ids`` the clusters in
    the order of the design's columns. Units with a missing ``f`` are dropped."""
    f = as_float(f_all, "f_all")
    y = as_float(y_all, "y_all")
    cl = np.asarray(clusters_all)
    ids = np.asarray(cluster_ids)
    if not len(f) == len(y) == len(cl):
        raise JudgekitError("f_all, y_all and clusters_all need one entry per unit.")
    ok = np.isfinite(f)
    order = np.argsort(ids, kind="stable")
    pos = np.searchsorted(ids[order], cl[ok])
    if (pos >= len(ids)).any() or (ids[order][np.minimum(pos, len(ids) - 1)] != cl[ok]).any():
        raise JudgekitError("a unit's cluster is not among the design's clusters.")
    idx = order[pos]
    k = len(ids)
    sf = np.bincount(idx, weights=f[ok], minlength=k)
    m = np.bincount(idx, minlength=k).astype(float)
    yv = y[ok]
    sy = np.bincount(idx, weights=np.nan_to_num(yv), minlength=k)
    return active_ppi_clusters(sy, sf, m, design, bounds=bounds, level=level, lam=lam)


def design_variance(sq_residual: ArrayLike, var_y: float, labels: float, *, active: bool,
                    rule: str = "sqrt", floor: float = DEFAULT_FLOOR) -> float:
    """The planned variance of a PPI mean over ``N`` units with an expected ``labels`` of them
    labelled: ``(Var Y + mean_i e_i (1 − π_i)/π_i) / N`` (the module's superpopulation
    variance with ``E[z²] = Var Y``), ``e_i`` each unit's expected squared residual
    (``sq_residual``), ``π_i = labels/N`` (uniform, ``active=False``) or
    :func:`inclusion_probabilities` of ``e`` (``active=True``)."""
    e = as_float(sq_residual, "sq_residual")
    n_all = len(e)
    pi = (inclusion_probabilities(e, labels, rule=rule, floor=floor) if active
          else np.full(n_all, labels / n_all))
    return float((var_y + np.mean(e * (1.0 - pi) / pi)) / n_all)


def labels_for_variance(sq_residual: ArrayLike, var_y: float, target: float, *, active: bool,
                        rule: str = "sqrt", floor: float = DEFAULT_FLOOR) -> int | None:
    """The fewest expected labels whose :func:`design_variance` is at most ``target`` (None when
    even labelling every unit does not reach it)."""
    n_all = len(as_float(sq_residual, "sq_residual"))

    def var(n: float) -> float:
        return design_variance(sq_residual, var_y, n, active=active, rule=rule, floor=floor)

    if var(float(n_all)) > target:
        return None
    lo, hi = 0.0, float(n_all)
    while hi - lo > 0.5:
        mid = 0.5 * (lo + hi)
        if mid > 0 and var(mid) <= target:
            hi = mid
        else:
            lo = mid
    return max(1, math.ceil(hi - 1e-9))
