"""Tables for ``judgekit export``: the items with their metadata, the ratings joined to it, and
times as ISO 8601 (UTC) text.

``export items`` writes what a panel file's ``items:`` reads (``item_id``, ``prompt``,
``messages``, ``response`` and every metadata column): a panel pointed at it judges exactly the
stored items under their stored ids — the recipe for a store whose ids were made from the content
(``import --id-from content``), whose ids no hand-made items file could reproduce reliably.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["items_table", "iso_times", "with_item_metadata"]

#: item columns that are not metadata
_CORE = ("item_id", "prompt", "messages", "response", "content_hash")


def items_table(store: Any) -> pd.DataFrame:
    """The stored items (no perturbed copies): ``item_id, prompt, messages, response``, then the
    metadata columns in the order first seen (``content_hash`` left out: the store makes it)."""
    df = store.items()
    return df.drop(columns=[c for c in ("content_hash",) if c in df.columns])


def with_item_metadata(ratings: pd.DataFrame, store: Any) -> pd.DataFrame:
    """``ratings`` with each item's metadata columns after its own (``item.<name>`` where a rating
    column has the same name, ``item.`` again while that is taken), joined on ``item_id``; ratings of unknown items get empty cells."""
    items = store.items()
    meta = [c for c in items.columns if c not in _CORE]
    if not meta:
        return ratings
    taken = {*map(str, ratings.columns), *map(str, meta)}
    renamed = {}
    for c in meta:
        name = c
        while name in ratings.columns or (name != c and name in taken):
            name = f"item.{name}"  # status beside item.status: item.item.status
        taken.add(name)
        renamed[c] = name
    right = items[["item_id", *meta]].rename(columns=renamed)
    right["item_id"] = right["item_id"].astype(str)
    left = ratings.assign(item_id=ratings["item_id"].astype(str))
    return left.merge(right, on="item_id", how="left")


def iso_times(df: pd.DataFrame, columns: tuple[str, ...] = ("created_at",)) -> pd.DataFrame:
    """Seconds since 1970 in ``columns`` as ISO 8601 UTC text (``2026-12-02T07:41:00.5+00:00``,
    microseconds only when there are any); empty cells stay empty."""
    out = df.copy()
    for col in columns:
        if col in out.columns:
            out[col] = [None if v is None or v != v else _iso(float(v)) for v in out[col].tolist()]
    return out


def _iso(seconds: float) -> str:
    t = datetime.fromtimestamp(seconds, tz=UTC)
    return t.isoformat(timespec="microseconds" if t.microsecond else "seconds")
