"""Krippendorff's alpha for any number of raters, missing ratings and four levels of measurement.

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

``o`` is the (V, V) coincidence matrix, ``o_ck = sum_u (pairs c-k within unit u) / (m_u - 1)``
over the units rated by ``m_u >= 2`` raters, ``n_c = sum_k o_ck`` the pairable values of category
c and ``n = sum_c n_c``. ``d2`` is the squared distance of the level:

- nominal:  ``d2_ck = [c != k]``
- ordinal:  ``d2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2 = (r_k - r_c) ** 2`` with the
  mid-ranks ``r_c = sum_{g<c} n_g + n_c / 2``; so ordinal alpha is interval alpha on mid-ranks
- interval: ``d2_ck = (c - k) ** 2``
- ratio:    ``d2_ck = ((c - k) / (c + k)) ** 2``

Everything is written as sums over units weighted by ``w`` (B, P): how many times each of the P
units (or distinct unit patterns) is counted. One evaluation with ``w = ones`` is the statistic;
B evaluations with multinomial counts are a bootstrap (see :mod:`judgekit.agreement.bootstrap`).

Reference: K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability",
https://repository.upenn.edu/asc_papers/43 ; the ``krippendorff`` package (Castro 2017).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from judgekit.agreement._matrix import (
    encode,
    group_rows,
    numeric_values,
    rating_matrix,
    value_counts,
)
from judgekit.errors import JudgekitError

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")

# Above these sizes the dense (units x categories) and (categories x categories) arrays cost more
# than they save; those data go through the unit-by-unit path (exact, slower bootstrap).
_DENSE_CELLS = 20_000_000
_MAX_RATIO_VALUES = 1_000
_REL_TOL = 1e-12


def _finish(n: np.ndarray, d_o: np.ndarray, d_e: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``1 - (n - 1) * D_o / D_e`` (B,), NaN where expected disagreement is (numerically) zero."""
    defined = (n >= 2) & (d_e > _REL_TOL * np.maximum(scale, 1e-300))
    ratio = np.divide((n - 1) * d_o, d_e, out=np.full(n.shape, np.nan), where=defined)
    return 1.0 - ratio


def _unit_pair_sums(
    values: np.ndarray, distance: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Sum over ordered rater pairs i != j of ``distance(x_i, x_j)`` per unit: (M, P) -> (P,)."""
    m, p = values.shape
    out = np.zeros(p)
    step = max(1, 4_000_000 // max(m * m, 1))
    for start in range(0, p, step):
        x = values[:, start : start + step]
        d = distance(x[:, None, :], x[None, :, :])  # (M, M, chunk), NaN where a side is missing
        d[np.arange(m), np.arange(m)] = 0.0  # a rating is not paired with itself
        out[start : start + step] = np.nansum(d, axis=(0, 1))
    return out


@dataclass(frozen=True)
class _CountsAlpha:
    """Nominal, ordinal or ratio alpha from per-unit category counts; vectorised over resamples.

    ``counts`` (P, V): raters per unit and category; ``freq`` (P,): units per row; ``pairs`` (P,):
    ratio only, sum of squared ratio distances over ordered rater pairs of the unit.
    """

    counts: np.ndarray
    freq: np.ndarray
    level: str
    domain: np.ndarray | None = None
    pairs: np.ndarray | None = None

    @property
    def cost(self) -> int:
        v = self.counts.shape[1]
        return self.counts.size + v * (v if self.level == "ratio" else 1)

    def grouped(self) -> _CountsAlpha:
        first, freq = group_rows(self.counts)
        pairs = None if self.pairs is None else self.pairs[first]
        return replace(self, counts=self.counts[first], freq=freq, pairs=pairs)

    def evaluate(self, w: np.ndarray) -> np.ndarray:
        """Alpha for each row of unit weights ``w`` (B, P) -> (B,)."""
        counts = self.counts.astype(np.float64)
        m = counts.sum(axis=1)
        cw = w / (m - 1.0)  # each unit's pairs count 1 / (m_u - 1) in the coincidence matrix
        nv = w @ counts  # (B, V) pairable values per category
        n = nv.sum(axis=1)
        if self.level == "nominal":
            o_diag = cw @ (counts * (counts - 1.0)).sum(axis=1)  # sum_c o_cc
            return _finish(n, n - o_diag, n * n - (nv * nv).sum(axis=1), n * n)
        if self.level == "ordinal":
            r = np.cumsum(nv, axis=1) - nv / 2.0  # (B, V) mid-ranks
            s1 = r @ counts.T  # (B, P) sum of the unit's ranks
            s2 = (r * r) @ counts.T
            t1 = (nv * r).sum(axis=1)
            t2 = (nv * r * r).sum(axis=1)
            # sum_ck o_ck (r_c - r_k)^2 = 2 sum_c n_c r_c^2 - 2 sum_u w_u (s1_u^2 - s2_u) / (m_u - 1)
            d_o = 2.0 * t2 - 2.0 * (cw * (s1 * s1 - s2)).sum(axis=1)
            return _finish(n, d_o, 2.0 * (n * t2 - t1 * t1), 2.0 * n * t2)
        assert self.domain is not None and self.pairs is not None
        d2 = _ratio_d2(self.domain[:, None], self.domain[None, :])
        d_e = np.einsum("bc,ck,bk->b", nv, d2, nv)
        return _finish(n, cw @ self.pairs, d_e, n * n)


@dataclass(frozen=True)
class _MomentsAlpha:
    """Interval alpha from per-unit moments; works for any number of distinct values.

    ``stats`` (P, 4) holds, per unit, ``m`` (raters), ``s1 = sum x``, ``s2 = sum x^2`` (x shifted
    by one observed value, for numerical stability) and ``d = sum_{i!=j} (x_i - x_j)^2 / (m - 1)
    = 2 m SS / (m - 1)``. Then ``n D_o = sum_u d_u`` and ``n (n - 1) D_e = 2 (n S2 - S1^2)``.
    """

    stats: np.ndarray
    freq: np.ndarray
    level: str = "interval"

    @property
    def cost(self) -> int:
        return self.stats.size

    def grouped(self) -> _MomentsAlpha:
        first, freq = group_rows(self.stats)
        return replace(self, stats=self.stats[first], freq=freq)

    def evaluate(self, w: np.ndarray) -> np.ndarray:
        n, s1, s2, d_o = (w @ self.stats).T
        return _finish(n, d_o, 2.0 * (n * s2 - s1 * s1), 2.0 * n * s2)


def _moments(values: np.ndarray) -> np.ndarray:
    """(M, P) ratings (NaN missing, every unit rated at least twice) -> (P, 4) unit moments."""
    rated = ~np.isnan(values)
    m = rated.sum(axis=0).astype(np.float64)
    if m.size:
        values = values - values[rated][0]
    x = np.where(rated, values, 0.0)
    s1 = x.sum(axis=0)
    mean = s1 / np.maximum(m, 1.0)
    ss = (np.where(rated, values - mean, 0.0) ** 2).sum(axis=0)
    s2 = (x * x).sum(axis=0)
    return np.column_stack([m, s1, s2, 2.0 * m * ss / np.maximum(m - 1.0, 1.0)])


@dataclass(frozen=True)
class _CodesAlpha:
    """Nominal, ordinal or ratio alpha unit by unit, for many distinct values.

    ``codes`` (M, P) category codes (-1 missing) of the pairable units. Exact for any number of
    categories V; evaluating B weight rows costs B passes over the data.
    """

    codes: np.ndarray
    freq: np.ndarray
    level: str
    domain: np.ndarray

    @property
    def cost(self) -> int:
        return 10**9  # one resample at a time

    def grouped(self) -> _CodesAlpha:
        first, freq = group_rows(np.sort(self.codes, axis=0).T)
        return replace(self, codes=self.codes[:, first], freq=freq)

    def evaluate(self, w: np.ndarray) -> np.ndarray:
        rated = self.codes >= 0
        m = rated.sum(axis=0).astype(np.float64)
        v = self.domain.size
        unit_sums = np.zeros(m.size)  # per unit: agreeing pairs (nominal), sum of d2 (ratio)
        if self.level == "nominal":
            unit_sums = _unit_pair_sums(np.where(rated, self.codes, np.nan), _same)
        elif self.level == "ratio":
            unit_sums = _unit_pair_sums(_values_of(self.codes, self.domain), _ratio_d2)
        out = np.empty(w.shape[0])
        for i, wb in enumerate(w):
            weights = np.broadcast_to(wb, self.codes.shape)[rated]
            nv = np.bincount(self.codes[rated], weights=weights, minlength=v)
            n = np.array([nv.sum()])
            if self.level == "nominal":
                d_o = n - wb @ (unit_sums / (m - 1.0))
                out[i] = _finish(n, d_o, n * n - nv @ nv, n * n)[0]
            elif self.level == "ordinal":
                r = np.cumsum(nv) - nv / 2.0
                moments = _moments(_values_of(self.codes, r))
                out[i] = _MomentsAlpha(moments, self.freq).evaluate(wb[None, :])[0]
            else:
                d_e = sum(
                    nv[start : start + 1024] @ _ratio_block(self.domain, start) @ nv
                    for start in range(0, v, 1024)
                )
                d_o = np.array([wb @ (unit_sums / (m - 1.0))])
                out[i] = _finish(n, d_o, np.array([d_e]), n * n)[0]
        return out


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1.0 where two ratings are equal, NaN where either is missing."""
    return np.where(np.isnan(a) | np.isnan(b), np.nan, (a == b).astype(np.float64))


def _ratio_d2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared ratio distance ``((a - b) / (a + b)) ** 2``; 0 where ``a + b == 0``, NaN missing."""
    total = a + b
    safe = np.where(total == 0, 1.0, total)
    return np.where(total == 0, 0.0, ((a - b) / safe) ** 2)


def _values_of(codes: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """(M, P) codes -> the domain value of each rating, NaN where missing."""
    return np.where(codes >= 0, domain[np.maximum(codes, 0)], np.nan)


def _ratio_block(domain: np.ndarray, start: int) -> np.ndarray:
    """Rows ``start:start+1024`` of the (V, V) ratio distance matrix."""
    return _ratio_d2(domain[start : start + 1024, None], domain[None, :])


AlphaInput = _CountsAlpha | _MomentsAlpha | _CodesAlpha


def prepare_alpha(
    data: Any, *, level: str = "nominal", categories: Sequence[Any] | None = None
) -> AlphaInput:
    """Validate ``data`` and reduce it to the per-unit sufficient statistics of alpha."""
    func = f"krippendorff_alpha(level={level!r})"
    if level not in LEVELS:
        raise JudgekitError(
            f"krippendorff_alpha: unknown level {level!r}; use one of {', '.join(LEVELS)}."
        )
    arr = rating_matrix(data, func=func)
    if level == "interval":
        values = numeric_values(arr, categories, func=func)
        values = values[:, (~np.isnan(values)).sum(axis=0) >= 2]
        stats = _moments(values)
        return _MomentsAlpha(stats, np.ones(stats.shape[0], dtype=np.int64))
    if level == "ratio":
        values = numeric_values(arr, categories, func=func)
        if (values < 0).any():
            bad = values[values < 0][0]
            raise JudgekitError(
                f"{func}: negative rating {bad:g} has no meaning on a ratio scale (which has an "
                "absolute zero); use level='interval'."
            )
        codes, cats = encode(values, None, func=func, ordered=True)
    else:
        codes, cats = encode(arr, categories, func=func, ordered=level == "ordinal")
    codes = codes[:, (codes >= 0).sum(axis=0) >= 2]
    p, v = codes.shape[1], len(cats)
    domain = np.asarray(cats, dtype=np.float64) if level == "ratio" else np.arange(v, dtype=float)
    freq = np.ones(p, dtype=np.int64)
    if p * v > _DENSE_CELLS or (level == "ratio" and v > _MAX_RATIO_VALUES):
        return _CodesAlpha(codes, freq, level, domain)
    counts = value_counts(codes, v)
    pairs = None
    if level == "ratio" and p * v * v <= 10 * _DENSE_CELLS:
        counts_f = counts.astype(np.float64)
        d2 = _ratio_d2(domain[:, None], domain[None, :])
        pairs = ((counts_f @ d2) * counts_f).sum(axis=1)  # n_u' d2 n_u; d2 has a zero diagonal
    elif level == "ratio":
        pairs = _unit_pair_sums(_values_of(codes, domain), _ratio_d2)
    return _CountsAlpha(counts, freq, level, domain if level == "ratio" else None, pairs)


def alpha_from_counts(counts: np.ndarray, freq: np.ndarray, *, level: str) -> AlphaInput:
    """Nominal or ordinal alpha's sufficient statistics from per-unit category counts (P, V) of
    units rated at least twice, ``freq`` (P,) units each (what :func:`prepare_alpha` builds from
    a ratings matrix with its categories given); ``evaluate(freq[None])`` is alpha."""
    if level not in ("nominal", "ordinal"):
        raise JudgekitError(f"alpha_from_counts: level {level!r} needs ratings, not counts; use prepare_alpha.")
    return _CountsAlpha(np.asarray(counts), np.asarray(freq, dtype=np.int64), level)


def krippendorff_alpha(
    data: Any, *, level: Level | str = "nominal", categories: Sequence[Any] | None = None
) -> float:
    """Krippendorff's alpha reliability of a raters x units matrix.

    ``alpha = 1 - D_o / D_e``: one minus observed over expected disagreement, where both count
    every ordered pair of ratings that two raters gave the same unit (see the module docstring
    for the coincidence-matrix formula and the four distance functions).

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        List of lists, numpy array or DataFrame (rows are raters, columns are units). Missing
        ratings are ``None`` or NaN. Units rated by fewer than two raters cannot be paired and
        do not change alpha.
    level : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        Level of measurement. Nominal and ordinal accept labels or numbers; interval and ratio
        need numbers (ratio also needs them non-negative).
    categories : sequence, optional
        The full category list. For ordinal data it fixes the order (lowest first) and is
        required for string labels; every rating must be listed. Categories nobody used have a
        marginal frequency of zero, exactly as in Krippendorff (2011).

    Returns
    -------
    float
        Alpha in [-1, 1] (1 is perfect agreement, 0 chance level), or NaN when it is undefined:
        no unit was rated twice, or every pairable rating is the same value (``D_e = 0``). Use
        :func:`judgekit.agreement.undefined_reason` to say why.

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
    Communication Departmental Papers 43.

    Examples
    --------
    >>> nan = float("nan")
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    >>> round(krippendorff_alpha(data), 3), round(krippendorff_alpha(data, level="ordinal"), 3)
    (0.743, 0.815)
    """
    prepared = prepare_alpha(data, level=level, categories=categories)
    return float(prepared.evaluate(prepared.freq[None, :].astype(np.float64))[0])
