"""Sending calls one by one: local judges in a loop, remote judges through concurrent workers
with adaptive concurrency, a shared rate limiter and retries (backoff, ``retry-after``).

A fatal failure (bad key, unknown model) stops the judge: every other call would fail too. A
retryable one is retried within the judge's budget (``max_attempts``), then stored as an
``error`` rating, which the next run asks again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Coroutine, Iterator
from typing import Any, Protocol

from judgekit.judges.base import Completion, JudgeCallError
from judgekit.judges.bounds import bound_failure, call_deadline, deadline_reason
from judgekit.judges.jobs import Job, JudgeRun
from judgekit.judges.record import Answer, record

#: calls in a row that could not connect (each after all its attempts) before the judge is
#: stopped with one sentence naming the host: a server that is down fails fast, not after every
#: item's retries
MAX_CONNECTION_FAILURES = 3

_DEFAULT_HOSTS = {"anthropic": "api.anthropic.com", "openai": "api.openai.com"}


def _judge_host(run: JudgeRun) -> str:
    """The host a remote judge's calls go to (``127.0.0.1:8000``), from its base URL or its
    provider's default."""
    import re

    for text in (getattr(run.entry, "base_url", None), run.entry.model):
        m = re.search(r"https?://([^/#\s]+)", str(text or ""))
        if m:
            return m.group(1)
    return _DEFAULT_HOSTS.get(str(run.entry.model).split(":", 1)[0], "the provider")


def _connection_failed(run: JudgeRun, failure: JudgeCallError) -> None:
    """Count a call that could not connect; stop the judge after too many in a row."""
    if not failure.reason.startswith("connection error"):
        run.connection_failures = 0
        return
    run.connection_failures += 1
    if run.connection_failures >= MAX_CONNECTION_FAILURES and not run.stopped:
        run.stopped = True
        run.summary.stopped = (
            f"cannot connect to {_judge_host(run)}: {run.connection_failures} calls in a row failed to "
            "connect (after their retries); is the server running and the URL right? The "
            "remaining calls were not sent; run again when it answers."
        )


def answer_locally(run: JudgeRun) -> None:
    """Answer every job of a local judge (rules, replay), committing every 500 answers."""
    items, writer = run.panel.items, run.panel.writer
    for n, job in enumerate(run.jobs, start=1):
        t = time.perf_counter()
        try:
            comp: Completion | None = run.judge.answer(items.request(job.item, job.trial))
            err = None
        except JudgeCallError as exc:
            comp, err = None, exc.reason
        record(run, job, Answer(comp, err, time.perf_counter() - t, 1))
        if n % 500 == 0:
            writer.flush()
    writer.flush()


class JobSource(Protocol):
    """Where workers take their jobs: :class:`~judgekit.judges.lease.ClaimedJobs` hands out the
    jobs this run has claimed; None when nothing is left."""

    def next(self) -> Job | None: ...


class AllJobs:
    """Every job of the judge, in order (no claims: a store no other run writes to)."""

    def __init__(self, jobs: list[Job]) -> None:
        self._jobs: Iterator[Job] = iter(jobs)

    def next(self) -> Job | None:
        return next(self._jobs, None)


def workers(
    run: JudgeRun, rng: random.Random, source: JobSource | None = None
) -> list[Coroutine[Any, Any, None]]:
    """The workers of a remote judge (``concurrency`` of them, sharing one source of jobs)."""
    queue = source if source is not None else AllJobs(run.jobs)
    return [_worker(run, queue, rng) for _ in range(min(run.entry.concurrency, len(run.jobs)))]


async def _worker(run: JudgeRun, queue: JobSource, rng: random.Random) -> None:
    import asyncio

    items = run.panel.items
    est = 0
    deadline = call_deadline(run.entry.timeout_s, run.entry.call_deadline_s)
    while (job := queue.next()) is not None:
        if run.stopped:
            return
        request = items.request(job.item, job.trial)
        if run.rate.tpm:  # about 4 characters a token, and the whole answer budget
            est = (run.system_chars + len(request.user)) // 4 + run.entry.max_tokens
        attempt = 0
        t_start = time.perf_counter()
        while True:
            attempt += 1
            epoch = await run.conc.acquire()
            try:
                await run.rate.acquire(est)
                run.summary.attempts += 1
                try:
                    async with asyncio.timeout(deadline):
                        comp = await run.judge.complete(request)
                    failure: JudgeCallError | None = None
                except JudgeCallError as exc:
                    failure = exc
                except TimeoutError:
                    failure = JudgeCallError(deadline_reason(deadline), retryable=True)
                except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as exc:
                    # a judge (a plugin's too) choking on a hostile answer: one error rating,
                    # never the end of the run
                    deep = ": nested too deep" if isinstance(exc, RecursionError) else ""
                    failure = bound_failure(exc) or JudgeCallError(
                        f"unreadable answer ({type(exc).__name__}{deep})", retryable=False)
            finally:
                run.conc.release()
            if failure is None:
                run.connection_failures = 0
                run.conc.on_success()
                if run.rate.tpm:
                    run.rate.settle(est, comp.input_tokens + comp.output_tokens)
                record(run, job, Answer(comp, None, time.perf_counter() - t_start, attempt))
                break
            if failure.rate_limited:
                run.summary.rate_limited += 1
                run.conc.on_rate_limited(epoch)
                if failure.retry_after and run.conc.at_minimum:
                    # Backing off further is only possible in time: the whole group waits, never
                    # longer than max_backoff_s whatever the provider asked.
                    run.rate.pause(min(failure.retry_after, run.policy.max_backoff_s))
            if failure.fatal:
                run.stopped = True
                run.summary.stopped = failure.reason
            if failure.fatal or not failure.retryable or attempt >= run.policy.max_attempts or run.stopped:
                _connection_failed(run, failure)
                reason = failure.reason if attempt == 1 else f"{failure.reason} (after {attempt} attempts)"
                record(run, job, Answer.failed(reason, time.perf_counter() - t_start, attempt))
                break
            await asyncio.sleep(run.policy.delay(attempt, failure.retry_after, rng))


__all__ = ["MAX_CONNECTION_FAILURES", "AllJobs", "JobSource", "answer_locally", "workers"]
