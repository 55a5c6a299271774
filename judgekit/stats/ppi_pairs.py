"""A PPI-corrected pairwise figure (concordance C) with its cluster-bootstrap interval (see
:func:`ppi_concordance`).

Why a bootstrap, not a CLT: C is a ratio of U-statistics: every pair shares its units with ~2N
other pairs, so pair indicators are strongly dependent and a CLT over pairs would be far too
narrow; the valid CLT needs the Hoeffding projections and a delta method for the ratio, plus the
randomness of λ and of the design weights. Resampling whole clusters (Field & Welsh 2007,
*JRSS B* 69:369) carries all of it at once: within each stratum, the labelled clusters and the
unlabelled clusters are resampled separately with replacement at their own sizes (so the design's
n_k, N_k are kept), λ is re-estimated on every replicate, and the interval is the percentile
interval (:func:`judgekit.stats.intervals.percentile_interval`), clipped to [0, 1]. Pair weights
for two units of one stratum use ``π_k²`` for ``n_k(n_k − 1)/(N_k(N_k − 1))`` (exact across
strata).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval
from judgekit.stats.ppi_core import (
    MIN_TUNING_CLUSTERS,
    UNIT_RANGE,
    FloatArray,
    Interval,
    IntervalResult,
    as_float,
    clip_to,
    norm_zero,
    not_estimable,
)


@dataclass(frozen=True)
class PPIPairwise(IntervalResult):
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


def _order_kernel(a: FloatArray, ties: float) -> FloatArray:
    """``K[p, q] = 1[a_p > a_q] + ties · 1[a_p = a_q]``."""
    return (a[:, None] > a[None, :]) + ties * (a[:, None] == a[None, :])


def _quad(c: FloatArray, k: FloatArray) -> FloatArray:
    """``Σ_pq c_bp K_pq c_bq`` for each row b of ``c``."""
    return np.einsum("bp,bp->b", c @ k, c)


@dataclass(frozen=True)
class Bootstrap:
    """The cluster bootstrap of a pairwise figure: ``n_resamples`` replicates drawn from
    ``seed``, the percentile interval at ``level``."""

    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95


def ppi_concordance(
    h: ArrayLike,
    f: ArrayLike,
    y: ArrayLike,
    clusters: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    ties: float = 1.0,
    bootstrap: Bootstrap = Bootstrap(),
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

    The interval resamples whole clusters within each stratum (the module docstring says why a
    bootstrap and not a CLT), ``bootstrap.n_resamples`` times from ``bootstrap.seed``, and is the
    percentile interval at ``bootstrap.level`` clipped to [0, 1].

    Not estimable with fewer than 2 labelled clusters, no labelled pair with different H, or a
    degenerate (zero-width) bootstrap distribution. With ``strata`` a stratum with fewer than 2
    labelled clusters raises :class:`~judgekit.errors.JudgekitError`.
    """
    level, n_resamples, seed = bootstrap.level, bootstrap.n_resamples, bootstrap.seed
    hv, fv, yv, cv, sv = _units(h, f, y, clusters, strata)
    lab_u = np.isfinite(yv)
    cids, cinv = np.unique(cv, return_inverse=True)
    nc, cinv = len(cids), cinv.reshape(-1)
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
    w_c, groups = _design(strat_c, lab_c, strict=strata is not None)
    # distinct unit patterns (h, f, y, labelled, weight): the kernels are pattern × pattern
    wu = np.where(lab_u, w_c[cinv], 0.0)
    key = np.stack([hv, fv, np.where(lab_u, yv, 0.0), lab_u.astype(float), wu], axis=1)
    pats, pinv = np.unique(key, axis=0, return_inverse=True)
    a = np.zeros((nc, len(pats)))
    np.add.at(a, (cinv, pinv.reshape(-1)), 1.0)  # units of cluster c in pattern p

    reps = _replicates(_cluster_draws(groups, nc, n_resamples, seed) @ a, pats, ties, lam if lam is not None
                       else (1.0 if n_lab < MIN_TUNING_CLUSTERS else None))
    if not (reps.d_l[0] > 0):
        return refuse("no pair of labelled units with different H: the people's figure is "
                      "undefined.")
    res = _boot(reps.est, "PPI", n_resamples, level)
    human = _boot(reps.c_y, "human-only", n_resamples, level)
    judge = _boot(reps.c_f, "judge", n_resamples, level)
    eff = (n_lab * human.se**2 / res.se**2
           if res.estimable and human.estimable and res.se > 0 else nan)
    return PPIPairwise(res.estimate, res.low, res.high, norm_zero(float(reps.lam[0])), n_lab, nc,
                       float(reps.d_l[0]), float(reps.d_all[0]), human, judge, eff, n_resamples,
                       res.reason)


def _units(h: ArrayLike, f: ArrayLike, y: ArrayLike, clusters: ArrayLike,
           strata: ArrayLike | None) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[Any], NDArray[Any]]:
    """The per-unit arrays (one stratum when ``strata`` is None) of the units with a finite H and
    judge's R; one sentence when their lengths differ."""
    hv, fv, yv = as_float(h, "h"), as_float(f, "f"), as_float(y, "y")
    cv = np.asarray(clusters)
    if not len(hv) == len(fv) == len(yv) == len(cv):
        raise JudgekitError("h, f, y and clusters must have one entry per unit.")
    sv = np.zeros(len(hv), dtype=int) if strata is None else np.asarray(strata)
    if len(sv) != len(hv):
        raise JudgekitError("strata must have one entry per unit.")
    ok = np.isfinite(hv) & np.isfinite(fv)
    return hv[ok], fv[ok], yv[ok], cv[ok], sv[ok]


def _cluster_draws(groups: list[NDArray[np.intp]], nc: int, n_resamples: int, seed: int) -> FloatArray:
    """How often each of ``nc`` clusters is drawn: row 0 the data (once each), then one row per
    replicate, each group resampled with replacement at its own size."""
    rng = np.random.default_rng(seed)
    mult = np.ones((n_resamples + 1, nc))
    for g in groups:
        if len(g):
            mult[1:, g] = rng.multinomial(len(g), np.full(len(g), 1.0 / len(g)), size=n_resamples)
    return mult


def _design(strat_c: NDArray[Any], lab_c: NDArray[np.bool_], *,
            strict: bool) -> tuple[FloatArray, list[NDArray[np.intp]]]:
    """The design weight ``N_k / n_k`` of each labelled cluster in its stratum, and the groups
    the bootstrap resamples apart (the labelled and the unlabelled clusters of each stratum).
    ``strict``: a stratum with fewer than 2 labelled clusters raises."""
    w_c = np.zeros(len(lab_c))
    groups: list[NDArray[np.intp]] = []
    for k in list(dict.fromkeys(strat_c.tolist())):
        in_k = strat_c == k
        n_k, big_n_k = int((in_k & lab_c).sum()), int(in_k.sum())
        if strict and n_k < 2:
            raise JudgekitError(f"stratum {k!r} has {n_k} labelled cluster"
                                f"{'s' if n_k != 1 else ''} of {big_n_k}; the pairwise "
                                "estimate needs at least 2 in every stratum (label more, or "
                                "merge the stratum).")
        w_c[in_k & lab_c] = big_n_k / n_k
        groups += [np.flatnonzero(in_k & lab_c), np.flatnonzero(in_k & ~lab_c)]
    return w_c, groups


@dataclass(frozen=True)
class _Replicates:
    """Per replicate (row 0: the data): the PPI estimate, the people's and the judge's figures,
    λ, and the pair weights over labelled and over all pairs with different H."""

    est: FloatArray
    c_y: FloatArray
    c_f: FloatArray
    lam: FloatArray
    d_l: FloatArray
    d_all: FloatArray


def _replicates(cnt: FloatArray, pats: FloatArray, ties: float, lam: float | None) -> _Replicates:
    """The figures of every replicate from its unit counts per pattern ``cnt`` (B, P);
    ``lam`` fixes λ (None: tuned per replicate)."""
    kd = (pats[:, 0][:, None] > pats[:, 0][None, :]).astype(float)
    kf = kd * _order_kernel(pats[:, 1], ties)
    ky = kd * _order_kernel(pats[:, 2], ties)
    cl_ = cnt * (pats[:, 3] * pats[:, 4])  # labelled weight per pattern (0 for unlabelled)
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
        if lam is None:
            lam_b = np.where(var > 1e-12, np.clip(cov / np.where(var > 1e-12, var, 1.0), 0, 1), 0.0)
        else:
            lam_b = np.full(len(cnt), float(lam))
        est_b = lam_b * c_f + c_y - lam_b * c_fl
    return _Replicates(est_b, c_y, c_f, lam_b, d_l, d_all)


def _boot(x: FloatArray, what: str, n_resamples: int, level: float) -> Interval:
    """The figure ``x[0]`` with the percentile interval of its replicates ``x[1:]`` clipped to
    [0, 1]; not estimable when over 1% of them are undefined or they do not vary."""
    rep = x[1:][np.isfinite(x[1:])]
    if len(rep) < 0.99 * n_resamples:
        return not_estimable(f"the {what} figure is undefined on over 1% of the cluster "
                             "resamples (too few labelled pairs with different H).")
    lo, hi = percentile_interval(np.clip(rep, 0.0, 1.0), level)
    if hi - lo <= 0.0:
        return not_estimable(f"the {what} figure does not vary over the cluster resamples, "
                             "so an interval would claim certainty it does not have.")
    return Interval(clip_to(x[0], UNIT_RANGE), norm_zero(lo), norm_zero(hi), float(np.std(rep)))
