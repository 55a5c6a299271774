"""Concurrent runs on one store split the work: a run sends a call only while it holds the call's
lease (table ``call_leases``, owned by :mod:`judgekit.store.calls`).

A remote judge's workers take their jobs from :class:`ClaimedJobs`, which claims the pending keys
in batches (one ``BEGIN IMMEDIATE`` transaction per :func:`_claim_batch` keys) just before they are
sent, so a second run started beside the first takes the keys the first has not claimed yet. A
key another live run holds is set aside; when nothing else is left it is looked at again: what
the other run answered meanwhile is written from the stored answer (this judge's ratings, and
those of items with the same text), what it released unanswered is claimed and sent, and what it
still holds is left to it — the summary says how many, and which run.

A lease lasts :data:`~judgekit.store.calls.LEASE_SECONDS` (``JUDGEKIT_LEASE_S`` sets another number of
seconds) and is renewed every quarter of that while the run is alive (:meth:`RunLease.heartbeat`).
A call's lease ends in the transaction that stores the call (:class:`~judgekit.judges.writer.Writer`),
and every lease of the run ends when it exits — normally, on an error or on Ctrl-C. Leases of a
run killed with ``kill -9`` are free at once for a run on the same machine (the process is gone)
and after their expiry for any other. Local judges (rules, replay) answer at once and are not
leased (two runs store the same answer).

Each run counts only its own calls; a run that ends while another still answers some of its
calls exits 0 like any finished run (the other run stores them). A call a run stored as an
``error`` is released with it, so another run still going may retry it, as the next run would.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence

from judgekit.errors import JudgekitError
from judgekit.judges.jobs import Job, JudgeRun
from judgekit.judges.plan import take_answered
from judgekit.store.calls import (
    LEASE_SECONDS,
    Claim,
    batch_lease_key,
    claim,
    describe_owner,
    forget_owner,
    new_owner,
    release,
    release_all,
    renew,
)
from judgekit.store.database import Store

#: the environment variable that sets how long a lease lasts (seconds)
_LEASE_ENV = "JUDGEKIT_LEASE_S"


def lease_seconds(env: Mapping[str, str]) -> float:
    """The lease duration of a run: ``JUDGEKIT_LEASE_S`` when set, else the default."""
    text = env.get(_LEASE_ENV)
    if text is None or not text.strip():
        return LEASE_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise JudgekitError(
            f"{_LEASE_ENV}={text[:40]!r} is not a number of seconds above 0; set it to one "
            f"(e.g. {LEASE_SECONDS:g}) or unset it."
        )
    return value


#: the longest worker name a run may give itself
_NAME_MAX = 64


def worker_name(given: str | None) -> str:
    """The name a ``judge --worker [NAME]`` run gives its leases: ``NAME``, else ``host:pid``;
    "" when the run is not started as a named worker (``given`` None)."""
    if given is None:
        return ""
    if not given:
        import os
        import socket

        return f"{socket.gethostname() or 'localhost'}:{os.getpid()}"
    if len(given) > _NAME_MAX or not given.isprintable() or given != given.strip():
        raise JudgekitError(
            f"--worker {given[:_NAME_MAX]!r} is not a worker name; give up to {_NAME_MAX} printable "
            "characters without leading or trailing spaces (e.g. --worker gpu-node-3), or --worker "
            "alone for host:pid."
        )
    return given


def _claim_batch(concurrency: int) -> int:
    """Keys per claim transaction for a judge: four rounds of its workers, 64 to 256."""
    return max(64, min(256, 4 * concurrency))


class RunLease:
    """The leases of one run: its owner id, how long a lease lasts, renewal and release."""

    def __init__(self, store: Store, seconds: float, *, name: str = "") -> None:
        self.store = store
        self.seconds = seconds
        self.owner = new_owner(name)  #: with the run's worker name, if it gave one
        self.renewed_at = time.time()  #: every lease of the run lasts until this + seconds
        self.mine: set[str] = set()  #: call keys leased now (released as their calls are stored)
        self.used = False

    def claim(self, keys: Sequence[str], *, skip_batched: bool = False) -> Claim:
        if not self.used:  # the first claim: every lease of the run lasts from now
            self.used = True
            self.renewed_at = time.time()
        got = claim(self.store, self.owner, keys, seconds=self.seconds, skip_batched=skip_batched)
        self.mine.update(got.claimed)
        return got

    def stale(self) -> bool:
        """Whether the leases may have run out (the run was frozen or blocked for long)."""
        return time.time() - self.renewed_at > self.seconds / 2

    def renew(self) -> None:
        now = time.time()
        renew(self.store, self.owner, seconds=self.seconds, now=now)
        self.renewed_at = now

    async def heartbeat(self) -> None:
        """Renew every lease every quarter of the lease duration (cancelled when the run ends)."""
        import asyncio

        while True:
            await asyncio.sleep(max(self.seconds / 4, 0.05))
            if not self.used:
                continue
            # the store busy for long: try again at the next beat (a lease lasts four beats)
            with contextlib.suppress(sqlite3.Error, JudgekitError):
                self.renew()

    def committed(self, keys: Sequence[str]) -> None:
        """Calls with these keys are being stored (inside the writer's transaction): their
        leases end with the same commit."""
        done = [k for k in keys if k in self.mine]
        if done:
            release(self.store, self.owner, done)
            self.mine.difference_update(done)

    def hand_to_batch(self, batch_id: str, keys: Sequence[str]) -> None:
        """Submitted keys: the batch row guards them now; the run leases the batch instead
        (call inside the transaction that records the batch)."""
        self.claim([batch_lease_key(batch_id)])
        release(self.store, self.owner, keys)
        self.mine.difference_update(keys)

    def release_all(self) -> None:
        """End every lease of the run (at its exit); a store that cannot be written now only
        delays the next run until the leases expire."""
        if not self.used:
            forget_owner(self.owner)
            return
        try:
            release_all(self.store, self.owner)
        except (sqlite3.Error, JudgekitError):
            forget_owner(self.owner)
        self.mine.clear()


class Elsewhere:
    """The jobs of one judge that another run answered or held when this run looked, and the
    accounting of them at the end: answered by the other run meanwhile, or left to it."""

    def __init__(self, run: JudgeRun, store: Store) -> None:
        self.run = run
        self.store = store
        self.held: dict[str, tuple[Job, str]] = {}  #: key → (job, owner)
        self.done: list[Job] = []  #: answered in the store since the plan (by another run)

    def add(self, job: Job, owner: str) -> None:
        self.held[job.key] = (job, owner)

    def answered(self, jobs: list[Job]) -> None:
        self.done.extend(jobs)

    def settle(self) -> None:
        """At the end (one pass over the store): the ratings of what the other runs answered
        are written from the stored answers, the rest is counted as theirs."""
        jobs = self.done + [job for job, _ in self.held.values()]
        if not jobs:
            return
        done = take_answered(self.store, self.run, jobs)
        s, followers = self.run.summary, self.run.followers
        owners: Counter[str] = Counter()
        for key, (_, owner) in self.held.items():
            if key in done:
                continue
            n = 1 + len(followers.pop(key, ()))
            s.left_to_other_run += n
            owners[owner] += n
        s.other_runs = [describe_owner(o) for o, _ in owners.most_common()]
        self.held.clear()
        self.done.clear()


class ClaimedJobs:
    """The pending jobs of a remote judge, handed to its workers as the run claims them."""

    def __init__(self, run: JudgeRun, lease: RunLease, store: Store) -> None:
        self.run = run
        self.lease = lease
        self.batch = _claim_batch(run.entry.concurrency)
        self.pending: deque[Job] = deque(run.jobs)
        self.ready: deque[Job] = deque()
        self.elsewhere = Elsewhere(run, store)
        self.dry = False  #: looked at the held jobs again and could claim none

    def next(self) -> Job | None:
        """The next job to send (claimed by this run), or None when nothing is left to claim."""
        while not self.run.stopped:
            if self.ready:
                if self.lease.stale():
                    self._reclaim()
                    continue
                return self.ready.popleft()
            if self.pending:
                chunk = [self.pending.popleft() for _ in range(min(self.batch, len(self.pending)))]
                self._sort(chunk)
                continue
            held = self.elsewhere.held
            if held and not self.dry:
                jobs = [job for job, _ in held.values()]
                held.clear()
                before = len(self.ready)
                self._sort(jobs)
                self.dry = len(self.ready) == before
                continue
            return None
        return None

    def _sort(self, jobs: list[Job]) -> None:
        got = self.lease.claim([j.key for j in jobs])
        mine = set(got.claimed)
        self.ready.extend(j for j in jobs if j.key in mine)
        if got.answered:
            done = set(got.answered)
            self.elsewhere.answered([j for j in jobs if j.key in done])
        for job in jobs:
            owner = got.held.get(job.key)
            if owner is not None:
                self.elsewhere.add(job, owner)

    def _reclaim(self) -> None:
        """After a long freeze: keep only the ready jobs whose leases are still this run's."""
        jobs = list(self.ready)
        self.ready.clear()
        self._sort(jobs)
        self.lease.renew()

    def settle(self) -> None:
        self.elsewhere.settle()


__all__ = ["ClaimedJobs", "Elsewhere", "RunLease", "lease_seconds", "worker_name"]
