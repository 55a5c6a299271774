"""Group commit of a panel's results: each call with the rating made from it, in one transaction.

Results wait in a buffer only while the previous transaction commits (WAL), so a killed run
loses at most the calls in flight and never keeps a rating without its call or a call without
its rating. A call's lease (:mod:`~judgekit.judges.lease`) ends in the transaction that stores it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.store.calls import CallRow, write_calls
from judgekit.store.database import JudgeRatingKey, Store
from judgekit.store.locking import is_busy
from judgekit.store.schema import JudgeRating

if TYPE_CHECKING:  # imported where a call is made: a run that sends nothing needs no asyncio
    import asyncio


def judge_rating(
    rubric: Rubric,
    *,
    item_id: str,
    rater_id: str,
    trial: int,
    status: str,
    label: str | None,
    text: str | None,
    call_key: str,
) -> JudgeRating:
    """The rating a judge's answer makes (``value`` from the rubric; the source is the panel)."""
    value = rubric.values.get(label) if label else None
    return JudgeRating(item_id, rater_id, label, value, trial, status, text, "panel", call_key)


class Writer:
    """Group commit: results wait in a buffer only while the previous transaction commits."""

    def __init__(
        self, store: Store, rubric: Rubric, *, on_commit: Callable[[Sequence[str]], None] | None = None
    ) -> None:
        self.store = store
        self.rubric = rubric
        #: called inside each transaction with the keys of the calls it stores
        self.on_commit = on_commit
        self.calls: list[CallRow] = []
        self.ratings: list[JudgeRating] = []
        self.retired: list[JudgeRatingKey] = []
        self.event: asyncio.Event | None = None
        #: the store's write lock could not be had (after waiting the lock timeout): later
        #: flushes raise this at once instead of waiting again
        self.lock_error: BaseException | None = None

    def retire(self, item_id: str, rater_id: str, trial: int) -> None:
        """Remove a judge rating that no current answer backs (kept in the rating history)."""
        self.retired.append(JudgeRatingKey(item_id, rater_id, trial))

    def add(self, rating: JudgeRating, call: CallRow | None = None) -> None:
        """A rating to write, with the call it was made from when that call is new."""
        if call is not None:
            self.calls.append(call)
        self.ratings.append(rating)
        if self.event is not None:
            self.event.set()

    def flush(self) -> None:
        """Commit everything buffered in one transaction (the one already open, if any).

        The buffers are emptied only once the transaction has committed: a failed commit keeps
        every answer for the next flush. Once the store's write lock could not be had, every
        later flush raises that error at once (a run stops at the first lock timeout instead of
        waiting for the lock again in its final write)."""
        if not self.ratings and not self.calls and not self.retired:
            return
        if self.lock_error is not None:
            raise self.lock_error
        calls, ratings, retired = list(self.calls), list(self.ratings), list(self.retired)
        now = time.time()
        r = self.rubric
        try:
            with self.store.transaction():
                if retired:
                    self.store.retire_judge_ratings(r.id, r.hash, retired, now=now)
                if calls:
                    write_calls(self.store, calls)
                    if self.on_commit is not None:
                        self.on_commit([c.key for c in calls])
                self.store.write_judge_ratings(r.id, r.hash, ratings, now=now)
        except (JudgekitError, sqlite3.OperationalError) as exc:
            if isinstance(exc, JudgekitError) or is_busy(exc):
                self.lock_error = exc
            raise
        # committed: drop what was written (results added meanwhile stay for the next flush)
        del self.calls[: len(calls)]
        del self.ratings[: len(ratings)]
        del self.retired[: len(retired)]

    async def run(self) -> None:
        """Flush whenever results arrive (cancelled when the run ends; flush once more then)."""
        import asyncio

        self.event = asyncio.Event()
        while True:
            await self.event.wait()
            self.event.clear()
            self.flush()


__all__ = ["JudgeRating", "Writer", "judge_rating"]
