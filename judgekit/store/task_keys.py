"""Opaque task ids for Label Studio (migration ``013_task_keys``).

A task pushed to Label Studio carries a random key (``t-`` and 16 hex digits) in place of the
item id, since every annotator of a Label Studio Community project can open the Data Manager and
read the task data, and item ids often name the model (``gpt4:p128``). The key of an item is made
once and kept, so pushing again finds the tasks already there; the mapping stays in the store and
``labelstudio pull`` maps keys back to item ids.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from typing import Any

from judgekit.store.schema import MAX_SQL_VARIABLES

#: what every key starts with
PREFIX = "t-"


def _select(store: Any, column: str, other: str, values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(values), MAX_SQL_VARIABLES):
        part = list(values[i : i + MAX_SQL_VARIABLES])
        sql = f"SELECT {column}, {other} FROM task_keys WHERE {column} IN ({','.join('?' * len(part))})"
        out.update({str(a): str(b) for a, b in store.conn.execute(sql, part)})
    return out


def task_keys(store: Any, item_ids: Sequence[str]) -> dict[str, str]:
    """item id -> its task key, made (and stored, in one transaction) for items without one."""
    ids = [str(i) for i in dict.fromkeys(item_ids)]
    have = _select(store, "item_id", "task_key", ids)
    new = [(PREFIX + secrets.token_hex(8), i, time.time()) for i in ids if i not in have]
    if new:
        with store.transaction() as conn:
            conn.executemany("INSERT INTO task_keys (task_key, item_id, created_at) VALUES (?, ?, ?)", new)
        have.update({i: k for k, i, _ in new})
    return {i: have[i] for i in ids}


def looks_like_key(task_id: str) -> bool:
    """Whether ``task_id`` has the shape of a key this module makes (``t-`` and 16 hex digits)."""
    return re.fullmatch(r"t-[0-9a-f]{16}", task_id) is not None


def known_keys(store: Any, item_ids: Sequence[str]) -> dict[str, str]:
    """item id -> its task key, for the items that have one (none is made)."""
    return _select(store, "item_id", "task_key", [str(i) for i in dict.fromkeys(item_ids)])


def items_of_keys(store: Any, keys: Sequence[str]) -> dict[str, str]:
    """task key -> item id, for the keys the store knows."""
    return _select(store, "task_key", "item_id", [str(k) for k in dict.fromkeys(keys)])


__all__ = ["PREFIX", "items_of_keys", "known_keys", "looks_like_key", "task_keys"]
