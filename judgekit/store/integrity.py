"""The store as another tool may have left it: checked when a store is opened (issue 20 item 4).

A store is a plain SQLite file; anyone can open it with ``sqlite3`` and drop a table, write a
trial ``'abc'`` or a status the CHECK would refuse (``PRAGMA ignore_check_constraints``), store
metadata that is not a JSON object, add a trigger that blocks or rewrites judgekit's writes, or
apply a migration of a newer judgekit. Reading such a store used to end in a traceback, or worse
in a verdict computed from it. :class:`~judgekit.store.database.Store` calls:

* :func:`check_version` before it applies its own migrations: a migration this judgekit does not
  know was applied by a newer judgekit (its tables may mean something this one cannot read);
* :func:`_check_structure` after them: every table and column the migrations create is there, and
  no trigger but the ones they create (another tool's trigger can block or rewrite a write);
* :func:`_check_rows`: every rating has an integer trial, a known status and rater kind and a
  text (or missing) label; every item's metadata is a JSON object (scanned again only when the
  store changed since it last passed, :func:`check_opened`).

Each problem is one :class:`~judgekit.errors.JudgekitError` sentence naming the store, the table
and the row, and saying what to do; nothing is written. The checks are SQL only (a scan of the
items and the ratings, about a second per million ratings, once per change of the store).
"""

from __future__ import annotations

import sqlite3
from functools import cache

from judgekit.errors import JudgekitError, excerpt
from judgekit.store.schema import MIGRATIONS, RATER_KINDS, STATUSES, migration_statements

_FIX = "restore it from a backup or pass another --store"


@cache
def _expected_schema() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """``({table: its columns}, trigger names)`` of a store with every migration applied (built
    once, in memory, from :data:`~judgekit.store.schema.MIGRATIONS`)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        for _, sql in MIGRATIONS:
            for statement in migration_statements(sql):
                conn.execute(statement)
        return _tables(conn), _triggers(conn)
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
    if hasattr(conn, "tables"):  # a PostgreSQL store (judgekit.store.postgres)
        return dict(conn.tables())
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: frozenset(r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')) for n in names
            if not n.startswith("sqlite_")}


def _triggers(conn: sqlite3.Connection) -> frozenset[str]:
    if hasattr(conn, "triggers"):  # a PostgreSQL store (judgekit.store.postgres)
        return frozenset(conn.triggers())
    return frozenset(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"))


def check_version(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a store a newer judgekit migrated: a migration name this judgekit does not know."""
    known = {name for name, _ in MIGRATIONS}
    for (name,) in conn.execute("SELECT name FROM migrations ORDER BY name"):
        if name not in known:
            raise JudgekitError(
                f"Store {path} was made by a newer judgekit (its schema has the migration "
                f"{excerpt(str(name))}, which this judgekit does not know); upgrade judgekit to "
                "use it, or pass another --store."
            )


def _check_structure(conn: sqlite3.Connection, path: str) -> None:
    """Every table and column of the schema is there, and no trigger another tool added."""
    tables, triggers = _expected_schema()
    have = _tables(conn)
    for table in sorted(tables):
        if table not in have:
            raise JudgekitError(
                f"Store {path} has no table {table!r} (another tool dropped it); {_FIX}."
            )
        missing = sorted(tables[table] - have[table])
        if missing:
            raise JudgekitError(
                f"Store {path}: table {table!r} has no column {missing[0]!r} (another tool "
                f"rebuilt it); {_FIX}."
            )
    gone = sorted(triggers - _triggers(conn))
    if gone:
        raise JudgekitError(
            f"Store {path} has no trigger {gone[0]!r} (another tool dropped it; it counts the writes "
            f"to the store); {_FIX}."
        )
    extra = sorted(_triggers(conn) - triggers)
    if extra:
        raise JudgekitError(
            f"Store {path} has the trigger {excerpt(extra[0])}, which judgekit did not create (another "
            f"tool added it, and it can block or rewrite judgekit's writes); drop it "
            f"(sqlite3 {path} 'DROP TRIGGER \"{extra[0]}\"') or pass another --store."
        )


def check_opened(conn: sqlite3.Connection, path: str) -> None:
    """:func:`_check_structure`, then :func:`_check_rows` unless the store is as it was when
    judgekit last closed it after writing (its :func:`~judgekit.store.import_digest.store_state`,
    recorded in ``store_checks`` by :func:`remember`: a scan of a million ratings takes a second,
    and judgekit's own writes are well formed). The state moves with every insert, update or
    delete of a rating or an item, by any tool (the write counter's triggers, which
    :func:`_check_structure` requires)."""
    from judgekit.store.import_digest import store_state

    _check_structure(conn, path)
    row = conn.execute("SELECT state FROM store_checks WHERE id = 1").fetchone()
    if row is None or row[0] != store_state(conn):
        _check_rows(conn, path)


def remember(conn: sqlite3.Connection, changes_at_open: int | None) -> None:
    """When the store was found well formed on open and this connection wrote to it since
    (``conn.total_changes`` moved past ``changes_at_open``), record its state as checked. Only
    if it can be written at once: a store another process is writing is scanned again next time.
    A command that writes nothing (a refused input) leaves the store exactly as it was."""
    from judgekit.store.import_digest import store_state

    try:
        if changes_at_open is None or conn.total_changes == changes_at_open:
            return
        (wait,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO store_checks (id, state) VALUES (1, ?)", (store_state(conn),))
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute(f"PRAGMA busy_timeout = {int(wait)}")
    except sqlite3.Error:
        pass  # read-only, busy or closed: checked again on the next open


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _check_rows(conn: sqlite3.Connection, path: str) -> None:
    """Every rating's trial is an integer, its status and rater kind known, its label text or
    missing; every item's metadata a JSON object. The first bad row is one sentence."""
    row = conn.execute(
        "SELECT item_id, rater_id, rubric, trial, status, rater_kind, label FROM ratings"
        " WHERE typeof(trial) != 'integer' OR trial < 0"
        f" OR typeof(status) != 'text' OR status NOT IN {_in(STATUSES)}"
        f" OR typeof(rater_kind) != 'text' OR rater_kind NOT IN {_in(RATER_KINDS)}"
        " OR typeof(label) NOT IN ('text', 'null') OR typeof(item_id) != 'text'"
        " OR typeof(rater_id) != 'text' LIMIT 1").fetchone()
    if row is not None:
        item, rater, rubric, trial, status, kind, label = row
        if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
            what = f"trial {excerpt(trial)}, not a whole number >= 0"
        elif status not in STATUSES:
            what = f"status {excerpt(status)}, not one of {', '.join(STATUSES)}"
        elif kind not in RATER_KINDS:
            what = f"rater kind {excerpt(kind)}, not one of {', '.join(RATER_KINDS)}"
        elif not isinstance(item, str) or not isinstance(rater, str):
            what = "an item or rater id that is not text"
        else:
            what = f"label {excerpt(label)}, which is not text"
        raise JudgekitError(
            f"Store {path}: the rating of item {excerpt(str(item))} by {excerpt(str(rater))} under "
            f"{excerpt(str(rubric))} has {what} (another tool wrote it); fix or delete that row, or "
            "pass another --store."
        )
    row = conn.execute(
        "SELECT item_id, json_valid(meta) FROM items WHERE typeof(meta) != 'text'"
        " OR NOT json_valid(meta) OR json_type(meta) != 'object' LIMIT 1").fetchone()
    if row is not None:
        item, valid = row
        what = "is not valid JSON" if not valid else "is not a JSON object"
        raise JudgekitError(
            f"Store {path}: the metadata of item {excerpt(str(item))} {what} (another tool wrote "
            "it); make it a JSON object of its columns (e.g. '{}'), or pass another --store."
        )
