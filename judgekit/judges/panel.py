"""Run a judge panel: every judge x every item x every trial, concurrent, cached, resumable.

A panel file (YAML, unknown keys are errors)::

    rubric: refusal                 # shipped name or a path to a rubric YAML
    items: items.jsonl              # CSV/JSONL/Parquet: item_id, prompt or messages, response, ...
    judges:
      - id: haiku
        model: anthropic:claude-haiku-4-5
        trials: 3
        concurrency: 16
        max_rpm: 1000
      - id: keywords
        model: rules:refusal-keywords
    aggregate: {methods: [majority], tie: abstain}

Each call is keyed by (judge spec + parameters, rubric hash, item content hash, trial): a key
already answered (``ok`` or ``abstain``) is never sent again, so a rerun makes zero calls and a
changed rubric, judge parameter or item text makes new keys. Results are committed as they arrive
(group commit, WAL), so ``kill -9`` loses at most the calls in flight. ``error`` results are
stored too (with the reason) and retried on the next run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgekit.config import first_error, read_yaml_mapping
from judgekit.data import item_content_hash, validate_items
from judgekit.errors import JudgekitError
from judgekit.io.tables import read_table
from judgekit.judges.aggregate import METHODS, aggregate, check_method, default_min_votes
from judgekit.judges.base import (
    Completion,
    Judge,
    JudgeCallError,
    JudgeContext,
    JudgeEntry,
    JudgeRequest,
    build_judge,
    call_key,
    spec_params,
)
from judgekit.judges.limits import AdaptiveConcurrency, RateLimiter, RetryPolicy
from judgekit.judges.prices import call_cost
from judgekit.prompt import AnswerParser, answer_schema, system_prompt, user_message
from judgekit.rubric import Rubric, load_rubric
from judgekit.store import Store


# --------------------------------------------------------------------------- the panel file
class AggregateSpec(BaseModel):
    """How the panel's derived raters (``panel:<method>``) are computed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    methods: list[str] = Field(default_factory=lambda: ["majority"])
    tie: str = "abstain"
    min_votes: int | None = Field(None, ge=1)
    judges: list[str] | None = None

    @model_validator(mode="after")
    def _check(self) -> AggregateSpec:
        for m in self.methods:
            if m not in METHODS:
                raise ValueError(f"unknown aggregate method {m!r}; use {', '.join(METHODS)}")
        if self.tie not in ("abstain", "highest", "lowest"):
            raise ValueError(f"tie {self.tie!r} must be abstain, highest or lowest")
        return self


class PanelFile(BaseModel):
    """The YAML of a panel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rubric: str
    items: str
    judges: list[JudgeEntry] = Field(min_length=1)
    aggregate: AggregateSpec | None = Field(default_factory=lambda: AggregateSpec.model_validate({}))
    description: str = ""

    @model_validator(mode="after")
    def _unique_ids(self) -> PanelFile:
        ids = [j.id for j in self.judges]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"judge id {dup[0]!r} is used twice; give each judge its own id")
        if self.aggregate and self.aggregate.judges:
            unknown = [j for j in self.aggregate.judges if j not in ids]
            if unknown:
                raise ValueError(f"aggregate.judges names {unknown[0]!r}, which is not a judge id")
        return self


@dataclass
class Panel:
    """A loaded, validated panel: the file, its rubric and its items."""

    file: PanelFile
    rubric: Rubric
    items: pd.DataFrame
    base_dir: Path
    source: str

    @property
    def judges(self) -> list[JudgeEntry]:
        return list(self.file.judges)


def load_panel(path: str | Path) -> Panel:
    """Read and validate a panel file, its rubric and its items (sends nothing)."""
    p = Path(path)
    data = read_yaml_mapping(p, what="Panel file", expect="rubric, items and judges")
    return panel_from_dict(data, base_dir=p.parent, source=str(p))


def panel_from_dict(data: dict[str, Any], *, base_dir: str | Path = ".", source: str = "panel") -> Panel:
    """Build a :class:`Panel` from the parsed YAML (paths relative to ``base_dir``)."""
    base = Path(base_dir)
    try:
        pf = PanelFile(**data)
    except ValidationError as exc:
        raise JudgekitError(f"Panel file {source}: {first_error(exc)}.") from None
    rubric_ref = pf.rubric
    local = base / rubric_ref
    rubric = load_rubric(local if local.suffix in (".yaml", ".yml") and local.exists() else rubric_ref)
    if pf.aggregate:
        for m in pf.aggregate.methods:
            check_method(m, rubric)
    items_path = base / pf.items
    table = read_table(items_path)
    items = validate_items(table, source=str(items_path))
    return Panel(file=pf, rubric=rubric, items=items, base_dir=base, source=source)


# --------------------------------------------------------------------------- progress, summary
class ProgressSink(Protocol):
    """Receives progress events (the CLI's rich bar implements it)."""

    def start(self, total: int, cached: int) -> None: ...

    def advance(self, status: str, tokens: int, cost: float) -> None: ...

    def stop(self) -> None: ...


@dataclass
class JudgeSummary:
    """What one judge did in one run."""

    id: str
    spec: str
    total: int = 0  #: item x trial pairs
    cached: int = 0  #: answered by an earlier run (no call)
    called: int = 0  #: answered in this run
    ok: int = 0
    abstain: int = 0
    error: int = 0
    not_attempted: int = 0  #: left out because the judge was stopped
    retired: int = 0  #: stale ratings removed (other parameters, item text or trial count)
    attempts: int = 0  #: requests sent, retries included
    rate_limited: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    stored_cost_usd: float = 0.0  #: all calls of this judge in the store, under this rubric
    errors: Counter[str] = field(default_factory=Counter)
    abstentions: Counter[str] = field(default_factory=Counter)
    stopped: str | None = None
    lowest_concurrency: float | None = None
    batches: int = 0  #: provider batches submitted in this run
    batch_waiting: int = 0  #: calls still waiting in provider batches (run again to collect)
    pending: int = 0  #: dry run: calls a run would make
    estimated_cost_usd: float = 0.0  #: dry run: with answers of typical length
    max_cost_usd: float = 0.0  #: dry run: if every answer used max_tokens


@dataclass
class PanelSummary:
    """What a run did, per judge; ``complete`` is False when a judge was stopped or interrupted."""

    rubric: str
    items: int
    judges: list[JudgeSummary]
    seconds: float = 0.0
    interrupted: bool = False
    aggregates: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(j.stopped is None for j in self.judges)

    @property
    def calls(self) -> int:
        """Judge calls answered in this run (all judge kinds; see ``requests`` for HTTP)."""
        return sum(j.called for j in self.judges)

    @property
    def requests(self) -> int:
        return sum(j.attempts for j in self.judges)

    def totals(self) -> dict[str, Any]:
        keys = ("total", "cached", "called", "ok", "abstain", "error", "not_attempted", "attempts",
                "input_tokens", "output_tokens", "cached_tokens")
        out: dict[str, Any] = {k: sum(getattr(j, k) for j in self.judges) for k in keys}
        out["cost_usd"] = round(sum(j.cost_usd for j in self.judges), 6)
        return out

    def lines(self) -> list[str]:
        if self.dry_run:
            return self._dry_lines()
        t = self.totals()
        out = [
            f"Panel over {self.items} items under {self.rubric}: {t['called']} answered now, "
            f"{t['cached']} from cache, {t['abstain']} abstentions, {t['error']} errors, "
            f"{t['input_tokens'] + t['output_tokens']} tokens, ${t['cost_usd']:.4f} "
            f"in {self.seconds:.1f}s."
        ]
        for j in self.judges:
            extra = f", {j.not_attempted} not attempted" if j.not_attempted else ""
            out.append(
                f"  {j.id} [{j.spec}]: {j.ok} ok, {j.abstain} abstain, {j.error} error{extra}; "
                f"{j.called} answered, {j.cached} cached, {j.attempts} requests; "
                f"{j.input_tokens}+{j.output_tokens} tokens ({j.cached_tokens} cached), "
                f"${j.cost_usd:.4f} now, ${j.stored_cost_usd:.4f} in total"
            )
            if j.retired:
                out.append(f"    {j.retired} earlier ratings retired to the history (made with other "
                           "parameters, for an older item text or a trial no longer asked for)")
            for reason, n in j.errors.most_common(5):
                out.append(f"    error x{n}: {reason}")
            for reason, n in j.abstentions.most_common(3):
                out.append(f"    abstain x{n}: {reason}")
            if j.rate_limited:
                low = f", concurrency lowered to {j.lowest_concurrency:g}" if j.lowest_concurrency else ""
                out.append(f"    rate limited {j.rate_limited} times{low}")
            if j.batches:
                out.append(f"    submitted {j.batches} provider batch{'es' if j.batches > 1 else ''}")
            if j.batch_waiting:
                out.append(f"    {j.batch_waiting} calls waiting in provider batches; run again "
                           "to collect them")
            if j.stopped:
                out.append(f"    STOPPED: {j.stopped}")
        for rater, n in self.aggregates.items():
            out.append(f"  {rater}: {n} derived ratings")
        if self.interrupted:
            out.append("Interrupted: everything answered so far is stored; run again to finish.")
        return out

    def _dry_lines(self) -> list[str]:
        pending = sum(j.pending for j in self.judges)
        est = sum(j.estimated_cost_usd for j in self.judges)
        top = sum(j.max_cost_usd for j in self.judges)
        out = [f"Dry run over {self.items} items under {self.rubric}: {pending} calls to make, "
               f"{sum(j.cached for j in self.judges)} answered already; about ${est:.4f} "
               f"(at most ${top:.4f} if every answer used max_tokens). Nothing was sent."]
        for j in self.judges:
            cost = (f"~{j.input_tokens:,} input tokens, about ${j.estimated_cost_usd:.4f} "
                    f"(at most ${j.max_cost_usd:.4f})" if j.max_cost_usd else "no price (free or unknown)")
            out.append(f"  {j.id} [{j.spec}]: {j.pending} to make, {j.cached} cached; {cost}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "items": self.items,
            "complete": self.complete,
            "seconds": round(self.seconds, 3),
            "totals": self.totals(),
            "judges": [
                {k: (dict(v) if isinstance(v, Counter) else v) for k, v in j.__dict__.items()}
                for j in self.judges
            ],
            "aggregates": self.aggregates,
        }


# --------------------------------------------------------------------------- writing
_CALL_SQL = (
    "INSERT OR REPLACE INTO calls (key, judge_id, spec, params, rubric, rubric_hash, item_id,"
    " item_hash, trial, raw, status, label, rationale, error, input_tokens, output_tokens,"
    " cached_tokens, cost_usd, latency_s, attempts, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_HISTORY_SQL = (
    "INSERT INTO rating_history SELECT item_id, rater_id, rater_kind, rubric, rubric_hash, trial,"
    " label, value, status, rationale, created_at, source, ? FROM ratings"
    " WHERE item_id = ? AND rater_id = ? AND rubric = ? AND rubric_hash = ? AND trial = ?"
    " AND (label IS NOT ? OR status IS NOT ?)"
)
_RETIRE_WHERE = (
    " FROM ratings WHERE item_id = ? AND rater_id = ? AND rubric = ? AND rubric_hash = ?"
    " AND trial = ? AND rater_kind = 'judge'"
)
_RETIRE_HISTORY_SQL = (
    "INSERT INTO rating_history SELECT item_id, rater_id, rater_kind, rubric, rubric_hash, trial,"
    " label, value, status, rationale, created_at, source, ?" + _RETIRE_WHERE
)
_RATING_SQL = (
    "INSERT OR REPLACE INTO ratings (item_id, rater_id, rater_kind, rubric, rubric_hash, label,"
    " value, trial, status, rationale, created_at, source, call_key)"
    " VALUES (?, ?, 'judge', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class _Writer:
    """Group commit: results wait in a buffer only while the previous transaction commits."""

    def __init__(self, store: Store, rubric: Rubric) -> None:
        self.store = store
        self.rubric = rubric
        self.calls: list[tuple[Any, ...]] = []
        self.ratings: list[tuple[Any, ...]] = []
        self.retired: list[tuple[str, str, int]] = []
        self.event: asyncio.Event | None = None

    def retire(self, item_id: str, rater_id: str, trial: int) -> None:
        """Remove a judge rating that no current answer backs (kept in the rating history)."""
        self.retired.append((item_id, rater_id, trial))

    def add(self, call: tuple[Any, ...] | None, rating: tuple[Any, ...]) -> None:
        if call is not None:
            self.calls.append(call)
        self.ratings.append(rating)
        if self.event is not None:
            self.event.set()

    def flush(self) -> None:
        if not self.ratings and not self.calls and not self.retired:
            return
        calls, ratings, retired = self.calls, self.ratings, self.retired
        self.calls, self.ratings, self.retired = [], [], []
        now = time.time()
        r = self.rubric
        with self.store.transaction() as conn:
            if retired:
                keys = [(iid, rater, r.id, r.hash, trial) for iid, rater, trial in retired]
                conn.executemany(_RETIRE_HISTORY_SQL, [(now, *k) for k in keys])
                conn.executemany("DELETE" + _RETIRE_WHERE, keys)
            if calls:
                conn.executemany(_CALL_SQL, calls)
            conn.executemany(
                _HISTORY_SQL,
                [(now, x[0], x[1], r.id, r.hash, x[4], x[2], x[5]) for x in ratings],
            )
            conn.executemany(
                _RATING_SQL,
                [(x[0], x[1], r.id, r.hash, x[2], x[3], x[4], x[5], x[6], now, x[7], x[8])
                 for x in ratings],
            )

    async def run(self) -> None:
        self.event = asyncio.Event()
        while True:
            await self.event.wait()
            self.event.clear()
            self.flush()


# --------------------------------------------------------------------------- the run
@dataclass(slots=True)
class _Job:
    item: int
    trial: int
    key: str


@dataclass
class _JudgeRun:
    entry: JudgeEntry
    judge: Judge
    params: str
    summary: JudgeSummary
    jobs: list[_Job]
    conc: AdaptiveConcurrency
    rate: RateLimiter
    policy: RetryPolicy
    price: Any
    system_chars: int = 0
    stopped: bool = False
    #: items with the same text as a pending job's item (same key): answered by its one call
    followers: dict[str, list[_Job]] = field(default_factory=dict)

    pending_total: int = 0  #: jobs + followers at the start

    @property
    def pending(self) -> int:
        return len(self.jobs) + sum(len(f) for f in self.followers.values())


class _Items:
    """The panel's items as plain lists (no pandas on the hot path)."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.ids = df["item_id"].astype(str).tolist()
        n = len(self.ids)
        self.prompts = _clean(df["prompt"].tolist()) if "prompt" in df.columns else [None] * n
        self.messages = _clean(df["messages"].tolist()) if "messages" in df.columns else [None] * n
        self.responses = ["" if r is None else str(r) for r in _clean(df["response"].tolist())]
        self.hashes = [
            item_content_hash(p, m, r)
            for p, m, r in zip(self.prompts, self.messages, self.responses, strict=True)
        ]

    def request(self, i: int, trial: int) -> JudgeRequest:
        p, m, r = self.prompts[i], self.messages[i], self.responses[i]
        return JudgeRequest(self.ids[i], trial, p, m, r, user_message(p, m, r))

    def quoted(self, i: int) -> tuple[str, ...]:
        """The judged texts of item ``i`` (response, prompt, every turn of the conversation):
        the parser ignores what the judge copies from them."""
        turns = [_turn_text(m.get("content")) for m in self.messages[i] or () if isinstance(m, dict)]
        return tuple(str(q) for q in (self.responses[i], self.prompts[i], *turns) if q)


def _turn_text(content: Any) -> str:
    if isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}, ...]
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else str(content)


def _clean(values: list[Any]) -> list[Any]:
    return [None if v is None or (isinstance(v, float) and v != v) else v for v in values]


def run_panel(
    panel: Panel,
    store: Store,
    *,
    only: Sequence[str] | None = None,
    progress: ProgressSink | None = None,
    env: dict[str, str] | None = None,
    dry_run: bool = False,
    wait: bool = True,
) -> PanelSummary:
    """Run ``panel`` into ``store``; returns what was done. Builds every judge first (unknown
    spec, missing key: one error sentence, nothing sent), then sends only what is missing.

    ``dry_run``: send and write nothing; the summary says how many calls a run would make and
    what they would cost (``estimated_cost_usd``, ``max_cost_usd``). ``wait=False``: judges in
    batch mode submit and collect what has ended, without waiting for the rest."""
    t0 = time.perf_counter()
    rubric = panel.rubric
    entries = [e for e in panel.judges if only is None or e.id in only]
    if only is not None:
        unknown = sorted(set(only) - {e.id for e in panel.judges})
        if unknown:
            raise JudgekitError(
                f"--only names {unknown[0]!r}, which is not a judge of {panel.source} "
                f"(judges: {', '.join(e.id for e in panel.judges)})."
            )
    # A judge id that is already a human or reference rater would silently replace their ratings.
    ids = [e.id for e in entries]
    clash = store.conn.execute(
        f"SELECT rater_id, rater_kind FROM ratings WHERE rater_kind != 'judge' AND rater_id IN"
        f" ({','.join('?' * len(ids))}) LIMIT 1",
        ids,
    ).fetchone() if ids else None
    if clash:
        raise JudgekitError(
            f"Judge id {clash[0]!r} of {panel.source} is already a {clash[1]} rater in {store.path}; "
            "give the judge another id."
        )
    ctx = JudgeContext(
        rubric=rubric,
        system=system_prompt(rubric),
        schema=answer_schema(rubric),
        base_dir=str(panel.base_dir),
        dry_run=dry_run,
        **({"env": env} if env is not None else {}),
    )
    judges = [(e, build_judge(e, ctx)) for e in entries]
    all_params = [spec_params(e, j) for e, j in judges]
    seen_params: dict[str, str] = {}
    for (entry, _), params in zip(judges, all_params, strict=True):
        twin = seen_params.setdefault(params, entry.id)
        if twin != entry.id:
            raise JudgekitError(
                f"Panel {panel.source}: judges {twin!r} and {entry.id!r} have the same model and "
                "parameters, so they would get the same (cached) answers; to ask one judge "
                "several times use trials."
            )
    items = _Items(panel.items)
    parser = AnswerParser(rubric)
    if not dry_run:
        store.put_items(panel.items)
    writer = _Writer(store, rubric)
    limiters: dict[str, RateLimiter] = {}
    runs: list[_JudgeRun] = []
    for (entry, judge), params in zip(judges, all_params, strict=True):
        summary = JudgeSummary(id=entry.id, spec=entry.model, total=len(items.ids) * entry.trials)
        jobs, followers = _pending(store, rubric, entry, params, items, writer, summary,
                                   by_item_id=bool(getattr(judge, "by_item_id", False)))
        rate = limiters.get(judge.limit_group)
        if rate is None:
            rate = limiters[judge.limit_group] = RateLimiter(entry.max_rpm, entry.max_tpm)
        else:
            rate.tighten(entry.max_rpm, entry.max_tpm)
        runs.append(
            _JudgeRun(
                entry=entry, judge=judge, params=params, summary=summary, jobs=jobs,
                conc=AdaptiveConcurrency(entry.concurrency), rate=rate,
                policy=RetryPolicy(entry.max_attempts, entry.backoff_s, entry.max_backoff_s),
                price=getattr(judge, "price", None),
                system_chars=len(ctx.system),
                followers=followers,
            )
        )
        runs[-1].pending_total = runs[-1].pending
    result = PanelSummary(rubric=rubric.ref, items=len(items.ids), judges=[r.summary for r in runs])
    if dry_run:
        for run in runs:
            _estimate(run, items, len(ctx.system))
        result.dry_run = True
        result.seconds = time.perf_counter() - t0
        return result
    writer.flush()
    todo = sum(r.pending for r in runs)
    if progress is not None:
        progress.start(todo, sum(r.summary.cached for r in runs))
    try:
        for run in runs:
            if run.judge.local:
                _run_local(run, items, parser, rubric, writer, progress)
        remote = [r for r in runs if not r.judge.local and r.jobs and not r.entry.batch]
        batched = [r for r in runs if r.entry.batch and (r.jobs or _has_open_batches(store, r, rubric))]
        if remote or batched:
            asyncio.run(_run_remote(remote, items, parser, rubric, writer, progress,
                                    batched=batched, store=store, wait=wait))
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        writer.flush()
        if progress is not None:
            progress.stop()
        for run in runs:
            run.summary.stored_cost_usd = _stored_cost(store, run.entry.id, rubric)
            if run.conc.decreases:
                run.summary.lowest_concurrency = run.conc.lowest
        result.seconds = time.perf_counter() - t0
    # Also when a judge was stopped: its ratings may have changed (answered or retired), and a
    # derived rater must never keep votes that are no longer in the store. An interrupted run
    # leaves them to the next run.
    if panel.file.aggregate and not result.interrupted:
        result.aggregates = write_aggregates(panel, store)
    result.seconds = time.perf_counter() - t0
    return result


def _pending(
    store: Store,
    rubric: Rubric,
    entry: JudgeEntry,
    params: str,
    items: _Items,
    writer: _Writer,
    summary: JudgeSummary,
    *,
    by_item_id: bool = False,
) -> tuple[list[_Job], dict[str, list[_Job]]]:
    """Jobs not answered yet, and the followers of each (items with the same text: one call
    answers them all). Cached answers missing from the ratings (a renamed judge, a reparse)
    are written back from the calls table. ``by_item_id``: the judge answers by item id, not by
    text (``replay:``), so the id is part of the key and equal texts do not share an answer."""
    jobs = _jobs(params, rubric, entry, items, by_item_id=by_item_id)
    done = {k: row[1:] for k, row in _answered(store, [j.key for j in jobs], "trial").items()}
    have = {
        (iid, trial): (label, status, key)
        for iid, trial, label, status, key in store.conn.execute(
            "SELECT item_id, trial, label, status, call_key FROM ratings WHERE rater_id = ?"
            " AND rubric = ? AND rubric_hash = ? AND rater_kind = 'judge'",
            (entry.id, rubric.id, rubric.hash),
        )
    }
    # A rating of this judge that no current answer backs was made with other parameters, for
    # an older text of the item, or for a trial the panel no longer asks for: it must not count
    # (nor outvote the current trials) while the new answer is pending. Error ratings carry no
    # label and are replaced when the call is retried.
    if have:
        answered = {(items.ids[j.item], j.trial) for j in jobs if j.key in done}
        panel_ids = set(items.ids)
        for (iid, trial), (_, status, _key) in have.items():
            if iid in panel_ids and (iid, trial) not in answered and (
                trial >= entry.trials or status != "error"
            ):
                writer.retire(iid, entry.id, trial)
                summary.retired += 1
    if not done:
        return _split_followers(jobs)
    todo = []
    for job in jobs:
        hit = done.get(job.key)
        if hit is None:
            todo.append(job)
            continue
        status, label, rationale, error = hit
        summary.cached += 1
        iid = items.ids[job.item]
        # rewritten when the label changed, or when it now comes from another call (parameters
        # switched back): the rating must point at the call it is made from
        if have.get((iid, job.trial)) != (label, status, job.key):
            text = rationale if status == "ok" else f"abstain: {error}"
            writer.add(None, (iid, entry.id, label, rubric.values.get(label) if label else None,
                              job.trial, status, text, "panel", job.key))
    return _split_followers(todo)


def _jobs(params: str, rubric: Rubric, entry: JudgeEntry, items: _Items, *, by_item_id: bool) -> list[_Job]:
    """Every (item, trial) of a judge with its call key."""
    return [
        _Job(i, t, call_key(params, rubric.hash, f"{h}\x1f{items.ids[i]}" if by_item_id else h, t))
        for i, h in enumerate(items.hashes)
        for t in range(entry.trials)
    ]


def _answered(store: Store, keys: list[str], first: str) -> dict[str, tuple[Any, ...]]:
    """Stored calls with an answer (ok or abstain) among ``keys``:
    ``{key: (<first column>, status, label, rationale, error)}``."""
    out: dict[str, tuple[Any, ...]] = {}
    for chunk in range(0, len(keys), 900):
        part = keys[chunk : chunk + 900]
        rows = store.conn.execute(
            f"SELECT key, {first}, status, label, rationale, error FROM calls"
            f" WHERE status != 'error' AND key IN ({','.join('?' * len(part))})",
            part,
        )
        for k, *row in rows:
            out[k] = tuple(row)
    return out


def _split_followers(jobs: list[_Job]) -> tuple[list[_Job], dict[str, list[_Job]]]:
    leads: dict[str, _Job] = {}
    followers: dict[str, list[_Job]] = {}
    for job in jobs:
        if job.key in leads:
            followers.setdefault(job.key, []).append(job)
        else:
            leads[job.key] = job
    return list(leads.values()), followers


#: typical length of a judge's JSON answer, for cost estimates
TYPICAL_ANSWER_TOKENS = 60


def _estimate(run: _JudgeRun, items: _Items, system_chars: int) -> None:
    """Fill the summary's estimate for the pending calls (~4 characters a token)."""
    s = run.summary
    s.pending = len(run.jobs)  # calls to make (items sharing a text share a call)
    if run.judge.local or run.price is None:
        return
    tokens_in = sum(
        (system_chars + len(items.request(j.item, j.trial).user)) // 4 for j in run.jobs
    )
    price = run.price
    if run.entry.batch:
        from judgekit.judges.batch import discounted

        price = discounted(price)
    for out, attr in ((min(TYPICAL_ANSWER_TOKENS, run.entry.max_tokens), "estimated_cost_usd"),
                      (run.entry.max_tokens, "max_cost_usd")):
        cost = call_cost(price, Completion(raw=None, input_tokens=tokens_in,
                                               output_tokens=out * len(run.jobs)))
        setattr(s, attr, cost)
    s.input_tokens = tokens_in


def _stored_cost(store: Store, judge_id: str, rubric: Rubric) -> float:
    row = store.conn.execute(
        "SELECT COALESCE(SUM(cost_usd), 0) FROM calls WHERE judge_id = ? AND rubric_hash = ?",
        (judge_id, rubric.hash),
    ).fetchone()
    return float(row[0])


def _record(
    run: _JudgeRun,
    items: _Items,
    job: _Job,
    parser: AnswerParser,
    rubric: Rubric,
    writer: _Writer,
    progress: ProgressSink | None,
    completion: Completion | None,
    error: str | None,
    latency: float,
    attempts: int,
) -> None:
    s = run.summary
    iid = items.ids[job.item]
    label: str | None = None
    rationale: str | None = None
    reason = error
    if completion is not None:
        parsed = parser.parse(completion.raw, quoted=items.quoted(job.item))
        status, label, rationale, reason = parsed.status, parsed.label, parsed.rationale, parsed.reason
        cost = call_cost(run.price, completion)
        tin, tout, tcached = completion.input_tokens, completion.output_tokens, completion.cached_tokens
        raw = completion.raw
    else:
        status, cost, tin, tout, tcached, raw = "error", 0.0, 0, 0, 0, None
    s.called += status != "error"
    s.input_tokens += tin
    s.output_tokens += tout
    s.cached_tokens += tcached
    s.cost_usd += cost
    if status == "ok":
        s.ok += 1
        text = rationale
    elif status == "abstain":
        s.abstain += 1
        s.abstentions[_short(reason)] += 1
        text = f"abstain: {reason}"
    else:
        s.error += 1
        s.errors[_short(reason)] += 1
        text = f"error: {reason}"
    writer.add(
        (job.key, run.entry.id, run.entry.model, run.params, rubric.id, rubric.hash, iid,
         items.hashes[job.item], job.trial, raw, status, label, rationale,
         None if status == "ok" else reason, tin, tout, tcached, cost, latency, attempts,
         time.time()),
        (iid, run.entry.id, label, rubric.values.get(label) if label else None, job.trial,
         status, text, "panel", job.key),
    )
    if progress is not None:
        progress.advance(status, tin + tout, cost)
    for f in run.followers.pop(job.key, ()):
        # Same text as the item just answered: the same answer, no second call or cost.
        fid = items.ids[f.item]
        if completion is not None:
            p = parser.parse(completion.raw, quoted=items.quoted(f.item))
            f_status, f_label, f_why = p.status, p.label, p.rationale if p.status == "ok" else f"abstain: {p.reason}"
        else:
            f_status, f_label, f_why = "error", None, f"error: {reason}"
        setattr(s, f_status, getattr(s, f_status) + 1)
        s.called += f_status != "error"
        writer.add(None, (fid, run.entry.id, f_label, rubric.values.get(f_label) if f_label else None,
                          f.trial, f_status, f_why, "panel", job.key))
        if progress is not None:
            progress.advance(f_status, 0, 0.0)


def _short(reason: str | None) -> str:
    text = reason or "unknown"
    return text if len(text) <= 120 else text[:119] + "…"


def _run_local(
    run: _JudgeRun,
    items: _Items,
    parser: AnswerParser,
    rubric: Rubric,
    writer: _Writer,
    progress: ProgressSink | None,
) -> None:
    for n, job in enumerate(run.jobs, start=1):
        t = time.perf_counter()
        try:
            comp: Completion | None = run.judge.answer(items.request(job.item, job.trial))
            err = None
        except JudgeCallError as exc:
            comp, err = None, exc.reason
        _record(run, items, job, parser, rubric, writer, progress, comp, err,
                time.perf_counter() - t, 1)
        if n % 500 == 0:
            writer.flush()
    writer.flush()


def _has_open_batches(store: Store, run: _JudgeRun, rubric: Rubric) -> bool:
    row = store.conn.execute(
        "SELECT 1 FROM judge_batches WHERE judge_id = ? AND rubric_hash = ? AND status = 'submitted'"
        " LIMIT 1",
        (run.entry.id, rubric.hash),
    ).fetchone()
    return row is not None


async def _run_remote(
    runs: list[_JudgeRun],
    items: _Items,
    parser: AnswerParser,
    rubric: Rubric,
    writer: _Writer,
    progress: ProgressSink | None,
    *,
    batched: Sequence[_JudgeRun] = (),
    store: Store | None = None,
    wait: bool = True,
) -> None:
    from judgekit.judges.batch import run_batches

    writer_task = asyncio.create_task(writer.run())
    rng = random.Random()
    runs = [*runs, *batched]
    try:
        workers: list[asyncio.Task[None]] = []
        for run in batched:
            assert store is not None
            workers.append(asyncio.create_task(
                run_batches(run, items, parser, rubric, writer, store, progress, wait=wait)))
        for run in runs:
            if run.entry.batch:
                continue
            queue = iter(run.jobs)
            for _ in range(min(run.entry.concurrency, len(run.jobs))):
                workers.append(
                    asyncio.create_task(_worker(run, queue, items, parser, rubric, writer, progress, rng))
                )
        await asyncio.gather(*workers)
    finally:
        writer_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer_task
        writer.flush()
        for run in runs:
            with contextlib.suppress(Exception):
                await run.judge.aclose()
            if run.stopped:
                done = run.summary.ok + run.summary.abstain + run.summary.error
                run.summary.not_attempted = run.pending_total - done


async def _worker(
    run: _JudgeRun,
    queue: Any,
    items: _Items,
    parser: AnswerParser,
    rubric: Rubric,
    writer: _Writer,
    progress: ProgressSink | None,
    rng: random.Random,
) -> None:
    est = 0
    for job in queue:
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
                    async with asyncio.timeout(run.entry.timeout_s * 2 + 5):
                        comp = await run.judge.complete(request)
                    failure: JudgeCallError | None = None
                except JudgeCallError as exc:
                    failure = exc
                except TimeoutError:
                    failure = JudgeCallError(f"timeout after {run.entry.timeout_s:g}s", retryable=True)
            finally:
                run.conc.release()
            if failure is None:
                run.conc.on_success()
                if run.rate.tpm:
                    run.rate.settle(est, comp.input_tokens + comp.output_tokens)
                _record(run, items, job, parser, rubric, writer, progress, comp, None,
                        time.perf_counter() - t_start, attempt)
                break
            if failure.rate_limited:
                run.summary.rate_limited += 1
                run.conc.on_rate_limited(epoch)
                if failure.retry_after and run.conc.at_minimum:
                    # Backing off further is only possible in time: the whole group waits.
                    run.rate.pause(failure.retry_after)
            if failure.fatal:
                run.stopped = True
                run.summary.stopped = failure.reason
            if failure.fatal or not failure.retryable or attempt >= run.policy.max_attempts:
                reason = failure.reason if attempt == 1 else f"{failure.reason} (after {attempt} attempts)"
                _record(run, items, job, parser, rubric, writer, progress, None, reason,
                        time.perf_counter() - t_start, attempt)
                break
            await asyncio.sleep(run.policy.delay(attempt, failure.retry_after, rng))


# --------------------------------------------------------------------------- aggregates
def write_aggregates(panel: Panel, store: Store) -> dict[str, int]:
    """Recompute the panel's derived raters (``panel:<method>``) from the stored ratings."""
    spec = panel.file.aggregate
    if spec is None:
        return {}
    judge_ids = spec.judges or [e.id for e in panel.judges]
    if len(judge_ids) < 2:
        return {}
    ratings = store.ratings(rubric=panel.rubric, rater_ids=judge_ids)
    ids = set(panel.items["item_id"].astype(str))
    ratings = ratings[ratings["item_id"].isin(ids)]
    out: dict[str, int] = {}
    frames = []
    for method in spec.methods:
        agg = aggregate(ratings, panel.rubric, method=method, judges=judge_ids, tie=spec.tie,
                        min_votes=spec.min_votes)
        out[f"panel:{method}"] = len(agg)
        frames.append(agg)
    if frames:
        df = pd.concat(frames, ignore_index=True)
        df["rubric"] = panel.rubric.id
        df["rubric_hash"] = panel.rubric.hash
        df["source"] = "panel-aggregate"
        _put_changed(store, df)
    return out


def _put_changed(store: Store, df: pd.DataFrame) -> None:
    """Write only derived ratings that changed (a cached rerun writes nothing)."""
    if df.empty:
        return
    raters = df["rater_id"].unique().tolist()
    old = store.ratings(rubric=df["rubric"].iat[0], rater_ids=raters)
    old = old[old["rubric_hash"] == df["rubric_hash"].iat[0]]
    key = ["item_id", "rater_id", "trial"]
    merged = df.merge(old[[*key, "label", "status", "rationale"]], on=key, how="left",
                      suffixes=("", "_old"))
    changed = (
        (merged["label"].fillna("\0") != merged["label_old"].fillna("\0"))
        | (merged["status"] != merged["status_old"])
        | (merged["rationale"].fillna("") != merged["rationale_old"].fillna(""))
    )
    store.put_ratings(df[changed.to_numpy()])


# --------------------------------------------------------------------------- re-parsing
@dataclass
class ReparseSummary:
    """What a re-parse changed (no call is made)."""

    judges: dict[str, dict[str, int]]

    def lines(self) -> list[str]:
        out = ["Re-parsed stored completions with the current parser (no calls made)."]
        for jid, c in self.judges.items():
            out.append(f"  {jid}: {c['parsed']} completions, {c['changed']} changed "
                       f"({c['ok']} ok, {c['abstain']} abstain)")
        return out


def reparse_panel(
    panel: Panel,
    store: Store,
    *,
    only: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
) -> ReparseSummary:
    """Re-parse the stored raw completions behind the panel's judges with the current parser and
    update the ratings (and aggregates) that change. Needs no API key and sends nothing.

    Each judge's calls are found by their keys, as a run finds them: the completions of its
    current parameters (whatever judge id made them), for every item and trial of the panel,
    items sharing a text included — never an answer given with other parameters."""
    rubric = panel.rubric
    parser = AnswerParser(rubric)
    items = _Items(panel.items)
    entries = [e for e in panel.judges if only is None or e.id in only]
    # A judge is rebuilt only for its cache identity; an API judge cannot be built without a
    # key, so a placeholder stands in for a missing one (a re-parse sends nothing).
    build_env = dict(os.environ if env is None else env)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", *(e.api_key_env for e in entries)):
        if var:
            build_env.setdefault(var, "judgekit-reparse-sends-nothing")
    ctx = JudgeContext(rubric=rubric, system=system_prompt(rubric), schema=answer_schema(rubric),
                       base_dir=str(panel.base_dir), env=build_env)
    writer = _Writer(store, rubric)
    result: dict[str, dict[str, int]] = {}
    for entry in entries:
        judge = build_judge(entry, ctx)
        params = spec_params(entry, judge)
        by_item_id = bool(getattr(judge, "by_item_id", False))
        if not judge.local:
            asyncio.run(judge.aclose())
        jobs = _jobs(params, rubric, entry, items, by_item_id=by_item_id)
        stored = _answered(store, [j.key for j in jobs], "raw")
        counts = {"parsed": 0, "changed": 0, "ok": 0, "abstain": 0}
        updates: dict[str, tuple[Any, ...]] = {}
        for job in jobs:
            row = stored.get(job.key)
            if row is None:
                continue
            raw, status, label, rationale, error = row
            p = parser.parse(raw, quoted=items.quoted(job.item))
            counts["parsed"] += 1
            counts[p.status] += 1
            if (p.status, p.label, p.rationale, p.reason) != (status, label, rationale, error):
                counts["changed"] += 1
                updates.setdefault(job.key, (p.status, p.label, p.rationale, p.reason, job.key))
            text = p.rationale if p.status == "ok" else f"abstain: {p.reason}"
            writer.add(None, (items.ids[job.item], entry.id, p.label,
                              rubric.values.get(p.label) if p.label else None, job.trial, p.status,
                              text, "panel", job.key))
        with store.transaction() as conn:
            conn.executemany(
                "UPDATE calls SET status = ?, label = ?, rationale = ?, error = ? WHERE key = ?",
                list(updates.values()),
            )
            writer.flush()
        result[entry.id] = counts
    if panel.file.aggregate:
        write_aggregates(panel, store)
    return ReparseSummary(result)


def panel_rater_ids(panel: Panel) -> list[str]:
    """The rater ids a panel writes: its judges, then its aggregates."""
    ids = [e.id for e in panel.judges]
    spec = panel.file.aggregate
    if spec and len(spec.judges or ids) >= 2:
        ids += [f"panel:{m}" for m in spec.methods]
    return ids


__all__ = [
    "AggregateSpec",
    "JudgeSummary",
    "Panel",
    "PanelFile",
    "PanelSummary",
    "ReparseSummary",
    "default_min_votes",
    "load_panel",
    "panel_from_dict",
    "panel_rater_ids",
    "reparse_panel",
    "run_panel",
    "write_aggregates",
]
