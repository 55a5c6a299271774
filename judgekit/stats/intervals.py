"""The interval core: every confidence interval judgekit reports is computed here, once.

* :func:`normal_quantile`, :func:`z_two_sided` — the normal quantile from a probability or a
  two-sided level (and :data:`Z95`);
* :func:`t_quantile`, :func:`t_interval` — Student's t intervals ``estimate ± t · se``;
* :func:`wilson_interval` — Wilson score interval of a proportion;
* :func:`clopper_pearson_bound`, :func:`clopper_pearson_interval` — exact binomial bounds;
* :func:`percentile_ci`, :func:`percentile_interval` — the bootstrap percentile interval, with its
  one NaN rule;
* :func:`cluster_weights`, :func:`bootstrap_stat` — the cluster bootstrap that feeds it;
* :func:`abs_interval` — the interval of ``|x|``.

Pure numpy (scipy only for the t and beta quantiles, imported when asked). The bootstrap here
resamples *clusters* (prompts or conversations), never rows: samples of one prompt are correlated
draws, and resampling them one by one would make the intervals too narrow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit.errors import JudgekitError

#: two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054

_NORMAL = NormalDist()


# --- normal and t quantiles -------------------------------------------------------------------


def normal_quantile(p: float) -> float:
    """Φ⁻¹(p), the standard normal quantile (``normal_quantile(0.975)`` = 1.959964): the one-sided
    critical value ``z_{1−α}`` is ``normal_quantile(1 − α)``."""
    return float(_NORMAL.inv_cdf(p))


def z_two_sided(level: float) -> float:
    """The normal quantile z with P(|Z| ≤ z) = ``level`` (1.959964 at 0.95, 1.644854 at 0.90): the
    half-width of a ``level`` interval in standard errors, Φ⁻¹((1 + level) / 2)."""
    return normal_quantile((1.0 + level) / 2.0)


@lru_cache(maxsize=4096)
def t_quantile(level: float, df: float) -> float:
    """The two-sided ``level`` quantile of Student's t on ``df`` degrees of freedom,
    ``t_{df}^{-1}(0.5 + level / 2)``; the normal one (:func:`z_two_sided`) for infinite ``df``.
    Cached: a study asks for the same few thousand times.

    >>> round(t_quantile(0.95, 10), 4)
    2.2281
    """
    if not math.isfinite(df):
        return z_two_sided(level)
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2.0, df))


def t_interval(estimate: float, se: float, df: float, level: float = 0.95) -> tuple[float, float]:
    """The Student t interval ``estimate ± t_{df}(level) · se`` (the normal one for infinite
    ``df``), unclipped; callers clip to the range of their statistic."""
    q = t_quantile(level, df)
    return estimate - q * se, estimate + q * se


# --- binomial proportions ---------------------------------------------------------------------


def wilson_interval(
    k: float | np.ndarray, n: float | np.ndarray, *, z: float = Z95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion ``k / n`` (vectorised over arrays).

    .. math::

        \\tilde p = \\frac{\\hat p + z^2/(2n)}{1 + z^2/n}, \\qquad
        h = \\frac{z}{1 + z^2/n}\\sqrt{\\frac{\\hat p(1-\\hat p)}{n} + \\frac{z^2}{4n^2}}

    and the interval is ``[p̃ − h, p̃ + h]`` clipped to [0, 1]; ``z`` is the two-sided quantile
    (:func:`z_two_sided` of the level; 1.96 for 95%). ``k`` may be fractional (a sample judged
    several times counts as the share of trials). Where ``n == 0`` both bounds are NaN.

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


def clopper_pearson_bound(
    k: npt.ArrayLike, n: npt.ArrayLike, level: float, *, side: Literal["upper", "lower"] = "upper"
) -> Any:
    """The exact one-sided ``level`` bound on a binomial proportion from ``k`` events in ``n``
    trials (Clopper & Pearson 1934, Biometrika 26:404–413), vectorised over ``k`` and ``n``:

    * upper: ``U = Beta⁻¹(level; k + 1, n − k)``, the p with ``P(Bin(n, p) ≤ k) = 1 − level``;
      1 when ``k = n`` (and when ``n = 0``: nothing observed, nothing bounded). For ``k = 0`` it is
      ``1 − (1 − level)^{1/n}``.
    * lower: ``L = Beta⁻¹(1 − level; k, n − k + 1)``; 0 when ``k = 0``.

    ``k`` and ``n`` need ``0 ≤ k ≤ n`` (not checked here). Returns a float for scalars, else an
    array.

    >>> round(clopper_pearson_bound(0, 18, 0.95), 4)
    0.1533
    """
    from scipy.stats import beta

    k_b, n_b = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    if side == "upper":
        out = np.ones(k_b.shape, dtype=float)
        inner = k_b < n_b
        if np.any(inner):
            out[inner] = beta.ppf(level, k_b[inner] + 1.0, n_b[inner] - k_b[inner])
    else:
        out = np.zeros(k_b.shape, dtype=float)
        inner = k_b > 0
        if np.any(inner):
            out[inner] = beta.ppf(1.0 - level, k_b[inner], n_b[inner] - k_b[inner] + 1.0)
    return float(out) if out.ndim == 0 else out


def clopper_pearson_interval(k: npt.ArrayLike, n: npt.ArrayLike, level: float = 0.95) -> tuple[Any, Any]:
    """The exact two-sided ``level`` interval of a binomial proportion (Clopper & Pearson 1934):
    the one-sided :func:`clopper_pearson_bound` at ``(1 + level) / 2`` on each side, so each tail
    holds at most ``(1 − level) / 2``.

    >>> lo, hi = clopper_pearson_interval(3, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.0667, 0.6525)
    """
    one_sided = (1.0 + level) / 2.0
    return (clopper_pearson_bound(k, n, one_sided, side="lower"),
            clopper_pearson_bound(k, n, one_sided, side="upper"))


def abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """The interval of |x| when x lies in [lo, hi]: [0, max(−lo, hi)] when it holds 0, else
    [min(|lo|, |hi|), max(|lo|, |hi|)]."""
    if lo <= 0 <= hi:
        return 0.0, max(-lo, hi)
    return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


#: the spellings of a threshold's direction, as :func:`direction_code` reads them
_DIRECTIONS = {">=": "ge", "ge": "ge", "<=": "le", "le": "le", "within": "within", "|<=|": "within"}


def direction_code(direction: str) -> str:
    """A threshold's direction as ``"ge"``, ``"le"`` or ``"within"`` (from ``>=``/``ge``,
    ``<=``/``le``, ``within``/``|<=|``); one sentence for anything else."""
    d = _DIRECTIONS.get(direction)
    if d is None:
        raise JudgekitError(f"direction {direction!r} is not one of '>=', '<=', 'within'.")
    return d


# --- bootstrap ----------------------------------------------------------------------------------


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


def percentile_ci(
    reps: npt.ArrayLike, *, level: float = 0.95, min_defined: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap percentile interval (Efron & Tibshirani (1993), An Introduction to the
    Bootstrap, ch. 13) of each column of ``reps`` (replicates along the first axis): the
    ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the replicates, linearly interpolated
    (``numpy.quantile``'s default).

    The NaN rule: a replicate that is not finite (the statistic was undefined on that resample,
    e.g. a cell without data) is left out, and a column's bounds are NaN when none of its
    replicates is finite, or when fewer than the share ``min_defined`` of them are. The agreement
    figures pass ``min_defined=0.5`` (an interval from a minority of resamples would describe an
    unrepresentative subset); the analyses keep the default 0 (any finite replicate counts).

    Returns ``(low, high)`` arrays of shape ``reps.shape[1:]`` (0-d for a vector of replicates);
    no replicates give NaN bounds.

    >>> lo, hi = percentile_ci(np.arange(101.0), level=0.9)
    >>> round(float(lo), 6), round(float(hi), 6)
    (5.0, 95.0)
    """
    arr = np.asarray(reps, dtype=float)
    tail = (1.0 - level) / 2.0
    if arr.size == 0:
        nan = np.full(arr.shape[1:], np.nan)
        return nan, nan.copy()
    finite = np.isfinite(arr)
    if finite.all():
        lo, hi = np.quantile(arr, [tail, 1.0 - tail], axis=0)
        return lo, hi
    n_finite = finite.sum(axis=0)
    ok = (n_finite > 0) & (n_finite >= min_defined * arr.shape[0])
    # Columns without bounds get a dummy value, then NaN back: avoids RuntimeWarnings.
    filled = np.where(ok, np.where(finite, arr, np.nan), 0.0)
    lo, hi = np.nanquantile(filled, [tail, 1.0 - tail], axis=0)
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)


def percentile_interval(reps: npt.ArrayLike, level: float = 0.95, *,
                        min_defined: float = 0.0) -> tuple[float, float]:
    """:func:`percentile_ci` of a vector of replicates, as two floats."""
    lo, hi = percentile_ci(np.ravel(np.asarray(reps, dtype=float)), level=level,
                           min_defined=min_defined)
    return float(lo), float(hi)
