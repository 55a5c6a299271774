"""The reported figure (value, CI, n, reason when undefined) and the small vectorised tools the
report's figures share: item-resampling weights, percentile intervals, Wilson intervals and
Cohen's κ over a stack of confusion matrices.

A figure is the dict ``{"value", "low", "high", "n", "undefined"}``: ``value`` rounded to 6
decimals or None, ``low``/``high`` the CI bounds (None when there is no interval), ``n`` the
number of units it rests on, and ``undefined`` the one-sentence reason when ``value`` is None.

Bootstraps here resample items: drawing N items with replacement from P distinct item patterns
with frequencies ``f`` is ``Multinomial(N, f / N)`` over the patterns (B. Efron & R. Tibshirani
(1993), An Introduction to the Bootstrap, ch. 13, percentile interval), so B resamples are a
(B, P) weight matrix and every statistic is a weighted sum over patterns.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from judgekit.stats.intervals import percentile_ci, wilson_interval, z_two_sided

# Resamples are drawn in chunks of about this many array cells, to bound memory.
_CHUNK_CELLS = 4_000_000


def num(x: float | None) -> float | None:
    """``x`` as a float rounded to 6 decimals; None for None or NaN."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round(x, 6)


def fig(value: float, ci: tuple[float, float] | None, n: int, undefined: str | None = None) -> dict:
    """A reported figure: value, CI, n, and the reason when undefined."""
    v = num(value)
    if v is None and undefined is None:
        undefined = "undefined on these items"
    lo, hi = (None, None) if ci is None or v is None else (num(ci[0]), num(ci[1]))
    return {"value": v, "low": lo, "high": hi, "n": int(n), "undefined": None if v is not None else undefined}


def undefined_fig(reason: str, n: int = 0) -> dict:
    """A figure that has no value, with the reason."""
    return fig(float("nan"), None, n, reason)


def resample_weights(freq: np.ndarray, n_resamples: int, seed: int | None, *, cost: int = 1,
                     index_dtype: type[np.signedinteger] = np.int64) -> Iterator[np.ndarray]:
    """Item-resampling weights over P patterns with frequencies ``freq``: chunks of (b, P).

    Row r counts how often each pattern was drawn when ``sum(freq)`` items are drawn with
    replacement. With many distinct patterns (nearly one item each) drawing item indices is
    cheaper than the multinomial; the distribution is the same. ``cost`` is the caller's work
    per resample in array cells, used to size the chunks. ``index_dtype`` is the integer type the
    item indices are drawn in: the same seed draws other indices in another type, so each caller
    keeps the one its published intervals were drawn with.
    """
    freq = np.asarray(freq, dtype=np.int64)
    n = int(freq.sum())
    n_patterns = freq.size
    if n == 0 or n_resamples < 1:
        return
    rng = np.random.default_rng(seed)
    probabilities = freq / n
    owner = np.repeat(np.arange(n_patterns), freq) if 4 * n_patterns > n else None
    per = max(cost, n_patterns, n if owner is not None else 1)
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // per))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        if owner is None:
            counts = rng.multinomial(n, probabilities, size=size)
        else:
            drawn = owner[rng.integers(0, n, size=(size, n), dtype=index_dtype)]
            drawn += (np.arange(size) * n_patterns)[:, None]
            counts = np.bincount(drawn.ravel(), minlength=size * n_patterns).reshape(size, n_patterns)
        yield counts.astype(np.float64)


def percentile_bounds(stats: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Central ``confidence`` percentile interval of each column of ``stats`` (B, K)
    (:func:`judgekit.stats.intervals.percentile_ci`). A column whose statistic is undefined (NaN)
    on more than half of the resamples gets NaN bounds (the interval would describe an
    unrepresentative subset), as in :func:`judgekit.agreement.bootstrap_ci`.
    """
    return percentile_ci(np.asarray(stats, dtype=float), level=confidence, min_defined=0.5)


def wilson_fig(k: int, n: int, confidence: float, undefined: str) -> dict:
    """The proportion ``k / n`` with its Wilson score interval (E. B. Wilson (1927), JASA 22,
    209-212) at ``confidence``; undefined with ``undefined`` when n == 0."""
    if n == 0:
        return undefined_fig(undefined)
    lo, hi = wilson_interval(k, n, z=z_two_sided(confidence))
    return fig(k / n, (float(lo), float(hi)), n)


def disagreement(n_labels: int, weights: str | None) -> np.ndarray:
    """(V, V) disagreement weights over label positions: 0/1 (None) or ``(i - j)^2`` (quadratic)."""
    i = np.arange(n_labels, dtype=np.float64)
    diff = np.abs(i[:, None] - i[None, :])
    return diff**2 if weights == "quadratic" else (diff > 0).astype(np.float64)


def kappa_stack(observed: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's κ ``1 - sum(W O) / sum(W E)`` for each confusion matrix of ``observed`` (..., V, V),
    ``E = outer(row sums, column sums) / n``; NaN where n == 0 or ``sum(W E) == 0`` (the same
    formula and the same undefined rule as :func:`judgekit.agreement.cohen_kappa`)."""
    n = observed.sum(axis=(-2, -1))
    rows, cols = observed.sum(axis=-1), observed.sum(axis=-2)
    obs = np.einsum("...ij,ij->...", observed, w)
    expected = np.divide(np.einsum("...i,ij,...j->...", rows, w, cols), n, out=np.zeros(n.shape), where=n > 0)
    defined = expected > 1e-12 * np.maximum(n, 1.0)
    return 1.0 - np.divide(obs, expected, out=np.full(n.shape, np.nan), where=defined)


def agreement_stack(observed: np.ndarray) -> np.ndarray:
    """Share of agreeing pairs (the diagonal) of each confusion matrix; NaN where n == 0."""
    n = observed.sum(axis=(-2, -1))
    diag = np.trace(observed, axis1=-2, axis2=-1)
    return np.divide(diag, n, out=np.full(n.shape, np.nan), where=n > 0)


class CellSums:
    """Maps item-pattern weights (b, P) to the counts (b, n_cells) of the cells the patterns fall
    in (``cells`` (P,), -1 = the pattern is not counted), by sorted segment sums: no matrix
    product, so no BLAS threads for these many small sums."""

    def __init__(self, cells: np.ndarray, n_cells: int) -> None:
        cells = np.asarray(cells, dtype=np.int64)
        valid = np.flatnonzero(cells >= 0)
        self.order = valid[np.argsort(cells[valid], kind="stable")]
        ordered = cells[self.order]
        self.starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else valid[:0]
        self.used = ordered[self.starts]
        self.n_cells = n_cells

    def __call__(self, w: np.ndarray) -> np.ndarray:
        out = np.zeros((w.shape[0], self.n_cells))
        if self.order.size:
            out[:, self.used] = np.add.reduceat(w[:, self.order], self.starts, axis=1)
        return out
