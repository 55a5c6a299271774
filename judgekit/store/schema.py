"""The store's shared names: the schema (as migrations), rating columns and key, rater kinds,
statuses, item core columns, the item content hash and the one test for a missing value.

The bottom layer of judgekit: standard library only (no pandas), imported by :mod:`judgekit.store.database`
and :mod:`judgekit.store.data` alike. Schema changes are named, add-only migrations recorded in the
store's ``migrations`` table (the habit of simonw/llm): append to :data:`MIGRATIONS`, never edit an
applied one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from judgekit.core.values import is_missing as is_missing  # re-exported: its old home

#: columns of the ratings table as returned by :meth:`judgekit.store.database.Store.ratings` (the long format).
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
#: what identifies a rating: a rating with the same key replaces the stored one.
RATING_KEY = ["item_id", "rater_id", "rubric", "rubric_hash", "trial"]
RATER_KINDS = ("human", "judge", "reference")
STATUSES = ("ok", "abstain", "error")
#: the item columns stored as columns (every other item column is metadata, kept as JSON).
ITEM_CORE = ["item_id", "prompt", "messages", "response"]

#: values bound in one statement (``IN (?, ?, ...)``, one ``executemany`` row): below SQLite's
#: smallest default limit on host parameters (999), so every build of SQLite accepts it.
MAX_SQL_VARIABLES = 900


def _counted_writes(*tables: str) -> str:
    """The triggers that count every UPDATE and DELETE of the rows of ``tables`` in store_writes."""
    return "".join(
        f"CREATE TRIGGER {table}_{op.lower()}_counted AFTER {op} ON {table}\n"
        "            BEGIN UPDATE store_writes SET n = n + 1; END;\n        "
        for table in tables
        for op in ("UPDATE", "DELETE")
    )


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
    (
        "005_call_leases",
        """
        -- claims of concurrent `judgekit judge` runs (owned by judgekit.store.calls) on a pending call
        -- key or on a submitted batch: a call is sent only by the run that holds its live lease
        CREATE TABLE call_leases (
            key TEXT PRIMARY KEY,        -- a call key, or "batch:" + a batch id
            owner TEXT NOT NULL,         -- the run: host (and pid namespace), pid, random token
            expires_at REAL NOT NULL     -- unix time, renewed while the run is alive
        );
        CREATE INDEX call_leases_by_owner ON call_leases (owner);
        """,
    ),
    (
        "006_verdicts",
        """
        -- the canonical digest of every verdict `judgekit gate` wrote on this store (owned by
        -- judgekit.verdict.log): a verdict whose digest is not here was edited or made elsewhere
        CREATE TABLE verdicts (
            digest TEXT PRIMARY KEY,     -- sha256 of the verdict's canonical JSON
            rubric TEXT NOT NULL,        -- the rubric id it is about
            judges TEXT NOT NULL,        -- JSON list of the judge ids it covers
            created_at TEXT NOT NULL     -- the verdict's created_at
        );
        """,
    ),
    (
        "007_import_digests",
        """
        -- the last import of a file (owned by judgekit.store.import_digest): re-importing the same
        -- bytes with the same options into a store unchanged since is a no-op it can skip
        CREATE TABLE import_digests (
            digest TEXT PRIMARY KEY,     -- sha256 of the file(s), the rubric hash and the options
            state TEXT NOT NULL,         -- the ratings/items/history tables' state after it
            summary TEXT NOT NULL,       -- JSON: what the import reported (items, ratings, raters)
            created_at REAL NOT NULL
        );
        """,
    ),
    (
        "008_ratings_checks_or",
        """
        -- the same ratings table with its two CHECKs written as ORs: SQLite evaluates a CHECK
        -- (x IN ('a', 'b', 'c')) by building the list anew for every row written, which doubled
        -- the cost of writing a rating (issue 13)  ---  same columns, key, index and rowids
        CREATE TABLE ratings_008 (
            item_id TEXT NOT NULL,
            rater_id TEXT NOT NULL,
            rater_kind TEXT NOT NULL
                CHECK (rater_kind = 'human' OR rater_kind = 'judge' OR rater_kind = 'reference'),
            rubric TEXT NOT NULL,        -- name@version
            rubric_hash TEXT NOT NULL,
            label TEXT,                  -- NULL when status is abstain or error
            value REAL,
            trial INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ok'
                CHECK (status = 'ok' OR status = 'abstain' OR status = 'error'),
            rationale TEXT,
            created_at REAL NOT NULL,
            source TEXT,
            call_key TEXT,               -- the judge call (calls.key) a panel rating came from
            PRIMARY KEY (item_id, rater_id, rubric, rubric_hash, trial)
        );
        INSERT INTO ratings_008 (rowid, item_id, rater_id, rater_kind, rubric, rubric_hash, label,
                                 value, trial, status, rationale, created_at, source, call_key)
            SELECT rowid, item_id, rater_id, rater_kind, rubric, rubric_hash, label, value, trial,
                   status, rationale, created_at, source, call_key
            FROM ratings ORDER BY rowid;
        DROP TABLE ratings;
        ALTER TABLE ratings_008 RENAME TO ratings;
        CREATE INDEX ratings_by_rubric ON ratings (rubric, rubric_hash, rater_id);
        """,
    ),
    (
        "009_write_counter",
        """
        -- every UPDATE or DELETE of a row of ratings, items or rating_history, by any tool,
        -- counts here; the no-op import's state token (judgekit.store.import_digest) holds the count,
        -- so another tool's plain UPDATE ratings SET label = ... ends every no-op digest (an
        -- INSERT, and judgekit's INSERT OR REPLACE, already move the tables' row count or latest
        -- rowid, and the rows REPLACE removes fire no DELETE trigger: recursive_triggers is off).
        -- A migration that rebuilds one of these tables must create its two triggers again.
        CREATE TABLE store_writes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
        INSERT INTO store_writes (id, n) VALUES (1, 0);
        """
        + _counted_writes("ratings", "items", "rating_history"),
    ),
    (
        "010_call_confidence",
        """
        -- the probability of a call's label from the provider's token log-probabilities
        -- (judgekit.judges.record), read as a judgment's confidence by selective judging
        ALTER TABLE calls ADD COLUMN confidence REAL;
        """,
    ),
    (
        "011_rating_provenance",
        """
        -- where a rating came from (issue 20): 'panel' for a judge panel's rating (its call is
        -- call_key, the calls table says which judge identity made it), 'import:<id>' for the
        -- ratings of one import (the id: the input's digest, judgekit.store.import_digest), NULL
        -- for a rating written before this migration. A verdict records the provenance of each
        -- judge's ratings, so ratings imported under a gated judge's name after the gate are told
        -- apart (judgekit.store.provenance)
        ALTER TABLE ratings ADD COLUMN provenance TEXT;
        -- the store's state (judgekit.store.import_digest.store_state) when judgekit last found
        -- every rating and item well formed (judgekit.store.integrity): unchanged, not scanned again
        CREATE TABLE store_checks (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL);
        """,
    ),
    (
        "012_rating_confidence",
        """
        -- a judge's confidence in its label, imported with the rating (a 'confidence' column of
        -- a long ratings file: external judgments such as a paper's published ones), read as the
        -- judgment's confidence by selective judging (source: imported). Keyed as the rating is;
        -- the confidence of a judge's own calls stays in calls.confidence
        CREATE TABLE rating_confidence (
            item_id TEXT NOT NULL,
            rater_id TEXT NOT NULL,
            rubric TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            trial INTEGER NOT NULL,
            confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
            PRIMARY KEY (item_id, rater_id, rubric, rubric_hash, trial)
        );
        """,
    ),
    (
        "013_task_keys",
        """
        -- the opaque id a Label Studio task carries in place of the item id (judgekit.store.task_keys):
        -- annotators who open the Data Manager see a random key, never the item id (which may name
        -- the model, e.g. gpt4:p128); pull maps the key back through this table
        CREATE TABLE task_keys (
            task_key TEXT PRIMARY KEY,
            item_id TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL
        );
        """,
    ),
    (
        "014_rating_confidence_follows",
        """
        -- a confidence belongs to the label it was imported with: any later write of the rating
        -- (an import without a confidence, a judge's own run) drops it; an import that brings one
        -- stores it after writing the rating
        CREATE TRIGGER rating_confidence_insert_dropped AFTER INSERT ON ratings
            BEGIN DELETE FROM rating_confidence WHERE item_id = NEW.item_id AND rater_id = NEW.rater_id
                AND rubric = NEW.rubric AND rubric_hash = NEW.rubric_hash AND trial = NEW.trial; END;
        CREATE TRIGGER rating_confidence_update_dropped AFTER UPDATE ON ratings
            BEGIN DELETE FROM rating_confidence WHERE item_id = OLD.item_id AND rater_id = OLD.rater_id
                AND rubric = OLD.rubric AND rubric_hash = OLD.rubric_hash AND trial = OLD.trial; END;
        """,
    ),
    (
        "015_label_writes",
        """
        -- when each write of ratings (its provenance group: one import, the panel) was first stored,
        -- by the store's clock (judgekit.store.arrivals): a rating's created_at may come from the
        -- file, and a rating re-imported unchanged gets a new rowid, so neither says when it arrived
        CREATE TABLE label_writes (
            provenance TEXT PRIMARY KEY,
            stored_at REAL NOT NULL
        );
        """,
    ),
]


def table_names() -> list[str]:
    """The tables the migrations create, in the order they first appear (a table rebuilt under
    a new name, ``ratings_008``, is the one it replaces)."""
    import re

    names: list[str] = []
    for _, sql in MIGRATIONS:
        for m in re.finditer(r"CREATE TABLE (\w+)", sql):
            name = re.sub(r"_\d{3}$", "", m.group(1))
            if name not in names:
                names.append(name)
    return names


def migration_statements(sql: str) -> Iterator[str]:
    """The statements of a migration's script (one of :data:`MIGRATIONS`), split at the ``;``
    that end one: a trigger's body holds ``;`` too (:func:`sqlite3.complete_statement` says where
    a statement ends)."""
    buf = ""
    for piece in sql.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                yield buf
            buf = ""
    if buf.strip(" \t\r\n;"):
        yield buf


# ------------------------------------------------------------------ typed rows
# Not frozen: a frozen dataclass takes twice as long to build, and an import builds one per rating.
@dataclass(slots=True)
class ItemRow:
    """A row of the ``items`` table: ``messages`` and ``meta`` as their JSON text."""

    item_id: str
    prompt: str | None
    messages: str | None
    response: str | None
    content_hash: str
    meta: str
    updated_at: float


@dataclass(slots=True)
class RatingRow:
    """A row of the ``ratings`` table (the fields of :data:`RATING_COLUMNS`, then ``call_key``)."""

    item_id: str
    rater_id: str
    rater_kind: str
    rubric: str
    rubric_hash: str
    label: str | None
    value: float | None
    trial: int
    status: str
    rationale: str | None
    created_at: float
    source: str | None
    #: the judge call (``calls.key``) the rating came from; ``None`` for imported ratings
    call_key: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """The rating's :data:`RATING_KEY`."""
        return (self.item_id, self.rater_id, self.rubric, self.rubric_hash, self.trial)


@dataclass(slots=True)
class JudgeRating:
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


@dataclass(slots=True)
class SampleRow:
    """One chosen item of a recorded sample (a row of the ``samples`` table, without its name)."""

    item_id: str
    #: why it was chosen: random | stratum | disagreement | abstention | unstable | fill
    reason: str
    stratum: str | None
    #: the inverse sampling fraction of the item's cell
    weight: float
    #: 1 if the item is to be rated by at least two annotators, else 0
    overlap: int


def json_value(obj: object) -> Any:
    """numpy scalars and pandas timestamps (a table made from a frame) as JSON values, as
    :func:`judgekit.store.records.item_rows` writes them; neither can be here unless its package was
    imported."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.generic):
        return obj.item()
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _absent(value: Any) -> bool:
    """:func:`is_missing`, a text at once (most cells)."""
    return value is None or (type(value) is not str and is_missing(value))


def merged_texts(rec: Mapping[Any, Any], old: ItemRow | None) -> tuple[str | None, str | None, str | None]:
    """An item's prompt, messages (as JSON text) and response: those of ``rec``, a missing one
    taken from the ``old`` stored row when there is one."""
    prompt = rec.get("prompt")
    messages = rec.get("messages")
    response = rec.get("response")
    if old:
        prompt = old.prompt if _absent(prompt) else prompt
        messages = old.messages if _absent(messages) else messages
        response = old.response if _absent(response) else response
    if not _absent(messages) and not isinstance(messages, str):
        messages = json.dumps(messages, default=json_value, ensure_ascii=False)
    return (None if _absent(prompt) else str(prompt), None if _absent(messages) else messages,
            None if _absent(response) else str(response))


def item_content_hash(prompt: Any, messages: Any, response: Any) -> str:
    """Hash of what a judge sees of an item: the cache key changes when the text changes.

    ``messages`` may be the list or its JSON text; both hash the same (canonical JSON).
    """
    if isinstance(messages, str):
        with contextlib.suppress(json.JSONDecodeError):
            messages = json.loads(messages)
    if messages is not None and not isinstance(messages, str):
        messages = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    blob = json.dumps([prompt, messages, response], ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


# ------------------------------------------------------------------ provenance ids
# (where a rating came from: :mod:`judgekit.store.provenance`)
def import_id(digest: str | None) -> str:
    """The provenance of the ratings of one import whose input digest is ``digest``."""
    return "import" if digest is None else f"import:{digest[:16]}"


def rows_provenance(cols: list[list[Any]]) -> str:
    """``import:`` and a digest of ratings written through the API (columns of
    :data:`judgekit.store.bulk.WRITE_COLUMNS`: item, rater, rubric, hash, label, trial, status;
    each column's JSON text hashed at once)."""
    h = hashlib.sha256()
    for k in (0, 1, 3, 4, 5, 7, 8):
        h.update(json.dumps(cols[k], default=str).encode() + b"\n")
    return f"import:{h.hexdigest()[:16]}"


# ------------------------------------------------------------------ what the store answers
#: what :meth:`judgekit.store.database.Store.put_items` does with another text under a stored item's id
NewText = Literal["refuse", "if_unlabelled", "replace"]


class JudgeRatingKey(NamedTuple):
    """Which judge rating :meth:`judgekit.store.database.Store.retire_judge_ratings` moves to the history."""

    item_id: str
    rater_id: str
    trial: int


class StoredJudgeRating(NamedTuple):
    """What :meth:`judgekit.store.database.Store.judge_rating_calls` tells of one stored judge rating."""

    label: str | None
    status: str
    call_key: str | None


class WriteCounts(NamedTuple):
    """What :meth:`judgekit.store.database.Store.put_ratings` did."""

    new: int
    changed: int
    unchanged: int
