"""A store in PostgreSQL: ``--store postgresql://user@host/db`` (or ``JUDGEKIT_STORE``).

SQLite is the embedded default; a team that shares one study across machines points every
command at one PostgreSQL database instead (docs/scale.md). The store is the same
:class:`~judgekit.store.database.Store`: :func:`connect` gives it a :class:`PgConnection`, which
speaks the part of :class:`sqlite3.Connection`'s API the store uses (``execute``,
``executemany``, ``in_transaction``, ``total_changes``, cursors with ``fetchone``/``fetchmany``/
``description``/``rowcount``) and runs each statement through :func:`~judgekit.store.pg_sql.translate`.
Its errors are :mod:`sqlite3`'s exception classes, so the store's callers catch one family.

The write lock SQLite takes with ``BEGIN IMMEDIATE`` is a transaction-scoped advisory lock
(``pg_advisory_xact_lock``, waited for a slice at a time): one writer at a time, as on SQLite, and another process's lock
is waited for with the same progress lines and limit (:class:`~judgekit.store.locking.LockWaiter`).
A password in the URL never reaches a message: the store names itself by :func:`redact_url`.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from judgekit.errors import JudgekitError
from judgekit.store.pg_sql import COMPAT_FUNCTIONS, translate

#: the advisory lock every writing transaction takes (SQLite's one write lock)
WRITE_LOCK = 0x6A75_6467_656B  # "judgek"
#: seconds one try to take the write lock waits (SQLite's busy handler slice)
LOCK_SLICE = 0.25
_SCHEMES = ("postgresql://", "postgres://")
#: an INSERT that :meth:`PgConnection.executemany` sends as a COPY: plain values, no conflict clause
_COPYABLE = re.compile(r"\s*INSERT INTO ([\w.]+) \(([\w, ]+)\)\s*VALUES \((?:%s, )*%s\)\s*", re.I)


#: an upsert of one row of values, which :meth:`PgConnection.executemany` may stage (its key
#: columns named in the conflict clause)
_UPSERT = re.compile(r"\s*INSERT INTO (\w+) \(([\w, ]+)\)\s*VALUES \((?:%s, )*%s\)\s*"
                     r"(ON CONFLICT \(([\w, ]+)\) DO .*)", re.I | re.S)


def _distinct_keys(upsert: re.Match[str], rows: list[Sequence[Any]]) -> bool:
    """Whether no two ``rows`` share the key of the upsert's conflict clause (one statement may
    not touch a row twice; row by row, the second would update the first)."""
    cols = [c.strip() for c in upsert.group(2).split(",")]
    key = [cols.index(c.strip()) for c in upsert.group(4).split(",") if c.strip() in cols]
    if len(key) != len(upsert.group(4).split(",")):
        return False
    return len({tuple(row[i] for i in key) for row in rows}) == len(rows)


def is_postgres_url(path: object) -> bool:
    """Whether a ``--store`` value names a PostgreSQL database rather than a SQLite file."""
    return isinstance(path, str) and path.lower().startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` without its password (``postgresql://user:***@host/db``), for every message."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            who, host = netloc.rsplit("@", 1)
            if ":" in who:
                who = who.split(":", 1)[0] + ":***"
            netloc = f"{who}@{host}"
        query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "postgresql://…"


def _password_pieces(url: str) -> list[str]:
    """Every piece of text in ``url`` that may be (part of) its password: the user info after
    its first ``:`` (and each ``@``-separated part of it: libpq cuts at the first ``@``), a
    ``password=`` value, each as written and percent-decoded."""
    found: list[str] = []
    rest = url.split("://", 1)[-1]
    who = rest.split("/", 1)[0].rpartition("@")[0]
    if ":" in who:
        secret = who.split(":", 1)[1]
        found += [secret, *secret.split("@")]
    found += re.findall(r"(?i)password=([^&#]*)", url)
    found += [unquote(p) for p in found]
    return sorted({p for p in found if p}, key=len, reverse=True)


def _without_password(message: str, url: str, name: str) -> str:
    """A connection error's text on one line, the URL and every piece of its password gone
    (the whole text dropped when a piece too short to replace safely still shows)."""
    text = " ".join(line.strip() for line in message.strip().splitlines() if line.strip())
    text = text.replace(url, name)
    for piece in _password_pieces(url):
        if len(piece) >= 4:
            text = text.replace(piece, "***")
        elif piece in text:
            return ""
    return text[:300]


class ConnectionLost(JudgekitError, sqlite3.OperationalError):
    """The server ended the store's connection (stopped, restarted, the network gone): one
    sentence for the command line, and still the :mod:`sqlite3` error the store's callers catch."""


def _sqlite_error(exc: Exception) -> sqlite3.Error:
    """A psycopg error as the :mod:`sqlite3` exception the store's callers catch."""
    import psycopg

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return sqlite3.OperationalError("database is locked")
    if isinstance(exc, psycopg.IntegrityError):
        return sqlite3.IntegrityError(text)
    if isinstance(exc, psycopg.DataError):
        return sqlite3.DataError(text)
    if isinstance(exc, (psycopg.OperationalError, psycopg.ProgrammingError)):
        return sqlite3.OperationalError(text)
    return sqlite3.DatabaseError(text)


class PgCursor:
    """A psycopg cursor read as a :class:`sqlite3.Cursor` is (no rows after a statement
    without a result, instead of an error)."""

    def __init__(self, cursor: Any) -> None:
        self._cur = cursor

    @property
    def description(self) -> Any:
        return self._cur.description

    @property
    def rowcount(self) -> int:
        return int(self._cur.rowcount)

    def fetchone(self) -> Any:
        return self._cur.fetchone() if self._cur.description is not None else None

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall()) if self._cur.description is not None else []

    def fetchmany(self, size: int = 1) -> list[Any]:
        return list(self._cur.fetchmany(size)) if self._cur.description is not None else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _Rows(PgCursor):
    """The answer to a statement PostgreSQL has no use for (a PRAGMA): the given rows."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    @property
    def description(self) -> Any:
        return [("value",)] if self._rows else None

    @property
    def rowcount(self) -> int:
        return -1

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def fetchmany(self, size: int = 1) -> list[Any]:
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows


class _CursorOf:
    """:meth:`PgConnection.cursor`: :class:`sqlite3.Cursor`'s shape over the connection."""

    def __init__(self, conn: PgConnection) -> None:
        self._conn = conn
        self._last: PgCursor = _Rows([])

    def execute(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> _CursorOf:
        self._last = self._conn.execute(sql, args)
        return self

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _CursorOf:
        self._last = self._conn.executemany(sql, rows)
        return self

    @property
    def description(self) -> Any:
        return self._last.description

    @property
    def rowcount(self) -> int:
        return self._last.rowcount

    def fetchone(self) -> Any:
        return self._last.fetchone()

    def fetchall(self) -> list[Any]:
        return self._last.fetchall()

    def fetchmany(self, size: int = 1) -> list[Any]:
        return self._last.fetchmany(size)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._last.fetchall())

    def close(self) -> None:
        self._last = _Rows([])


class PgConnection:
    """A psycopg connection (autocommit; transactions are the store's ``BEGIN``/``COMMIT``)
    with the part of :class:`sqlite3.Connection`'s API the store uses."""

    def __init__(self, conn: Any, name: str) -> None:
        self.raw = conn
        self.name = name
        self.total_changes = 0
        self._columns: dict[str, tuple[str, ...]] = {}

    # ------------------------------------------------------------- statements
    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.raw.info.transaction_status in (TransactionStatus.INTRANS,
                                                         TransactionStatus.INERROR))

    def execute(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> PgCursor:
        head = sql.lstrip()[:20].upper()
        if head.startswith("PRAGMA"):
            return _Rows([(0,)] if re.fullmatch(r"\s*PRAGMA\s+busy_timeout\s*", sql, re.I) else [])
        if head.startswith("BEGIN"):
            return self._begin()
        pg_sql, args = self._prepare(sql, args)
        try:
            cur = self.raw.execute(pg_sql, args)
        except Exception as exc:
            raise self._error(exc) from None
        self._after(pg_sql, cur.rowcount)
        return PgCursor(cur)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> PgCursor:
        """Each row through ``sql``; a plain ``INSERT … VALUES`` (an import's bulk of rows) as
        one ``COPY`` — the same rows, the same constraint errors, many times faster."""
        pg_sql, _ = self._prepare(sql, ())
        cur = self.raw.cursor()
        copy = _COPYABLE.fullmatch(pg_sql)
        upsert = _UPSERT.fullmatch(pg_sql)
        try:
            if copy:
                n = 0
                with cur.copy(f"COPY {copy.group(1)} ({copy.group(2)}) FROM STDIN") as out:
                    for row in rows:
                        out.write_row(row)
                        n += 1
                self._after("INSERT", n)
                return _Rows([])
            rows = list(rows)
            if upsert and len(rows) > 100 and self.in_transaction and _distinct_keys(upsert, rows):
                return self._staged_upsert(cur, upsert, rows)
            cur.executemany(pg_sql, rows)
        except Exception as exc:
            raise self._error(exc) from None
        self._after(pg_sql, cur.rowcount)
        return PgCursor(cur)

    def _staged_upsert(self, cur: Any, upsert: re.Match[str], rows: list[Sequence[Any]]) -> PgCursor:
        """An upsert of many rows with distinct keys as one ``COPY`` into a temporary table and
        one ``INSERT … SELECT … ON CONFLICT``: the rows and outcome of one upsert per row."""
        table, cols, conflict = upsert.group(1), upsert.group(2), upsert.group(3)
        cur.execute("DROP TABLE IF EXISTS pg_temp._judgekit_many")
        cur.execute(f"CREATE TEMP TABLE _judgekit_many AS SELECT {cols}, 0::bigint AS _n FROM {table}"
                    " WITH NO DATA")
        with cur.copy(f"COPY _judgekit_many ({cols}, _n) FROM STDIN") as out:
            for k, row in enumerate(rows):
                out.write_row((*row, k))
        cur.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _judgekit_many ORDER BY _n {conflict}")
        self._after("INSERT", cur.rowcount)
        cur.execute("DROP TABLE pg_temp._judgekit_many")
        return _Rows([])

    def _begin(self) -> PgCursor:
        """``BEGIN`` and the store's write lock; another process holding it is SQLite's busy."""
        import psycopg

        try:
            self.raw.execute("BEGIN")
            # waits a slice for the lock (taken the moment it is free), then is SQLite's busy,
            # which LockWaiter tries again with its progress lines, up to its limit
            self.raw.execute(f"SET LOCAL lock_timeout = '{int(LOCK_SLICE * 1000)}ms'")
            self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            self.raw.execute("SET LOCAL lock_timeout = 0")
        except psycopg.errors.LockNotAvailable:
            self.raw.execute("ROLLBACK")
            raise sqlite3.OperationalError("database is locked") from None
        except Exception as exc:
            self.rollback()
            raise self._error(exc) from None
        return _Rows([])

    def begin_snapshot(self) -> None:
        """A read-only transaction whose reads all see the database as it stood at its first
        (``REPEATABLE READ``): a consistent view while other processes write."""
        try:
            self.raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except Exception as exc:
            raise self._error(exc) from None

    def _prepare(self, sql: str, args: Sequence[Any] | dict[str, Any]) -> tuple[str, Any]:
        pg_sql, numbered = translate(sql, self._table_columns(sql))
        if numbered and not isinstance(args, dict):
            args = {f"p{k + 1}": v for k, v in enumerate(args)}
        elif not isinstance(args, dict):
            args = list(args)
        return pg_sql, args

    def _table_columns(self, sql: str) -> dict[str, tuple[str, ...]]:
        m = re.match(r"\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)", sql, re.I)
        if not m:
            return {}
        table = m.group(1)
        if table not in self._columns:
            rows = self.raw.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = %s ORDER BY ordinal_position", (table,)).fetchall()
            self._columns[table] = tuple(r[0] for r in rows)
        return {table: self._columns[table]}

    def _after(self, pg_sql: str, rowcount: int) -> None:
        word = pg_sql.lstrip()[:6].upper()
        if word in ("INSERT", "UPDATE", "DELETE") and rowcount > 0:
            self.total_changes += rowcount
        elif word in ("ALTER ", "CREATE", "DROP T"):
            self._columns.clear()

    def _error(self, exc: Exception) -> sqlite3.Error:
        import psycopg

        if not isinstance(exc, psycopg.Error):
            raise exc
        if self.raw.broken or self.raw.closed or (exc.sqlstate or "")[:2] in ("08", "57"):
            text = " ".join(str(exc).split()) or type(exc).__name__
            return ConnectionLost(
                f"Store {self.name}: the connection to PostgreSQL was lost ({text[:200]}); start "
                "the database and run the command again (what was committed before stays).")
        return _sqlite_error(exc)

    def cursor(self) -> _CursorOf:
        """A cursor of this connection (as pandas' ``read_sql_query`` and a bulk writer use one:
        ``execute`` returns the cursor, which then has the ``description`` and the rows)."""
        return _CursorOf(self)

    def rollback(self) -> None:
        if self.raw.broken or self.raw.closed:
            return  # the server rolled back what it lost
        if self.in_transaction:
            try:
                self.raw.execute("ROLLBACK")
            except Exception as exc:
                raise self._error(exc) from None

    def commit(self) -> None:
        if self.in_transaction:
            try:
                self.raw.execute("COMMIT")
            except Exception as exc:
                raise self._error(exc) from None

    def close(self) -> None:
        self.raw.close()

    # ------------------------------------------------------------- the schema
    def tables(self) -> dict[str, frozenset[str]]:
        """{table: its columns} of the store (``rowid``, PostgreSQL's spelling of SQLite's
        implicit one, left out), as :mod:`judgekit.store.integrity` compares them."""
        out: dict[str, set[str]] = {}
        for table, column in self.raw.execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema()"):
            if column != "rowid":
                out.setdefault(table, set()).add(column)
        return {t: frozenset(c) for t, c in out.items()}

    def triggers(self) -> frozenset[str]:
        rows = self.raw.execute("SELECT DISTINCT trigger_name FROM information_schema.triggers"
                                " WHERE trigger_schema = current_schema()")
        return frozenset(r[0] for r in rows)


def _number(text: str) -> int | float:
    d = Decimal(text)
    return int(d) if d == d.to_integral_value() else float(d)


def connect(url: str) -> PgConnection:
    """A connection to the PostgreSQL store at ``url``; failing, one sentence without the
    URL's password."""
    name = redact_url(url)
    try:
        import psycopg
        from psycopg.adapt import Loader
    except ImportError:
        raise JudgekitError(
            f"Store {name} is a PostgreSQL database, and psycopg is not installed; install it "
            "(pip install 'judgekit-trust[postgres]') or pass a SQLite --store file."
        ) from None

    class NumberLoader(Loader):  # SUM of integers is numeric: an int, as SQLite gives it
        def load(self, data: Any) -> Any:
            return _number(bytes(data).decode())

    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        reason = _without_password(str(exc), url, name) or type(exc).__name__
        raise JudgekitError(
            f"Store {name} cannot be reached ({reason[:200]}); start the database or fix the "
            "--store URL (or JUDGEKIT_STORE)."
        ) from None
    raw.adapters.register_loader("numeric", NumberLoader)
    return PgConnection(raw, name)


def install_functions(conn: PgConnection) -> None:
    """SQLite's functions the store's SQL calls (:data:`~judgekit.store.pg_sql.COMPAT_FUNCTIONS`),
    (again) on each open, inside the caller's locked transaction."""
    conn.raw.execute(COMPAT_FUNCTIONS)  # CREATE OR REPLACE: a newer judgekit's are current


#: migrations PostgreSQL spells otherwise than :data:`~judgekit.store.schema.MIGRATIONS`
_COUNTER_FUNCTION = (
    "CREATE OR REPLACE FUNCTION judgekit_count_write() RETURNS trigger LANGUAGE plpgsql AS"
    " $$ BEGIN UPDATE store_writes SET n = n + 1; RETURN NULL; END $$")


def migration_statements(name: str, statements: Iterable[str]) -> list[str]:
    """The statements of migration ``name`` (SQLite's, split) as PostgreSQL runs them: a trigger
    is a function and a trigger calling it; everything else is translated statement by statement
    when it runs."""
    out: list[str] = []
    for statement in statements:
        code = re.sub(r"^\s*--[^\n]*\n", "", statement, flags=re.M)  # SQL comments before it
        m = re.match(r"\s*CREATE TRIGGER (\w+) AFTER (\w+) ON (\w+)\s+BEGIN\s+(.*?);?\s*END;?\s*$",
                     code, flags=re.S)
        if m and "store_writes" not in m.group(4):  # a trigger of its own: its body as a function
            name, body = m.group(1), m.group(4)
            out.append(f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS"
                       f" $$ BEGIN {body}; RETURN NULL; END $$")
            out.append(f"CREATE TRIGGER {name} AFTER {m.group(2)} ON {m.group(3)}"
                       f" FOR EACH ROW EXECUTE FUNCTION {name}_fn()")
        elif m:
            if not out or out[0] != _COUNTER_FUNCTION:
                out.insert(0, _COUNTER_FUNCTION)
            out.append(f"CREATE TRIGGER {m.group(1)} AFTER {m.group(2)} ON {m.group(3)}"
                       " FOR EACH ROW EXECUTE FUNCTION judgekit_count_write()")
        else:
            out.append(statement)
    return out


#: rows written by one connection past which its tables' statistics are refreshed on close
ANALYZE_AFTER = 5_000


def analyze_after(conn: Any, changes_at_open: int | None) -> None:
    """``ANALYZE`` the store's tables when this connection wrote many rows: PostgreSQL plans a
    query from statistics its autovacuum refreshes only later, and a freshly imported study read
    with none (a table taken for empty) is planned with nested loops over a million rows."""
    if changes_at_open is None or conn.total_changes - changes_at_open < ANALYZE_AFTER:
        return
    with contextlib.suppress(Exception):
        conn.raw.execute("ANALYZE")
