"""Batch mode: judge calls through the providers' batch APIs (``batch: true`` in a panel entry).

Anthropic Message Batches and the OpenAI Batch API take many requests at once, answer within 24
hours and cost half the price. The panel submits every pending call of the judge (``custom_id``
is the call key) in batches within the provider's bounds on requests and bytes
(:mod:`~judgekit.judges.batchlimits`), records the batch ids in the store (table ``judge_batches``), polls every
``batch_poll_s`` seconds and writes each result like a streamed answer. Everything is resumable:
a run stopped while batches are in flight (Ctrl-C, ``--no-wait``, a crash) finds them in the store
next time, submits nothing twice and collects them. Failed requests inside a batch become
``error`` ratings and are resubmitted by the next run.

Concurrent runs (:mod:`~judgekit.judges.lease`): a run submits only keys it has claimed and that
no submitted batch holds (checked in the claim's transaction), then records the batch and leases
it instead of its keys in one transaction; a batch leased by another live run is left to that
run to collect.
"""

from __future__ import annotations

import random
import time
from typing import Any

from judgekit.core.redact import redact
from judgekit.judges.base import BatchJudge, Completion, JudgeCallError
from judgekit.judges.batchlimits import jsonl_line, provider_limits, split_batches
from judgekit.judges.jobs import Job, JudgeRun
from judgekit.judges.lease import Elsewhere, RunLease
from judgekit.judges.prices import BATCH_DISCOUNT, discounted
from judgekit.judges.record import Answer, record
from judgekit.store.calls import (
    BatchRow,
    add_batch,
    batch_lease_key,
    mark_collected,
    open_batches,
    release,
)
from judgekit.store.database import Store


async def run_batches(run: JudgeRun, store: Store, *, wait: bool, lease: RunLease) -> None:
    """Submit, poll and collect the batches of one judge."""
    elsewhere = Elsewhere(run, store)
    await _run_batches(run, store, wait=wait, lease=lease, elsewhere=elsewhere)
    elsewhere.settle()


async def _run_batches(
    run: JudgeRun, store: Store, *, wait: bool, lease: RunLease, elsewhere: Elsewhere
) -> None:
    judge = run.judge
    assert isinstance(judge, BatchJudge)  # build_judge refuses batch: true for any other judge
    entry = run.entry
    items = run.panel.items
    s = run.summary
    run.price = discounted(run.price)
    jobs = {j.key: j for j in run.jobs}
    waiting_batches, waiting = _open_batches(store, run, jobs, lease, elsewhere)
    new = [j for j in run.jobs if j.key not in waiting]
    limits = provider_limits(_provider(judge)).at_most(judge.max_batch)
    for start in range(0, len(new), limits.max_requests):
        chunk = _claimed(lease, elsewhere, new[start : start + limits.max_requests])
        if not chunk:
            continue
        entries = [judge.batch_entry(items.request(j.item, j.trial), j.key) for j in chunk]
        # the provider's bound on bytes as well as on requests (one split for every path)
        for part in split_batches([len(jsonl_line(e)) for e in entries], limits):
            submitted = await _submit(run, store, lease, [chunk[i] for i in part],
                                      [entries[i] for i in part])
            if submitted is not None:
                waiting_batches[submitted[0]] = submitted[1]
            if run.stopped:
                return  # a fatal failure: every other batch would fail too
    started = time.perf_counter()
    #: failed reads of an ended batch's results, by batch id: after max_attempts the batch's
    #: calls are errors (a results file that never parses must not hold the run)
    unreadable: dict[str, int] = {}
    while waiting_batches:
        for bid in list(waiting_batches):
            ended, why = False, ""
            try:
                ended = await judge.poll_batch(bid)
                s.attempts += 1
                if not ended:
                    continue
                results = await judge.batch_results(bid)
                s.attempts += 1
            except JudgeCallError as exc:
                if exc.fatal:
                    run.stopped = True
                    s.stopped = exc.reason
                    return
                unreadable[bid] = unreadable.get(bid, 0) + ended
                if unreadable[bid] < run.policy.max_attempts:
                    continue  # a transient failure: try again at the next round
                results = []
                why = f"the provider batch's results could not be read ({exc.reason})"
            _record_results(run, jobs, results, waiting_batches[bid], why,
                            time.perf_counter() - started)
            run.panel.writer.flush()
            with store.transaction():
                mark_collected(store, bid)
                release(store, lease.owner, [batch_lease_key(bid)])
            del waiting_batches[bid]
        if not waiting_batches or not wait:
            break
        import asyncio

        await asyncio.sleep(entry.batch_poll_s)
    s.batch_waiting = sum(len(keys & jobs.keys()) for keys in waiting_batches.values())


def _provider(judge: BatchJudge) -> str:
    """``"anthropic"`` or ``"openai"``: the provider part of the judge's rate-limit group."""
    return judge.limit_group.split(":")[0]


async def _submit(run: JudgeRun, store: Store, lease: RunLease, jobs: list[Job],
                  entries: list[dict[str, Any]]) -> tuple[str, set[str]] | None:
    """Submit one batch and record it (with its keys) in the store, handing the keys' leases to
    it: ``(batch id, keys)``; None when it was not submitted (its calls are errors, retried by the
    next run; a fatal failure also stops the judge: ``run.stopped``)."""
    judge = run.judge
    assert isinstance(judge, BatchJudge)
    s, entry, rubric = run.summary, run.entry, run.panel.rubric
    try:
        bid = await _retrying(run, lambda: judge.submit_batch(entries))
    except JudgeCallError as exc:
        for j in jobs:
            record(run, j, Answer.failed(f"batch not submitted: {exc.reason}"))
        if exc.fatal:
            run.stopped = True
            s.stopped = exc.reason
        return None
    s.attempts += 1
    s.batches += 1
    keys = [j.key for j in jobs]
    now = time.time()
    with store.transaction():
        add_batch(store, BatchRow(batch_id=bid, provider=_provider(judge), judge_id=entry.id,
                                  spec=redact(entry.model), rubric_hash=rubric.hash, keys=keys,
                                  created_at=now, updated_at=now))
        lease.hand_to_batch(bid, keys)
    return bid, set(keys)


def _open_batches(store: Store, run: JudgeRun, jobs: dict[str, Any], lease: RunLease,
                  elsewhere: Elsewhere) -> tuple[dict[str, set[str]], set[str]]:
    """``(the open batches this run collects: their keys by batch id, every key in an open
    batch)``; a batch another run holds leaves its jobs to that run (``elsewhere``)."""
    waiting_batches: dict[str, set[str]] = {}
    waiting: set[str] = set()
    for bid, in_batch in open_batches(store, run.entry.id, run.panel.rubric.hash).items():
        waiting |= in_batch
        got = lease.claim([batch_lease_key(bid)])
        if got.claimed:
            waiting_batches[bid] = in_batch
            continue
        owner = got.held[batch_lease_key(bid)]  # another run collects this batch
        for key in in_batch & jobs.keys():
            elsewhere.add(jobs[key], owner)
    return waiting_batches, waiting


def _record_results(run: JudgeRun, jobs: dict[str, Any], results: Any, keys: set[str], why: str,
                    latency: float) -> None:
    """Record an ended batch's answers; a key of the batch without one is an error (``why``, or
    no result in the batch)."""
    answered: set[str] = set()
    for key, res in results:
        job = jobs.get(key)
        if job is None or key in answered:
            continue  # answered elsewhere meanwhile, or not part of this panel now
        answered.add(key)
        if isinstance(res, Completion):
            record(run, job, Answer(res, None, latency, 1))
        else:
            record(run, job, Answer.failed(res.reason, latency))
    missing = why or "no result in the provider batch (expired or cancelled, or an unreadable result)"
    for key in keys - answered:
        if key in jobs:
            record(run, jobs[key], Answer.failed(missing, latency))


def _claimed(lease: RunLease, elsewhere: Elsewhere, chunk: list[Job]) -> list[Job]:
    """The jobs of ``chunk`` this run may submit: claimed now, and in no submitted batch (another
    run's batch submitted since this run looked, or one of a run that is gone: collected later)."""
    got = lease.claim([j.key for j in chunk], skip_batched=True)
    if got.answered:
        done = set(got.answered)
        elsewhere.answered([j for j in chunk if j.key in done])
    batched = set(got.batched)
    for job in chunk:
        if job.key in got.held:
            elsewhere.add(job, got.held[job.key])
        elif job.key in batched:
            elsewhere.add(job, "a provider batch")
    mine = set(got.claimed)
    return [j for j in chunk if j.key in mine]


async def _retrying(run: JudgeRun, make: Any) -> str:
    """Submit with the judge's retry policy (transient failures retried, then raised)."""
    import asyncio

    rng = random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return str(await make())
        except JudgeCallError as exc:
            if not exc.retryable or attempt >= run.policy.max_attempts:
                raise
            await asyncio.sleep(run.policy.delay(attempt, exc.retry_after, rng))


__all__ = ["BATCH_DISCOUNT", "discounted", "run_batches"]
