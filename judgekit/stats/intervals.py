"""Confidence intervals used by the analyses: Wilson score intervals and cluster bootstraps.

Pure numpy. The bootstrap here resamples *clusters* (prompts or conversations), never rows:
samples of one prompt are correlated draws, and resampling them one by one would make the
intervals too narrow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

#: two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054


def wilson_interval(
    k: float | np.ndarray, n: float | np.ndarray, *, z: float = Z95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion ``k / n`` (vectorised over arrays).

    .. math::

        \\tilde p = \\frac{\\hat p + z^2/(2n)}{1 + z^2/n}, \\qquad
        h = \\frac{z}{1 + z^2/n}\\sqrt{\\frac{\\hat p(1-\\hat p)}{n} + \\frac{z^2}{4n^2}}

    and the interval is ``[p̃ − h, p̃ + h]``. ``k`` may be fractional (a sample judged several
    times counts as the share of trials). Where ``n == 0`` both bounds are NaN.

    Reference: E. B. Wilson (1927), JASA 22:209–212; Newcombe (1998), Stat. Med. 17:857–872
    (method 3), whose worked examples the tests reproduce.

    >>> lo, hi = wilson_interval(81, 263)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.2553, 0.3662)
    """
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    ok = n_arr > 0
    safe_n = np.where(ok, n_arr, 1.0)
    p = np.where(ok, k_arr / safe_n, 0.0)
    z2 = z * z
    denom = 1.0 + z2 / safe_n
    centre = (p + z2 / (2.0 * safe_n)) / denom
    half = (z / denom) * np.sqrt(np.clip(p * (1.0 - p), 0.0, None) / safe_n + z2 / (4.0 * safe_n**2))
    lo = np.where(ok, np.clip(centre - half, 0.0, 1.0), np.nan)
    hi = np.where(ok, np.clip(centre + half, 0.0, 1.0), np.nan)
    return lo, hi


def z_two_sided(level: float) -> float:
    """The normal quantile z with P(|Z| ≤ z) = ``level`` (1.959964 at 0.95, 1.644854 at 0.90): the
    half-width of a ``level`` interval in standard errors."""
    from statistics import NormalDist

    return float(NormalDist().inv_cdf((1.0 + level) / 2.0))


def abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """The interval of |x| when x lies in [lo, hi]: [0, max(−lo, hi)] when it holds 0, else
    [min(|lo|, |hi|), max(|lo|, |hi|)]."""
    if lo <= 0 <= hi:
        return 0.0, max(-lo, hi)
    return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


def cluster_weights(
    n_clusters: int, n_boot: int, *, seed: int, batch: int
) -> Iterator[np.ndarray]:
    """Bootstrap weights for ``n_clusters`` clusters, ``(b, n_clusters)`` per batch.

    Each row counts how often each cluster was drawn when ``n_clusters`` clusters are drawn
    with replacement (a multinomial draw), so a weighted statistic over the rows of a cluster is
    the statistic on that resample. Deterministic for a given ``seed`` and ``batch``.
    """
    rng = np.random.default_rng(seed)
    probs = np.full(n_clusters, 1.0 / n_clusters)
    done = 0
    while done < n_boot:
        b = min(batch, n_boot - done)
        yield rng.multinomial(n_clusters, probs, size=b).astype(float)
        done += b


def bootstrap_stat(
    stat: Callable[[np.ndarray], np.ndarray],
    cluster_of_unit: np.ndarray,
    *,
    n_boot: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
    max_cells: int = 4_000_000,
) -> np.ndarray:
    """Bootstrap replicates of a weighted statistic, resampling clusters.

    ``stat`` takes unit weights of shape ``(b, n_units)`` and returns ``(b, ...)``.
    ``cluster_of_unit`` (shape ``(n_units,)``) holds each unit's cluster index in
    ``0..n_clusters-1``. Replicates are computed in batches of at most ``max_cells`` weights so a
    large data set does not exhaust memory; ``progress`` is called with the number of replicates
    finished in each batch. Returns an array of shape ``(n_boot, ...)``.
    """
    n_units = len(cluster_of_unit)
    n_clusters = int(cluster_of_unit.max()) + 1 if n_units else 0
    if n_boot <= 0 or n_clusters == 0:
        return np.empty((0,))
    batch = max(1, min(n_boot, max_cells // max(n_units, 1)))
    out = []
    for w in cluster_weights(n_clusters, n_boot, seed=seed, batch=batch):
        out.append(stat(w[:, cluster_of_unit]))
        if progress is not None:
            progress(len(w))
    return np.concatenate(out, axis=0)


def percentile_ci(reps: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over the first axis, ignoring NaN replicates (a resample without data
    for a cell). All-NaN columns give NaN bounds."""
    if reps.size == 0:
        return np.array(np.nan), np.array(np.nan)
    alpha = (1.0 - level) / 2.0
    lo = _nanpct(reps, 100 * alpha)
    hi = _nanpct(reps, 100 * (1 - alpha))
    return lo, hi


def _nanpct(reps: np.ndarray, q: float) -> np.ndarray:
    finite = np.isfinite(reps)
    any_finite = finite.any(axis=0)
    filled = np.where(finite, reps, np.nan)
    # Give all-NaN columns a dummy value, then put NaN back: avoids RuntimeWarnings.
    filled = np.where(any_finite, filled, 0.0)
    out = np.nanpercentile(filled, q, axis=0)
    return np.where(any_finite, out, np.nan)
