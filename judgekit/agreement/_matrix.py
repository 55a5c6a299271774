"""From user ratings to arrays: the raters x units matrix, category codes and unit tables.

Every statistic in :mod:`judgekit.agreement` starts here. The chain is

``data (M, N) -> codes (M, N) -> value counts (N, V) -> pairable units (P, V) [-> patterns]``

where M is the number of raters, N the number of units, V the number of categories and P the
number of units (or distinct unit patterns) that at least two raters rated. Missing ratings are
``None`` or NaN in ``data`` and ``-1`` in ``codes``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.store.schema import is_missing

MISSING = -1

# Above this many cells a dense (units x categories) table is not worth its memory.
_DENSE_CELLS = 20_000_000


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def to_native(value: Any) -> Any:
    """A plain Python scalar (ints for integral floats), for labels shown to users."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _object_to_float_or_self(arr: np.ndarray) -> np.ndarray:
    """An object array of numbers and missing values becomes float64; anything else is kept."""
    flat = arr.ravel()
    if all(is_missing(v) or _is_number(v) for v in flat):
        return np.array([np.nan if is_missing(v) else float(v) for v in flat]).reshape(arr.shape)
    return arr


def as_array(data: Any, *, func: str, ndim: int) -> np.ndarray:
    """``data`` as a float64 array (numbers, NaN for missing) or an object array (labels).

    Accepts lists, numpy arrays and pandas objects without importing pandas. String arrays made
    by numpy from a list holding NaN contain the text ``'nan'``; it is read as missing.
    """
    if isinstance(data, np.ndarray):
        arr = data
    elif hasattr(data, "to_numpy") and hasattr(data, "dtypes"):  # pandas DataFrame or Series
        # Nullable integer/float columns (pd.NA) become NaN; anything else stays as objects.
        kinds = {getattr(dt, "kind", "O") for dt in np.atleast_1d(np.asarray(data.dtypes))}
        if kinds <= {"i", "u", "f"}:
            arr = data.to_numpy(dtype=float, na_value=np.nan)
        else:
            arr = data.to_numpy(dtype=object)
    else:
        try:
            arr = np.asarray(data)
        except ValueError:  # ragged lists
            arr = np.asarray(data, dtype=object)
        if arr.dtype.kind in {"U", "S"}:  # keep NaN as NaN, not as the text 'nan'
            arr = np.asarray(data, dtype=object)
    if arr.ndim != ndim or (arr.dtype == object and arr.size and isinstance(arr.flat[0], list)):
        shape = "a raters x units matrix (2-D)" if ndim == 2 else "a 1-D sequence of ratings"
        raise JudgekitError(
            f"{func}: expected {shape}, got an array of shape {arr.shape}; "
            "pass one row per rater and one column per unit, with None or NaN for missing ratings."
        )
    kind = arr.dtype.kind
    if kind in {"i", "u", "f"}:
        return arr.astype(np.float64, copy=False)
    if kind in {"U", "S"}:
        out = arr.astype(object)
        out[arr == ("nan" if kind == "U" else b"nan")] = None
        return out
    if kind in {"b", "M", "m"}:
        return arr.astype(object)
    return _object_to_float_or_self(arr.astype(object, copy=False))


def rating_matrix(data: Any, *, func: str) -> np.ndarray:
    """``data`` as a (M raters, N units) float64 or object array; see :func:`as_array`."""
    return as_array(data, func=func, ndim=2)


def missing_mask(arr: np.ndarray) -> np.ndarray:
    """Boolean mask of missing cells, same shape as ``arr``."""
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    return np.fromiter((is_missing(v) for v in arr.ravel()), bool, arr.size).reshape(arr.shape)


def _check_categories(categories: Sequence[Any], func: str) -> list[Any]:
    cats = list(categories)
    if any(is_missing(c) for c in cats):
        raise JudgekitError(f"{func}: categories {cats!r} contain a missing value; remove it.")
    try:
        distinct = len(set(cats))
    except TypeError as exc:
        raise JudgekitError(f"{func}: categories must be hashable labels, got {cats!r}.") from exc
    if distinct != len(cats):
        raise JudgekitError(f"{func}: categories {cats!r} contain duplicates; list each once.")
    return cats


def _not_in_categories(func: str, value: Any, cats: list[Any]) -> JudgekitError:
    return JudgekitError(
        f"{func}: rating {to_native(value)!r} is not in categories {cats!r}; "
        "add it to categories or fix the rating."
    )


def encode(
    arr: np.ndarray, categories: Sequence[Any] | None, *, func: str, ordered: bool
) -> tuple[np.ndarray, list[Any]]:
    """Category codes for every cell, shape of ``arr``, ``-1`` for missing.

    With ``categories`` the codes follow its order and every rating must be listed in it.
    Without, the categories are the distinct observed ratings, sorted; unsortable labels keep
    their first-seen order, which is only allowed when ``ordered`` is False.
    """
    if arr.dtype.kind == "f":
        return _encode_numeric(arr, categories, func=func)
    flat = arr.ravel()
    if categories is None:
        try:
            distinct = set(flat.tolist())
        except TypeError as exc:
            raise JudgekitError(
                f"{func}: ratings must be labels or numbers, found an unhashable value; "
                "flatten lists or dicts to one label per cell."
            ) from exc
        seen = [v for v in distinct if not is_missing(v)]
        try:
            cats = sorted(seen)
        except TypeError as exc:
            if ordered:
                raise JudgekitError(
                    f"{func}: ratings {seen[:5]!r} have no natural order; "
                    "pass categories=[...] listing them from lowest to highest."
                ) from exc
            cats = sorted(seen, key=lambda v: (type(v).__name__, repr(v)))
        cats = [to_native(c) for c in cats]
    else:
        cats = _check_categories(categories, func)
    lookup: dict[Any, int] = {c: i for i, c in enumerate(cats)}
    lookup[None] = MISSING
    unknown = -2
    try:
        codes = np.fromiter((lookup.get(v, unknown) for v in flat), np.int64, flat.size)
    except TypeError as exc:
        raise JudgekitError(
            f"{func}: ratings must be labels or numbers, found an unhashable value; "
            "flatten lists or dicts to one label per cell."
        ) from exc
    for i in np.flatnonzero(codes == unknown):  # NaN objects, pandas NA, or a stray label
        if not is_missing(flat[i]):
            raise _not_in_categories(func, flat[i], cats)
        codes[i] = MISSING
    return codes.reshape(arr.shape), cats


def _encode_numeric(
    arr: np.ndarray, categories: Sequence[Any] | None, *, func: str
) -> tuple[np.ndarray, list[Any]]:
    rated = ~np.isnan(arr)
    values = arr[rated]
    codes = np.full(arr.shape, MISSING, dtype=np.int64)
    if categories is None:
        if values.size == 0:
            return codes, []
        low, high = values.min(), values.max()
        if high - low < 100_000 and np.array_equal(values, np.round(values)):
            # Small integer scales (the usual rubric): O(n) instead of a sort.
            offset = (values - low).astype(np.int64)
            used = np.flatnonzero(np.bincount(offset))
            remap = np.full(int(high - low) + 1, MISSING, dtype=np.int64)
            remap[used] = np.arange(used.size)
            codes[rated] = remap[offset]
            return codes, [int(low) + int(u) for u in used]
        domain, inverse = np.unique(values, return_inverse=True)
        codes[rated] = inverse
        return codes, [to_native(v) for v in domain]
    cats = _check_categories(categories, func)
    numeric = np.array([float(c) if _is_number(c) else np.nan for c in cats])
    if numeric.size and np.array_equal(numeric, np.arange(numeric.size)):
        # categories 0, 1, ..., V-1 (label positions, the agreement report's codes): a value's
        # code is the value itself, no search needed
        as_int = values.astype(np.int64)
        found = (as_int == values) & (values >= 0) & (values < numeric.size)
        if not found.all():
            raise _not_in_categories(func, values[np.flatnonzero(~found)[0]], cats)
        codes[rated] = as_int
        return codes, cats
    order = np.argsort(numeric, kind="stable")
    sorted_cats = numeric[order]
    pos = np.clip(np.searchsorted(sorted_cats, values), 0, max(len(cats) - 1, 0))
    found = sorted_cats[pos] == values if len(cats) else np.zeros(values.shape, bool)
    if not found.all():
        raise _not_in_categories(func, values[np.flatnonzero(~found)[0]], cats)
    codes[rated] = order[pos]
    return codes, cats


def numeric_values(arr: np.ndarray, categories: Sequence[Any] | None, *, func: str) -> np.ndarray:
    """Ratings as float64 with NaN for missing; a non-numeric rating is an error."""
    if arr.dtype.kind != "f":
        bad = next(v for v in arr.ravel() if not is_missing(v) and not _is_number(v))
        raise JudgekitError(
            f"{func}: non-numeric rating {bad!r} needs numbers at this level; map labels to "
            "scores first, or use level='ordinal' with categories=[...] in rubric order."
        )
    if categories is not None:
        _encode_numeric(arr, categories, func=func)  # only to validate membership
    return arr


def value_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """How many raters put each unit in each category: (M, N) codes -> (N, V) counts."""
    n_units = codes.shape[1]
    rated = codes >= 0
    unit = np.broadcast_to(np.arange(n_units), codes.shape)[rated]
    flat = unit * n_categories + codes[rated]
    return np.bincount(flat, minlength=n_units * n_categories).reshape(n_units, n_categories)


def _first_and_count(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For non-negative int64 ``keys``: the index of each distinct key's first occurrence and
    its count, in increasing key order (``np.unique(keys, return_index=True,
    return_counts=True)[1:]``); by counting, without a sort, when the keys span a small range."""
    span = int(keys.max()) + 1
    if span > max(4 * keys.size, 1 << 16):
        _, first, freq = np.unique(keys, return_index=True, return_counts=True)
        return first, freq
    counts = np.bincount(keys, minlength=span)
    present = np.flatnonzero(counts)
    firsts = np.full(span, keys.size, dtype=np.int64)
    np.minimum.at(firsts, keys, np.arange(keys.size, dtype=np.int64))
    return firsts[present], counts[present]


def group_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a (N, K) array: the index of each one's first occurrence and its count.

    Returns ``(first, freq)``, both of shape (P,), so ``rows[first]`` are the P distinct rows.
    """
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if rows.dtype.kind in {"i", "u"} and rows.min() >= 0:
        base = int(rows.max()) + 1
        if rows.shape[1] * math.log2(max(base, 2)) < 62:
            # One int64 key per row: a 1-D unique is much faster than unique(axis=0).
            keys = rows.astype(np.int64) @ (base ** np.arange(rows.shape[1], dtype=np.int64))
            return _first_and_count(keys)
    _, first, freq = np.unique(rows, axis=0, return_index=True, return_counts=True)
    return first, freq


def group_rows_weighted(rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_rows` of rows that each stand for ``weights`` (P,) identical units: the index
    of each distinct row's first occurrence and the summed weights, in the order
    :func:`group_rows` gives the distinct rows of the units themselves (so a bootstrap over the
    grouped table draws exactly what it draws over the units)."""
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    if rows.dtype.kind in {"i", "u"} and rows.min() >= 0:
        base = int(rows.max()) + 1
        if rows.shape[1] * math.log2(max(base, 2)) < 62:
            keys = rows.astype(np.int64) @ (base ** np.arange(rows.shape[1], dtype=np.int64))
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            return first, np.bincount(inverse.ravel(), weights=weights, minlength=first.size).astype(np.int64)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first, np.bincount(inverse.ravel(), weights=weights, minlength=first.size).astype(np.int64)


@dataclass(frozen=True)
class UnitTable:
    """The units that at least two raters rated, as per-unit category counts.

    ``counts`` has shape (P, V): how many raters put unit p in category v. ``freq`` (P,) says how
    many identical units each row stands for (all ones until :meth:`grouped`). Units rated by
    fewer than two raters are not here: no agreement statistic can use them.
    """

    counts: np.ndarray
    freq: np.ndarray
    categories: list[Any]
    n_singletons: int

    @property
    def n_units(self) -> int:
        return int(self.freq.sum())

    def grouped(self) -> UnitTable:
        first, freq = group_rows(self.counts)
        return UnitTable(self.counts[first], freq, self.categories, self.n_singletons)


def unit_table(
    data: Any,
    categories: Sequence[Any] | None,
    *,
    func: str,
    ordered: bool = False,
) -> UnitTable:
    """``data`` (M raters, N units) -> :class:`UnitTable` of its pairable units."""
    arr = rating_matrix(data, func=func)
    codes, cats = encode(arr, categories, func=func, ordered=ordered)
    table = _table_from_codes(codes, cats, func=func)
    if categories is None:
        # Without a given scale, the categories are those seen on pairable units, so that a
        # unit only one rater saw cannot add a category (and change q in Gwet's p_e).
        seen = table.counts.sum(axis=0) > 0
        table = UnitTable(
            table.counts[:, seen],
            table.freq,
            [c for c, keep in zip(cats, seen, strict=True) if keep],
            table.n_singletons,
        )
    return table


def _table_from_codes(codes: np.ndarray, cats: list[Any], *, func: str) -> UnitTable:
    n_rated = (codes >= 0).sum(axis=0)
    pairable = n_rated >= 2
    if pairable.sum() * max(len(cats), 1) > _DENSE_CELLS:
        raise JudgekitError(
            f"{func}: {int(pairable.sum())} units x {len(cats)} distinct ratings is too large a "
            "table for a categorical statistic; bin continuous scores into categories first."
        )
    counts = value_counts(codes[:, pairable], len(cats))
    return UnitTable(
        counts, np.ones(counts.shape[0], dtype=np.int64), cats, int((n_rated == 1).sum())
    )


def two_raters(
    y1: Any, y2: Any, labels: Sequence[Any] | None, *, func: str, ordered: bool = False
) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Codes of the pairs where both raters gave a rating: ((n,), (n,), labels)."""
    a1 = as_array(y1, func=func, ndim=1)
    a2 = as_array(y2, func=func, ndim=1)
    if a1.shape != a2.shape:
        raise JudgekitError(
            f"{func}: the two rating sequences have {a1.size} and {a2.size} items; "
            "they must rate the same units in the same order."
        )
    if a1.dtype != a2.dtype:
        a1, a2 = a1.astype(object), a2.astype(object)
        both = _object_to_float_or_self(np.stack([a1, a2]))
    else:
        both = np.stack([a1, a2])
    codes, cats = encode(both, labels, func=func, ordered=ordered)
    keep = (codes >= 0).all(axis=0)
    return codes[0, keep], codes[1, keep], cats
