"""Percentile bootstrap confidence intervals that resample units.

Resampling N units with replacement only changes how many times each unit is counted, and that
count vector is ``Multinomial(N, 1/N, ..., 1/N)``. Units with identical ratings are
interchangeable, so after grouping them into P distinct patterns with frequencies ``f`` the counts
per pattern are ``Multinomial(N, f / N)``: exactly the same distribution, drawn for all B
resamples at once with ``rng.multinomial(N, f / N, size=B)``. Every statistic here is a sum over
units of per-unit sufficient statistics (a unit's contribution to the coincidence matrix, its
share of agreeing pairs, its category counts), so B resampled statistics are a (B, P) matrix
product followed by one vectorised formula. With 5 raters and 5 categories there are at most
252 patterns however many units there are. When nearly every unit is its own pattern (continuous
scores), drawing N unit indices per resample is cheaper than the multinomial and is used instead.

Which units are resampled follows each statistic's own convention, so that the resampled data
are the data the point estimate used: Krippendorff's alpha and percent agreement use only the
units at least two raters rated (a unit rated once never changes them), so units rated once are
dropped before resampling; Fleiss', Conger's kappa, Gwet's AC1/AC2 and Brennan-Prediger follow
Gwet's irrCAC, where a unit rated once enters the chance term, so every unit rated at least once
is resampled. Cohen's kappa and Scott's pi resample the pairs both raters rated. Resamples whose
statistic is undefined (NaN) are dropped; if more than half are, the interval is ``(nan, nan)``.

Reference: B. Efron & R. Tibshirani (1993), An Introduction to the Bootstrap, ch. 13
(percentile interval); A. F. Hayes & K. Krippendorff (2007), Answering the call for a standard
reliability measure for coding data, Communication Methods and Measures 1(1), 77-89.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement._matrix import missing_mask, rating_matrix, unit_table
from judgekit.agreement._rated import rated_table
from judgekit.agreement.alpha import krippendorff_alpha, prepare_alpha
from judgekit.agreement.chance import (
    agreement_weights,
    bp_from_table,
    brennan_prediger,
    gwet_ac1,
    gwet_ac2,
    gwet_from_table,
    percent_agreement,
    percent_from_table,
)
from judgekit.agreement.confusion import confusion_counts
from judgekit.agreement.conger import conger_from_patterns, conger_kappa, rater_patterns
from judgekit.agreement.figures import resample_weights
from judgekit.agreement.kappa import (
    cohen_kappa,
    disagreement_weights,
    fleiss_from_table,
    fleiss_kappa,
    scott_from_confusion,
    scott_pi,
    weighted_kappa,
)
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval

Interval = tuple[float, float]

def check_resampling(func: str, n_resamples: int, confidence: float) -> None:
    """One sentence naming ``func`` when ``n_resamples`` is not a positive integer or
    ``confidence`` is not strictly between 0 and 1."""
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise JudgekitError(f"{func}: n_resamples={n_resamples!r} must be a positive integer.")
    if not 0.0 < confidence < 1.0:
        raise JudgekitError(
            f"{func}: confidence={confidence!r} must be between 0 and 1, e.g. 0.95."
        )


def resample_patterns(
    freq: np.ndarray,
    evaluate: Callable[[np.ndarray], np.ndarray],
    *,
    cost: int,
    n_resamples: int,
    confidence: float,
    seed: int | None,
) -> Interval:
    """Bootstrap a statistic of P unit patterns with frequencies ``freq`` (P,).

    ``evaluate`` maps unit weights (b, P) to b statistics; ``cost`` is its work per resample in
    array cells, used to size chunks.
    """
    draws = [evaluate(w) for w in resample_weights(freq, n_resamples, seed, cost=cost,
                                                   index_dtype=np.int32)]
    stats = np.concatenate(draws) if draws else np.empty(0)
    return percentile_interval(stats, confidence, min_defined=0.5)


def alpha_ci(
    data: Any,
    *,
    level: str = "nominal",
    categories: Sequence[Any] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`krippendorff_alpha`, resampling units; ``(low, high)``.

    Each distinct unit pattern's sufficient statistics (its category counts, or for interval
    data its moments) are computed once; the B resampled alphas come from one (B, P) matrix
    product. For nominal/ordinal/ratio data with very many distinct values the resamples are
    evaluated one at a time (exact, slower).
    """
    check_resampling("alpha_ci", n_resamples, confidence)
    prepared = prepare_alpha(data, level=level, categories=categories).grouped()
    return resample_patterns(prepared.freq, prepared.evaluate, cost=prepared.cost,
                             n_resamples=n_resamples, confidence=confidence, seed=seed)


def confusion_ci(
    matrix: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of ``statistic`` (confusion stacks (B, V, V) -> (B,)) from a (V, V) confusion
    matrix of counts, resampling its pairs: what :func:`kappa_ci` does after counting the pairs.

    The resampled confusion matrices are multinomial draws over the matrix's non-empty cells.
    """
    matrix = np.asarray(matrix)
    v = matrix.shape[0]
    cells = np.flatnonzero(matrix)

    def evaluate(unit_weights: np.ndarray) -> np.ndarray:
        observed = np.zeros((unit_weights.shape[0], v * v))
        observed[:, cells] = unit_weights
        return statistic(observed.reshape(-1, v, v))

    return resample_patterns(matrix.ravel()[cells], evaluate, cost=v * v + cells.size,
                             n_resamples=n_resamples, confidence=confidence, seed=seed)


def kappa_ci(
    y1: Any,
    y2: Any,
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`cohen_kappa`, resampling the rated pairs; ``(low, high)``.

    A pair's pattern is its confusion cell, so resampled confusion matrices are multinomial
    draws over the non-empty (V, V) cells.
    """
    check_resampling("kappa_ci", n_resamples, confidence)
    matrix, cats = confusion_counts(y1, y2, labels, func="kappa_ci")
    w = disagreement_weights(weights, len(cats), func="kappa_ci")
    return confusion_ci(matrix, lambda o: weighted_kappa(o, w), n_resamples=n_resamples,
                        confidence=confidence, seed=seed)


def scott_ci(
    y1: Any,
    y2: Any,
    *,
    labels: Sequence[Any] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`scott_pi`, resampling the rated pairs; ``(low, high)``."""
    check_resampling("scott_ci", n_resamples, confidence)
    matrix, _ = confusion_counts(y1, y2, labels, func="scott_ci")
    return confusion_ci(matrix, scott_from_confusion, n_resamples=n_resamples,
                        confidence=confidence, seed=seed)


def grouped_table_ci(
    grouped: Any,
    statistic: Callable[[Any, np.ndarray], np.ndarray],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of ``statistic(table, w)`` over an already grouped unit table (a
    :class:`~judgekit.agreement._rated.RatedTable` or unit table whose ``freq`` counts the units
    of each row): what :func:`ac1_ci`, :func:`fleiss_ci` and :func:`percent_agreement_ci` do
    after grouping their units."""
    return resample_patterns(
        grouped.freq,
        lambda w: statistic(grouped, w),
        cost=grouped.counts.size + grouped.counts.shape[1] ** 2,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def _rated_ci(
    func: str,
    data: Any,
    categories: Sequence[Any] | None,
    statistic: Callable[..., np.ndarray],
    weights: Any,
    resampling: tuple[int, float, int | None],
    *,
    ordered: bool = False,
) -> Interval:
    """The CI of a statistic of the units rated at least once: ``statistic(table, w)``, or with
    ``weights`` (not None) ``statistic(table, w, agreement_weights)``; ``ordered`` as in
    :func:`~judgekit.agreement._rated.rated_table`."""
    n_resamples, confidence, seed = resampling
    check_resampling(func, n_resamples, confidence)
    table = rated_table(data, categories, func=func, ordered=ordered)
    if weights is not None:
        w = agreement_weights(weights, len(table.categories), func=func)
        return grouped_table_ci(table.grouped(), lambda t, u: statistic(t, u, w),
                                n_resamples=n_resamples, confidence=confidence, seed=seed)
    return grouped_table_ci(table.grouped(), statistic, n_resamples=n_resamples,
                            confidence=confidence, seed=seed)


def percent_agreement_ci(
    data: Any, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0
) -> Interval:
    """Bootstrap CI of :func:`percent_agreement`, resampling units; ``(low, high)``."""
    check_resampling("percent_agreement_ci", n_resamples, confidence)
    table = unit_table(data, None, func="percent_agreement_ci")
    return grouped_table_ci(table.grouped(), percent_from_table, n_resamples=n_resamples,
                            confidence=confidence, seed=seed)


def fleiss_ci(
    data: Any, *, categories: Sequence[Any] | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`fleiss_kappa`, resampling the units rated at least once."""
    return _rated_ci("fleiss_ci", data, categories, fleiss_from_table, None,
                     (n_resamples, confidence, seed))


def ac1_ci(
    data: Any, *, categories: Sequence[Any] | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`gwet_ac1`, resampling the units rated at least once."""
    return _rated_ci("ac1_ci", data, categories, gwet_from_table, "identity",
                     (n_resamples, confidence, seed))


def ac2_ci(
    data: Any, *, weights: Any = "linear", categories: Sequence[Any] | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`gwet_ac2`, resampling the units rated at least once."""
    return _rated_ci("ac2_ci", data, categories, gwet_from_table, weights,
                     (n_resamples, confidence, seed), ordered=True)


def bp_ci(
    data: Any, *, weights: Any = "identity", categories: Sequence[Any] | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`brennan_prediger`, resampling the units rated at least once."""
    ordered = not (isinstance(weights, str) and weights == "identity")
    return _rated_ci("bp_ci", data, categories, bp_from_table, weights,
                     (n_resamples, confidence, seed), ordered=ordered)


def conger_ci(
    data: Any, *, categories: Sequence[Any] | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int | None = 0,
) -> Interval:
    """Bootstrap CI of :func:`conger_kappa`, resampling the units rated at least once.

    A unit's pattern is its full row of (rater -> category) ratings, since Conger's chance term
    keeps rater identity. A resample in which some rater rated nothing is undefined (dropped).
    """
    check_resampling("conger_ci", n_resamples, confidence)
    patterns = rater_patterns(data, categories, func="conger_ci")
    p, m = patterns.codes.shape
    return resample_patterns(patterns.freq, lambda u: conger_from_patterns(patterns, u),
                             cost=p * m * max(len(patterns.categories), 1),
                             n_resamples=n_resamples, confidence=confidence, seed=seed)


_FAST: dict[Callable[..., float], Callable[..., Interval]] = {
    krippendorff_alpha: alpha_ci,
    percent_agreement: percent_agreement_ci,
    fleiss_kappa: fleiss_ci,
    conger_kappa: conger_ci,
    gwet_ac1: ac1_ci,
    gwet_ac2: ac2_ci,
    brennan_prediger: bp_ci,
}
_TWO_RATERS: dict[Callable[..., float], Callable[..., Interval]] = {
    cohen_kappa: kappa_ci,
    scott_pi: scott_ci,
}


def bootstrap_ci(
    statistic: Callable[..., float],
    data: Any,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    **kwargs: Any,
) -> Interval:
    """Percentile bootstrap CI of ``statistic(data, **kwargs)``, resampling units (columns).

    Parameters
    ----------
    statistic : callable
        Called as ``statistic(resampled_data, **kwargs)`` and returning a float (NaN when
        undefined). For this package's statistics the matching fast path is used
        (:func:`alpha_ci`, :func:`kappa_ci`, ...): same distribution, no Python loop, and the
        units each statistic's convention uses (see the module docstring). For
        :func:`cohen_kappa` and :func:`scott_pi`, ``data`` is the 2 x N matrix ``[y1, y2]``.
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN. For any other statistic, units rated by fewer than two
        raters are dropped first and the remaining units resampled one Python call at a time.
    n_resamples : int, default 1000
    confidence : float, default 0.95
    seed : int or None, default 0
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same interval.
    **kwargs
        Passed to ``statistic`` (e.g. ``level="ordinal"``, ``categories=[...]``).

    Returns
    -------
    (low, high) : tuple of float
        NaN bounds when the statistic is undefined on more than half of the resamples.

    Examples
    --------
    >>> data = [["a", "b", "a", "b", "a", "a"], ["a", "b", "a", "a", "a", "a"]]
    >>> low, high = bootstrap_ci(krippendorff_alpha, data, n_resamples=200)
    >>> bool(low <= krippendorff_alpha(data) <= high)
    True
    """
    two = _TWO_RATERS.get(statistic)
    if two is not None:
        arr = rating_matrix(data, func="bootstrap_ci")
        if arr.shape[0] != 2:
            raise JudgekitError(
                f"bootstrap_ci({statistic.__name__}): data has {arr.shape[0]} rows; pass "
                "[y1, y2], one row per rater."
            )
        return two(
            arr[0], arr[1], n_resamples=n_resamples, confidence=confidence, seed=seed, **kwargs
        )
    fast = _FAST.get(statistic)
    if fast is not None:
        return fast(data, n_resamples=n_resamples, confidence=confidence, seed=seed, **kwargs)
    check_resampling("bootstrap_ci", n_resamples, confidence)
    arr = rating_matrix(data, func="bootstrap_ci")
    rated = ~missing_mask(arr)
    arr = arr[:, rated.sum(axis=0) >= 2]
    n = arr.shape[1]
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    stats = np.array(
        [float(statistic(arr[:, rng.integers(0, n, n)], **kwargs)) for _ in range(n_resamples)]
    )
    return percentile_interval(stats, confidence, min_defined=0.5)
