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
decimal): each function is given the per-item matrix ``units`` (M raters, N items, label
positions, NaN missing, in item order) and calls the public statistic on it, so every value is
bit for bit the one the per-item computation gives (an O(N) pass per figure).

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
from judgekit.agreement.kappa import cohen_kappa as _kappa_items
from judgekit.agreement.kappa import disagreement_weights, fleiss_from_table, weighted_kappa
from judgekit.agreement.kappa import fleiss_kappa as _fleiss_items

Interval = tuple[float, float]
Thunk = Callable[[], Interval]


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


def percent_agreement(codes: np.ndarray, freq: np.ndarray, units: np.ndarray,
                      ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Percent agreement of the raters ``codes`` (P, m) and its CI thunk, as
    :func:`~judgekit.agreement.percent_agreement` (on ``units``, the items) /
    ``percent_agreement_ci``: the categories are the codes seen on units rated at least twice."""
    pair = (codes >= 0).sum(axis=1) >= 2
    sub, f = codes[pair], freq[pair]
    used = np.unique(sub[sub >= 0])
    remap = np.full(max(int(codes.max(initial=0)) + 1, 1), -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    counts = value_counts(np.where(sub >= 0, remap[np.maximum(sub, 0)], -1).T, used.size)
    counts, gf = _grouped(counts, f)
    table = UnitTable(counts, gf, [float(u) for u in used], 0)
    value = _percent_items(units)

    def ci() -> Interval:
        check_resampling("percent_agreement_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return grouped_table_ci(table, percent_from_table, **ci_kw)

    return value, ci


def _rated(codes: np.ndarray, freq: np.ndarray, n_categories: int) -> RatedTable:
    rated = (codes >= 0).any(axis=1)
    counts = value_counts(codes[rated].T, n_categories)
    counts, gf = _grouped(counts, freq[rated])
    return RatedTable(counts, gf, [float(i) for i in range(n_categories)])


def gwet_ac1(codes: np.ndarray, freq: np.ndarray, units: np.ndarray, n_categories: int,
             ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Gwet's AC1 over the rubric's categories and its CI thunk (``gwet_ac1`` / ``ac1_ci``)."""
    table = _rated(codes, freq, n_categories)
    w = agreement_weights("identity", n_categories, func="gwet_ac1")
    value = _ac1_items(units, categories=[float(i) for i in range(n_categories)])

    def ci() -> Interval:
        check_resampling("ac1_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return grouped_table_ci(table, lambda t, u: gwet_from_table(t, u, w), **ci_kw)

    return value, ci


def fleiss_kappa(codes: np.ndarray, freq: np.ndarray, units: np.ndarray, n_categories: int,
                 ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Fleiss' kappa over the rubric's categories and its CI thunk (``fleiss_kappa`` / ``fleiss_ci``)."""
    table = _rated(codes, freq, n_categories)
    value = _fleiss_items(units, categories=[float(i) for i in range(n_categories)])

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


def cohen_kappa(matrix: np.ndarray, weights: str | None, units: np.ndarray,
                ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Cohen's kappa of a confusion matrix and its CI thunk (``cohen_kappa`` on ``units``, the
    (2, N) items both rated / ``kappa_ci``)."""
    w = disagreement_weights(weights, matrix.shape[0], func="cohen_kappa")
    value = _kappa_items(units[0], units[1], labels=[float(i) for i in range(matrix.shape[0])],
                         weights=weights)

    def ci() -> Interval:
        check_resampling("kappa_ci", ci_kw["n_resamples"], ci_kw["confidence"])
        return confusion_ci(matrix, lambda o: weighted_kappa(o, w), **ci_kw)

    return value, ci


def krippendorff_alpha(codes: np.ndarray, freq: np.ndarray, units: np.ndarray, level: str,
                       n_categories: int, ci_kw: dict[str, Any]) -> tuple[float, Thunk]:
    """Nominal or ordinal alpha over the rubric's categories and its CI thunk
    (``krippendorff_alpha`` / ``alpha_ci`` with the categories given)."""
    pair = (codes >= 0).sum(axis=1) >= 2
    counts = value_counts(codes[pair].T, n_categories)
    counts, gf = _grouped(counts, freq[pair])
    prepared = alpha_from_counts(counts, gf, level=level)
    value = _alpha_items(units, level=level, categories=[float(i) for i in range(n_categories)])

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
