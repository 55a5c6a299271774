"""Read-only SQL of the gate on a plain :class:`~judgekit.store.database.Store`: the raters and their kinds,
the item metadata keys, and the verdict's hashes computed from ordered, streamed fetches.

The hashes are the very values of :func:`judgekit.verdict.read.store_hashes` and
:func:`judgekit.verdict.log.judge_ratings_hash` (their DataFrame forms stay the definition and
the path for other sources, e.g. a store seen through a rubric view): the digest of a list of
rows is ``sha256`` of its JSON text (:func:`judgekit.core.hashing.digest`), and the JSON text of a
list is ``"[" + ", ".join(<each row's JSON>) + "]"``, so it can be fed to the hash block by block
of an ``ORDER BY`` fetch instead of being built from every rating in memory. The orders are the
DataFrame forms' sorts: SQLite compares TEXT by its UTF-8 bytes, which is code point order, as
Python compares ``str``; the human ratings sort on their text forms (``str(trial)``, a missing
label as ``"None"``), the judge's on ``(item_id, trial)`` (a judge has one rating per item and
trial under a rubric's hash).

A missing label (an abstention or an error) is hashed as the DataFrame forms read it with the
pandas this judgekit runs on (3.x, whose string columns hold a missing value as NaN): in the human
rows as the float NaN (JSON ``NaN``), in a judge's rows as the text ``"nan"`` when the judge has
some label under the rubric (a string column), else as ``null`` (an object column of None). These
are the values the verdicts already written carry; :mod:`tests.test_gate_sql` pins them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

#: rows fetched per block by the streamed hashes (memory: one block, not the ratings)
BLOCK = 20_000


def plain_store(store: Any) -> bool:
    """Whether ``store`` is a :class:`~judgekit.store.database.Store` whose SQL these helpers may read (a
    store seen through a rubric view is not: its ratings are mapped in Python)."""
    from judgekit.store.database import Store

    return isinstance(store, Store) and isinstance(getattr(store, "conn", None), sqlite3.Connection)


def _under(rubric: Any, alias: str = "") -> tuple[str, list[Any]]:
    """The condition "under ``rubric``'s current hash, not a perturbed item copy"."""
    from judgekit.store.variants import variant_item_sql

    cond, args = variant_item_sql(f"{alias}item_id")
    return (f"{alias}rubric = ? AND {alias}rubric_hash = ? AND {cond}",
            [str(rubric.id), str(rubric.hash), *args])


def rater_kinds(store: Any, rubric: Any, *, variants: bool = False) -> dict[str, str]:
    """rater id → kind of every rater with ratings under ``rubric`` (perturbed item copies left
    out unless ``variants``), in the order of their first rating (as ``store.ratings(rubric=...)``
    lists them): the raters from the rubric index, then each one's first rating by it."""
    from judgekit.store.variants import variant_item_sql

    args = [str(rubric.id), str(rubric.hash)]
    vcond, vargs = variant_item_sql() if not variants else ("1", [])
    first: dict[str, tuple[int, str]] = {}
    conn = store.conn
    for rater in _raters(conn, args):
        row = conn.execute("SELECT rowid, rater_kind FROM ratings WHERE rubric = ? AND rubric_hash = ?"
                           f" AND rater_id = ? AND {vcond} ORDER BY rowid LIMIT 1", [*args, rater, *vargs]).fetchone()
        if row is not None:
            first[str(rater)] = (int(row[0]), str(row[1]))
    return {r: k for r, (_, k) in sorted(first.items(), key=lambda kv: kv[1][0])}


def _raters(conn: sqlite3.Connection, args: list[Any]) -> Iterable[str]:
    """The rater ids under a rubric and hash, in id order, by seeking the rubric index rater by
    rater (a handful of seeks instead of a scan of every rating)."""
    sql = "SELECT MIN(rater_id) FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id > ?"
    (rater,) = conn.execute("SELECT MIN(rater_id) FROM ratings WHERE rubric = ? AND rubric_hash = ?", args).fetchone()
    while rater is not None:
        yield rater
        (rater,) = conn.execute(sql, [*args, rater]).fetchone()


def meta_keys(store: Any) -> set[str]:
    """The metadata keys of the items (perturbed copies left out): the columns
    ``store.items()`` has besides its core ones."""
    from judgekit.store.variants import variant_item_sql

    cond, args = variant_item_sql("items.item_id")
    rows = store.conn.execute(
        f"SELECT DISTINCT j.key FROM items, json_each(items.meta) AS j WHERE {cond}", args)
    return {str(k) for (k,) in rows}


def _streamed_digest(blocks: Iterable[list[Any]]) -> str:
    """:func:`judgekit.core.hashing.digest` of the concatenated ``blocks`` of rows (tuples of str,
    int or None: JSON arrays), without holding them all."""
    h = hashlib.sha256(b"[")
    first = True
    for block in blocks:
        if not block:
            continue
        text = json.dumps(block, sort_keys=True, default=str)[1:-1]
        h.update((text if first else ", " + text).encode())
        first = False
    h.update(b"]")
    return h.hexdigest()[:16]


def _blocks(cursor: sqlite3.Cursor, nan_at: int | None = None) -> Iterable[list[Any]]:
    """The cursor's rows block by block; with ``nan_at``, a None in that column becomes NaN."""
    nan = float("nan")
    while block := cursor.fetchmany(BLOCK):
        if nan_at is not None:
            block = [r if r[nan_at] is not None else (*r[:nan_at], nan, *r[nan_at + 1:]) for r in block]
        yield block


_HUMAN = "rater_kind IN ('human', 'reference')"


def human_ratings_hash(store: Any, rubric: Any) -> str:
    """``human_ratings_hash`` of a verdict: :func:`judgekit.core.hashing.ratings_hash` of the human
    and reference ratings under ``rubric`` (rows ``[item_id, rater_id, str(trial), label,
    status]`` in sorted order; (item, rater, trial) is unique under a rubric's hash)."""
    cond, args = _under(rubric)
    cur = store.conn.execute(
        "SELECT item_id, rater_id, CAST(trial AS TEXT), label, status FROM ratings"
        f" WHERE {cond} AND {_HUMAN} ORDER BY item_id, rater_id, CAST(trial AS TEXT)", args)
    return _streamed_digest(_blocks(cur, nan_at=3))


def _labelled(rubric: Any) -> tuple[str, list[Any]]:
    cond, args = _under(rubric)
    return f"SELECT item_id FROM ratings WHERE {cond} AND {_HUMAN}", args


def items_hash(store: Any, rubric: Any) -> str:
    """``items_hash`` of a verdict: the sorted ``[item_id, content_hash]`` of the items that carry
    a human or reference rating under ``rubric``."""
    sub, args = _labelled(rubric)
    cur = store.conn.execute(
        f"SELECT item_id, content_hash FROM items WHERE item_id IN ({sub}) ORDER BY item_id", args)
    return _streamed_digest(_blocks(cur))


def judge_ratings_hash(store: Any, rubric: Any, judge: str) -> str:
    """:func:`judgekit.verdict.log.judge_ratings_hash` by SQL: ``judge``'s ratings ``[item_id,
    trial, label, status]`` under ``rubric`` on the items with a human or reference rating."""
    mine = [str(rubric.id), str(rubric.hash), judge]
    label = "COALESCE(label, 'nan')" if judge_has_label(store, rubric, judge) else "label"
    sub, args = _labelled(rubric)
    cur = store.conn.execute(
        f"SELECT item_id, trial, {label}, status"
        f" FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id = ? AND item_id IN ({sub})"
        " ORDER BY item_id, trial", [*mine, *args])
    return _streamed_digest(_blocks(cur))


def judge_has_label(store: Any, rubric: Any, judge: str) -> bool:
    """Whether ``judge`` has a rating with a label under ``rubric`` (any item): then its missing
    labels hash as ``"nan"``, else as null (module doc)."""
    return store.conn.execute(
        "SELECT 1 FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id = ? AND label IS NOT NULL"
        " LIMIT 1", [str(rubric.id), str(rubric.hash), judge]).fetchone() is not None


def items_hash_of(store: Any, item_ids: list[str]) -> str:
    """``items_hash`` of these (sorted, distinct) item ids: their ``[item_id, content_hash]``."""

    def blocks() -> Iterable[list[Any]]:
        for k in range(0, len(item_ids), 500):
            part = item_ids[k:k + 500]
            rows = store.conn.execute(
                f"SELECT item_id, content_hash FROM items WHERE item_id IN ({','.join('?' * len(part))})"
                " ORDER BY item_id", part).fetchall()
            yield rows

    return _streamed_digest(blocks())

