"""The no-op re-import: a digest of an import's input, and the store's state after it.

Re-importing a file changes nothing when the file's bytes, the rubric (its hash) and the import
options are the same and nothing but imports that left that file's ratings and items alone wrote
the store since. :func:`input_digest` hashes the input (streamed, in 1 MB blocks);
:func:`store_state` is a cheap token of the ratings, items and rating history tables (row counts
and latest rowids: judgekit writes items and ratings with ``INSERT OR REPLACE``, which gives
every written row a new rowid, so any write moves it; and a count of every UPDATE and DELETE of
their rows, kept by the triggers of migration ``009_write_counter``, so another tool's plain
``UPDATE ratings SET label = ...`` or a delete and re-insert of the newest row moves it too). ``import_digests`` keeps one row per input
(source file and options: the digest), with the state token the store had after it:

* an import whose digest has a row holding the store's current state is a no-op (it is skipped);
* an import that only added ratings (none of its ratings replaced a stored one) and added or
  rewrote items unchanged carries the other rows forward (their state becomes the new one), so
  a study fed by several files re-imports each of them as a no-op;
* an import that replaced a stored rating or changed a stored item drops the other rows (one of
  them may have written what it replaced);
* anything else that writes the store (a Label Studio pull, a panel run, another tool) moves the
  state token, so every row stops matching and the next import of any file takes the full path,
  which compares every rating with the stored one. A changed row in a file changes its digest.

The only module with SQL on ``import_digests``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgekit.version import __version__

_BLOCK = 1 << 20


def input_digest(paths: list[str | Path], options: Mapping[str, Any]) -> str | None:
    """sha256 of judgekit's version, the ``options`` (JSON) and the bytes of each file; ``None``
    when a file cannot be read (the import then reads it and reports the problem)."""
    h = hashlib.sha256()
    h.update(json.dumps([__version__, dict(options)], sort_keys=True, default=str).encode())
    try:
        for p in paths:
            h.update(b"\0file\0")
            with open(p, "rb") as fh:
                while block := fh.read(_BLOCK):
                    h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def store_state(conn: sqlite3.Connection) -> str:
    """A token that changes whenever anything writes ratings, items or rating history: their
    row counts and latest rowids (moved by an INSERT, and by judgekit's INSERT OR REPLACE) and the
    count of UPDATEs and DELETEs of their rows (``store_writes``, kept by triggers)."""
    row = conn.execute(
        "SELECT (SELECT COUNT(*) FROM ratings), (SELECT MAX(rowid) FROM ratings),"
        " (SELECT COUNT(*) FROM items), (SELECT MAX(rowid) FROM items),"
        " (SELECT COUNT(*) FROM rating_history), (SELECT MAX(rowid) FROM rating_history),"
        " (SELECT n FROM store_writes)"  # UPDATEs and DELETEs, counted by migration 009's triggers
    ).fetchone()
    return ":".join("-" if v is None else str(v) for v in row)


def unchanged_import(conn: sqlite3.Connection, digest: str | None) -> dict[str, Any] | None:
    """The summary recorded by the last import when it had this ``digest`` and the store is as
    that import left it; else ``None``."""
    if digest is None:
        return None
    row = conn.execute(
        "SELECT state, summary FROM import_digests WHERE digest = ?", (digest,)
    ).fetchone()
    if row is None or row[0] != store_state(conn):
        return None
    summary: dict[str, Any] = json.loads(row[1])
    return summary


def record_import(
    conn: sqlite3.Connection,
    digest: str | None,
    summary: Mapping[str, Any],
    *,
    before: str | None = None,
    keep_others: bool = False,
) -> None:
    """Remember this import (inside its transaction, after its writes).

    ``before`` is :func:`store_state` at the start of the transaction, before its writes; with
    ``keep_others`` (the import replaced no stored rating and changed no stored item) the rows
    that held that state still hold (they get the new state), else every other row is dropped.
    """
    state = store_state(conn)
    if keep_others and before is not None:
        conn.execute("DELETE FROM import_digests WHERE state != ?", (before,))
        conn.execute("UPDATE import_digests SET state = ?", (state,))
    else:
        conn.execute("DELETE FROM import_digests")
    if digest is not None:
        conn.execute(
            "INSERT OR REPLACE INTO import_digests (digest, state, summary, created_at)"
            " VALUES (?, ?, ?, ?)",
            (digest, state, json.dumps(dict(summary)), time.time()),
        )
