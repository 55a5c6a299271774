"""The agreement report's figures from item patterns: each distinct row of integer codes (one
label position per rater, ``-1`` missing) with the number of items that have it.

Every figure of the report depends on the items only through how many items have each pattern,
so a slice of 200,000 items with 5 raters and 3 labels is a table of at most a few hundred rows.
The functions here build, from such a table, exactly the unit tables the public statistics build
from the items themselves (the same category columns, the same distinct rows in the same order,
the same frequencies: :func:`judgekit.agreement._matrix.group_rows_weighted`), and bootstrap them
with the same seed and chunking, so the intervals are the ones
:func:`~judgekit.agreement.alpha_ci`, :func:`~judgekit.agreement.kappa_ci`,
:func:`~judgekit.agreement.ac1_ci`, :func:`~judgekit.agreement.fleiss_ci` and
:func:`~judgekit.agreement.percent_agreement_ci` give on the items (Efron & Tibshirani 1993,
ch. 13: resampling N units is ``Multinomial(N, f / N)`` over their patterns). The point values
are not summed over patterns (that changes the last bits, and on a rounding boundary the 6th
decimal): each function is given the items, ``units`` (M raters, N items, label positions, NaN
missing, in item order; or a function returning them), and optionally ``items``, each item's row
of the pattern table in item order. Without ``items`` it calls the public statistic on ``units``;
with them it gathers the pattern rows' integer category counts to the items (``counts[items]``), which is
exactly the per-unit table the public statistic builds from the (raters, items) matrix (same
int64 counts, same columns, same unit order); then it applies the public statistic's own
reduction to it (``percent_from_table``, ``gwet_from_table``, ``fleiss_from_table``,
``alpha_from_counts(...).evaluate`` with unit weights ``freq[None, :].astype(float64)``; Cohen's
kappa from the same int confusion matrix), so every value is bit for bit the one the per-item
computation gives, without re-encoding the ratings. Above the public functions' dense-table
limit the public statistic is called on ``units`` itself.

Formulas and references are those of the statistics themselves: percent agreement and Gwet's
AC1 (:mod:`judgekit.agreement.chance`), Cohen's and Fleiss' kappa (:mod:`.kappa`),
Krippendorff's alpha (:mod:`.alpha`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement._matrix import UnitTable, group_rows_weighted, value_counts
from judgekit.agreement._rated import RatedTable
from judgekit.agreement.alpha import alpha_from_counts
from judgekit.agreement.alpha import krippendorff_alpha as _alpha_items
from judgekit.agreement.bootstrap import (
    check_resampling,
    confusion_ci,
    grouped_table_ci,
    resample_patterns,
)
from judgekit.agreement.chance import agreement_weights, gwet_from_table, percent_from_table
from judgekit.agreement.chance import gwet_ac1 as _ac1_items
from judgekit.agreement.chance import percent_agreement as _percent_items
from judgekit.agreement.kappa import disagreement_weights, fleiss_from_table, weighted_kappa
from judgekit.agreement.kappa import fleiss_kappa as _fleiss_items

Interval = tuple[float, float]
Thunk = Callable[[], Interval]
Units = Callable[[], np.ndarray]

# The public statistics' dense-table limit (units x categories cells): above it they take
# another path (or refuse), so the point value is then computed by them on the items.
_DENSE_CELLS = 20_000_000


def _gather(counts: np.ndarray, keep: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Per-unit counts in item order: the rows ``counts[items]`` of the items whose pattern row
    is kept (what the public statistics' filter of units keeps, in the same order).
    ``np.take`` is the same rows as fancy indexing, and faster."""
    if not keep.all():
        items = items[np.take(keep, items)]
    return np.take(counts, items, axis=0)


def _ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=np.int64)


def _materialize(units: np.ndarray | Units) -> np.ndarray:
    return units() if callable(units) else units


def patterns_of(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an (N, C) int code matrix (codes >= -1) and, per row of ``rows``, the
    index of its distinct row: ``(patterns (P, C), inverse (N,))``."""
    n, c = rows.shape
    if n == 0:
        return rows.reshape(0, c), np.zeros(0, dtype=np.int64)
    shifted = rows.astype(np.int64) + 1
    base = int(shifted.max()) + 1
    if c and c * np.log2(max(base, 2)) < 62:
        keys = shifted @ (base ** np.arange(c, dtype=np.int64))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return rows[first], inverse.ravel()
    uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    return uniq, inverse.ravel()


def _grouped(counts: np.ndarray, freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    first, gf = group_rows_weighted(counts, freq)
    return counts[first], gf


def n_pairable(codes: np.ndarray, freq: np.ndarray) -> int:
    """Items (pattern rows weighted by ``freq``) with at least two of ``codes``' columns rated."""
    return int(freq[(codes >= 0).sum(axis=1) >= 2].sum())


def percent_agreement(codes: np.ndarray, freq: np.ndarray, units: np.ndarray | Units,
                      ci_kw: dict[str, Any], *, items: np.ndarray | None = None) -> tuple[float, Thunk]:
    """Percent agreement of the raters ``codes`` (P, m) and its CI thunk, as
    :func:`~judgekit.agreement.percent_agreement` (on the items, ``codes[items]``) /
    ``percent_agreement_ci``: the categories are the codes seen on units rated at least twice."""
    pair = (codes >= 0).sum(axis=1) >= 2
    used = np.unique(codes[pair][codes[pair] >= 0])
    remap = np.full(max(int(codes.max(initial=0)) + 1, 1), -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    all_counts = value_counts(np.where(codes >= 0, remap[np.maximum(codes, 0)], -1).T, used.size)
    counts, gf = _grouped(all_counts[pair], freq[pair])
    cats = [float(u) for u in used]
    table = UnitTable(counts, gf, cats, 0)
    seen = np.unique(codes[codes >= 0]).size  # the public function's categories: every rating
    per_item = None if items is None else _gather(all_counts, pair, items)
    if per_item is None or per_item.shape[0] * max(seen, 1) > _DENSE_CELLS:
        value = _percent_items(_materialize(units))
    else:
        items_table = UnitTable(per_item, _ones(per_item.shape[0]), cats, 0)
        value = float(percent_from_table(items_table, items_table.freq[None, :].astype(np.float64))[0])

    def ci() -> Interval:
        check_resampling("percent_agreement_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return grouped_table_ci(table, percent_from_table, **ci_kw)

    return value, ci


def _rated(codes: np.ndarray, freq: np.ndarray, items: np.ndarray | None,
           n_categories: int) -> tuple[RatedTable, RatedTable | None]:
    """The grouped table of the pattern rows anyone rated, and the per-item table the public
    ``rated_table`` builds (None above its dense limit, where the public function decides)."""
    rated = np.asarray((codes >= 0).any(axis=1))
    all_counts = value_counts(codes.T, n_categories)
    counts, gf = _grouped(all_counts[rated], freq[rated])
    cats = [float(i) for i in range(n_categories)]
    if items is None:
        return RatedTable(counts, gf, cats), None
    per_item = _gather(all_counts, rated, items)
    if per_item.shape[0] * max(n_categories, 1) > _DENSE_CELLS:
        return RatedTable(counts, gf, cats), None
    return RatedTable(counts, gf, cats), RatedTable(per_item, _ones(per_item.shape[0]), cats)


def gwet_ac1(codes: np.ndarray, freq: np.ndarray, units: np.ndarray | Units, n_categories: int,
             ci_kw: dict[str, Any], *, items: np.ndarray | None = None) -> tuple[float, Thunk]:
    """Gwet's AC1 over the rubric's categories and its CI thunk (``gwet_ac1`` / ``ac1_ci``)."""
    table, on_items = _rated(codes, freq, items, n_categories)
    w = agreement_weights("identity", n_categories, func="gwet_ac1")
    if on_items is None:
        value = _ac1_items(_materialize(units), categories=[float(i) for i in range(n_categories)])
    else:
        value = float(gwet_from_table(on_items, on_items.freq[None, :].astype(np.float64), w)[0])

    def ci() -> Interval:
        check_resampling("ac1_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return grouped_table_ci(table, lambda t, u: gwet_from_table(t, u, w), **ci_kw)

    return value, ci


def fleiss_kappa(codes: np.ndarray, freq: np.ndarray, units: np.ndarray | Units, n_categories: int,
                 ci_kw: dict[str, Any], *, items: np.ndarray | None = None) -> tuple[float, Thunk]:
    """Fleiss' kappa over the rubric's categories and its CI thunk (``fleiss_kappa`` / ``fleiss_ci``)."""
    table, on_items = _rated(codes, freq, items, n_categories)
    if on_items is None:
        value = _fleiss_items(_materialize(units), categories=[float(i) for i in range(n_categories)])
    else:
        value = float(fleiss_from_table(on_items, on_items.freq[None, :].astype(np.float64))[0])

    def ci() -> Interval:
        check_resampling("fleiss_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return grouped_table_ci(table, fleiss_from_table, **ci_kw)

    return value, ci


def confusion(x: np.ndarray, y: np.ndarray, freq: np.ndarray, n_categories: int) -> np.ndarray:
    """(V, V) counts of the pattern rows where both codes are set (rows = ``x``)."""
    both = (x >= 0) & (y >= 0)
    v = n_categories
    flat = np.bincount(x[both] * v + y[both], weights=freq[both], minlength=v * v)
    return flat.astype(np.int64).reshape(v, v)


def cohen_kappa(matrix: np.ndarray, weights: str | None, units: object,
                ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Cohen's kappa of a confusion matrix and its CI thunk (``cohen_kappa`` / ``kappa_ci``):
    the int (V, V) counts of the items both rated are the matrix ``cohen_kappa`` builds from
    them, and the value is its reduction ``weighted_kappa(matrix[None].astype(float64), w)``, so
    ``units`` (the items, kept for callers) is not needed."""
    w = disagreement_weights(weights, matrix.shape[0], func="cohen_kappa")
    value = float(weighted_kappa(matrix[None].astype(np.float64), w)[0])

    def ci() -> Interval:
        check_resampling("kappa_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return confusion_ci(matrix, lambda o: weighted_kappa(o, w), **ci_kw)

    return value, ci


def krippendorff_alpha(codes: np.ndarray, freq: np.ndarray, units: np.ndarray | Units, level: str,
                       n_categories: int, ci_kw: dict[str, Any], *,
                       items: np.ndarray | None = None) -> tuple[float, Thunk]:
    """Nominal or ordinal alpha over the rubric's categories and its CI thunk
    (``krippendorff_alpha`` / ``alpha_ci`` with the categories given)."""
    pair = (codes >= 0).sum(axis=1) >= 2
    all_counts = value_counts(codes.T, n_categories)
    counts, gf = _grouped(all_counts[pair], freq[pair])
    prepared = alpha_from_counts(counts, gf, level=level)
    per_item = None if items is None else _gather(all_counts, pair, items)
    if per_item is None or per_item.shape[0] * n_categories > _DENSE_CELLS:
        value = _alpha_items(_materialize(units), level=level, categories=[float(i) for i in range(n_categories)])
    else:
        on_items = alpha_from_counts(per_item, _ones(per_item.shape[0]), level=level)
        value = float(on_items.evaluate(on_items.freq[None, :].astype(np.float64))[0])

    def ci() -> Interval:
        check_resampling("alpha_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return resample_patterns(prepared.freq, prepared.evaluate, cost=prepared.cost, **ci_kw)

    return value, ci


def distribution(codes: np.ndarray, freq: np.ndarray, labels: Sequence[str]) -> dict[str, float]:
    """Share of each label among the rated cells of ``codes`` (P,) or (P, m), rounded to 6
    decimals; every share 0.0 when nothing is rated."""
    if codes.ndim == 1:
        codes = codes[:, None]
    weights = np.broadcast_to(freq[:, None], codes.shape)
    rated = codes >= 0
    counts = np.bincount(codes[rated], weights=weights[rated], minlength=len(labels)).astype(np.int64)
    total = int(counts.sum())
    if total == 0:
        return {c: 0.0 for c in labels}
    return {c: round(float(counts[i]) / total, 6) for i, c in enumerate(labels)}
