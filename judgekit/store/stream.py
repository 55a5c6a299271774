"""Streamed writes of one import: ratings and items written chunk by chunk inside the import's
one transaction, so memory is bounded by the chunk, not the file.

:class:`StreamWriter` is used by :mod:`judgekit.io.ratings_stream` inside
:meth:`judgekit.store.database.Store.transaction`; nothing is committed until the caller's transaction is,
so a failed import leaves the store exactly as it was. It writes exactly what
:meth:`Store.put_items` and :meth:`Store.put_ratings` write for the same frames:

* **ratings**: a chunk's columns that vary go to a small temporary table and one
  ``INSERT ... SELECT`` writes the chunk, binding the rest (rubric, hash, source, defaults) once.
  While no rating is stored under the import's rubric and hash for any rater of the file, that
  statement writes into ``ratings`` itself (a plain ``INSERT``: a key given twice in the file is
  an ``IntegrityError``, never a silent replacement). Once a rater of the file has
  stored ratings there, the chunks go to a temporary table (keyed on (item, rater, trial), so a
  key given twice is caught there too; the rows already inserted by this import are moved there
  first, keeping the file's order), and one join on the ratings' key at the end copies the
  changed ratings into ``rating_history``, counts new / changed / unchanged and writes them (the
  comparison of :func:`judgekit.store.bulk.write_ratings`);
* **items**: each chunk's items go to a temporary table keyed on ``item_id`` (first appearance
  kept, in file order); an item whose cells differ from an earlier row's is marked. At the end
  they are merged with the stored items (metadata merged, a missing text keeps the stored one,
  as :func:`judgekit.store.records.item_rows` does) and written, except those stored exactly so
  already (their rows, rowids and ``updated_at`` are kept); new items whose cells are all
  metadata (the usual case) by one ``INSERT ... SELECT``, each distinct set of cells made into
  its JSON once.

Anything the store would refuse (a rater stored with another kind, an item stored with another
text, an item with two sets of metadata, a key twice) raises :class:`StreamFallback`: the caller
rolls back and takes the whole-file path, which names the problem in its usual sentence.

Standard library only (no pandas).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from judgekit.store.bulk import WRITE_COLUMNS, merge_incoming, note_label_writes
from judgekit.store.schema import MAX_SQL_VARIABLES, WriteCounts, item_content_hash

_STAGE = "_stream_ratings"
#: distinct item cell sets kept in memory for the one-statement items write; past it, per item
_MAX_META_IDS = 100_000
_ITEMS = "_stream_items"


class StreamFallback(Exception):
    """The streamed import cannot go on (a problem to report, or input it does not read): roll
    back and import the file with the whole-file path."""


class StreamWriter:
    """The writes of one streamed import (see the module docstring). ``item_columns`` are the
    item cells each item tuple holds after ``item_id`` (``prompt``, ``response`` and metadata)."""

    def __init__(self, conn: sqlite3.Connection, *, rubric: str, rubric_hash: str, now: float,
                 item_columns: Sequence[str], block_rows: int = 20_000, provenance: str = "import") -> None:
        self.conn, self.rubric, self.rubric_hash, self.now = conn, rubric, rubric_hash, now
        #: where the ratings come from (:mod:`judgekit.store.provenance`): ``import:`` + the input's digest
        self.provenance = provenance
        #: items read back and written at a time by :meth:`finish` (memory: one block)
        self.block_rows = max(1, min(block_rows, 20_000))
        self.item_columns = list(item_columns)
        self.kinds: dict[str, str] = {}  # rater -> kind, checked against the store
        self.n_items = 0
        self.n_ratings = 0
        #: raters with ratings stored under this rubric and hash before the import
        self.stored_raters = _stored_raters(conn, rubric, rubric_hash)
        self.staged = False
        self._chunk_columns: tuple[str, ...] = ()
        self.first_rowid = (conn.execute("SELECT MAX(rowid) FROM ratings").fetchone()[0] or 0) + 1
        cells = ", ".join(f"c{k}" for k in range(len(self.item_columns)))
        conn.execute(f"DROP TABLE IF EXISTS temp.{_ITEMS}")
        conn.execute(f"CREATE TEMP TABLE {_ITEMS} (item_id TEXT PRIMARY KEY"
                     f"{', ' + cells if cells else ''}, meta_id INTEGER,"
                     " clash INTEGER NOT NULL DEFAULT 0)")
        same = " AND ".join(f"{_ITEMS}.c{k} IS excluded.c{k}"
                            for k in range(len(self.item_columns))) or "1 = 1"
        marks = ", ".join("?" * (len(self.item_columns) + 2))
        self._item_sql = (f"INSERT INTO {_ITEMS} (item_id{', ' + cells if cells else ''}, meta_id) "
                          f"VALUES ({marks}) ON CONFLICT (item_id) DO UPDATE SET clash = 1 "
                          f"WHERE NOT ({same})")
        #: {item cells: id} while every item cell is metadata and there are few distinct ones:
        #: the items are then written by one INSERT ... SELECT (see :meth:`_write_new_items`)
        self._meta_ids: dict[tuple[Any, ...], int] | None = (
            None if {"prompt", "response"} & set(self.item_columns) else {})

    # ------------------------------------------------------------------ chunks
    def check_raters(self, kinds: dict[str, str]) -> None:
        """Raters of a chunk (``{rater: kind}``): a rater keeps one kind in the file and in the
        store (:meth:`Store.put_ratings` refuses another)."""
        new = {r: k for r, k in kinds.items() if r not in self.kinds}
        for rater, kind in kinds.items():
            if self.kinds.get(rater, kind) != kind:
                raise StreamFallback
        if not new:
            return
        raters = list(new)
        for i in range(0, len(raters), MAX_SQL_VARIABLES):
            part = raters[i : i + MAX_SQL_VARIABLES]
            for rater, kind in self.conn.execute(
                f"SELECT DISTINCT rater_id, rater_kind FROM ratings WHERE rater_id IN "
                f"({','.join('?' * len(part))})", part,
            ):
                if kind != new[rater]:
                    raise StreamFallback
        self.kinds.update(new)
        if not self.staged and any(r in self.stored_raters for r in new):
            self._start_staging()

    def add_items(self, items: Iterable[tuple[Any, ...]]) -> None:
        """Items of a chunk, each ``(item_id, *cells)`` (one per item within the chunk)."""
        ids = self._meta_ids
        if ids is None:
            self.conn.executemany(self._item_sql, [(*it, None) for it in items])
            return
        self.conn.executemany(self._item_sql, [(*it, ids.setdefault(it[1:], len(ids))) for it in items])
        if len(ids) > _MAX_META_IDS:
            self._meta_ids = None

    def add_ratings(self, varying: dict[str, Sequence[Any]], constant: dict[str, Any]) -> None:
        """Ratings of a chunk: each of :data:`WRITE_COLUMNS` either a column in ``varying`` (one
        value per rating) or one value for all in ``constant``. The varying columns go through a
        temporary table and one ``INSERT ... SELECT`` writes the chunk, the constants bound
        once (binding every column of every row from Python was a third of the write)."""
        names = tuple(varying)
        if names != self._chunk_columns:
            self.conn.execute("DROP TABLE IF EXISTS temp._stream_chunk")
            self.conn.execute(f"CREATE TEMP TABLE _stream_chunk ({', '.join(names)})")
            self._chunk_columns = names
        self.conn.executemany(
            f"INSERT INTO _stream_chunk ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            zip(*varying.values(), strict=True),
        )
        target = _STAGE if self.staged else "ratings"
        constant = {**constant, "provenance": self.provenance}
        exprs = ", ".join(c if c in varying else "?" for c in WRITE_COLUMNS)
        try:
            cur = self.conn.execute(
                f"INSERT INTO {target} ({', '.join(WRITE_COLUMNS)}) SELECT {exprs} FROM _stream_chunk"
                " ORDER BY rowid",
                [constant[c] for c in WRITE_COLUMNS if c not in varying],
            )
        except sqlite3.IntegrityError:  # a key twice in the file
            raise StreamFallback from None
        self.n_ratings += cur.rowcount
        self.conn.execute("DELETE FROM _stream_chunk")

    def _start_staging(self) -> None:
        """From now on ratings go to the temporary table; the ones this import inserted already
        are moved there first (in their order)."""
        cols = ", ".join(WRITE_COLUMNS)
        self.conn.execute(f"DROP TABLE IF EXISTS temp.{_STAGE}")
        self.conn.execute(f"CREATE TEMP TABLE {_STAGE} ({cols}, UNIQUE (item_id, rater_id, trial))")
        self.conn.execute(f"INSERT INTO {_STAGE} ({cols}) SELECT {cols} FROM ratings "
                          "WHERE rowid >= ? ORDER BY rowid", (self.first_rowid,))
        self.conn.execute("DELETE FROM ratings WHERE rowid >= ?", (self.first_rowid,))
        self.staged = True

    # ------------------------------------------------------------------ end
    def finish(self, convert: Sequence[Callable[[Any], Any] | None]) -> tuple[WriteCounts, bool]:
        """Write the items (each cell through ``convert[k]`` when given) and the staged ratings;
        returns the ratings' counts and whether a stored item or rating was replaced (another
        import's digest then no longer holds)."""
        conn = self.conn
        if conn.execute(f"SELECT 1 FROM {_ITEMS} WHERE clash != 0 LIMIT 1").fetchone():
            raise StreamFallback  # an item with two sets of metadata
        replaced_items = self._write_items(convert)
        note_label_writes(conn, [self.provenance], self.now)
        if self.staged:
            counts = merge_incoming(conn, _STAGE, self.n_ratings, now=self.now)
            conn.execute(f"DROP TABLE temp.{_STAGE}")
        else:
            counts = WriteCounts(self.n_ratings, 0, 0)
        conn.execute(f"DROP TABLE temp.{_ITEMS}")
        conn.execute("DROP TABLE IF EXISTS temp._stream_chunk")
        return counts, replaced_items or counts.changed + counts.unchanged > 0

    def _write_items(self, convert: Sequence[Callable[[Any], Any] | None]) -> bool:
        """Merge the staged items with the stored ones and write them; whether a stored item's
        row changed."""
        conn = self.conn
        names = self.item_columns
        meta_k = [k for k, c in enumerate(names) if c not in ("prompt", "response")]
        k_prompt = names.index("prompt") if "prompt" in names else None
        k_response = names.index("response") if "response" in names else None
        overlap = conn.execute(
            f"SELECT COUNT(*) FROM {_ITEMS} s JOIN items i ON i.item_id = s.item_id").fetchone()[0]
        if not overlap and self._meta_ids is not None:
            self._write_new_items(convert)
            return False
        cells = "".join(f", c{k}" for k in range(len(names)))
        sql = f"SELECT item_id{cells} FROM {_ITEMS} ORDER BY rowid"
        if overlap:
            sql = (f"SELECT s.item_id{''.join(f', s.c{k}' for k in range(len(names)))}, i.prompt,"
                   f" i.messages, i.response, i.content_hash, i.meta FROM {_ITEMS} s"
                   " LEFT JOIN items i ON i.item_id = s.item_id ORDER BY s.rowid")
        meta_text: dict[tuple[Any, ...], str] = {}
        hashes: dict[tuple[Any, Any, Any], str] = {}
        replaced = False
        write = conn.cursor()
        read = conn.execute(sql)
        insert = ("INSERT OR REPLACE INTO items (item_id, prompt, messages, response, content_hash,"
                  " meta, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
        while block := read.fetchmany(self.block_rows):
            out = []
            hashes.clear()  # the texts of one block are kept, not every item's
            meta_text.clear()
            for row in block:
                values = [row[1 + k] if f is None or row[1 + k] is None else f(row[1 + k])
                          for k, f in enumerate(convert)]
                prompt = None if k_prompt is None else values[k_prompt]
                response = None if k_response is None else values[k_response]
                messages = None
                meta_key = tuple(values[k] for k in meta_k)
                old = row[1 + len(names):] if overlap and row[1 + len(names) + 4] is not None else None
                if old is None:
                    meta = meta_text.get(meta_key)
                    if meta is None:
                        meta = meta_text[meta_key] = _meta_json(
                            {names[k]: values[k] for k in meta_k if values[k] is not None})
                else:
                    old_prompt, old_messages, old_response, old_hash, old_meta = old
                    if response is not None and old_response is not None and item_content_hash(
                            prompt, None, response) != old_hash:
                        raise StreamFallback  # another text under a stored id
                    merged = json.loads(old_meta)
                    merged.update({names[k]: values[k] for k in meta_k if values[k] is not None})
                    meta = _meta_json(merged)
                    prompt = old_prompt if prompt is None else prompt
                    messages = old_messages
                    response = old_response if response is None else response
                key = (prompt, messages, response)
                content_hash = hashes.get(key)
                if content_hash is None:
                    content_hash = hashes[key] = item_content_hash(prompt, messages, response)
                if old is not None:
                    if any(t is not None for t in old[:3]) and content_hash != item_content_hash(*old[:3]):
                        raise StreamFallback  # put_items refuses another text
                    if (prompt, messages, response, meta) == (old[0], old[1], old[2], old[4]):
                        self.n_items += 1
                        continue  # stored exactly so already: not rewritten (rowid kept)
                    replaced = True
                out.append((row[0], prompt, messages, response, content_hash, meta, self.now))
            write.executemany(insert, out)
            self.n_items += len(out)
        return replaced


    def _write_new_items(self, convert: Sequence[Callable[[Any], Any] | None]) -> None:
        """Items none of which is stored, all of whose cells are metadata: each distinct set of
        cells made its JSON once, and one ``INSERT ... SELECT`` writes them in file order."""
        assert self._meta_ids is not None
        names = self.item_columns
        self.conn.execute("DROP TABLE IF EXISTS temp._stream_meta")
        self.conn.execute("CREATE TEMP TABLE _stream_meta (id INTEGER PRIMARY KEY, meta TEXT)")
        rows = []
        for cells, mid in self._meta_ids.items():
            values = [v if f is None or v is None else f(v) for v, f in zip(cells, convert, strict=True)]
            rows.append((mid, _meta_json({n: v for n, v in zip(names, values, strict=True)
                                          if v is not None})))
        self.conn.executemany("INSERT INTO _stream_meta VALUES (?, ?)", rows)
        cur = self.conn.execute(
            "INSERT OR REPLACE INTO items (item_id, prompt, messages, response, content_hash, meta,"
            f" updated_at) SELECT s.item_id, NULL, NULL, NULL, ?, m.meta, ? FROM {_ITEMS} s"
            " JOIN _stream_meta m ON m.id = s.meta_id ORDER BY s.rowid",
            (item_content_hash(None, None, None), self.now),
        )
        self.n_items += cur.rowcount
        self.conn.execute("DROP TABLE temp._stream_meta")


def item_snapshot(conn: sqlite3.Connection, item_ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """``{item_id: (prompt, messages, response, meta)}`` of the stored items among ``item_ids``:
    compared before and after a whole-file import's writes, it tells whether a stored item
    changed (then other files' no-op digests no longer hold)."""
    out: dict[str, tuple[Any, ...]] = {}
    ids = list(dict.fromkeys(item_ids))
    for i in range(0, len(ids), MAX_SQL_VARIABLES):
        part = ids[i : i + MAX_SQL_VARIABLES]
        for row in conn.execute(
            "SELECT item_id, prompt, messages, response, meta FROM items WHERE item_id IN "
            f"({','.join('?' * len(part))})", part,
        ):
            out[row[0]] = row[1:]
    return out


def _meta_json(meta: dict[str, Any]) -> str:
    return json.dumps(meta, ensure_ascii=False, sort_keys=True)


def _stored_raters(conn: sqlite3.Connection, rubric: str, rubric_hash: str) -> set[str]:
    """The raters with a rating under (rubric, rubric_hash): one index seek per rater."""
    out: set[str] = set()
    last = ""
    while True:
        row = conn.execute(
            "SELECT MIN(rater_id) FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id > ?",
            (rubric, rubric_hash, last),
        ).fetchone()
        if row is None or row[0] is None:
            return out
        last = row[0]
        out.add(last)
