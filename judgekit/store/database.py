"""The SQLite store: items, ratings, rating history, samples.

One file (default ``./judgekit.db``), WAL mode so a panel can commit each result as it arrives
and a killed process loses at most what was in flight. The schema (these tables and the judge
calls' ones) is the named, add-only migrations of :mod:`judgekit.store.schema`, applied when a store is
opened.

Every write that belongs together goes through :meth:`Store.transaction`, so a failed import
changes nothing; a transaction opened inside another one is a savepoint (as in sqlite-utils).
Another process holding the write lock is waited for, with progress on stderr, up to
``JUDGEKIT_LOCK_TIMEOUT`` seconds (:mod:`judgekit.store.locking`), then one sentence. pandas is
imported by the methods that return or take frames, not by this module.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from judgekit.core.atomic import create_with_umask
from judgekit.errors import JudgekitError
from judgekit.store.judge_rows import JudgeRatings
from judgekit.store.locking import LockWaiter
from judgekit.store.locking import lock_timeout as env_lock_timeout
from judgekit.store.postgres import is_postgres_url
from judgekit.store.schema import (
    ITEM_CORE,
    MAX_SQL_VARIABLES,
    MIGRATIONS,
    RATER_KINDS,
    RATING_COLUMNS,
    RATING_KEY,
    STATUSES,
    ItemRow,
    JudgeRatingKey,
    NewText,
    RatingRow,
    SampleRow,
    StoredJudgeRating,
    WriteCounts,
    item_content_hash,
    migration_statements,
)

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.store.items_table import ItemTable

__all__ = [
    "DEFAULT_STORE", "ITEM_CORE", "ItemRow", "JudgeRatingKey", "MIGRATIONS", "NewText",
    "RATER_KINDS", "RATING_COLUMNS", "RATING_KEY", "RatingRow", "STATUSES", "SampleRow", "Store",
    "StoredJudgeRating", "WriteCounts", "has_ratings",
]

DEFAULT_STORE = "judgekit.db"
class Store(JudgeRatings):
    """A judgekit store in one SQLite file.

    >>> store = Store(":memory:")
    >>> store.ratings().empty
    True
    """

    def __init__(self, path: str | Path = DEFAULT_STORE, *, lock_timeout: float | None = None) -> None:
        """Open (or create) the store at ``path``.

        ``lock_timeout``: seconds to wait for another process's write lock (default
        ``JUDGEKIT_LOCK_TIMEOUT``, else 10 minutes; see :mod:`judgekit.store.locking`).
        """
        self.path = str(path)
        self._savepoints = 0
        limit = env_lock_timeout() if lock_timeout is None else lock_timeout
        if is_postgres_url(self.path):
            self._open_postgres(self.path, limit)
            return
        if self.path != ":memory:":
            parent = Path(self.path).parent
            if not parent.exists():
                raise JudgekitError(
                    f"Store {self.path}: the folder {parent} does not exist; create it or pass "
                    "another --store path."
                )
        if self.path != ":memory:":
            create_with_umask(self.path)
        try:
            self.conn = sqlite3.connect(self.path, timeout=limit, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise JudgekitError(
                f"Store {self.path} cannot be opened ({exc}); pass another --store path."
            ) from None
        try:
            #: every statement that takes the write lock goes through it (waits with progress)
            self._lock = LockWaiter(self.conn, self.path, limit)
            self._lock.run(lambda: self.conn.execute("PRAGMA journal_mode=WAL"))
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise JudgekitError(
                f"Store {self.path} is not a judgekit SQLite store ({exc}); pass another --store path."
            ) from None
        except BaseException:
            self.conn.close()
            raise

    def _open_postgres(self, url: str, limit: float) -> None:
        """The store in the PostgreSQL database at ``url`` (:mod:`judgekit.store.postgres`)."""
        from judgekit.store import postgres

        self.path = postgres.redact_url(url)  # no message names the password
        conn = postgres.connect(url)
        # speaks the part of sqlite3.Connection's API the store uses
        self.conn = cast(sqlite3.Connection, conn)
        try:
            self._lock = LockWaiter(self.conn, self.path, limit)
            with self.transaction():
                postgres.install_functions(conn)
                conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY,"
                             " applied_at REAL NOT NULL)")
            self._migrate()
        except postgres.ConnectionLost:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise JudgekitError(
                f"Store {self.path} is not a judgekit PostgreSQL store ({exc}); pass another --store."
            ) from None
        except BaseException:
            conn.close()
            raise

    @property
    def is_postgres(self) -> bool:
        """Whether the store is a PostgreSQL database (else a SQLite file)."""
        from judgekit.store.postgres import PgConnection

        return isinstance(self.conn, PgConnection)

    @classmethod
    def open_existing(cls, path: str | Path) -> Store:
        """Open a store that must exist already (for commands that read one): a missing file is an
        error that says how to make it, never a new empty store."""
        path = str(path)
        if path != ":memory:" and not is_postgres_url(path) and not Path(path).exists():
            raise JudgekitError(
                f"Store {path} does not exist; import ratings first "
                f"(`judgekit import FILE --rubric R --store {path}`) or pass --store."
            )
        return cls(path)

    # ------------------------------------------------------------------ basics
    @property
    def opened(self) -> bool:
        """Whether the store's file is open (a :class:`~judgekit.store.deferred.DeferredStore`
        says False until its first use; nothing has been recorded in a store not opened)."""
        return True

    def close(self) -> None:
        from judgekit.store.integrity import remember
        remember(self.conn, getattr(self, "_changes_at_open", None))  # its own writes are well formed
        if self.is_postgres:
            from judgekit.store.postgres import analyze_after

            analyze_after(self.conn, getattr(self, "_changes_at_open", None))
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        if not self.is_postgres:  # (PostgreSQL's is made in a locked transaction, on open)
            self._lock.run(lambda: self.conn.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
            ))
        from judgekit.store import integrity
        integrity.check_version(self.conn, self.path)  # a newer judgekit's store is refused
        done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            with self.transaction() as conn:
                # Another process opening the store at the same time may have applied it while
                # this one waited for the lock.
                if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                    continue
                statements: Iterable[str] = migration_statements(sql)
                if self.is_postgres:
                    from judgekit.store.postgres import migration_statements as pg_statements

                    statements = pg_statements(name, statements)
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )
        integrity.check_opened(self.conn, self.path)  # what another tool may have done
        self._changes_at_open = self.conn.total_changes

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All-or-nothing writes: ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error).

        Another process holding the write lock is waited for (see :mod:`judgekit.store.locking`);
        past the limit this is one :class:`JudgekitError` and nothing is written.

        Entered while a transaction is open, it is a ``SAVEPOINT`` instead: an error inside rolls
        back only what was written inside it (and propagates); the outer transaction decides
        whether the rest is committed.
        """
        if self.conn.in_transaction:
            self._savepoints += 1
            name = f"judgekit_{self._savepoints}"
            self.conn.execute(f"SAVEPOINT {name}")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:  # some errors make SQLite roll back everything itself
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
                raise
            else:
                self.conn.execute(f"RELEASE {name}")
            finally:
                self._savepoints -= 1
            return
        # The write lock is taken at the start (waiting for another process's, with progress, up
        # to the limit), so a transaction never fails half-way for want of it.
        self._lock.run(lambda: self.conn.execute("BEGIN IMMEDIATE"))
        try:
            yield self.conn
            self._lock.run(lambda: self.conn.execute("COMMIT"))
        except BaseException:
            if self.conn.in_transaction:  # some errors make SQLite roll back everything itself
                self.conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------- items
    def put_items(
        self, items: pd.DataFrame | ItemTable, *, source: str = "items", new_text: NewText = "refuse"
    ) -> int:
        """Insert or update items (``item_id`` + ``prompt``/``messages``/``response`` + metadata).

        Metadata of an existing item is merged: columns given here overwrite, others stay; a
        missing prompt, messages or response keeps the stored one (and one the store lacks is
        added). A stored item keeps its text (``new_text="refuse"``): another prompt, messages
        or response than the stored one (with or without a response) under the same id
        (another model's output?) is one :class:`JudgekitError` naming ``source`` and the id, and
        nothing is written — its ratings were made for the stored text. ``"if_unlabelled"``
        allows it for items no human or reference rater has labelled (a judge panel, whose
        ratings for an older text are retired by the run); ``"replace"`` always. An item stored
        exactly so already is not rewritten (it keeps its ``updated_at`` and its place).
        ``items``: a validated items frame or an :class:`~judgekit.store.items_table.ItemTable`.
        """
        if items.empty:
            return 0
        rows, stored = self._merged_items(items, source=source, new_text=new_text)
        from judgekit.store.items_table import rows_to_write

        changed = rows_to_write(rows, stored)  # an item stored exactly so already is not rewritten
        if changed:
            with self.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO items (item_id, prompt, messages, response, content_hash,"
                    " meta, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (r.item_id, r.prompt, r.messages, r.response, r.content_hash, r.meta,
                         r.updated_at)
                        for r in changed
                    ],
                )
        return len(rows)

    def check_item_texts(
        self, items: pd.DataFrame | ItemTable, *, source: str = "items", new_text: NewText = "refuse"
    ) -> None:
        """Refuse, as :meth:`put_items` would, items stored with another text (writes nothing):
        for a caller that must know before it does anything else with them."""
        if not items.empty:
            self._merged_items(items, source=source, new_text=new_text)

    def _merged_items(
        self, items: pd.DataFrame | ItemTable, *, source: str, new_text: NewText
    ) -> tuple[list[ItemRow], dict[str, ItemRow]]:
        """The rows to write for ``items`` and the stored rows of their ids."""
        from judgekit.store.items_table import item_ids, merged_rows

        stored = {r.item_id: r for r in self._item_rows(item_ids(items), ordered=False)}
        rows = merged_rows(items, stored, now=time.time())
        if new_text == "replace":
            return rows, stored
        changed = [
            row.item_id for row in rows
            if (old := stored.get(row.item_id)) is not None
            and any(was is not None and now != was for was, now in
                    zip((old.prompt, old.messages, old.response), (row.prompt, row.messages, row.response),
                        strict=True))
            and row.content_hash != item_content_hash(old.prompt, old.messages, old.response)
        ]
        if not changed:
            return rows, stored
        if new_text == "refuse":
            raise JudgekitError(
                f"{source}: item {changed[0]!r} is already in the store with another text "
                "(another model's output?); give these items distinct ids, or use another --store."
            )
        sql = ("SELECT item_id, rater_kind, MIN(rater_id) FROM ratings WHERE rater_kind != 'judge'"
               " AND item_id IN ({}) GROUP BY item_id, rater_kind")
        labelled = {iid: (kind, rater) for iid, kind, rater in self._select_in(sql, changed)}
        for iid in changed:
            if iid in labelled:
                kind, rater = labelled[iid]
                raise JudgekitError(
                    f"{source}: item {iid!r} is already in the store with another text, and its "
                    f"{kind} labels (e.g. {rater!r}) were made for the stored one; give the new "
                    "text another item id, or use another --store."
                )
        return rows, stored

    def items(self, item_ids: Sequence[str] | None = None, *, variants: bool = False) -> pd.DataFrame:
        """Items as a DataFrame: core columns, ``content_hash`` and one column per metadata key.
        Perturbed copies (``<item>~padding``, :mod:`judgekit.store.variants`) only when named in
        ``item_ids`` or with ``variants``."""
        from judgekit.store.records import items_frame
        from judgekit.store.variants import is_variant_item

        rows = self._item_rows(None if item_ids is None else list(item_ids))
        if item_ids is None and not variants:
            rows = [r for r in rows if not is_variant_item(r.item_id)]
        return items_frame(rows)

    def _item_rows(self, item_ids: list[str] | None, *, ordered: bool = True) -> list[ItemRow]:
        sql = (
            "SELECT item_id, prompt, messages, response, content_hash, meta, updated_at FROM items"
        )
        order = " ORDER BY rowid" if ordered else ""
        if item_ids is None:
            rows = list(self.conn.execute(sql + order))
        else:
            rows = self._select_in(sql + " WHERE item_id IN ({})" + order, item_ids)
        return [ItemRow(*r) for r in rows]

    # ----------------------------------------------------------------- ratings
    def put_ratings(self, ratings: pd.DataFrame, *, keep_history: bool = True,
                    provenance: str | None = None) -> WriteCounts:
        """Insert ratings; a rating with the same key replaces the old one.

        The key is (item_id, rater_id, rubric, rubric_hash, trial). The replaced rating is kept
        in ``rating_history`` (e.g. an annotator revising a label in Label Studio). Returns how
        many were new, changed (another label or status) and unchanged (counted only with
        ``keep_history``; otherwise every rating counts as new). ``provenance``: where they came
        from (:mod:`judgekit.store.provenance`; default ``import:`` and a digest of them).
        """
        if ratings.empty:
            return WriteCounts(0, 0, 0)
        from judgekit.store.bulk import kind_rows, rating_columns, write_ratings
        from judgekit.store.records import rater_kinds

        now = time.time()
        cols = rating_columns(ratings, now=now, provenance=provenance)
        kinds = rater_kinds(kind_rows(cols))
        with self.transaction() as conn:
            self._check_rater_kinds(kinds)
            return write_ratings(conn, cols, keep_history=keep_history, now=now)

    def _check_rater_kinds(self, kinds: dict[str, str]) -> None:
        """A rater keeps its kind: a rater id already stored as a human cannot come in as a judge."""
        sql = "SELECT DISTINCT rater_id, rater_kind FROM ratings WHERE rater_id IN ({})"
        for rater, kind in self._select_in(sql, list(kinds)):
            new = kinds[rater]
            if kind != new:
                raise JudgekitError(
                    f"Rater {rater!r} is already a {kind} rater in this store, not a {new}; "
                    "rename the new rater (e.g. with rater_id=column in --raters/--judges)."
                )

    def ratings(
        self,
        *,
        rubric: Any = None,
        rater_kind: str | Iterable[str] | None = None,
        rater_ids: Iterable[str] | None = None,
        any_hash: bool = False,
        columns: Sequence[str] | None = None,
        variants: bool = False,
    ) -> pd.DataFrame:
        """Ratings in long format (:data:`RATING_COLUMNS`). Ratings of perturbed item copies
        (:mod:`judgekit.store.variants`) only with ``rater_ids`` named or ``variants``.

        ``rubric`` is a :class:`~judgekit.rubric.model.Rubric` or a rubric name or path (ratings under
        its current hash only, unless ``any_hash``), or a ``name@version`` string (any hash).
        ``columns``: only these of :data:`RATING_COLUMNS`, as plain Python objects (a lean read
        for large stores: no per-column type inference).
        """
        import pandas as pd

        wanted = list(RATING_COLUMNS) if columns is None else list(columns)
        unknown = [c for c in wanted if c not in RATING_COLUMNS]
        if unknown:
            raise ValueError(f"Store.ratings: no rating column {unknown[0]!r}")
        sql = f"SELECT {', '.join(wanted)} FROM ratings WHERE 1=1"
        args: list[Any] = []
        if isinstance(rubric, str) and "@" not in rubric:
            # a bare name ("restrictiveness") means that rubric as judgekit has it now
            from judgekit.rubric.model import load_rubric

            rubric = load_rubric(rubric)
        if rubric is not None:
            rid = getattr(rubric, "id", rubric)
            sql += " AND rubric = ?"
            args.append(rid)
            if hasattr(rubric, "hash") and not any_hash:
                sql += " AND rubric_hash = ?"
                args.append(rubric.hash)
        if rater_kind is not None:
            kinds = [rater_kind] if isinstance(rater_kind, str) else list(rater_kind)
            sql += f" AND rater_kind IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        if rater_ids is not None:
            ids = list(rater_ids)
            sql += f" AND rater_id IN ({','.join('?' * len(ids))})"
            args.extend(ids)
        elif not variants:
            from judgekit.store.variants import variant_item_sql

            cond, more = variant_item_sql()
            sql += f" AND {cond}"
            args.extend(more)
        cursor = self.conn.execute(sql + " ORDER BY rowid", args)
        if columns is None:
            return pd.DataFrame(cursor.fetchall(), columns=RATING_COLUMNS)
        # read in blocks, each column's repeated values one shared object (rater ids, labels,
        # statuses: a handful of values over a million rows), so memory holds the columns only
        cols: list[list[Any]] = [[] for _ in wanted]
        seen: list[dict[Any, Any]] = [{} for _ in wanted]
        text = [c not in ("value", "trial", "created_at") for c in wanted]  # TEXT columns: str or NULL
        while block := cursor.fetchmany(50_000):
            for k, values in enumerate(zip(*block, strict=True)):
                if text[k]:
                    memo = seen[k]
                    cols[k].extend([memo.setdefault(v, v) for v in values])
                else:
                    cols[k].extend(values)
        return pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in zip(wanted, cols, strict=True)})

    def item_ids(self) -> list[str]:
        """Every item id, in the order the items were stored (perturbed copies left out, as in
        :meth:`items`)."""
        from judgekit.store.variants import variant_item_sql

        cond, args = variant_item_sql()
        return [r[0] for r in self.conn.execute(f"SELECT item_id FROM items WHERE {cond} ORDER BY rowid", args)]

    def item_values(self, key: str) -> dict[str, Any] | None:
        """{item_id: value} of one metadata key, for the items that have it (the value as
        :meth:`items` gives it: JSON text read back); ``None`` for a key this cannot read
        directly (a core column, a name with a quote or backslash): use :meth:`items`."""
        import json

        if key in ITEM_CORE or key == "content_hash" or any(c in key for c in '"\\'):
            return None
        path = f'$."{key}"'
        out: dict[str, Any] = {}
        rows = self.conn.execute(
            "SELECT item_id, json_type(meta, ?1), meta ->> ?1, meta -> ?1 FROM items"
            " WHERE json_type(meta, ?1) IS NOT NULL",
            (path,),
        )
        for item_id, kind, text, raw in rows:
            out[item_id] = text if kind == "text" else json.loads(raw)
        return out

    def rating_history(self) -> pd.DataFrame:
        import pandas as pd

        cur = self.conn.execute(
            "SELECT item_id, rater_id, rater_kind, rubric, rubric_hash, trial, label, value, status,"
            " rationale, created_at, source, superseded_at FROM rating_history ORDER BY superseded_at")
        return pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])

    def raters(self, rubric: Any = None) -> pd.DataFrame:
        """One row per rater: kind, number of ratings, abstentions, errors."""
        from judgekit.store.records import raters_table

        return raters_table(self.ratings(rubric=rubric))

    def stale_rubric_hashes(self, rubric: Any) -> list[str]:
        """Hashes of older edits of ``rubric`` that still have ratings in the store."""
        rows = self.conn.execute(
            "SELECT DISTINCT rubric_hash FROM ratings WHERE rubric = ? AND rubric_hash != ?",
            (rubric.id, rubric.hash),
        )
        return [r[0] for r in rows]

    # ----------------------------------------------------------------- samples
    def sample_names(self) -> list[str]:
        """Names of the samples recorded in the store, sorted."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT sample FROM samples ORDER BY sample")]

    def has_sample(self, name: str) -> bool:
        """Whether a sample of that name is recorded."""
        row = self.conn.execute("SELECT 1 FROM samples WHERE sample = ? LIMIT 1", (name,)).fetchone()
        return row is not None

    def put_sample(self, name: str, rows: Iterable[SampleRow]) -> None:
        """Record sample ``name`` as ``rows``, replacing what was recorded under that name, in one
        transaction. Whether an existing sample may be replaced is the caller's decision."""
        now = time.time()
        values = [(name, r.item_id, r.reason, r.stratum, r.weight, r.overlap, now) for r in rows]
        with self.transaction() as conn:
            conn.execute("DELETE FROM samples WHERE sample = ?", (name,))
            conn.executemany(
                "INSERT INTO samples (sample, item_id, reason, stratum, weight, overlap, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )

    def sample_rows(self, name: str) -> list[SampleRow]:
        """The rows of sample ``name`` in the order they were recorded (none if there is none)."""
        sql = (
            "SELECT item_id, reason, stratum, weight, overlap FROM samples WHERE sample = ?"
            " ORDER BY rowid"
        )
        return [SampleRow(*r) for r in self.conn.execute(sql, (name,))]

    # ----------------------------------------------------------------- helpers
    def _select_in(
        self, sql: str, values: list[str], chunk: int = MAX_SQL_VARIABLES
    ) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for i in range(0, len(values), chunk):
            part = values[i : i + chunk]
            out.extend(self.conn.execute(sql.format(",".join("?" * len(part))), part))
        return out


# Whether a store holds ratings of a kind under a rubric: one indexed look-up, for the commands
# that should say so before they report on nothing (``agree``, ``gate``, ``report``).



def has_ratings(store: Any, rubric_id: str, rubric_hash: str | None, kind: str) -> bool:
    """True when ``store`` has at least one rating by a rater of ``kind`` (``judge``, ``human``,
    ``reference``) under ``rubric_id`` (and ``rubric_hash`` when given). A store without a
    connection (a view over one) counts as having them: nothing is claimed about it."""
    conn = getattr(store, "conn", None)
    if conn is None:
        return True
    sql = "SELECT 1 FROM ratings WHERE rubric = ? AND rater_kind = ?"
    args: list[Any] = [rubric_id, kind]
    if rubric_hash:
        sql += " AND rubric_hash = ?"
        args.append(rubric_hash)
    return conn.execute(sql + " LIMIT 1", args).fetchone() is not None
