"""Bulk writes of ratings: a frame's columns straight to ``executemany``, compared with the stored
ratings by key in SQL.

:meth:`judgekit.store.database.Store.put_ratings` calls :func:`write_ratings` inside its transaction. The
rows are built column by column (no per-row dict), and

* when none of the incoming raters has a rating under this rubric and hash yet (a first import),
  they are inserted directly: nothing can be replaced, so there is no history and no comparison;
* otherwise they go to a temporary table first; one join on the ratings' primary key copies the
  ratings whose label or status changes into ``rating_history`` and counts new / changed /
  unchanged, and one ``INSERT OR REPLACE ... SELECT`` writes them (as before: every incoming
  rating replaces the stored one of its key).

Imported by :meth:`Store.put_ratings` when it is called; pandas only where a frame is read
(:func:`rating_columns`), so :mod:`judgekit.store.stream` uses :func:`merge_incoming` without it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.store.schema import MAX_SQL_VARIABLES, RatingRow, WriteCounts, rows_provenance

if TYPE_CHECKING:
    import pandas as pd

#: the columns written, in the order of the ``ratings`` table's insert below
WRITE_COLUMNS = ("item_id", "rater_id", "rater_kind", "rubric", "rubric_hash", "label", "value",
                 "trial", "status", "rationale", "created_at", "source", "call_key", "provenance")
_INSERT = (f"INSERT INTO ratings ({', '.join(WRITE_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(WRITE_COLUMNS))})")
_KEY_JOIN = ("r.item_id = i.item_id AND r.rater_id = i.rater_id AND r.rubric = i.rubric"
             " AND r.rubric_hash = i.rubric_hash AND r.trial = i.trial")
_CHANGED = "(r.label IS NOT i.label OR r.status IS NOT i.status)"


def _column(df: pd.DataFrame, name: str, default: Any, convert: Callable[[Any], Any] | None) -> list[Any]:
    """One column as a list of Python values, a missing cell ``None`` (NaN, pd.NA, NaT)."""
    import pandas as pd

    if name not in df.columns:
        return [default] * len(df)
    col = df[name]
    if col.dtype != object or pd.api.types.infer_dtype(col, skipna=True) == "string":
        # text: each distinct value converted once and shared by every row holding it (no
        # million new string objects from an Arrow-backed column); a missing cell None
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        distinct = uniques.tolist() if convert is None else [convert(v) for v in uniques.tolist()]
        distinct.append(None)  # code -1
        return list(map(distinct.__getitem__, codes.tolist()))
    values = col.tolist()
    missing = col.isna().to_numpy()
    if not missing.any():
        return values if convert is None else list(map(convert, values))
    if convert is None:
        return [None if m else v for v, m in zip(values, missing.tolist(), strict=True)]
    return [None if m else convert(v) for v, m in zip(values, missing.tolist(), strict=True)]


def rating_columns(ratings: pd.DataFrame, *, now: float, provenance: str | None = None) -> list[list[Any]]:
    """The columns to write (:data:`WRITE_COLUMNS`) of a ratings frame, as lists.

    The same values as :func:`judgekit.store.records.rating_rows`: ids as text, ``value`` and
    ``created_at`` floats, ``trial`` an int; ``trial``, ``status``, ``rationale``, ``created_at``
    (``now``), ``source`` and ``value`` may be left out. ``provenance``: where the ratings came
    from (:mod:`judgekit.store.provenance`); None: ``import:`` and a digest of the ratings.
    """
    missing = [c for c in ("item_id", "rater_id", "rater_kind", "rubric", "rubric_hash") if c not in ratings]
    if missing:
        raise JudgekitError(f"put_ratings: missing columns {missing}.")
    if "label" not in ratings.columns:
        raise KeyError("label")
    cols = [
        _column(ratings, "item_id", None, str),
        _column(ratings, "rater_id", None, str),
        _column(ratings, "rater_kind", None, None),
        _column(ratings, "rubric", None, None),
        _column(ratings, "rubric_hash", None, None),
        _column(ratings, "label", None, None),
        _column(ratings, "value", None, float),
        _column(ratings, "trial", 0, int),
        _column(ratings, "status", "ok", None),
        _column(ratings, "rationale", None, None),
        _column(ratings, "created_at", now, float),
        _column(ratings, "source", None, None),
        [None] * len(ratings),  # call_key: a judge panel's writes go through store_judges
    ]
    for k in (7, 10):  # int(None) / float(None) fail in rating_rows too
        if any(v is None for v in cols[k]):
            raise TypeError(f"put_ratings: {WRITE_COLUMNS[k]} has an empty cell")
    if provenance is None:
        provenance = rows_provenance(cols)
    cols.append([provenance] * len(ratings))
    return cols


def kind_rows(cols: list[list[Any]]) -> list[RatingRow]:
    """One stand-in row per distinct (rater_id, rater_kind), for :func:`records.rater_kinds`."""
    pairs = dict.fromkeys(zip(cols[1], cols[2], strict=True))
    return [RatingRow("", r, k, "", "", None, None, 0, "ok", None, 0.0, None) for r, k in pairs]


def _has_stored(conn: sqlite3.Connection, rubric_keys: set[tuple[Any, Any]], raters: list[str]) -> bool:
    """Whether any of ``raters`` has a rating under any of the (rubric, rubric_hash) pairs."""
    for rubric, rubric_hash in rubric_keys:
        for i in range(0, len(raters), MAX_SQL_VARIABLES):
            part = raters[i : i + MAX_SQL_VARIABLES]
            row = conn.execute(
                "SELECT 1 FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id IN "
                f"({','.join('?' * len(part))}) LIMIT 1",
                [rubric, rubric_hash, *part],
            ).fetchone()
            if row is not None:
                return True
    return False


def note_label_writes(conn: sqlite3.Connection, groups: Any, now: float) -> None:
    """Remember when each provenance group in ``groups`` was first stored (``label_writes``, by the
    store's clock; a group written again keeps its first time): :mod:`judgekit.store.arrivals`."""
    conn.executemany("INSERT INTO label_writes (provenance, stored_at) VALUES (?, ?) ON CONFLICT (provenance) DO NOTHING",
                     [(g, now) for g in dict.fromkeys(groups) if g is not None])


def write_ratings(
    conn: sqlite3.Connection, cols: list[list[Any]], *, keep_history: bool, now: float
) -> WriteCounts:
    """Write the rating columns (inside the caller's transaction); returns the counts of
    :meth:`Store.put_ratings`."""
    n = len(cols[0])
    rows = zip(*cols, strict=True)
    raters = list(dict.fromkeys(cols[1]))
    note_label_writes(conn, cols[-1], now)
    if not keep_history:
        conn.executemany(_INSERT.replace("INSERT", "INSERT OR REPLACE", 1), rows)
        return WriteCounts(n, 0, 0)
    if not _has_stored(conn, set(zip(cols[3], cols[4], strict=True)), raters):
        # nothing of these raters under this rubric: every rating is new (a duplicate key within
        # the frame replaces the earlier one, as INSERT OR REPLACE did)
        conn.executemany(_INSERT.replace("INSERT", "INSERT OR REPLACE", 1), rows)
        return WriteCounts(n, 0, 0)
    conn.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS _incoming_bulk ({', '.join(WRITE_COLUMNS)})"
    )
    conn.execute("DELETE FROM _incoming_bulk")
    conn.executemany(_INSERT.replace("ratings", "_incoming_bulk", 1), rows)
    counts = merge_incoming(conn, "_incoming_bulk", n, now=now)
    conn.execute("DELETE FROM _incoming_bulk")
    return counts


def merge_incoming(conn: sqlite3.Connection, table: str, n: int, *, now: float) -> WriteCounts:
    """Write the ``n`` ratings of the temporary ``table`` (:data:`WRITE_COLUMNS`) over the
    stored ones: the stored ratings whose label or status changes go to ``rating_history``, then
    every incoming rating replaces the stored one of its key, in the table's order."""
    # Only a changed label is history; re-importing the same file changes nothing.
    conn.execute(
        f"""
        INSERT INTO rating_history
        SELECT r.item_id, r.rater_id, r.rater_kind, r.rubric, r.rubric_hash, r.trial,
               r.label, r.value, r.status, r.rationale, r.created_at, r.source, ?
        FROM {table} i JOIN ratings r ON {_KEY_JOIN}
        WHERE {_CHANGED}
        """,
        (now,),
    )
    existing, changed = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM({_CHANGED}), 0) FROM {table} i JOIN ratings r ON {_KEY_JOIN}"
    ).fetchone()
    # a rating that comes in unchanged (label and status) keeps where it came from: its call and
    # its provenance (a superset file of a judge's labels does not move the gated ones)
    kept = {"call_key": f"CASE WHEN r.rowid IS NOT NULL AND NOT {_CHANGED} THEN r.call_key ELSE i.call_key END",
            "provenance": f"CASE WHEN r.rowid IS NOT NULL AND NOT {_CHANGED} THEN r.provenance ELSE i.provenance END"}
    conn.execute(
        f"INSERT OR REPLACE INTO ratings ({', '.join(WRITE_COLUMNS)}) "
        f"SELECT {', '.join(kept.get(c, 'i.' + c) for c in WRITE_COLUMNS)} FROM {table} i"
        f" LEFT JOIN ratings r ON {_KEY_JOIN} ORDER BY i.rowid"
    )
    return WriteCounts(n - existing, changed, existing - changed)
