"""Import ratings (human or judge) from CSV / JSONL / Parquet into the store.

Layouts:

* **long** — one row per rating: ``item_id, rater_id, label`` (+ optional ``rater_kind``,
  ``trial``, ``status``, ``rationale``) and any item metadata columns;
* **wide** — one row per item, one column per rater: name them with ``raters`` (humans),
  ``judges`` and ``reference`` (an adjudicated gold label), each ``{"rater_id": "column"}``;
* **Inspect AI logs** (``.eval``, or a ``.json`` log) — the samples are the items and each
  scorer is a judge (see :mod:`judgekit.io.inspect`); ``scorers`` picks some of them.

The usual long CSV is streamed (:mod:`judgekit.io.ratings_stream`: read, validated and written in
chunks, memory bounded by the chunk); anything else is read and validated whole before anything
is written. Either way the write is one transaction: a failed import leaves the store exactly as
it was (and a first import that fails leaves no store file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.core.paths import regular_input
from judgekit.core.values import lines_of, nfc
from judgekit.errors import JudgekitError
from judgekit.io.csv_fast import detect_newline
from judgekit.io.ratings_stream import StreamResult, stream_csv, stream_wide_csv
from judgekit.io.tables import read_table, table_format
from judgekit.rubric.model import Rubric
from judgekit.store.database import Store, WriteCounts
from judgekit.store.import_digest import input_digest, record_import, store_state, unchanged_import
from judgekit.store.provenance import import_id
from judgekit.store.schema import is_missing
from judgekit.store.stream import StreamFallback, item_snapshot

if TYPE_CHECKING:
    import pandas as pd

# pandas (and the frame modules: judgekit.store.data, io.joins, io.mapping) are imported by the
# whole-file path when it runs: the streamed import of a long CSV needs none of them


@dataclass
class ImportSummary:
    """What an import wrote."""

    source: str
    rubric: str
    items: int
    ratings: int
    by_rater: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    written: WriteCounts | None = None

    def lines(self) -> list[str]:
        what = ""
        if self.written is not None:
            w = self.written
            what = f": {w.new} new, {w.changed} changed (old labels kept in the history), {w.unchanged} unchanged"
        out = [f"Imported {self.ratings} ratings of {self.items} items from {self.source} "
               f"under {self.rubric}{what}."]
        for rater, c in self.by_rater.items():
            extra = []
            if c.get("abstain"):
                extra.append(f"{c['abstain']} abstentions")
            if c.get("error"):
                extra.append(f"{c['error']} errors")
            tail = f" ({', '.join(extra)})" if extra else ""
            out.append(f"  {rater} [{c['kind']}]: {c['n']} ratings{tail}")
        return out + self.notes


def prepare_ratings(
    table: pd.DataFrame,
    rubric: Rubric,
    *,
    source: str,
    csv: bool = False,
    raters: Mapping[str, str] | None = None,
    judges: Mapping[str, str] | None = None,
    reference: Mapping[str, str] | None = None,
    rater_kind: str = "human",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate a ratings table: returns (items, ratings) ready for the store."""
    from judgekit.core.values import row_ref
    from judgekit.store.data import (
        check_rubric_columns,
        items_from_table,
        normalise_ratings,
        wide_to_long,
    )

    wide = bool(raters or judges or reference)
    lines = lines_of(table)  # each row's physical line (read_table), for messages
    if wide and "confidence" in table.columns:
        raise JudgekitError(f"{source}: a 'confidence' column belongs to one rating, and a row here holds "
                            "several raters' labels; import the judge's ratings in long format "
                            "(item_id, rater_id, label, confidence), or rename the column to keep it as item "
                            "metadata.")
    if wide:
        long = wide_to_long(table, raters=raters, judges=judges, reference=reference, source=source,
                            csv=csv, lines=lines)
        label_cols = [c for m in (raters, judges, reference) if m for c in m.values()]
        if "value" in table.columns and "value" not in label_cols:
            raise JudgekitError(
                f"{source}: a 'value' column has no single label to go with when each rater has "
                "a column (--raters/--judges/--reference); judgekit takes values from the rubric, "
                "so remove it."
            )
        check_rubric_columns(table, rubric,
                             lambda i: row_ref(source, i, csv=csv, lines=lines))
    else:
        long = table.copy()
        long["_row"] = range(len(long))
        label_cols = []
    ratings = normalise_ratings(long, rubric, source=source, csv=csv, default_kind=rater_kind,
                                lines=lines)
    items = items_from_table(table, source=source, exclude=label_cols, csv=csv, lines=lines)
    return items, ratings


@dataclass(frozen=True)
class ImportOptions:
    """How :func:`import_ratings` reads a file (the options of ``judgekit import``).

    ``raters`` / ``judges`` / ``reference`` (``{"rater_id": "column"}``) make the table wide;
    ``rater_kind`` is the kind of a long table's raters; ``fmt`` overrides the format the suffix
    names. ``set_columns`` (``--set COLUMN=VALUE``): a constant metadata column for every item of
    the file, its value stored as text (:mod:`judgekit.io.constants`).

    ``scorers`` (Inspect logs only) keeps those scorers' ratings (rater ids; a dict-valued
    scorer's name keeps all its ``scorer/key`` raters); default all. ``id_prefix`` is put before
    every item id of the file (e.g. ``gpt4:`` when several models' logs reuse the same sample
    ids).

    Tables only (see :mod:`judgekit.io.mapping`, :mod:`judgekit.io.shapes`,
    :mod:`judgekit.io.joins`): ``column_map`` reads a file's columns as judgekit's
    (``{"item_id": "_id"}``), ``key_column`` a JSON object of lists, ``flatten`` nested objects as
    ``a.b`` columns, ``id_from`` (``content`` or ``row``) makes the item ids, and ``join_on``
    joins the ``items_path`` file (its columns renamed by ``items_column_map``) on that column.
    """

    raters: Mapping[str, str] | None = None
    judges: Mapping[str, str] | None = None
    reference: Mapping[str, str] | None = None
    rater_kind: str = "human"
    fmt: str | None = None
    items_path: str | Path | None = None
    scorers: Sequence[str] | None = None
    id_prefix: str | None = None
    column_map: Mapping[str, str] | None = None
    items_column_map: Mapping[str, str] | None = None
    key_column: str | None = None
    flatten: bool = False
    id_from: str | None = None
    join_on: str | None = None
    set_columns: Mapping[str, str] | None = None

    @property
    def wide(self) -> bool:
        """One row per item, a column per rater."""
        return bool(self.raters or self.judges or self.reference)

    @property
    def rater_columns(self) -> list[str]:
        return [c for m in (self.raters, self.judges, self.reference) if m for c in m.values()]

    @property
    def streamable(self) -> bool:
        """Whether nothing but the rater columns is asked of the file (a CSV can then stream)."""
        return not (self.scorers or self.items_path is not None or self.id_prefix
                    or self.column_map or self.items_column_map or self.key_column
                    or self.flatten or self.id_from or self.join_on or self.set_columns)

    def digest_fields(self) -> dict[str, Any]:
        """The options as the import's digest records them."""
        return {
            "raters": self.raters, "judges": self.judges, "reference": self.reference,
            "rater_kind": self.rater_kind,
            "items": None if self.items_path is None else str(self.items_path),
            "scorers": None if self.scorers is None else list(self.scorers),
            "id_prefix": self.id_prefix,
            "column_map": None if self.column_map is None else dict(self.column_map),
            "items_column_map": None if self.items_column_map is None else dict(self.items_column_map),
            "key_column": self.key_column, "flatten": self.flatten, "id_from": self.id_from,
            "join_on": self.join_on, **({"set": dict(self.set_columns)} if self.set_columns else {}),
        }


def import_ratings(store: Store, path: str | Path, rubric: Rubric,
                   options: ImportOptions | None = None, **fields: Any) -> ImportSummary:
    """Read, validate and store ratings (and the items' metadata) from one file.

    ``options`` (or the same fields as keywords, ``judges={"gpt4": "gpt4_label"}``): how the file
    is read, :class:`ImportOptions`. An item whose text differs from the stored item of the same
    id is an error: the import would otherwise attach these ratings to another output.
    """
    opts = ImportOptions(**fields) if options is None else replace(options, **fields)
    source = str(path)
    short = Path(source).name if len(source) > 60 else source
    regular_input(path)  # a FIFO or device (/dev/zero) would block or never end: refused
    opts = replace(opts, raters=_nfc_keys(opts.raters, source), judges=_nfc_keys(opts.judges, source),
                   reference=_nfc_keys(opts.reference, source))
    if opts.items_path is not None:
        regular_input(opts.items_path)
    kind = table_format(path, opts.fmt)
    digest = input_digest(
        [path] + ([opts.items_path] if opts.items_path is not None else []),
        {"source": source, "kind": kind, "rubric": rubric.ref, "rubric_hash": rubric.hash,
         **opts.digest_fields()},
    )
    # a store not created yet has recorded no import (and must not be created before the checks)
    done = unchanged_import(store.conn, digest) if store.opened else None
    if done is not None:  # the same input into the store as that import left it: nothing to do
        return ImportSummary(
            source=source, rubric=rubric.ref, items=done["items"], ratings=done["ratings"],
            by_rater=done["by_rater"], notes=done["notes"],
            written=WriteCounts(0, 0, done["ratings"]),
        )
    where = _Source(path=path, source=source, short=short, kind=kind, digest=digest)
    new_store = not store.opened  # a DeferredStore not created yet
    try:
        if kind != "csv" or _stored_other_forms(store) or not opts.streamable:
            return _import_whole(store, rubric, opts, where)
        groups = [("human", opts.raters or {}), ("judge", opts.judges or {}),
                  ("reference", opts.reference or {})]
        streamed = _try_stream(store, Path(path), rubric, source=short, rater_kind=opts.rater_kind,
                               digest=digest, groups=groups if opts.wide else None)
        if streamed is not None:
            return ImportSummary(source=source, rubric=rubric.ref, items=streamed.items,
                                 ratings=streamed.ratings, by_rater=streamed.by_rater,
                                 written=streamed.written)
        # not streamed (its transaction rolled back): the whole-file path reads or reports it
        return _import_whole(store, rubric, opts, where)
    except BaseException as exc:  # a refusal, an SQLite error, Ctrl-C: a first import leaves no store
        if new_store and store.opened and _empty(store):
            _remove_new_store(store)
        if no_room(exc):  # its transaction rolled back: one sentence, nothing imported
            raise JudgekitError(
                f"{store.path}: the import of {source} could not be written ({_short_error(exc)}: the disk is full, "
                "a file-size limit was reached or the disk failed); nothing of it was imported — free space or "
                "raise the limit and import again.") from None
        raise


def no_room(exc: BaseException) -> bool:
    """Whether ``exc`` says a write found no room: SQLite's "database or disk is full" or "disk I/O
    error" (a file-size limit), or an OS error ENOSPC, EFBIG or EDQUOT."""
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "disk is full" in text or "disk i/o error" in text
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", -1))


def _short_error(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]


@dataclass(frozen=True)
class _Source:
    """The file being imported: its path, its name in messages (``short``: the file name when the
    path is long), its format and the import's digest."""

    path: str | Path
    source: str
    short: str
    kind: str
    digest: str | None


def _nfc_keys(mapping: Mapping[str, str] | None, source: str) -> Mapping[str, str] | None:
    """``--raters/--judges/--reference`` with the rater ids in NFC, as ids read from files are
    (:func:`judgekit.core.values.nfc`); two that are the same text in NFC are one id given twice."""
    if not mapping:
        return mapping
    out = {nfc(k) if isinstance(k, str) else k: v for k, v in mapping.items()}
    if len(out) != len(mapping):
        twice = next(k for k in out if sum(1 for m in mapping if isinstance(m, str) and nfc(m) == k) > 1)
        raise JudgekitError(f"{source}: rater id {twice!r} is given twice (in two Unicode forms of "
                            "the same text); rename one.")
    return out


def _import_whole(store: Store, rubric: Rubric, opts: ImportOptions, src: _Source) -> ImportSummary:
    """The whole-file path: read the file, validate it as frames, write it in one transaction."""
    from judgekit.core.values import id_problem
    from judgekit.io.mapping import content_ids_as_stored

    items, ratings, notes, file_columns = _read_whole(rubric, opts, src)
    if (opts.join_on or opts.items_column_map) and opts.items_path is None:
        raise JudgekitError(f"{src.path}: --join-on and --items-map are about the --items FILE; give it.")
    if opts.items_path is not None:
        items = _with_items_file(items, opts, src, file_columns)
    if opts.id_from == "content" and opts.items_path is not None:  # the ids of the content as stored
        items, ratings, notes[-1] = content_ids_as_stored(
            items, ratings, source=src.short, joined_from=str(opts.items_path),
            one_row_per_item=opts.wide)
    if opts.id_prefix:
        problem = id_problem(opts.id_prefix, "--id-prefix")
        if problem:
            raise JudgekitError(f"{problem}.")
        items = items.assign(item_id=opts.id_prefix + items["item_id"].astype(str))
        ratings = ratings.assign(item_id=opts.id_prefix + ratings["item_id"].astype(str))
    if opts.set_columns:
        from judgekit.io.constants import apply_set_columns

        items = apply_set_columns(items, opts.set_columns, source=src.short,
                                  file_columns=file_columns if src.kind != "inspect" else ())
    forms = _stored_other_forms(store)  # ids an older judgekit stored in NFD keep that form
    items = _as_stored(items, ("item_id",), forms)
    ratings = _as_stored(ratings, ("item_id", "rater_id"), forms)
    _check_same_text(store, items, source=src.short)
    by_rater = _by_rater(ratings)
    with store.transaction() as conn:
        before = store_state(conn)
        stored_items = item_snapshot(conn, items["item_id"].astype(str).tolist())
        store.put_items(items, source=src.short)
        written = store.put_ratings(ratings.drop(columns=["_row"]),
                                    provenance=None if src.digest is None else import_id(src.digest))
        if "confidence" in ratings.columns:  # a judge's confidence per rating, for selective judging
            from judgekit.store.rating_confidence import put_confidences

            put_confidences(conn, ratings)
        # other files' no-op digests hold when no stored rating was replaced nor item changed
        keep = (written.changed + written.unchanged == 0
                and item_snapshot(conn, list(stored_items)) == stored_items)
        record_import(conn, src.digest, {"items": len(items), "ratings": len(ratings),
                                         "by_rater": by_rater, "notes": notes},
                      before=before, keep_others=keep)
    return ImportSummary(source=src.source, rubric=rubric.ref, items=len(items),
                         ratings=len(ratings), by_rater=by_rater, notes=notes, written=written)


def _read_whole(rubric: Rubric, opts: ImportOptions,
                src: _Source) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str]]:
    """``(items, ratings, notes, the file's columns as it names them)`` of an Inspect log or a
    table, validated."""
    from judgekit.io.mapping import check_layout_columns, make_item_ids

    path = src.path
    if src.kind == "inspect":
        if opts.wide:
            raise JudgekitError(
                f"{path}: --raters/--judges/--reference name table columns; an Inspect log's raters "
                "are its scorers (pick them with --scorers)."
            )
        if opts.column_map or opts.key_column is not None or opts.flatten or opts.id_from:
            raise JudgekitError(
                f"{path}: --map, --key-column, --flatten and --id-from read tables; an Inspect log's "
                "fields are read as Inspect writes them."
            )
        return (*_prepare_inspect(path, rubric, source=src.short, scorers=opts.scorers), [])
    if opts.scorers:
        raise JudgekitError(
            f"{path}: --scorers picks the scorers of an Inspect log; this file is {src.kind}."
        )
    notes: list[str] = []
    table = read_table(path, opts.fmt, column_map=opts.column_map, key_column=opts.key_column,
                       flatten=opts.flatten)
    file_columns = [(opts.column_map or {}).get(c, c) for c in table.columns]  # as the file names them
    if opts.id_from:
        table, id_note = make_item_ids(
            table, opts.id_from, source=src.short, file_name=Path(src.source).name, file_path=path,
            csv=src.kind == "csv", lines=lines_of(table), one_row_per_item=opts.wide)
        notes.append(id_note)
    check_layout_columns(table, source=src.short, raters=opts.raters, judges=opts.judges,
                         reference=opts.reference)
    items, ratings = prepare_ratings(table, rubric, source=src.short, csv=src.kind == "csv",
                                     raters=opts.raters, judges=opts.judges,
                                     reference=opts.reference, rater_kind=opts.rater_kind)
    return items, ratings, notes, file_columns


def _with_items_file(items: pd.DataFrame, opts: ImportOptions, src: _Source,
                     file_columns: list[str]) -> pd.DataFrame:
    """The items completed by the ``--items`` file: joined on ``--join-on``, else by item id (where
    both give a value, the ratings file's own column wins)."""
    from judgekit.core.values import row_ref
    from judgekit.io.joins import join_items_file
    from judgekit.store.data import check_reserved_item_columns, messages_as_json, require_columns

    items_path = opts.items_path
    assert items_path is not None
    if opts.join_on:
        return join_items_file(
            items, items_path, opts.join_on, source=src.short, column_map=opts.items_column_map,
            csv=src.kind == "csv", file_columns=None if src.kind == "inspect" else file_columns,
            ratings_map=opts.column_map, rater_columns=opts.rater_columns)
    extra = read_table(items_path, column_map=opts.items_column_map, map_option="--items-map")
    require_columns(extra, ["item_id"], source=str(items_path))
    check_reserved_item_columns(list(extra.columns), source=str(items_path))
    is_csv, extra_lines = table_format(items_path) == "csv", lines_of(extra)
    if extra["item_id"].isna().any():
        first = int(extra["item_id"].isna().to_numpy().argmax())
        where = row_ref(str(items_path), first, csv=is_csv, lines=extra_lines)
        raise JudgekitError(f"{where}: empty item_id; every row needs one.")
    if extra["item_id"].duplicated().any():
        dup = extra.loc[extra["item_id"].duplicated(), "item_id"].iloc[0]
        raise JudgekitError(f"{items_path}: item_id {dup!r} appears twice; item ids must be unique.")
    if "messages" in extra.columns:
        extra["messages"] = messages_as_json(
            extra["messages"].tolist(), str(items_path), csv=is_csv, lines=extra_lines
        )
    return items.set_index("item_id").combine_first(extra.set_index("item_id")).reset_index()


def _try_stream(store: Store, path: Path, rubric: Rubric, *, source: str, rater_kind: str,
                digest: str | None,
                groups: Sequence[tuple[str, Mapping[str, str]]] | None = None) -> StreamResult | None:
    """The streamed import of a long CSV (:mod:`judgekit.io.ratings_stream`), or of a wide one
    when ``groups`` names its rater columns; ``None`` when the file is for the whole-file path
    (its transaction was rolled back: nothing was written)."""
    try:
        newline = detect_newline(path, "\t" if path.suffix.lower() == ".tsv" else ",")
    except OSError:
        return None
    try:
        if groups is not None:
            return stream_wide_csv(store, path, rubric, source=source, groups=groups,
                                   newline=newline, digest=digest)
        return stream_csv(store, path, rubric, source=source, rater_kind=rater_kind,
                          newline=newline, digest=digest)
    except StreamFallback:
        return None


def _empty(store: Store) -> bool:
    """Whether the store holds no item and no rating (a store that cannot be read says no: it
    is kept)."""
    try:
        if store.conn.in_transaction:  # stopped before its transaction could roll back
            store.conn.rollback()
        return not store.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM items) OR EXISTS (SELECT 1 FROM ratings)").fetchone()[0]
    except Exception:  # noqa: BLE001 - a store that did not open (conn never set), a broken one
        return False


def _remove_new_store(store: Store) -> None:
    """Remove the store file this failed import created (a first import that fails leaves no
    store behind, as when the whole-file path refuses the input before opening the store)."""
    store.close()
    if store.path != ":memory:":
        for end in ("", "-wal", "-shm", "-journal"):
            Path(store.path + end).unlink(missing_ok=True)


def _by_rater(ratings: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """{rater: {kind, n, abstain, error}} in the order the raters first appear."""
    by_rater: dict[str, dict[str, Any]] = {}
    for (rater, rkind), grp in ratings.groupby(["rater_id", "rater_kind"], sort=False):
        by_rater[str(rater)] = {
            "kind": rkind,
            "n": len(grp),
            "abstain": int((grp["status"] == "abstain").sum()),
            "error": int((grp["status"] == "error").sum()),
        }
    return by_rater


def _check_same_text(store: Store, items: pd.DataFrame, *, source: str) -> None:
    """Refuse items whose text differs from the stored item with the same id."""
    from judgekit.store.schema import item_content_hash

    if "response" not in items.columns:
        return
    has_text = items[items["response"].notna()]
    if has_text.empty:
        return
    found = store.items(has_text["item_id"].astype(str).tolist())
    if found.empty:
        return
    stored = found[found["response"].notna()].set_index("item_id")["content_hash"]
    for rec in has_text.to_dict("records"):
        iid = str(rec["item_id"])
        if iid not in stored.index:
            continue
        messages = rec.get("messages")
        new = item_content_hash(
            None if is_missing(rec.get("prompt")) else str(rec.get("prompt")),
            None if is_missing(messages) else messages,
            str(rec["response"]),
        )
        if new != stored[iid]:
            raise JudgekitError(
                f"{source}: item {iid!r} is already in the store with another text (another model's "
                "output?); give this file's items distinct ids, e.g. --id-prefix MODEL: ."
            )


def _prepare_inspect(
    path: str | Path, rubric: Rubric, *, source: str, scorers: Sequence[str] | None
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Items and validated judge ratings of an Inspect log, and notes for the summary."""
    from judgekit.io.inspect import read_inspect_log
    from judgekit.store.data import normalise_ratings

    items, long = read_inspect_log(path)
    if scorers:
        wanted = [s.strip() for s in scorers if s.strip()]
        have = list(dict.fromkeys(long["rater_id"]))
        keep = long["rater_id"].map(lambda r: r in wanted or r.split("/", 1)[0] in wanted)
        unknown = [w for w in wanted if w not in have and not any(h.split("/", 1)[0] == w for h in have)]
        if unknown:
            raise JudgekitError(
                f"{path}: no scorer {unknown[0]!r} in this log; its scorers are {', '.join(have)}."
            )
        long = long[keep].reset_index(drop=True)
    long["_explanation"] = long["rationale"]
    ratings = normalise_ratings(long, rubric, source=source, default_kind="judge")
    unparsed = ratings["rationale"].astype(str).str.startswith("unparseable judge output")
    # an unparseable grade keeps the grader's explanation beside the raw value
    explained = unparsed & ratings["_explanation"].notna()
    ratings.loc[explained, "rationale"] = (
        ratings.loc[explained, "rationale"] + " | " + ratings.loc[explained, "_explanation"].astype(str)
    )
    ratings = ratings.drop(columns=["_explanation"])
    notes = []
    if unparsed.any():
        examples = ", ".join(list(dict.fromkeys(repr(v) for v in long.loc[unparsed, "label"]))[:3])
        notes.append(
            f"{int(unparsed.sum())} score values are not labels of {rubric.id} (e.g. {examples}) "
            "and are stored as abstentions; add aliases to the rubric to map them."
        )
    return items, ratings, notes


# Ids a store written before ids were kept in Unicode NFC may hold in another form.
#
# judgekit keeps item and rater ids in NFC (:func:`judgekit.core.values.nfc`): ``é`` typed as one
# character or as ``e`` + a combining accent is one id. A store written by an older judgekit may
# hold an id in another form (NFD). Stored ids are never rewritten (verdicts and samples name
# them); instead an import's ids that are the same text as such a stored id (the same NFC form)
# take the stored form, so the rows attach to the stored item and rater, never to a second one
# that looks the same.

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.store.database import Store


def _stored_other_forms(store: Store) -> dict[str, str]:
    """``{NFC form: stored form}`` of the store's item and rater ids not stored in NFC (almost
    always empty); an empty dict for a store not opened yet (a new store holds no id)."""
    if not store.opened:
        return {}
    out: dict[str, str] = {}
    for sql in ("SELECT item_id FROM items", "SELECT DISTINCT rater_id FROM ratings"):
        for (value,) in store.conn.execute(sql):
            if isinstance(value, str) and not value.isascii() and nfc(value) != value:
                out[nfc(value)] = value
    return out


def _as_stored(frame: pd.DataFrame, columns: tuple[str, ...], forms: dict[str, str]) -> pd.DataFrame:
    """``frame`` with the ids of ``columns`` that ``forms`` names in their stored form."""
    if not forms:
        return frame
    changes = {c: frame[c].map(lambda v: forms.get(v, v) if isinstance(v, str) else v)
               for c in columns if c in frame.columns}
    return frame.assign(**changes) if changes else frame
