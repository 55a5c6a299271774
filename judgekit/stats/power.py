"""Planning the gate's checks: how many units decide a check, what a given n can resolve, what a
count can show, and budgets written for people.

The gate reads a two-sided ``level`` interval (95%) and passes "θ ≥ thr" when its lower end is
≥ thr (fails when its upper end is < thr); "θ ≤ thr" mirrors it. Each side of that decision is a
one-sided test at α = (1 − level)/2, so the planning below uses z_{1−α} = z_{0.975} = 1.96 and
power 1 − β (80%: z_{0.8} = 0.8416). "Deciding" means reaching the side the assumed true value
θ₁ sits on: pass when θ₁ is on the passing side, fail otherwise; when θ₁ sits on the threshold
no n decides the check with the wanted power, and the answer is :class:`Undecidable`.

Formulas (δ = |θ₁ − thr|):

* proportion, Wilson (score) interval — thr lies outside the Wilson interval exactly when the
  score test of p = thr rejects, so the power at n is
  Φ((δ√n − z_{1−α}√(p₀q₀)) / √(p₁q₁)) with p₀ = thr, p₁ = θ₁, and
  n = ((z_{1−α}√(p₀q₀) + z_{1−β}√(p₁q₁)) / δ)²  (the one-sample score-test sample size, e.g.
  Fleiss, Levin & Paik, *Statistical Methods for Rates and Proportions*, 3rd ed. 2003); then n is
  raised until the
  *exact* binomial power of the Wilson decision reaches 1 − β (binomial discreteness);
* mean with SD σ (or paired difference with SD σ_d of the differences) — t interval:
  n = smallest n with P(T'_{n−1, δ√n/σ} ≥ t_{1−α,n−1}) ≥ 1 − β (non-central t), about
  ((z_{1−α} + z_{1−β})σ/δ)²;
* "within" (|θ| ≤ margin, two one-sided tests, e.g. |Drift_judge − Drift_human| ≤ margin):
  power ≈ Φ((margin − θ₁)√n/σ − z_{1−α}) + Φ((margin + θ₁)√n/σ − z_{1−α}) − 1;
* Cohen's κ ≥ thr — the large-sample variance of κ̂ of Fleiss, Cohen & Everitt (1969),
  "Large sample standard errors of kappa and weighted kappa", Psychological Bulletin 72(5):323–327,
  as used for sample sizes by Cantor (1996), "Sample-size calculations for Cohen's kappa",
  Psychological Methods 1(2):150–153 (see :func:`n_for_kappa`).

:func:`what_it_shows` gives the exact (Clopper–Pearson) one-sided bound a count can show.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import (
    clopper_pearson_bound,
    direction_code,
    normal_quantile,
    t_quantile,
    wilson_interval,
    z_two_sided,
)

Kind = Literal["proportion", "mean", "difference"]

#: the default range of each kind's statistic (None: unbounded)
RANGES: dict[str, tuple[float, float] | None] = {
    "proportion": (0.0, 1.0),
    "mean": None,
    "difference": (-1.0, 1.0),
}
#: no plan above this many units
MAX_N = 10**9


@dataclass(frozen=True)
class Undecidable:
    """No number of units decides the check with the wanted power; ``reason`` says why. Falsy,
    so ``n or fallback`` works."""

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"undecidable: {self.reason}"


@dataclass(frozen=True)
class Shows:
    """What k events in n units show: the exact one-sided bound and its sentence."""

    bound: float
    side: Literal["upper", "lower"]
    level: float
    text: str


def _z(level: float, power: float) -> tuple[float, float]:
    if not 0.0 < level < 1.0:
        raise JudgekitError(f"level {level!r} is not in (0, 1); pass e.g. 0.95.")
    if not 0.5 <= power < 1.0:
        raise JudgekitError(f"power {power!r} is not in [0.5, 1); pass e.g. 0.8.")
    return z_two_sided(level), normal_quantile(power)


def _fmt(v: float) -> str:
    return f"{v:g}"


def _range_problem(kind: str, thr: float, theta: float, bounds: tuple[float, float] | None,
                   direction: str) -> Undecidable | None:
    if not (math.isfinite(thr) and math.isfinite(theta)):
        return Undecidable("the threshold and the assumed value must be finite numbers")
    if direction == "within":
        if thr <= 0:
            return Undecidable(f"the margin {_fmt(thr)} of a 'within' check must be > 0")
        if bounds is not None and thr >= max(abs(bounds[0]), abs(bounds[1])):
            return Undecidable(f"the margin {_fmt(thr)} covers the whole range "
                               f"[{_fmt(bounds[0])}, {_fmt(bounds[1])}] of a {kind}: the check "
                               "always passes")
    elif bounds is not None and not bounds[0] < thr < bounds[1]:
        return Undecidable(f"the threshold {_fmt(thr)} is not inside the range "
                           f"({_fmt(bounds[0])}, {_fmt(bounds[1])}) of a {kind}: the range, not "
                           "the data, decides the check")
    if bounds is not None and not bounds[0] <= theta <= bounds[1]:
        return Undecidable(f"the assumed value {_fmt(theta)} is outside the range "
                           f"[{_fmt(bounds[0])}, {_fmt(bounds[1])}] of a {kind}")
    if direction == "within":
        if abs(abs(theta) - thr) == 0:
            return Undecidable(f"the assumed value {_fmt(theta)} sits on the margin "
                               f"±{_fmt(thr)}: no n decides it with the wanted power")
    elif theta == thr:
        return Undecidable(f"the assumed value {_fmt(theta)} sits on the threshold: no n "
                           "decides it with the wanted power")
    return None


def wilson_power(n: int, threshold: float, p: float, direction: str = ">=",
                 level: float = 0.95) -> float:
    """Exact probability, for k ~ Binomial(n, p), that the gate's Wilson-interval decision of
    "rate ``direction`` threshold" goes the way p lies (pass when p is on the passing side,
    fail otherwise)."""
    d = direction_code(direction)
    k = np.arange(n + 1)
    lo, hi = wilson_interval(k, n, z=z_two_sided(level))
    passing = (p > threshold) == (d == "ge")
    if d == "ge":
        hit = lo >= threshold if passing else hi < threshold
    else:
        hit = hi <= threshold if passing else lo > threshold
    return float(stats.binom.pmf(k[hit], n, p).sum())


def _proportion_power(n: float, thr: float, p1: float, za: float) -> float:
    """Score-test power approximation at n (continuous n)."""
    return float(stats.norm.cdf((abs(p1 - thr) * math.sqrt(n) - za * math.sqrt(thr * (1 - thr)))
                                / math.sqrt(max(p1 * (1 - p1), 1e-300))))


def _t_power(n: float, delta: float, sd: float, level: float) -> float:
    """Power of the one-sided t decision at n for normal data: P(T' ≥ t_{1−α,n−1}) with T'
    non-central t (n − 1 degrees of freedom, non-centrality δ√n/σ)."""
    df = max(n - 1.0, 1.0)
    t_a = t_quantile(level, df)
    return float(stats.nct.sf(t_a, df, delta * math.sqrt(n) / sd))


def _within_power(n: float, margin: float, theta: float, sd: float, za: float) -> float:
    """Power of the two one-sided tests for |θ| ≤ margin at n (pass when |θ| < margin, fail
    otherwise), normal approximation."""
    se = sd / math.sqrt(n)
    if abs(theta) < margin:
        return max(0.0, float(stats.norm.cdf((margin - theta) / se - za)
                              + stats.norm.cdf((margin + theta) / se - za) - 1.0))
    return float(stats.norm.cdf((abs(theta) - margin) / se - za))


def _smallest_n(power_at: Callable[[float], float], target: float, start: int = 1) -> int | None:
    """Smallest integer n ≥ start with power_at(n) ≥ target (power increasing in n), by doubling
    and bisection; None above MAX_N."""
    hi = max(start, 1)
    while power_at(hi) < target:
        hi *= 2
        if hi > MAX_N:
            return None
    lo = max(start, hi // 2)
    if power_at(lo) >= target:
        return lo
    return bisect_smallest(lambda n: power_at(n) >= target, lo, hi)


def bisect_smallest(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest n in (lo, hi] with ``ok(n)``, by bisection, given ``ok(hi)`` and not ``ok(lo)``
    (``ok`` monotone in between)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def n_for_power(threshold: float, theta_assumed: float, *, kind: Kind = "proportion",
                direction: str = ">=", sd: float | None = None, power: float = 0.8,
                level: float = 0.95, bounds: tuple[float, float] | None | Literal["default"] = "default",
                exact: bool = True) -> int | Undecidable:
    """Units needed to decide the check "θ ``direction`` ``threshold``" with probability
    ``power`` when the true value is ``theta_assumed``, the gate reading a two-sided ``level``
    interval (module docstring for the formulas).

    ``kind``: "proportion" (Wilson interval; ``exact`` raises n until the exact binomial power
    reaches the target), "mean" (t interval, needs ``sd``) or "difference" (paired differences,
    t interval on the differences, needs ``sd`` of the differences; range [−1, 1] by default).
    ``direction``: ">=", "<=" or "within" (|θ| ≤ threshold, not for proportions).
    ``bounds``: the statistic's range (default per kind, :data:`RANGES`; None: unbounded).
    Returns :class:`Undecidable` when θ_assumed sits on the threshold (or margin), or the
    threshold lies outside the range (or on its edge) so the data cannot decide it.
    """
    d = direction_code(direction)
    za, zb = _z(level, power)
    rng = RANGES.get(kind) if bounds == "default" else bounds
    if kind not in RANGES:
        raise JudgekitError(f"kind {kind!r} is not one of {', '.join(RANGES)}.")
    problem = _range_problem(kind, threshold, theta_assumed, rng, d)
    if problem is not None:
        return problem
    if kind == "proportion":
        if d == "within":
            raise JudgekitError("a 'within' check is planned for a mean or a difference; for a "
                                "rate give '>=' or '<='.")
        delta = abs(theta_assumed - threshold)
        n0 = ((za * math.sqrt(threshold * (1 - threshold))
               + zb * math.sqrt(theta_assumed * (1 - theta_assumed))) / delta) ** 2
        n = max(1, math.ceil(n0 - 1e-9))
        if n > MAX_N:
            return Undecidable(f"more than {MAX_N:,} units would be needed")
        if exact and n <= 100_000:  # above, the binomial is close enough to normal
            for _ in range(max(200, n // 2)):
                if wilson_power(n, threshold, theta_assumed, d, level) >= power:
                    break
                n += 1
        return n
    if sd is None or not sd > 0 or not math.isfinite(sd):
        raise JudgekitError(f"a {kind} needs its standard deviation sd > 0 (got {sd!r}); for a "
                            "difference, the SD of the paired differences.")
    if d == "within":
        found = _smallest_n(lambda n: _within_power(n, threshold, theta_assumed, sd, za), power)
    else:
        delta = abs(theta_assumed - threshold)
        found = _smallest_n(lambda n: _t_power(n, delta, sd, level), power, start=2)
    if found is None:
        return Undecidable(f"more than {MAX_N:,} units would be needed")
    return found


def smallest_margin(n: int, *, kind: Kind = "proportion", threshold: float | None = None,
                    direction: str = ">=", sd: float | None = None, theta_assumed: float = 0.0,
                    power: float = 0.8, level: float = 0.95) -> float | Undecidable:
    """The smallest distance the check can resolve at ``n`` units with probability ``power``.

    * mean/difference, ">=" or "<=": δ with power(n, δ) = target, about (z_{1−α} + z_{1−β})σ/√n
      (t quantiles used); no threshold needed.
    * mean/difference, "within": the smallest margin m such that |θ| ≤ m passes with the target
      power when the true value is ``theta_assumed`` (default 0, a fair judge).
    * proportion, ">=" (or "<="): the smallest p₁ − thr (thr − p₁) on the passing side whose
      score-test power at n reaches the target; needs ``threshold``.
    Returns :class:`Undecidable` when no value in the range reaches the power at this n.
    """
    d = direction_code(direction)
    za, zb = _z(level, power)
    if n < 1:
        return Undecidable(f"n = {n} units decide nothing")
    if kind == "proportion":
        if threshold is None or not 0.0 < threshold < 1.0 or d == "within":
            raise JudgekitError("a proportion's margin needs a threshold in (0, 1) and '>=' or "
                                "'<='.")
        sign = 1.0 if d == "ge" else -1.0
        edge = 1.0 if d == "ge" else 0.0

        def gap(p1: float) -> float:
            return _proportion_power(n, threshold, p1, za) - power

        if gap(edge) < 0:
            return Undecidable(f"at n = {n:,} not even a true rate of {_fmt(edge)} reaches "
                               f"{power:.0%} power against {_fmt(threshold)}")
        p1 = optimize.brentq(gap, threshold + sign * 1e-12, edge, xtol=1e-10)
        return float(abs(p1 - threshold))
    if sd is None or not sd > 0:
        raise JudgekitError(f"a {kind} needs its standard deviation sd > 0 (got {sd!r}).")
    if d == "within":
        theta = abs(theta_assumed)

        def gap_w(m: float) -> float:
            return _within_power(n, m, theta, sd, za) - power

        hi = theta + (za + zb + 5.0) * sd / math.sqrt(n) + 1e-9
        return float(optimize.brentq(gap_w, theta + 1e-12, hi, xtol=1e-12))
    if n < 2:
        return Undecidable("a t interval needs at least 2 units")
    df = n - 1
    return float((t_quantile(level, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n))


def what_it_shows(k: int, n: int, *, level: float = 0.95, side: Literal["upper", "lower"] = "upper",
                  digits: int = 3) -> Shows:
    """The exact one-sided ``level`` bound k events in n units can show (Clopper & Pearson 1934,
    Biometrika 26:404): upper = Beta⁻¹(level; k + 1, n − k) (1 when k = n), which for k = 0 is
    1 − (1 − level)^{1/n}; lower = Beta⁻¹(1 − level; k, n − k + 1) (0 when k = 0). The sentence
    rounds to ``digits`` significant figures: 0 of 18 → "shows ≤ 0.153"."""
    if not (isinstance(k, int | np.integer) and isinstance(n, int | np.integer)) or not 0 <= k <= n \
            or n < 1:
        raise JudgekitError(f"{k!r} events in {n!r} units is not a count 0 ≤ k ≤ n with n ≥ 1.")
    if not 0.0 < level < 1.0:
        raise JudgekitError(f"level {level!r} is not in (0, 1); pass e.g. 0.95.")
    if side not in ("upper", "lower"):
        raise JudgekitError(f"side {side!r} is not 'upper' or 'lower'.")
    bound = float(clopper_pearson_bound(k, n, level, side=side))
    text = f"shows {'≤' if side == 'upper' else '≥'} {bound:.{digits}g}"
    return Shows(bound=bound, side=side, level=level, text=text)


# --- Cohen's kappa --------------------------------------------------------------------------

def kappa_table(kappa: float, marginals: npt.ArrayLike) -> np.ndarray:
    """The joint table of two raters with common marginals p and agreement κ under the
    "agree-by-κ" model p_ij = (1 − κ) p_i p_j + κ p_i [i = j] (with probability κ the second
    rater copies the first, otherwise rates independently): its Cohen's κ is exactly κ."""
    p = np.asarray(marginals, dtype=float)
    table = (1.0 - kappa) * np.outer(p, p) + kappa * np.diag(p)
    return np.asarray(table)


def kappa_from_table(table: npt.ArrayLike) -> np.ndarray:
    """Cohen's κ = (p_o − p_e)/(1 − p_e) of joint proportion (or count) tables (..., k, k)."""
    t = np.asarray(table, dtype=float)
    t = t / t.sum(axis=(-2, -1), keepdims=True)
    po = np.trace(t, axis1=-2, axis2=-1)
    pe = (t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1)
    return np.asarray((po - pe) / (1.0 - pe))


def kappa_variance(table: npt.ArrayLike) -> np.ndarray:
    """n·Var(κ̂) for the joint table p (..., k, k), the large-sample formula of Fleiss, Cohen &
    Everitt (1969, Psychol. Bull. 72:323):

        n Var(κ̂) = [ Σ_i p_ii (1 − (p_i· + p_·i)(1 − κ))²
                     + (1 − κ)² Σ_{i≠j} p_ij (p_·i + p_j·)²
                     − (κ − p_e(1 − κ))² ] / (1 − p_e)²."""
    t = np.asarray(table, dtype=float)
    t = t / t.sum(axis=(-2, -1), keepdims=True)
    rows = t.sum(axis=-1)  # p_i.
    cols = t.sum(axis=-2)  # p_.j
    pe = (rows * cols).sum(axis=-1)
    po = np.trace(t, axis1=-2, axis2=-1)
    kappa = (po - pe) / (1.0 - pe)
    one_minus = (1.0 - kappa)[..., None]
    diag = np.diagonal(t, axis1=-2, axis2=-1)
    a = (diag * (1.0 - (rows + cols) * one_minus) ** 2).sum(axis=-1)
    # (p_.i + p_j.) for cell (i, j): column total of i plus row total of j
    spread = cols[..., :, None] + rows[..., None, :]
    k = t.shape[-1]
    off = t * (1.0 - np.eye(k))
    b = (1.0 - kappa) ** 2 * (off * spread**2).sum(axis=(-2, -1))
    c = (kappa - pe * (1.0 - kappa)) ** 2
    return np.asarray((a + b - c) / (1.0 - pe) ** 2)


def n_for_kappa(threshold: float, kappa_assumed: float, marginals: npt.ArrayLike, *,
                power: float = 0.8, level: float = 0.95,
                variance: Literal["interval", "cantor"] = "interval") -> int | Undecidable:
    """Items needed to decide "κ ≥ threshold" (Cohen's κ of two raters) with probability
    ``power`` when the true κ is ``kappa_assumed`` and both raters' label shares are
    ``marginals`` (agree-by-κ table, :func:`kappa_table`).

    With Q(κ) = n·Var(κ̂) from Fleiss, Cohen & Everitt (1969) (:func:`kappa_variance`):

    * ``variance="interval"`` (default; the gate reads a Wald-type interval κ̂ ± z√(Q(κ̂)/n)
      whose width is estimated at the observed κ̂): the decision edge c(n) solves
      c − z_{1−α}√(Q(c)/n) = κ₀ (mirrored for κ₁ < κ₀), and n is the smallest with
      Φ((κ₁ − c(n)) / √(Q(κ₁)/n)) ≥ 1 − β. This is about (z_{1−α} + z_{1−β})² Q / δ² with Q taken
      near the threshold for the interval and at κ₁ for the spread of κ̂ (the plain
      (z_{1−α} + z_{1−β})² Q(κ₁)/δ², with Q(κ₁) for both, was 74–77% powered in simulation);
    * ``variance="cantor"``: the test of H₀: κ = κ₀ with the null variance, Cantor (1996,
      Psychol. Methods 1:150): n = (z_{1−α}√Q(κ₀) + z_{1−β}√Q(κ₁))² / δ².

    δ = |κ₁ − κ₀|. Undecidable when κ₁ = κ₀, or a κ is outside what the marginals allow
    (κ ≥ −min_i p_i/(1 − p_i) up to 1; the threshold must be below 1).
    """
    za, zb = _z(level, power)
    p = np.asarray(marginals, dtype=float)
    if p.ndim != 1 or len(p) < 2 or np.any(p <= 0) or abs(p.sum() - 1.0) > 1e-9:
        raise JudgekitError("marginals must be ≥ 2 positive label shares summing to 1, e.g. "
                            "[0.3, 0.7].")
    kmin = float(np.max(-p / (1.0 - p)))
    if not kmin < threshold < 1.0:
        return Undecidable(f"the threshold {_fmt(threshold)} is not inside the range "
                           f"({kmin:.3g}, 1) of κ for these label shares")
    if not kmin <= kappa_assumed <= 1.0:
        return Undecidable(f"the assumed κ {_fmt(kappa_assumed)} is outside the range "
                           f"[{kmin:.3g}, 1] for these label shares")
    if kappa_assumed == threshold:
        return Undecidable(f"the assumed κ {_fmt(kappa_assumed)} sits on the threshold: no n "
                           "decides it with the wanted power")
    q1 = float(kappa_variance(kappa_table(kappa_assumed, p)))
    delta = abs(kappa_assumed - threshold)
    if variance == "cantor":
        q0 = float(kappa_variance(kappa_table(threshold, p)))
        n = (za * math.sqrt(max(q0, 0.0)) + zb * math.sqrt(max(q1, 0.0))) ** 2 / delta**2
        return max(2, math.ceil(n - 1e-9))
    if variance != "interval":
        raise JudgekitError(f"variance {variance!r} is not 'interval' or 'cantor'.")
    up = kappa_assumed > threshold
    sd1 = math.sqrt(max(q1, 1e-300))

    def q_at(k: float) -> float:
        return max(float(kappa_variance(kappa_table(min(max(k, kmin), 1.0), p))), 0.0)

    def power_at(n: float) -> float:
        # the edge c of the decision: the interval κ̂ ∓ z√(Q(κ̂)/n) just touches the threshold
        def edge(c: float) -> float:
            return (c - threshold) - (1.0 if up else -1.0) * za * math.sqrt(q_at(c) / n)

        far = 1.0 if up else kmin
        if (edge(far) < 0) if up else (edge(far) > 0):
            return 0.0
        c = optimize.brentq(edge, threshold, far, xtol=1e-12)
        z = (kappa_assumed - c) / (sd1 / math.sqrt(n)) if up else (c - kappa_assumed) / (sd1 / math.sqrt(n))
        return float(stats.norm.cdf(z))

    found = _smallest_n(power_at, power, start=2)
    if found is None:
        return Undecidable(f"more than {MAX_N:,} units would be needed")
    return found


# --- budgets for people ---------------------------------------------------------------------

def format_units(n: int | Undecidable, unit: str = "units", singular: str | None = None) -> str:
    """A budget with thousands separators: ``format_units(1234, "conversations")`` →
    "1,234 conversations"; one unit uses ``singular`` (default: ``unit`` without a final "s");
    an :class:`Undecidable` budget → "no number of conversations decides it (<reason>)"."""
    if isinstance(n, Undecidable):
        return f"no number of {unit} decides it ({n.reason})"
    n = int(n)
    if n == 1:
        return f"1 {singular if singular is not None else unit.removesuffix('s')}"
    return f"{n:,} {unit}"
