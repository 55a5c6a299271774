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

import numpy as np
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


def slice_groups(meta: pd.DataFrame, parts: Sequence[str], index: pd.Index) -> tuple[list[tuple[str, pd.Index]], int]:
    """The slices of ``index`` (item ids) by the metadata columns ``parts``: a sorted list of
    (key, item ids), and how many items have a missing value in at least one part."""
    groups, n_missing = slice_positions(meta, parts, index)
    return [(key, index[pos]) for key, pos in groups], n_missing


def slice_positions(meta: pd.DataFrame, parts: Sequence[str], index: pd.Index) -> tuple[list[tuple[str, np.ndarray]], int]:
    """:func:`slice_groups` as positions in ``index`` (sorted int arrays) instead of item ids."""
    sub = meta[list(parts)].reindex(index)
    texts = pd.DataFrame({i: _texts(sub[p]) for i, p in enumerate(parts)}, index=index)
    n_missing = int((texts == MISSING).any(axis=1).sum())
    groups = texts.groupby(list(texts.columns), sort=False).indices
    keyed = {(k if isinstance(k, tuple) else (k,)): rows for k, rows in groups.items()}
    ordered = sorted(keyed, key=lambda t: tuple(part_order(x) for x in t))
    return [(" / ".join(t), np.asarray(keyed[t], dtype=np.int64)) for t in ordered], n_missing
