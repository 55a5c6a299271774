"""Batch mode: judge calls through the providers' batch APIs (``batch: true`` in a panel entry).

Anthropic Message Batches and the OpenAI Batch API take many requests at once, answer within 24
hours and cost half the price. The panel submits every pending call of the judge (``custom_id``
is the call key), records the batch ids in the store (table ``judge_batches``), polls every
``batch_poll_s`` seconds and writes each result like a streamed answer. Everything is resumable:
a run stopped while batches are in flight (Ctrl-C, ``--no-wait``, a crash) finds them in the store
next time, submits nothing twice and collects them. Failed requests inside a batch become
``error`` ratings and are resubmitted by the next run.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import TYPE_CHECKING, Any

from judgekit.judges.base import Completion, JudgeCallError, Price
from judgekit.rubric import Rubric
from judgekit.store import Store

if TYPE_CHECKING:
    from judgekit.judges.panel import ProgressSink, _Items, _JudgeRun, _Writer
    from judgekit.prompt import AnswerParser

#: both providers bill batch requests at half the price
BATCH_DISCOUNT = 0.5


def discounted(price: Price | None) -> Price | None:
    if price is None:
        return None
    return Price(
        input=price.input * BATCH_DISCOUNT,
        output=price.output * BATCH_DISCOUNT,
        cached_input=None if price.cached_input is None else price.cached_input * BATCH_DISCOUNT,
        cache_write=None if price.cache_write is None else price.cache_write * BATCH_DISCOUNT,
    )


async def run_batches(
    run: _JudgeRun,
    items: _Items,
    parser: AnswerParser,
    rubric: Rubric,
    writer: _Writer,
    store: Store,
    progress: ProgressSink | None,
    *,
    wait: bool,
) -> None:
    """Submit, poll and collect the batches of one judge."""
    from judgekit.judges.panel import _record

    judge: Any = run.judge
    entry = run.entry
    s = run.summary
    run.price = discounted(run.price)
    jobs = {j.key: j for j in run.jobs}
    open_batches: dict[str, set[str]] = {}
    for bid, keys in store.conn.execute(
        "SELECT batch_id, keys FROM judge_batches WHERE judge_id = ? AND rubric_hash = ?"
        " AND status = 'submitted' ORDER BY created_at",
        (entry.id, rubric.hash),
    ):
        open_batches[bid] = set(json.loads(keys))
    waiting = set().union(*open_batches.values()) if open_batches else set()
    new = [j for j in run.jobs if j.key not in waiting]
    for start in range(0, len(new), judge.max_batch):
        chunk = new[start : start + judge.max_batch]
        entries = [judge.batch_entry(items.request(j.item, j.trial), j.key) for j in chunk]
        try:
            bid = await _retrying(run, lambda entries=entries: judge.submit_batch(entries))
        except JudgeCallError as exc:
            for j in chunk:
                _record(run, items, j, parser, rubric, writer, progress, None,
                        f"batch not submitted: {exc.reason}", 0.0, 1)
            if exc.fatal:
                run.stopped = True
                s.stopped = exc.reason
                return
            continue
        s.attempts += 1
        s.batches += 1
        keys = [j.key for j in chunk]
        now = time.time()
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO judge_batches (batch_id, provider, judge_id, spec, rubric_hash, keys,"
                " status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'submitted', ?, ?)",
                (bid, judge.limit_group.split(":")[0], entry.id, entry.model, rubric.hash,
                 json.dumps(keys), now, now),
            )
        open_batches[bid] = set(keys)
    started = time.perf_counter()
    while open_batches:
        for bid in list(open_batches):
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
                continue  # a transient polling failure: try again at the next round
            answered: set[str] = set()
            latency = time.perf_counter() - started
            for key, res in results:
                job = jobs.get(key)
                if job is None or key in answered:
                    continue  # answered elsewhere meanwhile, or not part of this panel now
                answered.add(key)
                if isinstance(res, Completion):
                    _record(run, items, job, parser, rubric, writer, progress, res, None, latency, 1)
                else:
                    _record(run, items, job, parser, rubric, writer, progress, None, res.reason,
                            latency, 1)
            for key in open_batches[bid] - answered:
                if key in jobs:
                    _record(run, items, jobs[key], parser, rubric, writer, progress, None,
                            "no result in the provider batch (expired or cancelled)", latency, 1)
            writer.flush()
            with store.transaction() as conn:
                conn.execute(
                    "UPDATE judge_batches SET status = 'collected', updated_at = ? WHERE batch_id = ?",
                    (time.time(), bid),
                )
            del open_batches[bid]
        if not open_batches or not wait:
            break
        await asyncio.sleep(entry.batch_poll_s)
    s.batch_waiting = sum(len(keys & jobs.keys()) for keys in open_batches.values())


async def _retrying(run: _JudgeRun, make: Any) -> str:
    """Submit with the judge's retry policy (transient failures retried, then raised)."""
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
