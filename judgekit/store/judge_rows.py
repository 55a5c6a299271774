"""The panel's writes and reads of judge ratings: part of :class:`judgekit.store.database.Store` (the one
owner of the ``ratings`` table), kept in a module of its own so the store stays readable. The
panel writes a call and the rating made from it in one transaction (group commit), so these run
inside :meth:`Store.transaction <judgekit.store.database.Store.transaction>`."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from judgekit.store.schema import JudgeRating, JudgeRatingKey, StoredJudgeRating

if TYPE_CHECKING:
    import pandas as pd


class JudgeRatings:
    """Mixin of :class:`judgekit.store.database.Store`: judge rating writes for the panel."""

    conn: sqlite3.Connection

    if TYPE_CHECKING:  # provided by Store

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def write_judge_ratings(
        self, rubric: str, rubric_hash: str, ratings: Sequence[JudgeRating], *, now: float
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
                " label, value, trial, status, rationale, created_at, source, call_key, provenance)"
                " VALUES (?, ?, 'judge', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'panel')",
                [(r.item_id, r.rater_id, rubric, rubric_hash, r.label, r.value, r.trial, r.status,
                  r.rationale, now, r.source, r.call_key) for r in ratings],
            )

    def retire_judge_ratings(
        self, rubric: str, rubric_hash: str, keys: Sequence[JudgeRatingKey], *, now: float
    ) -> None:
        """Move the judge ratings ``keys`` to the history."""
        where = (" FROM ratings WHERE item_id = ? AND rater_id = ? AND rubric = ? AND rubric_hash = ?"
                 " AND trial = ? AND rater_kind = 'judge'")
        args = [(k.item_id, k.rater_id, rubric, rubric_hash, k.trial) for k in keys]
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO rating_history SELECT item_id, rater_id, rater_kind, rubric, rubric_hash,"
                " trial, label, value, status, rationale, created_at, source, ?" + where,
                [(now, *a) for a in args],
            )
            conn.executemany("DELETE" + where, args)

    def judge_rating_calls(
        self, rater_id: str, rubric: str, rubric_hash: str
    ) -> dict[tuple[str, int], StoredJudgeRating]:
        """A judge's stored ratings by ``(item_id, trial)``."""
        rows = self.conn.execute(
            "SELECT item_id, trial, label, status, call_key FROM ratings WHERE rater_id = ?"
            " AND rubric = ? AND rubric_hash = ? AND rater_kind = 'judge'",
            (rater_id, rubric, rubric_hash),
        )
        return {(iid, trial): StoredJudgeRating(label, status, key)
                for iid, trial, label, status, key in rows}

    def rating_rows(
        self, rubric: str, rubric_hash: str, rater_ids: Sequence[str]
    ) -> list[tuple[str, str, int, str | None, str, str | None]]:
        """``(item_id, rater_id, trial, label, status, rationale)`` of these raters' ratings under
        ``rubric`` and ``rubric_hash``, in the order they were stored (no pandas: a panel rerun
        checks its aggregates with these)."""
        marks = ",".join("?" * len(rater_ids))
        return list(self.conn.execute(
            "SELECT item_id, rater_id, trial, label, status, rationale FROM ratings WHERE rubric = ?"
            f" AND rubric_hash = ? AND rater_id IN ({marks}) ORDER BY rowid",
            (rubric, rubric_hash, *rater_ids),
        ))

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
        from judgekit.store.frames import read_frame  # pandas here, not at the store's import

        return read_frame(self.conn, "SELECT item_id, rater_id, rubric, rubric_hash, trial, call_key FROM ratings")
