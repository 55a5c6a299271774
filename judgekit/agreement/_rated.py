"""Units rated at least once, as per-unit category counts: the input of irrCAC's chance terms.

Gwet's AC1/AC2, Brennan-Prediger, Fleiss' and Conger's kappa follow the conventions of Gwet's
irrCAC (the reference implementation, Gwet 2014): the observed agreement ``p_a`` averages over the
units at least two raters rated, while the chance term uses every unit that anyone rated, and
the categories are every rating seen (or the list given). A unit nobody rated is not a unit.

``counts`` (P, V) holds how many raters put unit (or unit pattern) p in category v; ``freq`` (P,)
how many identical units each row stands for (all ones until :meth:`RatedTable.grouped`).
Statistics are written as sums over units weighted by ``w`` (B, P), so one evaluation with
``w = freq`` is the statistic and B evaluations with multinomial counts are a bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.agreement._matrix import encode, group_rows, rating_matrix, value_counts
from judgekit.errors import JudgekitError

# Above this many cells a dense (units x categories) table is not worth its memory.
_DENSE_CELLS = 20_000_000


@dataclass(frozen=True)
class RatedTable:
    """Category counts of the units at least one rater rated (see the module docstring)."""

    counts: np.ndarray
    freq: np.ndarray
    categories: list[Any]

    @property
    def n_units(self) -> int:
        return int(self.freq.sum())

    def grouped(self) -> RatedTable:
        """Identical units merged into one row with their count (of a table of single units)."""
        first, freq = group_rows(self.counts)
        return RatedTable(self.counts[first], freq, self.categories)


def rated_codes(
    data: Any, categories: Sequence[Any] | None, *, func: str, ordered: bool = False
) -> tuple[np.ndarray, list[Any]]:
    """Category codes (M, N') of the N' units rated at least once (-1 = missing) and the labels."""
    arr = rating_matrix(data, func=func)
    codes, cats = encode(arr, categories, func=func, ordered=ordered)
    codes = codes[:, (codes >= 0).any(axis=0)]
    if codes.shape[1] * max(len(cats), 1) > _DENSE_CELLS:
        raise JudgekitError(
            f"{func}: {codes.shape[1]} units x {len(cats)} distinct ratings is too large a "
            "table for a categorical statistic; bin continuous scores into categories first."
        )
    return codes, cats


def rated_table(
    data: Any, categories: Sequence[Any] | None, *, func: str, ordered: bool = False
) -> RatedTable:
    """``data`` (M raters, N units) -> :class:`RatedTable` of the units anyone rated."""
    codes, cats = rated_codes(data, categories, func=func, ordered=ordered)
    counts = value_counts(codes, len(cats))
    return RatedTable(counts, np.ones(counts.shape[0], dtype=np.int64), cats)


def _pair_agreement(counts: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit weighted share of agreeing rater pairs, and which units have a pair.

    ``sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` with ``r*_ik = sum_l w_kl r_il`` for the units
    with ``r_i >= 2`` (0 elsewhere); ``weights`` (V, V) are agreement weights (identity: the
    share of agreeing pairs).
    """
    c = counts.astype(np.float64)
    r = c.sum(axis=1)
    pairable = r >= 2
    denominator = np.where(pairable, r * (r - 1.0), 1.0)
    share = np.where(pairable, (c * (c @ weights.T - 1.0)).sum(axis=1) / denominator, 0.0)
    return share, pairable.astype(np.float64)


def observed_agreement(table: RatedTable, w: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``p_a`` (B,): mean of :func:`_pair_agreement` over the units rated twice; NaN if none."""
    share, pairable = _pair_agreement(table.counts, weights)
    n2 = w @ pairable
    return np.divide(w @ share, n2, out=np.full(n2.shape, np.nan), where=n2 > 0)


def category_shares(table: RatedTable, w: np.ndarray) -> np.ndarray:
    """``pi_k = (1/n) sum_i r_ik / r_i`` over the n units rated at least once: (B, V)."""
    c = table.counts.astype(np.float64)
    n = w.sum(axis=1, keepdims=True)
    out = np.zeros((w.shape[0], c.shape[1]))
    return np.divide(w @ (c / c.sum(axis=1, keepdims=True)), n, out=out, where=n > 0)


def finish(p_a: np.ndarray, p_e: np.ndarray) -> np.ndarray:
    """``(p_a - p_e) / (1 - p_e)``, NaN where ``p_a`` is NaN or ``p_e`` is (numerically) 1."""
    defined = np.isfinite(p_a) & (p_e < 1.0 - 1e-12)
    return np.divide(p_a - p_e, 1.0 - p_e, out=np.full(p_a.shape, np.nan), where=defined)
