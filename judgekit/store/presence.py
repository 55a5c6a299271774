"""Whether a store holds ratings of a kind under a rubric: one indexed look-up, for the commands
that should say so before they report on nothing (``agree``, ``gate``, ``report``)."""

from __future__ import annotations

from typing import Any

__all__ = ["has_ratings"]


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
