"""Selective judging with a guarantee of human agreement ("Trust or Escalate").

Pure functions over arrays (numpy/scipy only; no I/O, no store) for the decision rule of

    Jaehun Jung, Faeze Brahman, Yejin Choi. "Trust or Escalate: LLM Judges with Provable
    Guarantees for Human Agreement". ICLR 2025. Code: github.com/jaehunjung1/
    cascaded-selective-evaluation (commit 1b969f2), ``cascaded_evaluation/util.py`` and
    ``cascaded_evaluation/cascaded_classifier.py``.

A judge gives every item a label and a confidence ``c``. It is *trusted* on an item when
``c >= lambda`` and the item is *escalated* (to a stronger judge, in the end to humans) otherwise.
``lambda`` is calibrated on items with human labels so that, with probability at least ``1 - delta``
over the calibration sample, the disagreement rate with humans among the trusted items is at most
``alpha``::

    P( P(judge != human | c >= lambda_hat) <= alpha ) >= 1 - delta.

Calibration is fixed-sequence testing: the null hypotheses ``H_lambda: R(lambda) > alpha`` are
tested from the most to the least confident candidate, each at level ``delta`` (no Bonferroni
split is needed because testing stops at the first non-rejection), rejecting ``H_lambda`` when the
exact one-sided Clopper-Pearson upper bound on ``R(lambda)`` is at most ``alpha``. The lowest
threshold reached before the first failure is returned.

Two rules are provided:

``rule="fixed_sequence"`` (default)
    The textbook procedure on the authors' candidate grid. Candidates are the points of
    ``linspace(0, 1, 5000)`` that keep at least ``min_kept=30`` calibration items (the authors'
    "make sure there's data for top bin"). An item is kept iff ``confidence >= lambda`` (``>=``, as
    the authors). Each candidate is tested at level ``delta``. If the most confident candidate
    already fails, or there are fewer than ``min_kept`` items, **no threshold is returned** (every
    item is escalated) and the result says why.

``rule="authors"``
    Bit-for-bit the authors' ``SelectiveClassificationUtil.lambda_hat`` (verified against their
    code on their published calibration judgments; see ``tests/test_stats_selective.py``), with
    its quirks:

    * float32 arithmetic (their tensors): confidences and the grid ``torch.linspace(0, 1, 5000)``
      are float32;
    * while scanning candidate ``lambda`` (grid points, highest first) the bound is evaluated not
      at the next grid point but at ``lambda - 1/m`` where ``m`` is the number of candidates
      (``m <= 5000``, so this step is coarser than the grid spacing ``1/4999``), and the first
      ``lambda`` whose probe fails is returned;
    * the number of disagreements enters the binomial as ``floor(float32(k/n) * n)``, which can be
      ``k - 1`` through rounding;
    * the bound is the root of ``binom.cdf(k, n, r) = delta`` found by ``brentq`` on
      ``[0, 0.9999]`` (the Clopper-Pearson bound up to ``xtol=2e-12``);
    * when even the most confident candidate fails, the most confident candidate is returned
      anyway (no abstention; ``met=False`` here); when there are fewer than ``min_kept`` items,
      ``0.0`` is returned (every item kept; ``met=False`` here).

Cascades (:func:`judgekit.stats.selective_cascade.calibrate_cascade`): judges are ordered cheap -> strong. As in the authors'
``CascadedClassifier.calibrate``, judge ``j`` is calibrated on the calibration items that no
earlier judge kept (sequential calibration on the *same* calibration sample; no cross-fitting and
no split of ``delta`` between judges), each judge at the full ``alpha`` and ``delta``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.optimize import brentq
from scipy.stats import binom

from judgekit.stats.intervals import clopper_pearson_bound

Rule = Literal["fixed_sequence", "authors"]

#: number of points of the authors' candidate grid ``linspace(0, 1, GRID_SIZE)``
GRID_SIZE = 5000
#: a candidate threshold must keep at least this many calibration items (authors' value)
MIN_KEPT = 30
#: upper end of the authors' ``brentq`` bracket for the binomial bound
_AUTHORS_BRACKET_TOP = 0.9999


# --------------------------------------------------------------------------------------------
# Clopper-Pearson bound
# --------------------------------------------------------------------------------------------


def clopper_pearson_upper(
    k: int | npt.ArrayLike, n: int | npt.ArrayLike, delta: float
) -> Any:
    """Exact one-sided ``1 - delta`` upper confidence bound on a binomial error rate.

    With ``k`` errors among ``n`` independent trials, the Clopper-Pearson upper bound is the
    ``r`` solving ``P(Bin(n, r) <= k) = delta``, i.e.::

        U(k, n; delta) = Beta^{-1}(1 - delta; k + 1, n - k)     for k < n,
        U(n, n; delta) = 1,

    so that ``P(r_true <= U) >= 1 - delta`` (Clopper & Pearson, Biometrika 1934). This is the
    bound the authors solve for with ``brentq(binom.cdf(k, n, r) - delta)``.

    ``k`` and ``n`` may be arrays (broadcast); returns a float for scalars, else an array.
    ``n == 0`` gives ``1.0`` (nothing observed, nothing bounded).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if np.any(k_arr < 0) or np.any(n_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("need 0 <= k <= n")
    return clopper_pearson_bound(k_arr, n_arr, 1.0 - delta)


def _authors_binomial_bound(k_float: float, n: int, delta: float) -> float:
    """The authors' bound: root of ``binom.cdf(k, n, r) - delta`` by ``brentq`` on [0, 0.9999].

    ``k_float`` is their (float32) ``selective_risk * n_lambda``; ``binom.cdf`` floors it.
    Returns ``1.0`` where their ``brentq`` would raise (no sign change: ``k == n`` or a bound
    above 0.9999).
    """

    def f(r: float) -> float:
        return float(binom.cdf(k_float, n, r)) - delta

    if f(0.0) * f(_AUTHORS_BRACKET_TOP) > 0:
        return 1.0
    return float(brentq(f, 0.0, _AUTHORS_BRACKET_TOP))


# --------------------------------------------------------------------------------------------
# Candidate grid and counts
# --------------------------------------------------------------------------------------------


def candidate_grid(size: int = GRID_SIZE, *, float32: bool = False) -> npt.NDArray[Any]:
    """The authors' candidate thresholds ``linspace(0, 1, size)``, ascending.

    With ``float32=True`` the values are those of ``torch.linspace(0, 1, size)`` in float32
    (torch fills the first half as ``i * step`` and the second half as ``1 - (size-1-i) * step``,
    with ``step = float32(1 / (size - 1))``), as the authors' code sees them.
    """
    if size < 2:
        raise ValueError(f"grid size must be at least 2, got {size}")
    if not float32:
        return np.linspace(0.0, 1.0, size)
    step = np.float32(1.0) / np.float32(size - 1)
    idx = np.arange(size)
    half = size // 2
    out = np.empty(size, dtype=np.float32)
    out[:half] = idx[:half].astype(np.float32) * step
    out[half:] = np.float32(1.0) - (np.float32(size - 1) - idx[half:].astype(np.float32)) * step
    return out


@dataclass(frozen=True)
class _Sorted:
    """Confidences sorted ascending with suffix disagreement counts, for O(log n) look-ups."""

    conf: npt.NDArray[Any]  # ascending, NaN removed
    dis_prefix: npt.NDArray[np.int64]  # dis_prefix[i] = disagreements among conf[:i]
    n_valid: int

    @classmethod
    def build(cls, conf: npt.NDArray[Any], agree: npt.NDArray[np.int64]) -> _Sorted:
        ok = ~np.isnan(conf)
        c, a = conf[ok], agree[ok]
        order = np.argsort(c, kind="stable")
        c, a = c[order], a[order]
        prefix = np.concatenate([[0], np.cumsum(1 - a)]).astype(np.int64)
        return cls(conf=c, dis_prefix=prefix, n_valid=int(c.size))

    def counts(self, lam: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(n_kept, k_disagree)`` among items with ``confidence >= lam`` (vectorised)."""
        lo = np.searchsorted(self.conf, np.asarray(lam, dtype=self.conf.dtype), side="left")
        n_kept = self.n_valid - lo
        k = self.dis_prefix[-1] - self.dis_prefix[lo]
        return n_kept.astype(np.int64), np.asarray(k, dtype=np.int64)


def validate_calibration_inputs(
    confidences: npt.ArrayLike, agreements: npt.ArrayLike, alpha: float, delta: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    conf = np.asarray(confidences, dtype=float).ravel()
    agree_raw = np.asarray(agreements).ravel()
    if conf.shape != agree_raw.shape:
        raise ValueError(
            f"confidences and agreements differ in length ({conf.size} vs {agree_raw.size})"
        )
    if np.any(np.isinf(conf)):
        raise ValueError("confidences must be finite (NaN means 'no confidence': never kept)")
    if not np.all((agree_raw == 0) | (agree_raw == 1)):
        raise ValueError("agreements must be 0/1 (1 = the judge agrees with the humans)")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return conf, agree_raw.astype(np.int64)


# --------------------------------------------------------------------------------------------
# Single-judge calibration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdCalibration:
    """Outcome of calibrating one judge's confidence threshold.

    ``threshold`` is ``None`` when no threshold meets the target (escalate every item); then
    ``reason`` says why. Items are kept iff ``confidence >= threshold``. ``n_kept``, ``coverage``
    (``n_kept / n_items``), ``agreement`` (empirical agreement among kept items) and
    ``upper_bound`` (exact Clopper-Pearson ``1 - delta`` upper bound on the disagreement rate among
    kept items) are computed on the calibration items at ``threshold``.
    """

    met: bool
    threshold: float | None
    n_items: int
    n_kept: int
    coverage: float
    agreement: float | None
    upper_bound: float | None
    alpha: float
    delta: float
    rule: str
    reason: str


def _summary(
    s: _Sorted, n_items: int, lam: float | None, alpha: float, delta: float, rule: str,
    met: bool, reason: str,
) -> ThresholdCalibration:
    if lam is None:
        return ThresholdCalibration(met, None, n_items, 0, 0.0, None, None, alpha, delta, rule,
                                    reason)
    n_kept_a, k_a = s.counts(lam)
    n_kept, k = int(n_kept_a), int(k_a)
    agreement = None if n_kept == 0 else 1.0 - k / n_kept
    bound = float(clopper_pearson_upper(k, n_kept, delta))
    coverage = n_kept / n_items if n_items else 0.0
    return ThresholdCalibration(met, float(lam), n_items, n_kept, coverage, agreement, bound,
                                alpha, delta, rule, reason)


def calibrate_threshold(
    confidences: npt.ArrayLike,
    agreements: npt.ArrayLike,
    alpha: float,
    delta: float,
    *,
    rule: Rule = "fixed_sequence",
    grid_size: int = GRID_SIZE,
    min_kept: int = MIN_KEPT,
) -> ThresholdCalibration:
    """Calibrate a confidence threshold by fixed-sequence testing (Jung et al. 2025, Sec. 3).

    For candidate ``lambda`` let ``n(lambda) = #{i : c_i >= lambda}`` and
    ``k(lambda) = #{i : c_i >= lambda, judge disagrees with humans on i}``. Candidates are the grid
    points ``linspace(0, 1, grid_size)`` with ``n(lambda) >= min_kept``; they are scanned from the
    highest down, ``H_lambda: R(lambda) > alpha`` is rejected when
    ``U(k(lambda), n(lambda); delta) <= alpha`` (:func:`clopper_pearson_upper`), and the lowest
    candidate reached before the first non-rejection is returned. By fixed-sequence testing,
    ``P(R(lambda_hat) > alpha) <= delta``.

    ``confidences``: one float per calibration item (NaN = the judge gave none: never kept).
    ``agreements``: 1 if the judge's label equals the human label on that item, else 0.
    ``rule``: ``"fixed_sequence"`` (default, refuses when nothing qualifies) or ``"authors"`` (the
    authors' code exactly, quirks included; see the module docstring).
    """
    conf, agree = validate_calibration_inputs(confidences, agreements, alpha, delta)
    if min_kept < 1:
        raise ValueError(f"min_kept must be at least 1, got {min_kept}")
    n_items = int(conf.size)
    if rule == "fixed_sequence":
        return _calibrate_fixed_sequence(conf, agree, alpha, delta, grid_size, min_kept, n_items)
    if rule == "authors":
        return _calibrate_authors(conf, agree, alpha, delta, grid_size, min_kept, n_items)
    raise ValueError(f"rule must be 'fixed_sequence' or 'authors', got {rule!r}")


def _calibrate_fixed_sequence(
    conf: npt.NDArray[np.float64], agree: npt.NDArray[np.int64], alpha: float, delta: float,
    grid_size: int, min_kept: int, n_items: int,
) -> ThresholdCalibration:
    s = _Sorted.build(conf, agree)
    rule = "fixed_sequence"
    grid = candidate_grid(grid_size)
    n_kept, k = s.counts(grid)
    cand = n_kept >= min_kept  # n_kept falls with lambda, so this is a prefix of the grid
    m = int(cand.sum())
    if m == 0:
        return _summary(s, n_items, None, alpha, delta, rule, False,
                        f"fewer than {min_kept} items have a confidence: no candidate threshold "
                        f"keeps at least {min_kept} calibration items")
    bounds = clopper_pearson_upper(k[:m], n_kept[:m], delta)
    passes = np.asarray(bounds) <= alpha
    # scan from the highest candidate (index m-1) down; stop at the first failure
    rev = passes[::-1]
    if not rev[0]:
        top = float(grid[m - 1])
        return _summary(
            s, n_items, None, alpha, delta, rule, False,
            f"even the most confident candidate (lambda={top:.4f}, {int(n_kept[m - 1])} items "
            f"kept, {int(k[m - 1])} disagreements) has an upper bound "
            f"{float(np.asarray(bounds)[m - 1]):.4f} > alpha={alpha}: no threshold meets the "
            f"target with this many calibration items")
    n_pass = int(np.argmin(rev)) if not rev.all() else m
    lam = float(grid[m - n_pass])
    return _summary(s, n_items, lam, alpha, delta, rule, True,
                    f"{n_pass} of {m} candidates rejected R(lambda) > alpha in sequence")


def _calibrate_authors(
    conf: npt.NDArray[np.float64], agree: npt.NDArray[np.int64], alpha: float, delta: float,
    grid_size: int, min_kept: int, n_items: int,
) -> ThresholdCalibration:
    rule = "authors"
    conf32 = conf.astype(np.float32)
    s32 = _Sorted.build(conf32, agree)
    grid = candidate_grid(grid_size, float32=True)
    n_kept, _ = s32.counts(grid)
    cand = grid[n_kept >= min_kept]
    m = int(cand.size)
    s = _Sorted.build(conf, agree)  # exact summary figures at the returned threshold
    if m == 0:
        # authors: `if len(self.lambdas) == 0: return 0.`  (keeps every item, untested)
        return _summary(s, n_items, 0.0, alpha, delta, rule, False,
                        f"fewer than {min_kept} items: the authors' code returns 0.0 (keeps "
                        f"every item, no test made)")

    def bound_at(lams: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        nk, kk = s32.counts(lams)
        n32 = nk.astype(np.float32)
        with np.errstate(invalid="ignore", divide="ignore"):
            k_float = (kk.astype(np.float32) / n32) * n32  # float32, as their tensors
        k_eff = np.floor(k_float)
        out = np.asarray(clopper_pearson_upper(k_eff, nk, delta), dtype=float)
        out = np.where(out > _AUTHORS_BRACKET_TOP, 1.0, out)
        # near alpha, use their brentq root so that the comparison is decided identically
        close = np.abs(out - alpha) < 1e-9
        for i in np.flatnonzero(close):
            out[i] = _authors_binomial_bound(float(k_float[i]), int(nk[i]), delta)
        return out

    top = cand[-1:]
    if bound_at(top)[0] > alpha:
        return _summary(s, n_items, float(top[0]), alpha, delta, rule, False,
                        "the most confident candidate fails its test; the authors' code returns "
                        "it anyway (no guarantee)")
    step = np.float32(1.0 / m)
    probes = (cand - step).astype(np.float32)  # their `next_lam = lam - 1 / len(lambdas)`
    fails = bound_at(probes[::-1]) > alpha  # scanned highest first
    if fails.any():
        lam = float(cand[::-1][int(np.argmax(fails))])
        reason = "stopped at the first candidate whose probe lambda - 1/m fails"
    else:
        lam = float(cand[0])
        reason = "every probe passes: the lowest candidate is returned"
    return _summary(s, n_items, lam, alpha, delta, rule, True, reason)
