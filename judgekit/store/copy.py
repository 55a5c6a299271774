"""Moving a study between backends: every row of a store into an empty one, verified by digests.

``judgekit store copy SRC DST`` (SQLite ↔ PostgreSQL, or one file to another) copies the tables
that hold the study — items, ratings, their history, judge calls and batches, samples, the
verdicts' digests — each in its stored order (so the copy reads back in the same order), in one
transaction of the destination. Before it commits, each table's digest (sha256 of its rows in
stored order, :func:`table_digest`) is computed on both sides; any difference rolls the copy back
and is one sentence. Not copied: the run leases (claims of runs on the source), the no-op import
digests and the integrity mark (both name the source's own state), the write counter and the
migrations (the destination has its own, of this judgekit).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from judgekit.errors import JudgekitError
from judgekit.store.database import Store
from judgekit.store.schema import table_names

#: the tables a copy leaves out: the source's own state, not the study's
_NOT_COPIED = ("call_leases", "import_digests", "store_checks", "store_writes")
#: the tables a copy carries, in the order the migrations create them
COPIED_TABLES = tuple(t for t in table_names() if t not in _NOT_COPIED)
_BLOCK = 20_000


@dataclass(frozen=True)
class CopyResult:
    """What :func:`copy_store` copied: rows and digest per table (the same on both sides)."""

    rows: dict[str, int]
    digests: dict[str, str]


def _columns(store: Store, table: str) -> list[str]:
    cur = store.conn.execute(f"SELECT * FROM {table} LIMIT 0")
    return [d[0] for d in cur.description if d[0] != "rowid"]


def table_digest(store: Store, table: str, columns: list[str]) -> tuple[int, str]:
    """(rows, sha256) of ``table``'s ``columns`` in stored order: each row's JSON text."""
    h = hashlib.sha256()
    n = 0
    cur = store.conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
    while block := cur.fetchmany(_BLOCK):
        n += len(block)
        h.update("".join(json.dumps(list(row)) + "\n" for row in block).encode())
    return n, h.hexdigest()


def _empty(store: Store) -> bool:
    return all(store.conn.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is None for t in COPIED_TABLES)


@contextmanager
def _snapshot(store: Store) -> Iterator[None]:
    """Every read of ``store`` inside sees it as it stood at the first: a copy of a store that
    another process writes meanwhile is one state of it, never tables of two."""
    if store.is_postgres:
        cast(Any, store.conn).begin_snapshot()
    else:
        store.conn.execute("BEGIN")  # deferred: the first read fixes WAL's snapshot
    try:
        yield
    finally:
        store.conn.rollback()  # it only read


def copy_store(src: Store, dst: Store) -> CopyResult:
    """Every row of :data:`COPIED_TABLES` from ``src`` into ``dst`` (which must hold none), in one
    transaction that commits only when each table's digest is the same on both sides. ``src`` is
    read in one snapshot: what another process writes to it meanwhile is not in the copy."""
    if not _empty(dst):
        raise JudgekitError(
            f"Store {dst.path} already holds a study (items, ratings or calls); copy into a new, "
            "empty store (a new file, or a new PostgreSQL database)."
        )
    rows: dict[str, int] = {}
    digests: dict[str, str] = {}
    with _snapshot(src), dst.transaction() as conn:
        for table in COPIED_TABLES:
            columns = [c for c in _columns(src, table) if c in set(_columns(dst, table))]
            insert = (f"INSERT INTO {table} ({', '.join(columns)}) "
                      f"VALUES ({', '.join('?' * len(columns))})")
            cur = src.conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
            while block := cur.fetchmany(_BLOCK):
                conn.executemany(insert, block)
            n_src, want = table_digest(src, table, columns)
            n_dst, got = table_digest(dst, table, columns)
            if (n_src, want) != (n_dst, got):
                raise JudgekitError(
                    f"Store copy {src.path} → {dst.path}: table {table} reads back differently "
                    f"({n_dst} of {n_src} rows, digest {got[:12]} instead of {want[:12]}); nothing "
                    "was written — report this as a judgekit bug."
                )
            rows[table], digests[table] = n_src, want
    return CopyResult(rows, digests)


def store_digests(store: Store) -> dict[str, Any]:
    """{table: (rows, digest)} of every copied table: what two copies of one study share."""
    return {t: table_digest(store, t, _columns(store, t)) for t in COPIED_TABLES}
