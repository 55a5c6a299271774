"""The SQLite store: items, ratings, judge calls (the cache), rating history, samples.

One file (default ``./judgekit.db``), WAL mode so a panel can commit each result as it arrives
and a killed process loses at most what was in flight. Schema changes are named, add-only
migrations recorded in the ``migrations`` table (the habit of simonw/llm): append to
:data:`MIGRATIONS`, never edit an applied one.

Every write that belongs together goes through :meth:`Store.transaction`, so a failed import
changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError

DEFAULT_STORE = "judgekit.db"

#: columns of the ratings table as returned by :meth:`Store.ratings` (the long format).
RATING_COLUMNS = [
    "item_id",
    "rater_id",
    "rater_kind",
    "rubric",
    "rubric_hash",
    "label",
    "value",
    "trial",
    "status",
    "rationale",
    "created_at",
    "source",
]
RATING_KEY = ["item_id", "rater_id", "rubric", "rubric_hash", "trial"]
RATER_KINDS = ("human", "judge", "reference")
STATUSES = ("ok", "abstain", "error")
ITEM_CORE = ["item_id", "prompt", "messages", "response"]

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_items_ratings",
        """
        CREATE TABLE items (
            item_id TEXT PRIMARY KEY,
            prompt TEXT,
            messages TEXT,          -- JSON list of {role, content}, for multi-turn items
            response TEXT,
            content_hash TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}',   -- JSON object of metadata columns
            updated_at REAL NOT NULL
        );
        CREATE TABLE ratings (
            item_id TEXT NOT NULL,
            rater_id TEXT NOT NULL,
            rater_kind TEXT NOT NULL CHECK (rater_kind IN ('human', 'judge', 'reference')),
            rubric TEXT NOT NULL,        -- name@version
            rubric_hash TEXT NOT NULL,
            label TEXT,                  -- NULL when status is abstain or error
            value REAL,
            trial INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'abstain', 'error')),
            rationale TEXT,
            created_at REAL NOT NULL,
            source TEXT,
            PRIMARY KEY (item_id, rater_id, rubric, rubric_hash, trial)
        );
        CREATE INDEX ratings_by_rubric ON ratings (rubric, rubric_hash, rater_id);
        """,
    ),
    (
        "002_calls_history_samples",
        """
        CREATE TABLE calls (
            key TEXT PRIMARY KEY,        -- hash of (judge spec + params, rubric hash, item hash, trial)
            judge_id TEXT NOT NULL,
            spec TEXT NOT NULL,
            params TEXT NOT NULL DEFAULT '{}',
            rubric TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            item_id TEXT NOT NULL,
            item_hash TEXT NOT NULL,
            trial INTEGER NOT NULL DEFAULT 0,
            raw TEXT,                    -- the raw completion, so a parser change re-parses for free
            status TEXT NOT NULL,
            label TEXT,
            rationale TEXT,
            error TEXT,
            input_tokens INTEGER DEFAULT 0,
            output_tokens INTEGER DEFAULT 0,
            cached_tokens INTEGER DEFAULT 0,
            cost_usd REAL DEFAULT 0,
            latency_s REAL,
            attempts INTEGER DEFAULT 1,
            created_at REAL NOT NULL
        );
        CREATE INDEX calls_by_judge ON calls (judge_id, rubric_hash);
        CREATE TABLE rating_history (
            item_id TEXT NOT NULL,
            rater_id TEXT NOT NULL,
            rater_kind TEXT NOT NULL,
            rubric TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            trial INTEGER NOT NULL,
            label TEXT,
            value REAL,
            status TEXT NOT NULL,
            rationale TEXT,
            created_at REAL NOT NULL,
            source TEXT,
            superseded_at REAL NOT NULL
        );
        CREATE TABLE samples (
            sample TEXT NOT NULL,        -- name of the sample (e.g. the Label Studio project)
            item_id TEXT NOT NULL,
            reason TEXT NOT NULL,        -- random | stratum | disagreement | abstention | unstable
            stratum TEXT,
            weight REAL NOT NULL DEFAULT 1.0,
            overlap INTEGER NOT NULL DEFAULT 0,   -- 1 if to be rated by >= 2 annotators
            created_at REAL NOT NULL,
            PRIMARY KEY (sample, item_id)
        );
        """,
    ),
    (
        "003_judge_batches",
        """
        CREATE TABLE judge_batches (
            batch_id TEXT PRIMARY KEY,   -- the provider's id of a batch of judge calls
            provider TEXT NOT NULL,      -- anthropic | openai
            judge_id TEXT NOT NULL,
            spec TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            keys TEXT NOT NULL,          -- JSON list of the call keys in it (custom_id = key)
            status TEXT NOT NULL,        -- submitted | collected
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX judge_batches_open ON judge_batches (judge_id, status);
        """,
    ),
    (
        "004_rating_call_key",
        """
        -- the call (calls.key) a panel judge's rating came from, so exports attach the tokens and
        -- cost of that very call (NULL for imported ratings)
        ALTER TABLE ratings ADD COLUMN call_key TEXT;
        """,
    ),
]


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _is_missing(v: object) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and v != v:
        return True
    return bool(v is pd.NA or v is pd.NaT)


class WriteCounts(NamedTuple):
    """What :meth:`Store.put_ratings` did."""

    new: int
    changed: int
    unchanged: int


class Store:
    """A judgekit store in one SQLite file.

    >>> store = Store(":memory:")
    >>> store.ratings().empty
    True
    """

    def __init__(self, path: str | Path = DEFAULT_STORE) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            parent = Path(self.path).parent
            if not parent.exists():
                raise JudgekitError(
                    f"Store {self.path}: the folder {parent} does not exist; create it or pass "
                    "another --store path."
                )
        try:
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise JudgekitError(
                f"Store {self.path} is not a judgekit SQLite store ({exc}); pass another --store path."
            ) from None

    # ------------------------------------------------------------------ basics
    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            with self.transaction() as conn:
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All-or-nothing writes: ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error)."""
        if self.conn.in_transaction:  # nested: the outer transaction decides
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # ------------------------------------------------------------------- items
    def put_items(self, items: pd.DataFrame) -> int:
        """Insert or update items (``item_id`` + ``prompt``/``messages``/``response`` + metadata).

        Metadata of an existing item is merged: columns given here overwrite, others stay.
        """
        if items.empty:
            return 0
        from judgekit.data import item_content_hash

        now = time.time()
        meta_cols = [c for c in items.columns if c not in ITEM_CORE]
        existing = {
            r[0]: r[1:]
            for r in self._select_in(
                "SELECT item_id, prompt, messages, response, meta FROM items WHERE item_id IN ({})",
                items["item_id"].astype(str).tolist(),
            )
        }
        rows = []
        for rec in items.to_dict("records"):
            item_id = str(rec["item_id"])
            old = existing.get(item_id)
            meta = json.loads(old[3]) if old else {}
            for c in meta_cols:
                v = rec.get(c)
                if not _is_missing(v):
                    meta[c] = v
            prompt = rec.get("prompt")
            messages = rec.get("messages")
            response = rec.get("response")
            if old:
                prompt = old[0] if _is_missing(prompt) else prompt
                messages = old[1] if _is_missing(messages) else messages
                response = old[2] if _is_missing(response) else response
            if not _is_missing(messages) and not isinstance(messages, str):
                messages = json.dumps(messages, default=_json_default, ensure_ascii=False)
            prompt = None if _is_missing(prompt) else str(prompt)
            messages = None if _is_missing(messages) else messages
            response = None if _is_missing(response) else str(response)
            rows.append(
                (
                    item_id,
                    prompt,
                    messages,
                    response,
                    item_content_hash(prompt, messages, response),
                    json.dumps(meta, default=_json_default, ensure_ascii=False, sort_keys=True),
                    now,
                )
            )
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO items (item_id, prompt, messages, response, content_hash,"
                " meta, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def items(self, item_ids: Sequence[str] | None = None) -> pd.DataFrame:
        """Items as a DataFrame: core columns, ``content_hash`` and one column per metadata key."""
        if item_ids is None:
            rows = list(
                self.conn.execute(
                    "SELECT item_id, prompt, messages, response, content_hash, meta FROM items"
                    " ORDER BY rowid"
                )
            )
        else:
            rows = self._select_in(
                "SELECT item_id, prompt, messages, response, content_hash, meta FROM items"
                " WHERE item_id IN ({}) ORDER BY rowid",
                list(item_ids),
            )
        base = pd.DataFrame(
            [r[:5] for r in rows],
            columns=["item_id", "prompt", "messages", "response", "content_hash"],
        )
        metas = pd.DataFrame([json.loads(r[5]) for r in rows], index=base.index)
        if not metas.empty:
            metas = metas[[c for c in metas.columns if c not in base.columns]]
            base = pd.concat([base, metas], axis=1)
        if not base.empty:
            base["messages"] = [
                json.loads(m) if isinstance(m, str) else None for m in base["messages"]
            ]
        return base

    # ----------------------------------------------------------------- ratings
    def put_ratings(self, ratings: pd.DataFrame, *, keep_history: bool = True) -> WriteCounts:
        """Insert ratings; a rating with the same key replaces the old one.

        The key is (item_id, rater_id, rubric, rubric_hash, trial). The replaced rating is kept
        in ``rating_history`` (e.g. an annotator revising a label in Label Studio). Returns how
        many were new, changed (another label or status) and unchanged (counted only with
        ``keep_history``; otherwise every rating counts as new).
        """
        if ratings.empty:
            return WriteCounts(0, 0, 0)
        df = ratings.copy()
        now = time.time()
        for col, default in (
            ("trial", 0),
            ("status", "ok"),
            ("rationale", None),
            ("created_at", now),
            ("source", None),
            ("value", None),
        ):
            if col not in df.columns:
                df[col] = default
        missing = [c for c in ("item_id", "rater_id", "rater_kind", "rubric", "rubric_hash") if c not in df]
        if missing:
            raise JudgekitError(f"put_ratings: missing columns {missing}.")
        df = df.astype(object).where(pd.notna(df), None)
        records = [
            (
                str(r["item_id"]),
                str(r["rater_id"]),
                r["rater_kind"],
                r["rubric"],
                r["rubric_hash"],
                r["label"],
                None if r["value"] is None else float(r["value"]),
                int(r["trial"]),
                r["status"],
                r["rationale"],
                float(r["created_at"]),
                r["source"],
            )
            for r in df.to_dict("records")
        ]
        with self.transaction() as conn:
            self._check_rater_kinds(conn, df)
            if keep_history:
                conn.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS _incoming (item_id, rater_id, rubric,"
                    " rubric_hash, trial, label, status)"
                )
                conn.execute("DELETE FROM _incoming")
                conn.executemany(
                    "INSERT INTO _incoming VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(r[0], r[1], r[3], r[4], r[7], r[5], r[8]) for r in records],
                )
                # Only a changed label is history; re-importing the same file changes nothing.
                conn.execute(
                    """
                    INSERT INTO rating_history
                    SELECT r.item_id, r.rater_id, r.rater_kind, r.rubric, r.rubric_hash, r.trial,
                           r.label, r.value, r.status, r.rationale, r.created_at, r.source, ?
                    FROM ratings r JOIN _incoming i
                      ON r.item_id = i.item_id AND r.rater_id = i.rater_id
                     AND r.rubric = i.rubric AND r.rubric_hash = i.rubric_hash
                     AND r.trial = i.trial
                    WHERE r.label IS NOT i.label OR r.status IS NOT i.status
                    """,
                    (now,),
                )
                existing, changed = conn.execute(
                    """
                    SELECT COUNT(*), COALESCE(SUM(r.label IS NOT i.label OR r.status IS NOT i.status), 0)
                    FROM ratings r JOIN _incoming i
                      ON r.item_id = i.item_id AND r.rater_id = i.rater_id
                     AND r.rubric = i.rubric AND r.rubric_hash = i.rubric_hash
                     AND r.trial = i.trial
                    """
                ).fetchone()
                counts = WriteCounts(len(records) - existing, changed, existing - changed)
            else:
                counts = WriteCounts(len(records), 0, 0)
            conn.executemany(
                "INSERT OR REPLACE INTO ratings (item_id, rater_id, rater_kind, rubric,"
                " rubric_hash, label, value, trial, status, rationale, created_at, source)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                records,
            )
        return counts

    @staticmethod
    def _check_rater_kinds(conn: sqlite3.Connection, df: pd.DataFrame) -> None:
        """A rater id names one rater: a human and a judge may not share it (one would silently
        replace the other's ratings)."""
        kinds = df.groupby("rater_id")["rater_kind"].unique()
        for rater, ks in kinds.items():
            if len(ks) > 1:
                raise JudgekitError(
                    f"Rater {rater!r} appears as {' and '.join(sorted(map(str, ks)))}; give each rater "
                    "one kind (rename one of them)."
                )
        ids = [str(r) for r in kinds.index]
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            rows = conn.execute(
                f"SELECT DISTINCT rater_id, rater_kind FROM ratings WHERE rater_id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
            for rater, kind in rows:
                new = kinds[rater][0]
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
    ) -> pd.DataFrame:
        """Ratings in long format (:data:`RATING_COLUMNS`).

        ``rubric`` is a :class:`~judgekit.rubric.Rubric` or a rubric name or path (ratings under
        its current hash only, unless ``any_hash``), or a ``name@version`` string (any hash).
        """
        sql = f"SELECT {', '.join(RATING_COLUMNS)} FROM ratings WHERE 1=1"
        args: list[Any] = []
        if isinstance(rubric, str) and "@" not in rubric:
            # a bare name ("restrictiveness") means that rubric as judgekit has it now
            from judgekit.rubric import load_rubric

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
        rows = self.conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return pd.DataFrame(rows, columns=RATING_COLUMNS)

    def rating_history(self) -> pd.DataFrame:
        cur = self.conn.execute("SELECT * FROM rating_history ORDER BY superseded_at")
        return pd.DataFrame(cur.fetchall(), columns=[d[0] for d in cur.description])

    def raters(self, rubric: Any = None) -> pd.DataFrame:
        """One row per rater: kind, number of ratings, abstentions, errors."""
        df = self.ratings(rubric=rubric)
        if df.empty:
            return pd.DataFrame(columns=["rater_id", "rater_kind", "n", "abstain", "error"])
        return (
            df.assign(
                abstain=df["status"].eq("abstain"),
                error=df["status"].eq("error"),
            )
            .groupby(["rater_id", "rater_kind"], sort=False)
            .agg(n=("item_id", "size"), abstain=("abstain", "sum"), error=("error", "sum"))
            .reset_index()
        )

    def stale_rubric_hashes(self, rubric: Any) -> list[str]:
        """Hashes of older edits of ``rubric`` that still have ratings in the store."""
        rows = self.conn.execute(
            "SELECT DISTINCT rubric_hash FROM ratings WHERE rubric = ? AND rubric_hash != ?",
            (rubric.id, rubric.hash),
        )
        return [r[0] for r in rows]

    # ----------------------------------------------------------------- helpers
    def _select_in(self, sql: str, values: list[str], chunk: int = 900) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for i in range(0, len(values), chunk):
            part = values[i : i + chunk]
            out.extend(self.conn.execute(sql.format(",".join("?" * len(part))), part))
        return out

    # --- judge rating writes (panel) ---
    class JudgeRating(NamedTuple):
        """One rating of a panel judge (``rater_kind`` judge; the rubric is given to the write)."""

        item_id: str
        rater_id: str
        label: str | None
        value: float | None
        trial: int
        status: str
        rationale: str | None
        source: str
        call_key: str  #: the call (``calls.key``) the rating was made from

    def write_judge_ratings(
        self, rubric: str, rubric_hash: str, ratings: Sequence[Store.JudgeRating], *, now: float
    ) -> None:
        """Insert or replace judge ratings under ``rubric`` (name@version) and ``rubric_hash``;
        a replaced rating whose label or status changes is kept in the history."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO rating_history SELECT item_id, rater_id, rater_kind, rubric, rubric_hash,"
                " trial, label, value, status, rationale, created_at, source, ? FROM ratings"
                " WHERE item_id = ? AND rater_id = ? AND rubric = ? AND rubric_hash = ? AND trial = ?"
                " AND (label IS NOT ? OR status IS NOT ?)",
                [(now, r.item_id, r.rater_id, rubric, rubric_hash, r.trial, r.label, r.status)
                 for r in ratings],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO ratings (item_id, rater_id, rater_kind, rubric, rubric_hash,"
                " label, value, trial, status, rationale, created_at, source, call_key)"
                " VALUES (?, ?, 'judge', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.item_id, r.rater_id, rubric, rubric_hash, r.label, r.value, r.trial, r.status,
                  r.rationale, now, r.source, r.call_key) for r in ratings],
            )

    def retire_judge_ratings(
        self, rubric: str, rubric_hash: str, keys: Sequence[tuple[str, str, int]], *, now: float
    ) -> None:
        """Move judge ratings, given as ``(item_id, rater_id, trial)``, to the history."""
        where = (" FROM ratings WHERE item_id = ? AND rater_id = ? AND rubric = ? AND rubric_hash = ?"
                 " AND trial = ? AND rater_kind = 'judge'")
        args = [(item_id, rater, rubric, rubric_hash, trial) for item_id, rater, trial in keys]
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO rating_history SELECT item_id, rater_id, rater_kind, rubric, rubric_hash,"
                " trial, label, value, status, rationale, created_at, source, ?" + where,
                [(now, *a) for a in args],
            )
            conn.executemany("DELETE" + where, args)

    def judge_rating_calls(
        self, rater_id: str, rubric: str, rubric_hash: str
    ) -> dict[tuple[str, int], tuple[str | None, str, str | None]]:
        """A judge's stored ratings: ``(item_id, trial) → (label, status, call_key)``."""
        rows = self.conn.execute(
            "SELECT item_id, trial, label, status, call_key FROM ratings WHERE rater_id = ?"
            " AND rubric = ? AND rubric_hash = ? AND rater_kind = 'judge'",
            (rater_id, rubric, rubric_hash),
        )
        return {(iid, trial): (label, status, key) for iid, trial, label, status, key in rows}

    def other_kind_rater(self, rater_ids: Sequence[str]) -> tuple[str, str] | None:
        """The first of ``rater_ids`` that is already a human or reference rater, and its kind."""
        if not rater_ids:
            return None
        row = self.conn.execute(
            "SELECT rater_id, rater_kind FROM ratings WHERE rater_kind != 'judge' AND rater_id IN"
            f" ({','.join('?' * len(rater_ids))}) LIMIT 1",
            list(rater_ids),
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def rating_call_keys(self) -> pd.DataFrame:
        """``item_id, rater_id, rubric, rubric_hash, trial, call_key`` of every rating."""
        import pandas as pd  # here, not at import time: the store's import stays light

        return pd.read_sql_query(
            "SELECT item_id, rater_id, rubric, rubric_hash, trial, call_key FROM ratings", self.conn
        )
