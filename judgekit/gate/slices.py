"""The slices of the gate's per-slice checks: for each ``by`` spec, the sorted slice keys and the
positions of their items, as :func:`judgekit.agreement.slicing.slice_groups` makes them over the
items' metadata.

Metadata values that are all plain text (each a non-empty string that starts and ends with a
letter, digit or visible ASCII character, or missing) are their own slice keys, read key by key
from the store without pandas; any other values (numbers, booleans, text with edge whitespace)
go through the pandas path the gate always took (the items' frame, :meth:`Store.items`, sliced
by :func:`~judgekit.agreement.slicing.slice_groups`), so their keys (``1.0`` for a number in a
column with gaps, ...) stay what they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement.slicing import MISSING, part_order


def _plain(v: Any) -> bool:
    return isinstance(v, str) and v != "" and _edge(v[0]) and _edge(v[-1])


def _edge(c: str) -> bool:
    return c.isalnum() or "!" <= c <= "~"


def slice_positions(source: Any, parts: Sequence[str], items: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    """``[(key, positions in items)]`` of one ``by`` spec (``parts``: its ``+``-crossed columns)
    over ``items`` (the report's sorted item ids), in the report's slice order."""
    from judgekit.store.variants import is_variant_item

    columns: list[dict[str, Any]] = []
    if any(is_variant_item(i) for i in items):  # their metadata is not the frame's
        return _pandas_positions(source, parts, items)
    for p in parts:
        values = source.item_values(p) if hasattr(source, "item_values") else None
        if not values or not all(_plain(v) or v is None for v in values.values()):
            return _pandas_positions(source, parts, items)
        columns.append(values)
    groups: dict[tuple[str, ...], list[int]] = {}
    for k, item in enumerate(items):
        key = tuple(MISSING if (v := col.get(item)) is None else v for col in columns)
        groups.setdefault(key, []).append(k)
    ordered = sorted(groups, key=lambda t: tuple(part_order(x) for x in t))
    return [(" / ".join(t), np.asarray(groups[t], dtype=np.int64)) for t in ordered]


def _pandas_positions(source: Any, parts: Sequence[str], items: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    import pandas as pd

    from judgekit.agreement.slicing import slice_groups

    meta = source.items()
    meta = meta.set_index(meta["item_id"].astype(str))
    index = pd.Index(np.asarray(items, dtype=object), name="item_id", dtype=object)
    at = {item: k for k, item in enumerate(items)}
    groups, _ = slice_groups(meta, list(parts), index)
    return [(key, np.asarray([at[i] for i in ids], dtype=np.int64)) for key, ids in groups]
