"""The agreement report's inputs, built once: the ratings it reads and the slicing metadata
from a store, without a full item read. :func:`slice_meta` reads only the metadata keys sliced by.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: the rating columns the agreement report reads
REPORT_COLUMNS = ["item_id", "rater_id", "rater_kind", "label", "status", "trial"]


def read_ratings(source: Any, rubric: Any, columns: Sequence[str] = REPORT_COLUMNS, *,
                 variants: bool = False) -> pd.DataFrame:
    """The ratings under ``rubric`` to report on: only ``columns`` from a
    :class:`~judgekit.store.database.Store` (a lean read), the full frame from any other source (a store
    seen through a rubric view); ratings of perturbed item copies (:mod:`judgekit.store.variants`) only
    with ``variants``."""
    from judgekit.store.database import Store

    if isinstance(source, Store):
        return source.ratings(rubric=rubric, columns=columns, variants=variants)
    frame: pd.DataFrame = (source.ratings(rubric=rubric, variants=True) if variants
                           else source.ratings(rubric=rubric))
    return frame


def _slice_values(source: Any, by: Sequence[str]) -> tuple[dict[str, dict[str, Any]], list[str]] | None:
    """The metadata keys of the ``by`` specs (``a+b`` crosses columns) read key by key from a
    store (``{key: {item id: value}}``, and every item id in storage order); ``None`` when a key
    cannot be read that way or no item has it."""
    if not hasattr(source, "item_values"):
        return None
    keys = list(dict.fromkeys(col for spec in by for col in spec.split("+")))
    columns: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = source.item_values(key)
        if not values:
            return None
        columns[key] = values
    return columns, source.item_ids()


def value_groups(source: Any, by: Sequence[str]) -> dict[str, list[tuple[Any, list[str]]]] | None:
    """The metadata keys of the ``by`` specs read by SQL from a :class:`~judgekit.store.database.Store`,
    grouped by value: key -> [(value, item ids)], the value as
    :meth:`~judgekit.store.database.Store.item_values` reads it (the JSON text read back; None for the
    items without the key), over the items :meth:`~judgekit.store.database.Store.item_ids` lists (no
    perturbed copies); one grouped query per key, no Python object per item but its id. None for
    another source, a key that cannot be read that way or that no item has, or an item id
    holding a newline (the caller reads the items)."""
    import json

    from judgekit.store.database import Store
    from judgekit.store.schema import ITEM_CORE
    from judgekit.store.variants import variant_item_sql

    if not isinstance(source, Store):
        return None
    keys = list(dict.fromkeys(col for spec in by for col in spec.split("+")))
    cond, args = variant_item_sql()
    out: dict[str, list[tuple[Any, list[str]]]] = {}
    for key in keys:
        if key in ITEM_CORE or key == "content_hash" or any(c in key for c in '"\\'):
            return None
        # one JSON extraction per item: the value's JSON text (NULL without the key), read back
        # with json.loads (a JSON string gives the text ->> gives, as item_values reads it)
        rows = source.conn.execute(
            "SELECT raw, count(*), group_concat(item_id, char(10)) FROM"
            f" (SELECT meta -> ?1 AS raw, item_id FROM items WHERE {cond}) GROUP BY raw",
            [f'$."{key}"', *args],
        ).fetchall()
        groups: list[tuple[Any, list[str]]] = []
        for raw, n, ids in rows:
            split = ids.split("\n")
            if len(split) != n:
                return None
            groups.append((None if raw is None else json.loads(raw), split))
        if all(v is None for v, _ in groups):
            return None
        out[key] = groups
    return out


def groups_frame(groups: dict[str, list[tuple[Any, list[str]]]]) -> pd.DataFrame:
    """The frame of :func:`slice_meta` from :func:`value_groups`' result."""
    first = next(iter(groups.values()))
    ids = [i for _, g in first for i in g]
    return meta_frame({k: {i: v for v, g in gs if v is not None for i in g} for k, gs in groups.items()}, ids)


def meta_frame(columns: dict[str, dict[str, Any]], ids: list[str]) -> pd.DataFrame:
    """The frame of :func:`slice_meta` from :func:`_slice_values`' result."""
    import pandas as pd
    # each column's type inferred over every item, an absent key NaN, as Store.items() has it
    return pd.DataFrame(
        {k: pd.Series([v.get(i, np.nan) for i in ids]).to_numpy() for k, v in columns.items()}
        | {"item_id": np.asarray(ids, dtype=object)},
    ).set_index(pd.Index(np.asarray(ids, dtype=object)))


def slice_meta(source: Any, by: Sequence[str]) -> pd.DataFrame | None:
    """The item metadata columns of the ``by`` specs (``a+b`` crosses columns) indexed by item id,
    read key by key from a store; ``None`` when a key cannot be read that way or no item has it
    (the caller reads every item, and names the available columns)."""
    read = _slice_values(source, by)
    return None if read is None else meta_frame(*read)


def metadata_keys(source: Any, keys: Sequence[str]) -> set[str] | None:
    """Which of ``keys`` some item of a :class:`~judgekit.store.database.Store` has in its metadata, by one
    scan of the items (their JSON ``meta``; perturbed copies left out, as
    :meth:`~judgekit.store.database.Store.items` leaves them out); None for another source or a key
    that cannot be read that way (the caller reads the items)."""
    from judgekit.store.database import Store
    from judgekit.store.variants import variant_item_sql

    if not isinstance(source, Store) or not keys or any(c in k for k in keys for c in '"\\'):
        return None
    paths = [f'$."{k}"' for k in keys]
    cols = ", ".join("max(json_type(meta, ?) IS NOT NULL)" for _ in paths)
    cond, args = variant_item_sql()
    row = source.conn.execute(f"SELECT {cols} FROM items WHERE {cond}", [*paths, *args]).fetchone()
    return {k for k, found in zip(keys, row, strict=True) if found}
