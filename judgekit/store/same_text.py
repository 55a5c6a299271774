"""One item, one id: a panel's item whose text the store already holds under a content id.

``judgekit import --id-from content`` names each item ``c-`` + its content hash
(:func:`judgekit.store.schema.item_content_hash` of prompt, messages and response). A panel whose
items file gives the same texts other ids (its own ids, or text re-encoded so the hash differs)
would store each a second time, and its judges' ratings would never meet the human labels.
:func:`content_id_twins` finds them; the panel refuses to run with one sentence naming the
recipe (``judgekit export items``: the stored items under their stored ids).
"""

from __future__ import annotations

import re
from typing import Any

from judgekit.store.schema import item_content_hash

__all__ = ["content_id_twins"]

_CONTENT_ID = re.compile(r"c-[0-9a-f]{16}")


def content_id_twins(store: Any, table: Any) -> list[tuple[str, str]]:
    """``(new_id, stored_id)`` for each item of ``table`` (an ItemTable or a DataFrame of
    item_id, prompt, messages, response)
    whose id the store does not have while it holds the same text under a content id."""
    conn = getattr(store, "conn", None)
    if conn is None or table is None:
        return []
    ids = [str(i) for i in (table.ids if hasattr(table, "ids") else table["item_id"].tolist())]
    if not ids:
        return []
    known: set[str] = set()
    for k in range(0, len(ids), 500):
        chunk = ids[k:k + 500]
        known |= {r[0] for r in conn.execute(
            f"SELECT item_id FROM items WHERE item_id IN ({','.join('?' * len(chunk))})", chunk)}
    new = [i for i, iid in enumerate(ids) if iid not in known]
    if not new:  # a rerun: every item is stored already
        return []
    col = {c: _column(table, c, len(ids)) for c in ("prompt", "messages", "response")}
    hashes: dict[str, str] = {}
    for i in new:
        hashes.setdefault(item_content_hash(col["prompt"][i], col["messages"][i], col["response"][i]), ids[i])
    out: list[tuple[str, str]] = []
    keys = list(hashes)
    for k in range(0, len(keys), 500):
        chunk = keys[k:k + 500]
        for stored_id, h in conn.execute(
                f"SELECT item_id, content_hash FROM items WHERE content_hash IN ({','.join('?' * len(chunk))})",
                chunk):
            if _CONTENT_ID.fullmatch(str(stored_id)):
                out.append((hashes[h], str(stored_id)))
    return out


def _column(table: Any, name: str, n: int) -> list[Any]:
    """A column of an :class:`~judgekit.store.items_table.ItemTable` or a DataFrame (Nones when
    it has none)."""
    if hasattr(table, "column"):
        try:
            return list(table.column(name))
        except (KeyError, ValueError):
            return [None] * n
    return table[name].tolist() if name in table.columns else [None] * n
