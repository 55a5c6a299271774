"""Planning a fidelity figure by the gate's own decision rule, by simulation.

The gate certifies a fidelity figure when the percentile bootstrap interval at ``level`` (1 − 2α:
90% at the policy's default α = 0.05, two one-sided tests) of the difference
d = figure(judge) − figure(reference), resampling conversations, lies wholly within ±margin (a
flat interval — every resample the same — is "no CI", and the point decides; the same here). The normal-theory two one-sided tests
(:func:`judgekit.stats.power.n_for_power`, ``direction="within"``) are a little optimistic for this
discrete, small-n decision (76–80% certified at its n where 80% was asked), so a fidelity figure
is planned by simulating that rule:

1. a study of n units draws n per-unit differences from the pilot's (with replacement; or from an
   assumed distribution ``values``/``probs``), recentred to mean 0 for a judge that does not move
   the figure;
2. its bootstrap means come from ``n_boot`` resamples (the count matrix of the resamples times the
   data: one matrix product for every study at once), the interval their (1 − level)/2 and
   (1 + level)/2 percentiles, and the study is certified when −margin ≤ low and high ≤ margin;
3. the certification rate r̂(n) over ``reps`` studies has Monte-Carlo standard error
   SE = √(p(1 − p)/reps) at the target p (0.018 for p = 0.8 and 500 studies); the plan is the
   smallest n with r̂(n) ≥ p + SE (one SE of safety), found by doubling from a start (the normal
   theory n) and bisection; every n is simulated from the same seed (common random numbers), so
   r̂ is close to monotone in n — but not quite (the mean of a discrete difference sits on a
   lattice that moves with n: 84% certified at 55 conversations, 77% at 54, 80% at 52 for the
   differences ±0.25 w.p. 0.1 each, margin 0.05), so the plan must also reach p + SE at the next
   :data:`STEADY` sizes, else the search moves on past the shortfall.

For a nonlinear figure (RCE_t, Drift(t), C …) the per-unit differences are its jackknife
pseudo-values (:func:`jackknife_pseudo`): u_i = K·d − (K − 1)·d₍₋ᵢ₎ over the K clusters, whose
mean is d to first order and whose spread is the figure's per-cluster spread (Efron & Tibshirani,
*An Introduction to the Bootstrap*, 1993, ch. 11; the linearisation the bootstrap of the figure
and of the mean of u share).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_ci
from judgekit.stats.power import Undecidable, bisect_smallest

#: no simulated plan above this many units (the matrix product grows with n)
SIM_MAX_N = 20_000
#: the plan's n is also certified at the next this many sizes
STEADY = 3


@dataclass(frozen=True)
class SimPlan:
    """The simulated plan: ``n`` units, the certification rate measured there, its Monte-Carlo
    standard error and the rate the search asked for (power + one SE)."""

    n: int
    rate: float
    se: float
    target: float
    reps: int


def slip_distribution(sd: float, slip_share: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """An assumed per-unit difference with SD ``sd``: 0 in 1 − ``slip_share`` of the units, ±a in
    ``slip_share``/2 each, a = sd/√slip_share (a judge that agrees and slips now and then; heavier
    tailed — kurtosis 1/slip_share — than a normal, so a little more conservative to plan at)."""
    if not (sd > 0 and math.isfinite(sd)) or not 0 < slip_share <= 1:
        raise JudgekitError(f"an assumed difference needs sd > 0 and a slip share in (0, 1] (got {sd!r}, "
                            f"{slip_share!r}).")
    a = sd / math.sqrt(slip_share)
    return np.array([-a, 0.0, a]), np.array([slip_share / 2, 1 - slip_share, slip_share / 2])


def _bootstrap_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n, n_boot): how often each of n units is drawn in each of n_boot resamples."""
    idx = rng.integers(0, n, size=(n_boot, n)) + n * np.arange(n_boot)[:, None]
    return np.bincount(idx.ravel(), minlength=n * n_boot).reshape(n_boot, n).T.astype(float)


def certification_rate(values: npt.ArrayLike, n: int, margin: float, *, probs: npt.ArrayLike | None = None,
                       reps: int = 500, n_boot: int = 400, level: float = 0.95, seed: int = 0,
                       centre: bool = True) -> float:
    """The share of ``reps`` simulated studies of ``n`` units certified by the percentile-bootstrap
    rule (module doc, steps 1–2). ``values``: per-unit differences (a pilot's, or the support of an
    assumed distribution with ``probs``); ``centre``: shift them to mean 0 (weighted by ``probs``)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise JudgekitError("no finite per-unit difference to simulate from.")
    if n < 2 or reps < 1 or n_boot < 2 or not margin > 0:
        raise JudgekitError(f"a simulation needs n ≥ 2, reps ≥ 1, n_boot ≥ 2 and margin > 0 (got {n}, {reps}, "
                            f"{n_boot}, {margin}).")
    p = None if probs is None else np.asarray(probs, dtype=float)
    if p is not None and (p.shape != v.shape or np.any(p < 0) or abs(p.sum() - 1) > 1e-9):
        raise JudgekitError("probs must be one non-negative share per value, summing to 1.")
    if centre:
        v = v - (v.mean() if p is None else float(p @ v))
    rng = np.random.default_rng(seed)
    x = v[rng.choice(v.size, size=(reps, n), p=p)]
    means = x @ _bootstrap_counts(n, n_boot, rng) / n  # reps × n_boot
    lo, hi = percentile_ci(means.T, level=level)
    return float(np.mean((lo >= -margin) & (hi <= margin)))


def n_for_certification(values: npt.ArrayLike, margin: float, *, probs: npt.ArrayLike | None = None,
                        power: float = 0.8, reps: int = 500, n_boot: int = 400, level: float = 0.95,
                        seed: int = 0, start: int | None = None, centre: bool = True,
                        max_n: int = SIM_MAX_N) -> SimPlan | Undecidable:
    """The smallest n whose simulated certification rate reaches ``power`` + one Monte-Carlo SE
    (module doc, step 3), searched by doubling from ``start`` (default 8) and bisection.
    :class:`~judgekit.stats.power.Undecidable` when more than ``max_n`` units would be needed."""
    _check_power(power)
    v = np.asarray(values, dtype=float)
    return _plan(lambda n: certification_rate(v, n, margin, probs=probs, reps=reps, n_boot=n_boot,
                                              level=level, seed=seed, centre=centre),
                 (power, reps, max_n), start)


def _check_power(power: float) -> None:
    if not 0.5 <= power < 1.0:
        raise JudgekitError(f"power {power!r} is not in [0.5, 1); pass e.g. 0.8.")


def _plan(rate_at: Callable[[int], float], search: tuple[float, int, int],
          start: int | None) -> SimPlan | Undecidable:
    """The smallest n whose rate ``rate_at(n)`` over ``reps`` studies reaches ``power`` + one SE,
    steadily, and at most ``max_n`` (``search``: power, reps, max_n); each n simulated once."""
    power, reps, max_n = search
    se = math.sqrt(power * (1 - power) / reps)
    target = power + se
    cache: dict[int, float] = {}

    def rate(n: int) -> float:
        if n not in cache:
            cache[n] = rate_at(n)
        return cache[n]

    found = _steady(rate, target, _smallest(rate, target, max(2, int(start or 8)), max_n), max_n)
    if found is None:
        return Undecidable(f"more than {max_n:,} units would be needed")
    return SimPlan(found, cache[found], se, target, reps)


def _steady(rate: Callable[[int], float], target: float, found: int | None, max_n: int) -> int | None:
    """The rate is not monotone in n (a discrete difference puts the mean on a lattice that moves
    with n): from ``found`` on, the first n also certified at the next :data:`STEADY` sizes, so a
    few more units never hurt."""
    while found is not None:
        short = next((m for m in range(found + 1, found + STEADY + 1) if m <= max_n and rate(m) < target), None)
        if short is None:
            return found
        found = short + 1 if short + 1 <= max_n else None
        while found is not None and rate(found) < target:
            found = found + 1 if found + 1 <= max_n else None
    return None


def _smallest(rate: Callable[[int], float], target: float, start: int, max_n: int) -> int | None:
    """Smallest n ≥ 2 with rate(n) ≥ target, doubling (or halving) from ``start`` then bisecting."""
    if rate(start) >= target:
        hi, lo = start, start // 2
        while lo >= 2 and rate(lo) >= target:
            hi, lo = lo, lo // 2
        lo = max(lo, 1)
    else:
        lo, hi = start, start * 2
        while rate(min(hi, max_n)) < target:
            if hi >= max_n:
                return None
            lo, hi = hi, hi * 2
        hi = min(hi, max_n)
    return bisect_smallest(lambda n: rate(n) >= target, lo, hi)


def _joint_certification_rate(blocks: Sequence[npt.ArrayLike], sizes: Sequence[int], margin: float, *, reps: int = 500,
                             n_boot: int = 400, level: float = 0.95, seed: int = 0, centre: bool = True) -> float:
    """The share of ``reps`` simulated studies in which EVERY instance of a figure is certified
    (the gate certifies a figure when all its checks pass). ``blocks``: one (K_b, I_b) array per
    independently sampled group (a model: its K_b labelled conversations × its I_b instances of
    the figure, e.g. Drift at turns 2…6), each study drawing ``sizes[b]`` rows of block b with
    replacement — the instances of one conversation stay together — and bootstrapping them
    (module doc, steps 1–2) for every instance at once. ``centre``: each column to mean 0 (a
    missing value, NaN, counts as the mean)."""
    if len(blocks) != len(sizes) or not blocks:
        raise JudgekitError("one size per block of per-unit values, and at least one block.")
    rng = np.random.default_rng(seed)
    ok = np.ones(reps, dtype=bool)
    for block, n in zip(blocks, sizes, strict=True):
        u = np.asarray(block, dtype=float)
        u = u.reshape(len(u), -1)
        if len(u) == 0 or n < 2:
            raise JudgekitError("every block needs per-unit values and a size of at least 2.")
        mean = np.nanmean(u, axis=0) if np.isfinite(u).any() else np.zeros(u.shape[1])
        u = np.where(np.isfinite(u), u, mean[None, :])
        if centre:
            u = u - mean[None, :]
        x = u[rng.integers(0, len(u), size=(reps, n))]  # reps × n × I
        means = np.swapaxes(x, 1, 2) @ _bootstrap_counts(n, n_boot, rng) / n  # reps × I × n_boot
        lo, hi = percentile_ci(np.moveaxis(means, 2, 0), level=level)
        ok &= ((lo >= -margin) & (hi <= margin)).all(axis=1)
    return float(ok.mean())


def n_for_joint_certification(blocks: Sequence[npt.ArrayLike], shares: Sequence[float], margin: float, *,
                              power: float = 0.8, reps: int = 500, n_boot: int = 400, level: float = 0.95,
                              seed: int = 0, start: int | None = None, min_each: int = 2,
                              max_n: int = SIM_MAX_N) -> SimPlan | Undecidable:
    """The smallest total N at which every instance of a figure is certified in ≥ ``power`` + one
    SE of simulated studies (:func:`_joint_certification_rate`), block b getting
    max(``min_each``, ⌈N·shares[b]⌉) units (its share of the labelled conversations; ``min_each``
    the gate's floor), searched as :func:`n_for_certification` (doubling, bisection, and the next
    :data:`STEADY` sizes)."""
    _check_power(power)
    if len(blocks) != len(shares) or any(not 0 < s <= 1 for s in shares):
        raise JudgekitError("one share in (0, 1] per block of per-unit values.")

    def rate(n: int) -> float:
        sizes = [max(min_each, 2, math.ceil(n * s - 1e-9)) for s in shares]
        return _joint_certification_rate(blocks, sizes, margin, reps=reps, n_boot=n_boot, level=level,
                                         seed=seed)

    return _plan(rate, (power, reps, max_n), start)


def jackknife_pseudo(stat: Callable[[np.ndarray], np.ndarray], clusters: npt.ArrayLike) -> np.ndarray:
    """Jackknife pseudo-values of a weighted statistic over clusters (Quenouille 1956; Efron &
    Tibshirani 1993, ch. 11): u_i = K·θ̂ − (K − 1)·θ̂₍₋ᵢ₎, θ̂₍₋ᵢ₎ the statistic with cluster i left
    out. ``stat`` takes unit weights (b, n_units) and returns (b, ...) (as
    :func:`judgekit.stats.intervals.bootstrap_stat`); ``clusters`` each unit's cluster in 0..K−1.
    Returns (K, ...); NaN where leaving a cluster out leaves the statistic undefined."""
    c = np.asarray(clusters, dtype=int)
    k = int(c.max()) + 1 if c.size else 0
    if k < 2:
        return np.empty((0,))
    full = np.asarray(stat(np.ones((1, c.size))), dtype=float)[0]
    loo = np.asarray(stat((c[None, :] != np.arange(k)[:, None]).astype(float)), dtype=float)
    with np.errstate(invalid="ignore"):
        return np.asarray(k * full[None, ...] - (k - 1) * loo)
