"""Run a judge panel: every judge x every item x every trial, concurrent, cached, resumable.

A run reads as its pipeline: **plan** (:mod:`~judgekit.judges.plan`: what is answered already,
what to retire, what is left), **send** (:mod:`~judgekit.judges.stream` one call at a time,
:mod:`~judgekit.judges.batch` through provider batch APIs), **record**
(:mod:`~judgekit.judges.record`: each answer parsed, counted and handed to the group-committing
:mod:`~judgekit.judges.writer`), then the aggregates (:mod:`~judgekit.judges.panel_aggregates`).
The panel file is :mod:`~judgekit.judges.panelfile`; what a run did, :mod:`~judgekit.judges.summary`.

Each call is keyed by (judge spec + parameters, rubric hash, item content hash, trial): a key
already answered (``ok`` or ``abstain``) is never sent again, so a rerun makes zero calls and a
changed rubric, judge parameter or item text makes new keys. Results are committed as they arrive
(group commit, WAL), so ``kill -9`` loses at most the calls in flight. ``error`` results are
stored too (with the reason) and retried on the next run.

Concurrent runs on one store split the work: a remote judge's call is sent only by the run that
claimed it (a lease in the store, :mod:`~judgekit.judges.lease`), so two runs together send each
call once; a crashed run's claims are retried by the next run.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from judgekit.core.redact import redact
from judgekit.errors import JudgekitError
from judgekit.judges.aggregate import default_min_votes
from judgekit.judges.base import Judge, JudgeContext, JudgeEntry, build_judge, spec_params
from judgekit.judges.framing import variables_key
from judgekit.judges.jobs import Items, JudgeRun, PanelRun
from judgekit.judges.lease import ClaimedJobs, RunLease, lease_seconds
from judgekit.judges.limits import AdaptiveConcurrency, RateLimiter, RetryPolicy
from judgekit.judges.panelfile import (
    AggregateSpec,
    Panel,
    PanelFile,
    load_panel,
    panel_from_dict,
    panel_rater_ids,
)
from judgekit.judges.plan import TYPICAL_ANSWER_TOKENS, estimate, plan
from judgekit.judges.stream import answer_locally, workers
from judgekit.judges.summary import (
    JudgeSummary,
    PanelSummary,
    ProgressSink,
    ReparseSummary,
    merge_summaries,
)
from judgekit.judges.writer import Writer
from judgekit.rubric.prompt import AnswerParser, answer_schema, fill_variables, system_prompt
from judgekit.store.calls import has_open_batches, stored_cost
from judgekit.store.database import Store
from judgekit.store.locking import forget_owner

#: what :func:`run_panel` hands each (sub-)panel's plan to when it does not send it
PlanHook = Callable[[Panel, PanelRun, list[JudgeRun]], None]

if TYPE_CHECKING:  # importable from here, imported on first use (see __getattr__)
    from judgekit.judges.panel_aggregates import write_aggregates
    from judgekit.judges.reparse import reparse_panel


def run_panel(
    panel: Panel,
    store: Store,
    *,
    only: Sequence[str] | None = None,
    progress: ProgressSink | None = None,
    env: dict[str, str] | None = None,
    dry_run: bool = False,
    wait: bool = True,
    planned: PlanHook | None = None,
    worker: str = "",
) -> PanelSummary:
    """Run ``panel`` into ``store``; returns what was done. Builds every judge first (unknown
    spec, missing key: one error sentence, nothing sent), then sends only what is missing.

    ``dry_run``: send and write nothing; the summary says how many calls a run would make and
    what they would cost (``estimated_cost_usd``, ``max_cost_usd``). ``wait=False``: judges in
    batch mode submit and collect what has ended, without waiting for the rest. ``planned``: each
    (sub-)panel's plan goes to this hook instead of being sent (batch files,
    :mod:`~judgekit.judges.batchfile`); the run itself then needs no key and writes nothing.
    ``worker``: the name the run gives its leases (:mod:`~judgekit.judges.run_progress`).

    A panel with ``rubric_by`` or ``variables`` runs as its sub-panels (``panel.groups``), one
    after the other, each under its own rubric and variables; the summary adds them up."""
    if panel.groups:
        parts: list[PanelSummary] = []
        for group in panel.groups:
            parts.append(run_panel(group, store, only=only, progress=progress, env=env,
                                   dry_run=dry_run, wait=wait, planned=planned, worker=worker))
            if parts[-1].interrupted:
                break
        return merge_summaries(parts, [g.label for g in panel.groups], items=len(panel.table))
    t0 = time.perf_counter()
    rubric = panel.rubric
    entries = _chosen(panel, only)
    # A judge id that is already a human or reference rater would silently replace their ratings.
    clash = store.other_kind_rater([e.id for e in entries])
    if clash:
        raise JudgekitError(
            f"Judge id {clash[0]!r} of {panel.source} is already a {clash[1]} rater in {store.path}; "
            "give the judge another id."
        )
    ctx = JudgeContext(
        rubric=rubric,
        system=fill_variables(system_prompt(rubric), panel.variables),
        schema=answer_schema(rubric),
        base_dir=str(panel.base_dir),
        dry_run=dry_run or planned is not None,
        **({"env": env} if env is not None else {}),
    )
    judges = _build(panel, entries, ctx)
    seconds = lease_seconds(os.environ if env is None else env)
    items = Items(panel.table, key_extra=variables_key(panel.variables))
    shared = PanelRun(rubric, items, AnswerParser(rubric), Writer(store, rubric), progress)
    _store_items(panel, store, dry_run=dry_run or planned is not None)
    runs = _judge_runs(shared, judges, len(ctx.system))
    for run in runs:
        plan(store, run)
    result = PanelSummary(rubric=rubric.ref, items=len(shared.items.ids),
                          judges=[r.summary for r in runs])
    if planned is not None:
        planned(panel, shared, runs)
        result.seconds = time.perf_counter() - t0
        return result
    if dry_run:
        for run in runs:
            estimate(run)
        result.dry_run = True
        result.seconds = time.perf_counter() - t0
        return result
    result.interrupted = _send_all(store, shared, runs, RunLease(store, seconds, name=worker), wait=wait)
    # Also when a judge was stopped: its ratings may have changed (answered or retired), and a
    # derived rater must never keep votes that are no longer in the store. An interrupted run
    # leaves them to the next run.
    if panel.file.aggregate and not result.interrupted:
        from judgekit.judges.panel_aggregates import write_aggregates

        result.aggregates = write_aggregates(panel, store)
    result.seconds = time.perf_counter() - t0
    return result


def _store_items(panel: Panel, store: Store, *, dry_run: bool) -> None:
    """Store the panel's items (a dry run only checks them). An edited item text is judged again
    (the judges' ratings of the old text are retired), unless humans labelled the stored text:
    then the edit is refused, by the dry run as well."""
    items_source = str(panel.base_dir / panel.file.items)
    from judgekit.store.items_table import content_id_twins

    twins = content_id_twins(store, panel.table)
    if twins:
        new_id, stored_id = twins[0]
        raise JudgekitError(
            f"Panel file {panel.source}: item {new_id!r} of {items_source} has the same text as the "
            f"stored item {stored_id!r} ({len(twins)} such item{'s' if len(twins) != 1 else ''}), so it "
            "would be stored and judged a second time, apart from its human labels; give the panel the "
            "stored ids: `judgekit export items --out items.csv` and point items: at that file.")
    if dry_run:
        store.check_item_texts(panel.table, source=items_source, new_text="if_unlabelled")
    else:
        store.put_items(panel.table, source=items_source, new_text="if_unlabelled")


def _send_all(store: Store, shared: PanelRun, runs: list[JudgeRun], lease: RunLease, *,
              wait: bool) -> bool:
    """Send the runs' calls under a lease of the store, then release it and record each judge's
    stored cost; returns whether Ctrl-C interrupted the sending."""
    progress = shared.progress
    shared.writer.flush()
    shared.writer.on_commit = lease.committed
    if progress is not None:
        progress.start(sum(r.pending for r in runs), sum(r.summary.cached for r in runs))
    interrupted = False
    try:
        _send(store, shared.writer, runs, lease, wait=wait)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        try:
            shared.writer.flush()
        finally:
            if shared.writer.lock_error is None:
                lease.release_all()
            else:  # the store stayed locked: the run's leases end with it, without another wait
                forget_owner(lease.owner)
        if progress is not None:
            progress.stop()
        for run in runs:
            run.summary.stored_cost_usd = stored_cost(store, run.entry.id, shared.rubric.hash)
            if run.conc.decreases:
                run.summary.lowest_concurrency = run.conc.lowest
    return interrupted


def _chosen(panel: Panel, only: Sequence[str] | None) -> list[JudgeEntry]:
    """The entries ``--only`` names (all when None); an unknown id is an error."""
    if only is not None:
        unknown = sorted(set(only) - {e.id for e in panel.judges})
        if unknown:
            raise JudgekitError(
                f"--only names {unknown[0]!r}, which is not a judge of {panel.source} "
                f"(judges: {', '.join(e.id for e in panel.judges)})."
            )
    return [e for e in panel.judges if only is None or e.id in only]


def _build(
    panel: Panel, entries: list[JudgeEntry], ctx: JudgeContext
) -> list[tuple[JudgeEntry, Judge, str]]:
    """Every judge built, with its parameters; two judges with the same parameters are an error."""
    from judgekit.judges.base import MissingKeyError, missing_keys_message

    judges, missing = [], []
    for e in entries:  # every missing key first, so one message names them all
        try:
            judges.append((e, build_judge(e, ctx, source=panel.source)))
        except MissingKeyError as exc:
            missing.append(exc)
    if missing:
        raise JudgekitError(f"Panel file {panel.source}: {missing_keys_message(missing)}")
    built = [(e, j, spec_params(e, j)) for e, j in judges]
    seen_params: dict[str, str] = {}
    for entry, _, params in built:
        twin = seen_params.setdefault(params, entry.id)
        if twin != entry.id:
            raise JudgekitError(
                f"Panel {panel.source}: judges {twin!r} and {entry.id!r} have the same model and "
                "parameters, so they would get the same (cached) answers; to ask one judge "
                "several times use trials."
            )
    return built


def _judge_runs(
    shared: PanelRun, judges: list[tuple[JudgeEntry, Judge, str]], system_chars: int
) -> list[JudgeRun]:
    """One :class:`JudgeRun` per judge; judges of one provider and model share a rate limiter."""
    limiters: dict[str, RateLimiter] = {}
    runs = []
    for entry, judge, params in judges:
        rate = limiters.get(judge.limit_group)
        if rate is None:
            rate = limiters[judge.limit_group] = RateLimiter(entry.max_rpm, entry.max_tpm)
        else:
            rate.tighten(entry.max_rpm, entry.max_tpm)
        runs.append(JudgeRun(
            panel=shared, entry=entry, judge=judge, params=params,
            summary=JudgeSummary(id=entry.id, spec=redact(entry.model),
                                 total=len(shared.items.ids) * entry.trials),
            conc=AdaptiveConcurrency(entry.concurrency), rate=rate,
            policy=RetryPolicy(entry.max_attempts, entry.backoff_s, entry.max_backoff_s),
            price=judge.price, system_chars=system_chars,
        ))
    return runs


def _send(store: Store, writer: Writer, runs: list[JudgeRun], lease: RunLease, *, wait: bool) -> None:
    """Local judges answer first, one by one (not leased: they answer at once, and two runs
    store the same answer); then remote and batched judges run together, on claimed calls."""
    for run in runs:
        if run.judge.local:
            answer_locally(run)
    remote = [r for r in runs if not r.judge.local and r.jobs and not r.entry.batch]
    batched = [r for r in runs if r.entry.batch
               and (r.jobs or has_open_batches(store, r.entry.id, r.panel.rubric.hash))]
    if remote or batched:
        import asyncio

        asyncio.run(_send_remote(store, writer, remote, batched, lease, wait=wait))


async def _send_remote(
    store: Store,
    writer: Writer,
    remote: list[JudgeRun],
    batched: list[JudgeRun],
    lease: RunLease,
    *,
    wait: bool,
) -> None:
    """Stream the remote judges' calls and send the batched ones, all at once, while the writer
    commits answers as they arrive and the lease's heartbeat renews the run's claims; closes the
    judges' connections at the end."""
    import asyncio

    background = [asyncio.create_task(writer.run()), asyncio.create_task(lease.heartbeat())]
    rng = random.Random()
    runs = [*remote, *batched]
    sources = [ClaimedJobs(run, lease, store) for run in remote]
    for run in remote:
        run.judge.prepare()
    try:
        from judgekit.judges.batch import run_batches

        tasks = [asyncio.create_task(run_batches(run, store, wait=wait, lease=lease)) for run in batched]
        tasks += [asyncio.create_task(w) for run, source in zip(remote, sources, strict=True)
                  for w in workers(run, rng, source)]
        await asyncio.gather(*tasks)
        for source in sources:
            source.settle()
    finally:
        for task in background:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        writer.flush()
        for run in runs:
            with contextlib.suppress(Exception):
                await run.judge.aclose()
            if run.stopped:
                s = run.summary
                done = s.ok + s.abstain + s.error + s.other_run + s.left_to_other_run
                s.not_attempted = run.pending_total - done


def __getattr__(name: str) -> Any:
    """``reparse_panel`` and ``write_aggregates``, still importable from here, are imported on
    first use (a run that needs neither does not load them)."""
    if name == "reparse_panel":
        from judgekit.judges.reparse import reparse_panel

        return reparse_panel
    if name == "write_aggregates":
        from judgekit.judges.panel_aggregates import write_aggregates

        return write_aggregates
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TYPICAL_ANSWER_TOKENS",
    "AggregateSpec",
    "JudgeSummary",
    "Panel",
    "PanelFile",
    "PanelSummary",
    "ProgressSink",
    "ReparseSummary",
    "default_min_votes",
    "load_panel",
    "panel_from_dict",
    "panel_rater_ids",
    "reparse_panel",
    "run_panel",
    "write_aggregates",
]
