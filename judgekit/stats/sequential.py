"""Anytime-valid confidence sequences for a bounded mean, and sequential pass/fail decisions.

A *confidence sequence* (CS) at level 1 − α is a sequence of intervals C_1, C_2, … with

    P(for all t ≥ 1: μ ∈ C_t) ≥ 1 − α,

so, unlike a fixed-n interval, it may be looked at after every observation (or every round of
labels) and acted on at a data-dependent time: stopping at the first round where the interval
clears a threshold keeps the error rate at most α. The price is width: at a fixed n the CS is
wider than a Wilson or t interval (about √(log log n) and a constant).

Construction: the *hedged capital* CS with predictable plug-in bets of Waudby-Smith & Ramdas
(2024), "Estimating means of bounded random variables by betting", JRSS-B 86(1):1–27
(arXiv:2010.09686): the hedged capital process (their Theorem 3) with predictable plug-in bets
(equation numbers differ between the arXiv and journal versions, so none are quoted).
For observations x_1, x_2, … in [0, 1] (rescaled from [a, b] first) and a candidate mean m:

    μ̂_t  = (1/2 + Σ_{i≤t} x_i) / (t + 1)
    σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²) / (t + 1)                (μ̂_0 = 1/2, σ̂²_0 = 1/4)
    λ̃_t  = √( 2 log(2/α) / (σ̂²_{t−1} · t · log(1 + t)) )          (predictable: uses x_<t only)
    λ⁺_t(m) = min(λ̃_t, c/m),   λ⁻_t(m) = min(λ̃_t, c/(1 − m)),     c = 1/2
    K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i(m)(x_i − m)),   K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i(m)(x_i − m))
    K_t(m)  = max(θ K⁺_t(m), (1 − θ) K⁻_t(m)),   θ = 1/2
    C_t     = { m ∈ [0, 1] : K_t(m) < 1/α }.

Under the true mean m = μ both K⁺ and K⁻ are non-negative martingales with initial value 1
(each factor has conditional mean 1 and stays positive because λ⁺ ≤ c/m, λ⁻ ≤ c/(1 − m)), so
K_t(μ) ≤ θK⁺ + (1 − θ)K⁻, a martingale with initial value 1, and Ville's inequality gives
P(∃t: K_t(μ) ≥ 1/α) ≤ α. The set is computed on a grid of m (as the authors' reference code,
``confseq.betting.hedged_cs``, does): the interval runs from the first to the last grid point
not rejected, widened outward by one grid step; the running intersection over t is taken (an
intersection of CS intervals is still a CS). The bets above match that code's defaults
(``lambda_predmix_eb`` with α·θ, ``trunc_scale=1/2``, ``m_trunc=True``, max of the two capital
processes); their code is not copied here.

A difference of paired quantities in [−1, 1] (judge − human on the same unit) is handled by
the affine map y = (d + 1)/2 ∈ [0, 1]: a CS [l, u] for E[y] is the CS [2l − 1, 2u − 1] for E[d].
Any known range [a, b] works the same way (``bounds=(a, b)``).

Observations are taken *in order*; they may arrive in rounds (a list of arrays, one per round of
labelling). The CS is valid at every single observation, so reading it only at the end of each
round (what :func:`sequential_decision` does) is valid too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import direction_code

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: grid steps on the rescaled [0, 1] range (resolution 1/BREAKS, or (b − a)/BREAKS on [a, b])
BREAKS = 1000
#: truncation of the bets, c in λ⁺ ≤ c/m and λ⁻ ≤ c/(1 − m) (the paper's and the code's 1/2)
TRUNCATION = 0.5
#: observations processed at once (bounds memory to about (BREAKS + 1) × CHUNK floats)
CHUNK = 2048
#: observations processed at once by :func:`sequential_decision` (it stops at the first decision)
DECISION_CHUNK = 256

Outcome = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class ConfidenceSequence:
    """Running intervals of a confidence sequence.

    ``lower[t]``, ``upper[t]``: the CS after observation t + 1 (0-based arrays, one entry per
    observation); ``round_ends[r]``: the number of observations at the end of round r + 1;
    ``round_lower``/``round_upper``: the CS read at the end of each round; ``final``: the
    interval after the last observation. The intervals are the running intersection, so they
    never widen; in the (probability ≤ α) event that the intersection is empty, lower > upper.
    """

    lower: FloatArray
    upper: FloatArray
    round_ends: IntArray
    alpha: float
    bounds: tuple[float, float]

    @property
    def round_lower(self) -> FloatArray:
        """The lower end at the end of each round (the range's lower bound before any data)."""
        seen = self.round_ends > 0
        return np.where(seen, self.lower[np.maximum(self.round_ends - 1, 0)] if self.n else 0.0,
                        self.bounds[0])

    @property
    def round_upper(self) -> FloatArray:
        """The upper end at the end of each round (the range's upper bound before any data)."""
        seen = self.round_ends > 0
        return np.where(seen, self.upper[np.maximum(self.round_ends - 1, 0)] if self.n else 0.0,
                        self.bounds[1])

    @property
    def final(self) -> tuple[float, float]:
        if len(self.lower) == 0:
            return self.bounds
        return float(self.lower[-1]), float(self.upper[-1])

    @property
    def n(self) -> int:
        return len(self.lower)


@dataclass(frozen=True)
class SequentialDecision:
    """The outcome of a check read from a confidence sequence round by round.

    ``outcome``: "pass", "fail" or "inconclusive"; ``round``: the 1-based round at which the
    check was first decided (None when it never was); ``n_used``: observations up to that round
    (all of them when undecided); ``interval``: the CS at that round (at the end if undecided).
    """

    outcome: Outcome
    round: int | None
    n_used: int
    interval: tuple[float, float]


def _rounds(x: npt.ArrayLike | Sequence[npt.ArrayLike]) -> tuple[FloatArray, IntArray]:
    """Observations concatenated in order, and the cumulative count at the end of each round.

    A flat sequence of numbers is one observation per round; a sequence of arrays (or nested
    lists) is one round per array."""
    if isinstance(x, np.ndarray) and x.ndim <= 1:
        parts = [np.atleast_1d(np.asarray(x, dtype=float))]
        flat = parts[0]
        return flat, np.arange(1, len(flat) + 1, dtype=np.int64)
    if isinstance(x, Sequence | np.ndarray) and any(np.ndim(p) >= 1 for p in x):
        parts = [np.atleast_1d(np.asarray(p, dtype=float)).ravel() for p in x]
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        flat = np.concatenate(parts) if parts else np.zeros(0)
        return flat, np.cumsum(sizes).astype(np.int64)
    flat = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
    return flat, np.arange(1, len(flat) + 1, dtype=np.int64)


def _check_bounds(x: FloatArray, bounds: tuple[float, float]) -> tuple[float, float]:
    a, b = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise JudgekitError(f"bounds {bounds!r} are not a finite range a < b; pass e.g. (0, 1).")
    if x.size and (not np.all(np.isfinite(x)) or x.min() < a or x.max() > b):
        raise JudgekitError(
            f"an observation lies outside the range [{a:g}, {b:g}] (or is not a number): the "
            "betting confidence sequence needs known bounds; pass the right bounds=(a, b)."
        )
    return a, b


def predictable_bets(y: FloatArray, alpha: float) -> FloatArray:
    """The predictable plug-in bets λ̃_t of the hedged CS (before truncation), for y in [0, 1]:
    λ̃_t = √(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), with σ̂² the regularised running variance
    (prior mean 1/2, prior variance 1/4, one pseudo-observation); Waudby-Smith & Ramdas (2024),
    hedged capital process with predictable plug-in bets."""
    n = len(y)
    t = np.arange(1, n + 1, dtype=float)
    mu_hat = (0.5 + np.cumsum(y)) / (t + 1.0)
    sigma2 = (0.25 + np.cumsum((y - mu_hat) ** 2)) / (t + 1.0)
    sigma2_prev = np.concatenate(([0.25], sigma2[:-1]))
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (sigma2_prev * t * np.log1p(t)))


def hedged_capital(x: npt.ArrayLike, m: float, *, alpha: float = 0.05,
                   bounds: tuple[float, float] = (0.0, 1.0)) -> FloatArray:
    """The hedged capital process K_t(m) = max(½K⁺_t(m), ½K⁻_t(m)) for a candidate mean ``m``
    (module docstring), t = 1 … n, for observations ``x`` in ``bounds``: m is in the confidence
    sequence at time t exactly when K_t(m) < 1/α (up to the grid)."""
    flat = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
    a, b = _check_bounds(flat, bounds)
    y = (flat - a) / (b - a)
    mu = (m - a) / (b - a)
    lam = predictable_bets(y, alpha)
    lam_pos = np.minimum(lam, TRUNCATION / mu) if mu > 0 else lam
    lam_neg = np.minimum(lam, TRUNCATION / (1.0 - mu)) if mu < 1 else lam
    k_pos = np.cumprod(1.0 + lam_pos * (y - mu))
    k_neg = np.cumprod(1.0 - lam_neg * (y - mu))
    return np.asarray(np.maximum(0.5 * k_pos, 0.5 * k_neg), dtype=float)


def _cs_chunks(y: FloatArray, alpha: float, breaks: int,
               chunk: int = CHUNK) -> Iterator[tuple[int, FloatArray, FloatArray]]:
    """The running-intersected hedged CS on [0, 1] chunk by chunk: (start, lower, upper)."""
    grid = np.linspace(0.0, 1.0, breaks + 1)
    lam = predictable_bets(y, alpha)
    with np.errstate(divide="ignore"):
        cap_pos = np.where(grid > 0, TRUNCATION / grid, np.inf)[:, None]
        cap_neg = np.where(grid < 1, TRUNCATION / (1.0 - grid), np.inf)[:, None]
    log_pos = np.zeros((len(grid), 1))
    log_neg = np.zeros((len(grid), 1))
    log_barrier = math.log(1.0 / alpha)
    log_half = math.log(0.5)  # θ = 1 − θ = 1/2
    step = 1.0 / breaks
    lo_run, hi_run = 0.0, 1.0
    for start in range(0, len(y), chunk):
        yc = y[start:start + chunk][None, :]
        lc = lam[start:start + chunk][None, :]
        dev = yc - grid[:, None]
        inc_pos = np.log1p(np.minimum(lc, cap_pos) * dev)
        inc_neg = np.log1p(-np.minimum(lc, cap_neg) * dev)
        cum_pos = log_pos + np.cumsum(inc_pos, axis=1)
        cum_neg = log_neg + np.cumsum(inc_neg, axis=1)
        log_pos, log_neg = cum_pos[:, -1:], cum_neg[:, -1:]
        keep = np.maximum(cum_pos, cum_neg) + log_half < log_barrier  # (grid, chunk)
        any_keep = keep.any(axis=0)
        first = np.argmax(keep, axis=0)
        last = len(grid) - 1 - np.argmax(keep[::-1], axis=0)
        lower = np.where(any_keep, np.maximum(grid[first] - step, 0.0), 1.0)
        upper = np.where(any_keep, np.minimum(grid[last] + step, 1.0), 0.0)
        lower = np.maximum.accumulate(np.concatenate(([lo_run], lower)))[1:]
        upper = np.minimum.accumulate(np.concatenate(([hi_run], upper)))[1:]
        lo_run, hi_run = float(lower[-1]), float(upper[-1])
        yield start, lower, upper


def _prepare(x: npt.ArrayLike | Sequence[npt.ArrayLike], alpha: float, bounds: tuple[float, float],
             breaks: int) -> tuple[FloatArray, IntArray, float, float]:
    if not 0.0 < alpha < 1.0:
        raise JudgekitError(f"alpha {alpha!r} is not in (0, 1); pass e.g. 0.05 for a 95% sequence.")
    if breaks < 2:
        raise JudgekitError(f"breaks {breaks!r} is too coarse; pass at least 2 (default {BREAKS}).")
    flat, ends = _rounds(x)
    a, b = _check_bounds(flat, bounds)
    return flat, ends, a, b


def confidence_sequence(x: npt.ArrayLike | Sequence[npt.ArrayLike], *, alpha: float = 0.05,
                        bounds: tuple[float, float] = (0.0, 1.0),
                        breaks: int = BREAKS) -> ConfidenceSequence:
    """The hedged-capital betting confidence sequence (Waudby-Smith & Ramdas 2024, JRSS-B,
    Theorem 3 with predictable plug-in bets; see the module docstring for the formulas) for the
    mean of observations in ``bounds`` (default [0, 1]: a proportion when they are 0/1).

    ``x``: the observations in the order they were drawn — a flat array (one round per
    observation) or a list of arrays (one per round). ``alpha``: P(the mean ever leaves the
    running interval) ≤ alpha. ``breaks``: grid steps on the range (interval endpoints are
    accurate to one step, widened outward so the coverage is kept).
    """
    flat, ends, a, b = _prepare(x, alpha, bounds, breaks)
    y = (flat - a) / (b - a)
    lowers, uppers = [], []
    for _, lo, hi in _cs_chunks(y, alpha, breaks):
        lowers.append(lo)
        uppers.append(hi)
    lower = a + (b - a) * (np.concatenate(lowers) if lowers else np.zeros(0))
    upper = a + (b - a) * (np.concatenate(uppers) if uppers else np.zeros(0))
    return ConfidenceSequence(lower=lower, upper=upper, round_ends=ends, alpha=alpha, bounds=(a, b))


def paired_difference_cs(judge: npt.ArrayLike | Sequence[npt.ArrayLike],
                         human: npt.ArrayLike | Sequence[npt.ArrayLike], *, alpha: float = 0.05,
                         breaks: int = BREAKS) -> ConfidenceSequence:
    """The confidence sequence for E[judge − human] of paired values in [0, 1] (same rounds for
    both): the differences lie in [−1, 1] and are mapped to [0, 1] by y = (d + 1)/2 (module
    docstring)."""
    fj, ej = _rounds(judge)
    fh, eh = _rounds(human)
    if fj.shape != fh.shape or not np.array_equal(ej, eh):
        raise JudgekitError("judge and human values are not paired (different lengths or rounds); "
                            "pass one value of each per unit, in the same rounds.")
    _check_bounds(fj, (0.0, 1.0))
    _check_bounds(fh, (0.0, 1.0))
    d = fj - fh
    rounds = [d[s:e] for s, e in zip(np.concatenate(([0], ej[:-1])), ej, strict=True)]
    return confidence_sequence(rounds, alpha=alpha, bounds=(-1.0, 1.0), breaks=breaks)


def decide(lower: float, upper: float, threshold: float, direction: str) -> Outcome:
    """Pass/fail/inconclusive of a check from an interval, as the gate reads a 95% interval:
    "θ ≥ thr" passes when lower ≥ thr and fails when upper < thr; "θ ≤ thr" passes when
    upper ≤ thr and fails when lower > thr; "within" (|θ| ≤ thr, thr > 0) passes when
    [lower, upper] ⊆ [−thr, thr] and fails when the interval lies wholly outside it."""
    d = direction_code(direction)
    if d == "ge":
        return "pass" if lower >= threshold else "fail" if upper < threshold else "inconclusive"
    if d == "le":
        return "pass" if upper <= threshold else "fail" if lower > threshold else "inconclusive"
    if lower >= -threshold and upper <= threshold:
        return "pass"
    return "fail" if lower > threshold or upper < -threshold else "inconclusive"


def sequential_decision(x: npt.ArrayLike | Sequence[npt.ArrayLike], threshold: float,
                        direction: str = ">=", alpha: float = 0.05, *,
                        bounds: tuple[float, float] = (0.0, 1.0),
                        breaks: int = BREAKS) -> SequentialDecision:
    """Decide the check "mean ``direction`` ``threshold``" from the confidence sequence read at
    the end of each round, stopping at the first round where it is decided (:func:`decide`).

    Because the CS covers the mean at all times with probability ≥ 1 − α, a check whose true
    value is on the failing side is declared pass with probability ≤ α however the stopping
    round is chosen (and symmetrically for fail); with the hedged CS each one-sided error is
    at most α/2 (it needs ½K± ≥ 1/α). ``direction``: ">=", "<=" or "within" (|mean| ≤
    threshold, e.g. ``|Drift_judge − Drift_human| ≤ margin`` on paired differences with
    ``bounds=(-1, 1)``).
    """
    d = direction_code(direction)
    if d == "within" and not threshold > 0:
        raise JudgekitError(f"the margin {threshold!r} of a 'within' check must be > 0.")
    flat, ends, a, b = _prepare(x, alpha, bounds, breaks)
    y = (flat - a) / (b - a)
    r = 0  # next round to read
    last: tuple[float, float] = (a, b)
    for start, lo, hi in _cs_chunks(y, alpha, breaks, DECISION_CHUNK):
        stop = start + len(lo)
        while r < len(ends) and ends[r] <= stop:
            if ends[r] <= start:  # an empty round: nothing new to read
                r += 1
                continue
            i = int(ends[r]) - 1 - start
            last = (a + (b - a) * float(lo[i]), a + (b - a) * float(hi[i]))
            outcome = decide(last[0], last[1], threshold, d)
            if outcome != "inconclusive":
                return SequentialDecision(outcome, r + 1, int(ends[r]), last)
            r += 1
    return SequentialDecision("inconclusive", None, len(flat), last)
