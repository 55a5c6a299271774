"""Slice keys of the agreement report: one slice per value of an item metadata column (or per
combination of values, for ``"a+b"``), with missing values as a slice of their own and numeric
values in numeric order.

* A missing value (no such key in the item's metadata, None/NaN, or an empty or blank string) is
  the value ``"(missing)"``: those items form a slice of their own (in a crossed slice, that
  part of the key reads ``(missing)``), so slices partition the items and items without the
  value are never silently dropped.
* Keys are the values as text, parts of a crossed key joined by ``" / "``.
* Order: part by part, numbers (values that read as finite numbers) first in numeric order
  (1, 2, 10, not 1, 10, 2), then text in text order, ``(missing)`` last.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

MISSING = "(missing)"


def _texts(values: pd.Series) -> pd.Series:
    """The values as text, ``(missing)`` for missing, empty or blank ones."""
    missing = values.isna()
    text = values.astype(object).where(~missing, "").astype(str)
    return text.where(~(missing | text.str.strip().eq("")), MISSING)


def part_order(text: str) -> tuple[int, float, str]:
    """Sort key of one part of a slice key: numbers, then text, then ``(missing)``."""
    if text == MISSING:
        return (2, 0.0, "")
    try:
        x = float(text)
    except ValueError:
        return (1, 0.0, text)
    return (0, x, text) if math.isfinite(x) else (1, 0.0, text)


def slice_positions(meta: pd.DataFrame, parts: Sequence[str], index: pd.Index) -> tuple[list[tuple[str, np.ndarray]], int]:
    """The slices of ``index`` (item ids) by the metadata columns ``parts``: a sorted list of
    (key, positions in ``index`` as sorted int arrays), and how many items have a missing value
    in at least one part."""
    import pandas as pd
    sub = meta[list(parts)].reindex(index)
    texts = pd.DataFrame({i: _texts(sub[p]) for i, p in enumerate(parts)}, index=index)
    n_missing = int((texts == MISSING).any(axis=1).sum())
    groups = texts.groupby(list(texts.columns), sort=False).indices
    keyed = {(k if isinstance(k, tuple) else (k,)): rows for k, rows in groups.items()}
    ordered = sorted(keyed, key=lambda t: tuple(part_order(x) for x in t))
    return [(" / ".join(t), np.asarray(keyed[t], dtype=np.int64)) for t in ordered], n_missing


ValueGroups = list[tuple[Any, list[str]]]


def slice_positions_from_groups(columns: dict[str, ValueGroups], parts: Sequence[str],
                                index: Sequence[str] | np.ndarray) -> tuple[list[tuple[str, np.ndarray]], int] | None:
    """:func:`slice_positions` from a store's metadata grouped by value (``columns``: key -> a
    list of (value, the ids of the items with that value), None for the items without it; every
    item in one group per key; :func:`judgekit.agreement.unit_frames.value_groups`), without a
    frame over the items.

    The text of a value is the one :func:`slice_positions` gives it in the column
    :meth:`~judgekit.store.database.Store.items` would build (its type inferred over every item, an
    absent key missing): the inference runs on the distinct values (kept apart by type, so 1
    and 1.0 stay two values) plus a missing value when some item lacks the key or a rated item
    is not a stored one, which infers the same type. None when a value is unhashable (then use
    :func:`slice_positions`).
    """
    n = len(index)
    wanted = np.asarray(index, dtype=object)
    part_codes: list[np.ndarray] = []
    part_texts: list[list[str]] = []
    for p in parts:
        distinct: dict[tuple[type, Any], int] = {}
        group_code: list[int] = []
        try:
            for value, _ in columns[p]:
                group_code.append(-1 if value is None else distinct.setdefault((type(value), value), len(distinct)))
        except TypeError:
            return None
        ids = np.asarray([i for _, g in columns[p] for i in g], dtype=object)
        code_of_id = np.append(np.repeat(np.asarray(group_code, dtype=np.int64),
                                         [len(g) for _, g in columns[p]]), -1)  # last: not a store item
        at = {i: k for k, i in enumerate(ids.tolist())}  # (each item is in one group)
        where = np.fromiter((at.get(i, -1) for i in wanted.tolist()), dtype=np.int64, count=n)
        # a store item without the key, or a rated item the store does not have (reindexing
        # gives it a missing value), makes the column's type one that holds a missing value
        missing_somewhere = bool((code_of_id[:-1] < 0).any() or (where < 0).any())
        if all(t is str for t, _ in distinct):  # text (and missing): the column is object, texts as written
            texts = [MISSING if v.strip() == "" else v for _, v in distinct]
        else:
            import pandas as pd

            sample = [v for _, v in distinct] + ([np.nan] if missing_somewhere else [])
            texts = _texts(pd.Series(sample, dtype=None if sample else object)).tolist()
        names = list(dict.fromkeys([*texts, MISSING]))
        code_of_text = {t: k for k, t in enumerate(names)}
        text_code = np.array([code_of_text[t] for t in texts[: len(distinct)]] + [code_of_text[MISSING]],
                             dtype=np.int64)
        part_codes.append(text_code[code_of_id[where]])  # -1 (missing) indexes the MISSING code
        part_texts.append(names)
    n_missing = int(np.logical_or.reduce([c == t.index(MISSING) for c, t in zip(part_codes, part_texts, strict=True)]).sum()) if n else 0
    key = np.zeros(n, dtype=np.int64)
    for c, t in zip(part_codes, part_texts, strict=True):
        key = key * len(t) + c
    uniq, inverse = np.unique(key, return_inverse=True)
    groups: dict[tuple[str, ...], np.ndarray] = {}
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(uniq.size + 1))
    for g, k in enumerate(uniq):
        parts_of_key = []
        for c_t in reversed(part_texts):
            parts_of_key.append(c_t[int(k % len(c_t))])
            k //= len(c_t)
        groups[tuple(reversed(parts_of_key))] = order[bounds[g]:bounds[g + 1]]
    ordered = sorted(groups, key=lambda t: tuple(part_order(x) for x in t))
    return [(" / ".join(t), groups[t].astype(np.int64)) for t in ordered], n_missing
