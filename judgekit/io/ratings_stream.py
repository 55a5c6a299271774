"""The streamed import of the usual ratings file: a long-format CSV read, validated and written
in chunks of :data:`CHUNK_ROWS` rows inside the import's one transaction, so memory is bounded by
the chunk, not the file.

:func:`judgekit.io.ratings.import_ratings` tries it first for a long CSV without options that
reshape it (no ``--map``, ``--id-from``, ``--items``, ``--id-prefix``; no ``value``, ``rubric``,
``rubric_hash`` or ``messages`` column). It stores exactly what the whole-file path
(:func:`judgekit.io.tables.read_table` + :func:`judgekit.io.ratings.prepare_ratings` +
:meth:`Store.put_items` / :meth:`Store.put_ratings`) stores for the same file, and checks the same
things; a file it does not read (a record over several lines, a short row, a header judgekit
refuses) or any problem (a label not in the rubric, a bad id, a duplicate rating, an item with two
sets of metadata, ...) raises :class:`~judgekit.store.stream.StreamFallback`: the caller rolls the
transaction back and imports the file with the whole-file path, which names the problem in its
usual one sentence (file and line) — so the messages are the whole-file path's, word for word.

Validation is by column and by distinct value (a million ratings hold a handful of rater ids,
kinds and labels): each distinct label is looked up in the rubric once, each distinct id checked
once; rows are built with ``zip`` and written with ``executemany`` of tuples.
"""

from __future__ import annotations

import gc
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.core.values import (
    as_timestamp,
    as_trial,
    id_problem,
    invisible_char,
    nfc,
    plain_number,
)
from judgekit.errors import JudgekitError
from judgekit.io.csv_fast import CsvChunks, NotUsual
from judgekit.rubric.model import Rubric
from judgekit.store.database import Store
from judgekit.store.import_digest import record_import, store_state
from judgekit.store.provenance import import_id
from judgekit.store.rating_input import RESERVED_ITEM_COLUMNS, label_code
from judgekit.store.schema import RATER_KINDS, STATUSES, WriteCounts
from judgekit.store.stream import StreamFallback, StreamWriter

#: rows read, checked and written at a time
CHUNK_ROWS = 50_000
#: distinct raw labels, trials and times kept from one chunk to the next (past it, forgotten)
_MAX_CACHED = 10_000
#: rating fields of a long file (every other column but item_id is item metadata or text)
_RATING_FIELDS = ("rater_id", "rater_kind", "label", "trial", "status", "rationale", "created_at")
#: files with more columns go to the whole-file path (SQLite's limits: an expression of one term
#: per item column in :class:`StreamWriter`, at most 2,000 columns in a table)
_MAX_STREAMED_COLUMNS = 500
#: columns the streamed import leaves to the whole-file path
_NOT_STREAMED = frozenset({"value", "rubric", "rubric_hash", "messages", "_row", "confidence",
                           *RESERVED_ITEM_COLUMNS})


@dataclass
class StreamResult:
    """What a streamed import wrote."""

    items: int
    ratings: int
    by_rater: dict[str, dict[str, Any]]
    written: WriteCounts
    #: whether it replaced a stored rating or changed a stored item (other files' digests go)
    replaced: bool


def stream_csv(
    store: Store, path: Path, rubric: Rubric, *, source: str, rater_kind: str, newline: str,
    digest: str | None, chunk_rows: int | None = None,
) -> StreamResult:
    """Import the long CSV at ``path`` in chunks of ``chunk_rows`` rows (default
    :data:`CHUNK_ROWS`), in one transaction of ``store`` (see the module docstring), and record its
    ``digest`` (:mod:`judgekit.store.import_digest`) in the same transaction; :class:`StreamFallback`
    for anything the whole-file path should read or report."""
    if rater_kind not in RATER_KINDS:
        raise StreamFallback
    return _streamed(path, newline, chunk_rows or CHUNK_ROWS,
                     lambda chunks: _stream(store, chunks, rubric, source=source,
                                            rater_kind=rater_kind, digest=digest))


def _stream(store: Store, chunks: CsvChunks, rubric: Rubric, *, source: str, rater_kind: str,
            digest: str | None) -> StreamResult:
    header = chunks.header
    if (any(not name.strip() or id_problem(name, "the column name") for name in header)
            or not {"item_id", "rater_id", "label"} <= set(header) or _NOT_STREAMED & set(header)):
        raise StreamFallback
    at = {name: k for k, name in enumerate(header)}
    item_names = [c for c in header if c != "item_id" and c not in _RATING_FIELDS]
    item_k = [at[c] for c in item_names]
    meta = [c not in ("prompt", "response") for c in item_names]
    numeric = list(meta)  # a metadata column all of whose filled cells are plain numbers so far
    filled = [False] * len(item_names)
    by_rater: dict[str, dict[str, Any]] = {}
    now = time.time()
    chunk_check = _ChunkCheck(rubric, rater_kind=rater_kind, source=source, now=now)
    with _no_gc(), store.transaction() as conn:
        before = store_state(conn)
        writer = StreamWriter(conn, rubric=rubric.id, rubric_hash=rubric.hash, now=now, provenance=import_id(digest),
                              item_columns=item_names, block_rows=chunks.size)
        try:
            for cols in chunks:
                item_ids = cols[at["item_id"]]
                varying, constant, kinds, statuses = chunk_check.ratings(cols, at, item_ids)
                writer.check_raters(kinds)
                writer.add_ratings(varying, constant)
                _count(by_rater, cols[at["rater_id"]], statuses, kinds)
                item_cols = [cols[k] for k in item_k]
                for j, col in enumerate(item_cols):
                    if numeric[j]:
                        distinct = {v for v in set(col) if v is not None}
                        filled[j] = filled[j] or bool(distinct)
                        numeric[j] = all(plain_number(v) is not None for v in distinct)
                items = list(dict.fromkeys(zip(item_ids, *item_cols, strict=True)))
                if len(items) != len(set(item_ids)):  # an item with two sets of metadata
                    raise StreamFallback
                writer.add_items(items)
        except (NotUsual, JudgekitError):
            raise StreamFallback from None
        convert: list[Callable[[Any], Any] | None] = [
            _plain if meta[j] and numeric[j] and filled[j] else None for j in range(len(item_names))
        ]
        return _finish(writer, convert, by_rater, conn, digest, before)


def stream_wide_csv(
    store: Store, path: Path, rubric: Rubric, *, source: str, groups: Sequence[tuple[str, Mapping[str, str]]],
    newline: str, digest: str | None,
) -> StreamResult:
    """Import the wide CSV at ``path`` (one row per item, one column per rater: ``groups`` is
    ``[(kind, {rater: column}), ...]`` for humans, judges and the reference, as
    :func:`judgekit.store.data.wide_to_long` takes them) without pandas, storing exactly what the
    whole-file path stores: ratings in its order (rater by rater, each in file order; an empty or
    blank cell is "not rated"), every row's item. The file is read whole (a wide file holds one
    row per item) in one transaction; any problem or any column the whole-file path treats
    specially raises :class:`StreamFallback`, as :func:`stream_csv` does."""
    return _streamed(path, newline, CHUNK_ROWS,
                     lambda chunks: _stream_wide(store, chunks, rubric, source=source,
                                                 groups=groups, digest=digest))


def _streamed(path: Path, newline: str, chunk_rows: int,
              stream: Callable[[CsvChunks], StreamResult]) -> StreamResult:
    """``stream`` over the file's chunks; a file the chunked reader cannot take (unusual CSV,
    too many columns) or a statement SQLite cannot take raises :class:`StreamFallback`."""
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        chunks = CsvChunks(path, sep, newline, chunk_rows)
    except (NotUsual, OSError):
        raise StreamFallback from None
    with chunks:
        if len(chunks.header) > _MAX_STREAMED_COLUMNS:
            raise StreamFallback
        try:
            return stream(chunks)
        except sqlite3.Error:  # a statement of this path SQLite cannot take: rolled back
            raise StreamFallback from None


def _stream_wide(store: Store, chunks: CsvChunks, rubric: Rubric, *, source: str,
                 groups: Sequence[tuple[str, Mapping[str, str]]], digest: str | None) -> StreamResult:
    header = chunks.header
    label_cols = [c for _, m in groups for c in m.values()]
    raters = [r for _, m in groups for r in m]
    if (any(not name.strip() or id_problem(name, "the column name") for name in header)
            or "item_id" not in header or not set(label_cols) <= set(header)
            or (_NOT_STREAMED | set(_RATING_FIELDS)) & set(header)
            or not raters or len(set(raters)) != len(raters)
            or any(not isinstance(r, str) or id_problem(r, "rater id") for r in raters)
            or any(k not in RATER_KINDS for k, _ in groups)):
        raise StreamFallback
    _check_ids(raters)
    at = {name: k for k, name in enumerate(header)}
    item_names = [c for c in header if c != "item_id" and c not in label_cols]
    columns: list[list[Any]] = [[] for _ in header]
    try:
        for chunk in chunks:
            for k, cells in enumerate(chunk):
                columns[k].extend(cells)
    except NotUsual:
        raise StreamFallback from None
    item_ids = columns[at["item_id"]]
    if None in item_ids or len(set(item_ids)) != len(item_ids):  # an item on several rows
        raise StreamFallback
    _check_ids(item_ids)
    # the long rows of judgekit.store.data.wide_to_long: rater by rater, rated cells in file order
    long_items: list[Any] = []
    long_raters: list[str] = []
    long_kinds: list[str] = []
    long_labels: list[Any] = []
    for kind, mapping in groups:
        for rater, col in mapping.items():
            labels = columns[at[col]]
            rated = [i for i, v in enumerate(labels) if v is not None and v.strip()]
            long_items += [item_ids[i] for i in rated]
            long_labels += [labels[i] for i in rated]
            long_raters += [rater] * len(rated)
            long_kinds += [kind] * len(rated)
    if not long_items:
        raise StreamFallback
    long_at = {"item_id": 0, "rater_id": 1, "rater_kind": 2, "label": 3}
    long_cols = [tuple(long_items), tuple(long_raters), tuple(long_kinds), tuple(long_labels)]
    item_cols = [columns[at[c]] for c in item_names]
    meta = [c not in ("prompt", "response") for c in item_names]
    convert: list[Callable[[Any], Any] | None] = []
    for j, values in enumerate(item_cols):
        distinct = {v for v in set(values) if v is not None}
        numeric = meta[j] and bool(distinct) and all(plain_number(v) is not None for v in distinct)
        convert.append(_plain if numeric else None)
    by_rater: dict[str, dict[str, Any]] = {}
    now = time.time()
    check = _ChunkCheck(rubric, rater_kind="human", source=source, now=now)
    with _no_gc(), store.transaction() as conn:
        before = store_state(conn)
        writer = StreamWriter(conn, rubric=rubric.id, rubric_hash=rubric.hash, now=now, provenance=import_id(digest),
                              item_columns=item_names)
        try:
            varying, constant, kinds, statuses = check.ratings(long_cols, long_at, long_cols[0])
            writer.check_raters(kinds)
            writer.add_ratings(varying, constant)
            _count(by_rater, long_cols[1], statuses, kinds)
            writer.add_items(zip(item_ids, *item_cols, strict=True))
        except (NotUsual, JudgekitError):
            raise StreamFallback from None
        return _finish(writer, convert, by_rater, conn, digest, before)


def _finish(writer: StreamWriter, convert: list[Callable[[Any], Any] | None], by_rater: dict[str, dict[str, Any]],
            conn: Any, digest: str | None, before: Any) -> StreamResult:
    """Write what the chunks left (:meth:`StreamWriter.finish`) and record the import's digest in
    the same transaction; the result of the streamed import."""
    written, replaced = writer.finish(convert)
    result = StreamResult(items=writer.n_items, ratings=writer.n_ratings, by_rater=by_rater,
                          written=written, replaced=replaced)
    record_import(conn, digest, {"items": result.items, "ratings": result.ratings,
                                 "by_rater": by_rater, "notes": []},
                  before=before, keep_others=not replaced)
    return result


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused: a chunk holds some 100,000 new tuples and lists (none
    in a cycle), and each collection walked them all (a third of the time of reading a chunk)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _plain(v: Any) -> Any:
    return plain_number(v)


def _count(by_rater: dict[str, dict[str, Any]], raters: Sequence[Any], statuses: list[str] | None,
           kinds: dict[str, str]) -> None:
    """Add a chunk's ratings to ``{rater: {kind, n, abstain, error}}`` (first appearance order)."""
    for rater, n in Counter(raters).items():
        c = by_rater.setdefault(rater, {"kind": kinds[rater], "n": 0, "abstain": 0, "error": 0})
        c["n"] += n
    if statuses is not None:
        for (rater, status), n in Counter(zip(raters, statuses, strict=True)).items():
            if status != "ok":
                by_rater[rater][status] += n


class _ChunkCheck:
    """The checks and normalisation of :func:`judgekit.store.data.normalise_ratings`, by column and
    distinct value; any problem raises :class:`StreamFallback` (the whole-file path reports it)."""

    def __init__(self, rubric: Rubric, *, rater_kind: str, source: str, now: float) -> None:
        self.rubric, self.default_kind, self.source, self.now = rubric, rater_kind, source, now
        self.codes: dict[Any, str | None] = {}
        self.values: dict[str | None, float | None] = {None: None}
        self.trials: dict[Any, int] = {None: 0}
        self.times: dict[Any, float] = {None: now}

    def ratings(self, cols: list[tuple[Any, ...]], at: dict[str, int], item_ids: Sequence[Any]
                ) -> tuple[dict[str, Sequence[Any]], dict[str, Any], dict[str, str], list[str] | None]:
        """The chunk's ratings as columns (:data:`judgekit.store.bulk.WRITE_COLUMNS`): those that
        vary and those with one value for all; its ``{rater: kind}`` and its statuses (``None``:
        all ok)."""
        n = len(item_ids)
        rater_ids = cols[at["rater_id"]]
        if None in item_ids or None in rater_ids:
            raise StreamFallback
        _check_ids(item_ids)
        _check_ids(rater_ids)
        varying: dict[str, Sequence[Any]] = {"item_id": item_ids, "rater_id": rater_ids}
        constant: dict[str, Any] = {"rubric": self.rubric.id, "rubric_hash": self.rubric.hash,
                                    "source": self.source, "call_key": None}
        if "rater_kind" in at:
            kinds = [self.default_kind if k is None else k for k in cols[at["rater_kind"]]]
            if not set(kinds) <= set(RATER_KINDS):
                raise StreamFallback
            pairs = set(zip(rater_ids, kinds, strict=True))
            kind_of = dict(pairs)
            if len(kind_of) != len(pairs):  # a rater with two kinds
                raise StreamFallback
            varying["rater_kind"] = kinds
        else:
            kinds = [self.default_kind] * n
            kind_of = dict.fromkeys(set(rater_ids), self.default_kind)
            constant["rater_kind"] = self.default_kind
        raw = cols[at["label"]]
        for v in set(raw) - self.codes.keys():
            self.codes[v] = label_code(self.rubric, v)
        codes = list(map(self.codes.__getitem__, raw))
        statuses: list[str] | None = None
        rationales: list[Any] | None = list(cols[at["rationale"]]) if "rationale" in at else None
        if "status" in at:
            statuses = ["ok" if s is None else s for s in cols[at["status"]]]
            if not set(statuses) <= set(STATUSES):
                raise StreamFallback
        if statuses is not None or None in codes:
            statuses = statuses or ["ok"] * n
            rationales = rationales or [None] * n
            for i, code in enumerate(codes):
                if statuses[i] != "ok":
                    codes[i] = None
                elif code is None:
                    if kinds[i] != "judge":
                        raise StreamFallback  # a label not in the rubric
                    statuses[i] = "abstain"
                    rationales[i] = f"unparseable judge output: {(raw[i] or '')[:500]}"
            if all(s == "ok" for s in statuses):
                statuses = None
        varying["label"] = codes
        for c in set(codes) - self.values.keys():
            v = self.rubric.values.get(c)  # type: ignore[arg-type]
            self.values[c] = None if v is None else float(v)
        varying["value"] = list(map(self.values.__getitem__, codes))
        if "trial" in at:
            col = cols[at["trial"]]
            for v in set(col) - self.trials.keys():
                self.trials[v] = as_trial(v, "")
            varying["trial"] = list(map(self.trials.__getitem__, col))
        else:
            constant["trial"] = 0
        if statuses is None:
            constant["status"] = "ok"
        else:
            varying["status"] = statuses
        if rationales is None:
            constant["rationale"] = None
        else:
            varying["rationale"] = rationales
        if "created_at" in at:
            col = cols[at["created_at"]]
            for v in set(col) - self.times.keys():
                self.times[v] = as_timestamp(v, "", self.now)
            varying["created_at"] = list(map(self.times.__getitem__, col))
        else:
            constant["created_at"] = self.now
        self._bound()
        return varying, constant, kind_of, statuses

    def _bound(self) -> None:
        """Forget the cached raw values once there are many (a time or a trial per row, free
        judge output as labels): memory stays the chunk's, not the file's distinct values."""
        if len(self.codes) > _MAX_CACHED:
            self.codes = {}
        if len(self.trials) > _MAX_CACHED:
            self.trials = {None: 0}
        if len(self.times) > _MAX_CACHED:
            self.times = {None: self.now}


#: characters an id may not hold (a superset of :func:`judgekit.core.values.id_problem`'s): any found
#: sends the file to the whole-file path, which names the id
_NOT_IN_ID = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


def _check_ids(ids: Sequence[str]) -> None:
    """Each distinct id once: no control character, no white space at either end (else
    :class:`StreamFallback`)."""
    distinct = set(ids)
    joined = "".join(distinct)
    if _NOT_IN_ID.search(joined) or not all(u == u.strip() for u in distinct):
        raise StreamFallback
    if not joined.isascii() and any(nfc(u) != u or invisible_char(u) for u in distinct):
        raise StreamFallback  # the whole-file path keeps ids in NFC and names an invisible one
