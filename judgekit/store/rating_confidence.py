"""A judge's confidence per rating, imported with its ratings (migration ``012_rating_confidence``).

``judgekit import`` of a long ratings file with a ``confidence`` column (a number in [0, 1], or
empty) stores each rating's confidence here, in the import's transaction: external judgments with
a confidence (e.g. a paper's published ones) can then be calibrated by selective judging
(``confidence: {source: imported}``). A later import of the same rating with a confidence
replaces it; any other write of the rating (an import without a confidence that changes it, a
judge's own run) removes it (the triggers of migration 014), so a stored confidence always belongs
to the label stored beside it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import pandas as pd

#: the rating key (as the ratings table's primary key)
_KEY = ("item_id", "rater_id", "rubric", "rubric_hash", "trial")


def put_confidences(conn: sqlite3.Connection, ratings: pd.DataFrame) -> int:
    """Store the ``confidence`` of each rating of ``ratings`` (the frame the import wrote, with the
    rating key columns) inside the caller's transaction; a rating without one loses any stored
    confidence. Returns how many were stored."""
    keys = [tuple(str(v) if k != "trial" else int(v) for k, v in zip(_KEY, row, strict=True))
            for row in ratings[list(_KEY)].itertuples(index=False, name=None)]
    values = ratings["confidence"].tolist()
    conn.executemany("DELETE FROM rating_confidence WHERE item_id = ? AND rater_id = ? AND rubric = ?"
                     " AND rubric_hash = ? AND trial = ?", keys)
    rows = [(*key, float(v)) for key, v in zip(keys, values, strict=True) if v is not None and v == v]
    conn.executemany("INSERT INTO rating_confidence (item_id, rater_id, rubric, rubric_hash, trial, confidence)"
                     " VALUES (?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def imported_confidences(store: Any, judges: Sequence[str], rubric_hash: str) -> dict[tuple[str, str, int], float]:
    """``{(judge, item id, trial): confidence}`` imported for the judges' ratings under
    ``rubric_hash``."""
    if not judges:
        return {}
    sql = ("SELECT rater_id, item_id, trial, confidence FROM rating_confidence WHERE rubric_hash = ?"
           f" AND rater_id IN ({','.join('?' * len(judges))})")
    return {(str(j), str(i), int(t)): float(c) for j, i, t, c in store.conn.execute(sql, [rubric_hash, *judges])}


__all__ = ["imported_confidences", "put_confidences"]
