"""Batch files for open-weight judges: ``judgekit judge PANEL --emit-batch DIR``.

A judge served on one's own GPUs is often run over a file rather than through thousands of HTTP
calls: ``vllm run-batch -i in.jsonl -o out.jsonl --model MODEL`` (or a Ray Data job, or the OpenAI
Batch API) reads an OpenAI Batch input file, one request a line::

    {"custom_id": "<call key>", "method": "POST", "url": "/v1/chat/completions", "body": {...}}

:func:`emit_batch` writes that file, per judge, for the calls of the panel not answered yet: the
``custom_id`` is the call key the cache uses (:func:`~judgekit.judges.base.call_key`), the body
the one an online run would send (the judge's own :meth:`batch_entry`: same prompt, same
parameters), one request per key (items with the same text share it, as online). Files are split
with :func:`~judgekit.judges.batchlimits.split_batches` at OpenAI's bound (50,000 requests,
200 MB), which ``vllm run-batch`` and the OpenAI Batch API both take; a judge's files of an
earlier emit in the folder are replaced (deleted: running them would pay twice). The answers come back with
``--ingest-batch`` (:mod:`~judgekit.judges.batchingest`). Emitting writes nothing to the store.

Judges whose requests are OpenAI Chat Completions (``openai:``, ``openai-compatible:``) get a
file; the others are listed as skipped with the reason (a local judge answers at once; an
``anthropic:`` judge uses its provider's batch API with ``batch: true``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.errors import JudgekitError
from judgekit.judges.base import Judge
from judgekit.judges.batchlimits import OPENAI_LIMITS, BatchLimits, jsonl_line, split_batches
from judgekit.judges.jobs import JudgeRun, PanelRun
from judgekit.judges.openai import OpenAIJudge
from judgekit.judges.panel import Panel, run_panel
from judgekit.store.calls import open_batches
from judgekit.store.database import Store


@dataclass
class Planned:
    """The plan of each (sub-)panel, as :func:`~judgekit.judges.panel.run_panel` hands it to its
    ``planned`` hook (nothing sent, nothing written)."""

    parts: list[tuple[Panel, PanelRun, list[JudgeRun]]] = field(default_factory=list)

    def __call__(self, panel: Panel, shared: PanelRun, runs: list[JudgeRun]) -> None:
        self.parts.append((panel, shared, runs))


def plan_panel(panel: Panel, store: Store, *, only: Sequence[str] | None = None,
               env: dict[str, str] | None = None) -> Planned:
    """Plan ``panel`` on ``store`` as a run would (the same keys, the same cache), sending
    nothing; needs no API key."""
    planned = Planned()
    run_panel(panel, store, only=only, env=env, planned=planned)
    return planned


def skip_reason(judge: Judge) -> str | None:
    """Why a batch file cannot carry ``judge``'s calls, or None when it can (its requests are
    OpenAI Chat Completions)."""
    if judge.local:
        return "answers at once, without calls: run the panel without --emit-batch"
    if not isinstance(judge, OpenAIJudge):
        return ("its requests are not OpenAI Chat Completions (an anthropic: judge batches "
                "through its provider with batch: true)")
    return None


@dataclass
class EmittedJudge:
    """What was written for one judge."""

    judge_id: str
    requests: int
    cached: int  #: calls answered already: not in the files
    files: list[Path] = field(default_factory=list)
    bytes: int = 0
    removed: int = 0  #: the judge's files of an earlier emit, deleted


@dataclass
class EmitSummary:
    """What :func:`emit_batch` wrote, and the judges it skipped with the reason."""

    folder: Path
    judges: list[EmittedJudge]
    skipped: dict[str, str]

    def lines(self) -> list[str]:
        out = []
        for j in self.judges:
            if j.removed:
                out.append(f"  {j.judge_id}: removed {j.removed} file{'s' if j.removed != 1 else ''} "
                           "of an earlier emit (their calls are in the new files or answered)")
            if not j.files:
                out.append(f"  {j.judge_id}: nothing to emit, all {j.cached:,} calls are answered")
                continue
            names = ", ".join(f.name for f in j.files[:3]) + (" ..." if len(j.files) > 3 else "")
            out.append(f"  {j.judge_id}: {j.requests:,} requests in {len(j.files)} file"
                       f"{'s' if len(j.files) != 1 else ''} ({names}, {j.bytes / 1e6:.1f} MB); "
                       f"{j.cached:,} calls answered already")
        for judge_id, why in self.skipped.items():
            out.append(f"  {judge_id}: skipped, {why}")
        n = sum(j.requests for j in self.judges)
        head = f"Wrote {n:,} batch requests to {self.folder}."
        tail = ("Answer them (e.g. vllm run-batch -i FILE -o OUT.jsonl --model MODEL), then: "
                "judgekit judge PANEL --ingest-batch OUT.jsonl")
        return [head, *out, tail] if n else [head, *out]


def emit_batch(panel: Panel, store: Store, folder: Path, *, only: Sequence[str] | None = None,
               env: dict[str, str] | None = None, limits: BatchLimits = OPENAI_LIMITS) -> EmitSummary:
    """Write ``folder/<judge id>.<NNN>.jsonl``, the OpenAI Batch input of every pending call of
    each judge a batch file can carry (see the module docstring); the store is only read."""
    planned = plan_panel(panel, store, only=only, env=env)
    entries: dict[str, list[bytes]] = {}
    cached: dict[str, int] = {}
    skipped: dict[str, str] = {}
    for _, shared, runs in planned.parts:
        for run in runs:
            why = skip_reason(run.judge)
            if why is not None:
                skipped[run.entry.id] = why
                continue
            judge = run.judge
            assert isinstance(judge, OpenAIJudge)
            lines = entries.setdefault(run.entry.id, [])
            cached[run.entry.id] = cached.get(run.entry.id, 0) + run.summary.cached
            # a call already in a provider batch (batch: true) is paid there: never twice
            in_flight: set[str] = set()
            for keys in open_batches(store, run.entry.id, shared.rubric.hash).values():
                in_flight |= keys
            for job in run.jobs:
                if job.key in in_flight:
                    continue
                request = shared.items.request(job.item, job.trial)
                lines.append(jsonl_line(judge.batch_entry(request, job.key)))
    _check_names(list(entries))
    earlier = {judge_id: _earlier_files(folder, judge_id) for judge_id in entries}
    folder.mkdir(parents=True, exist_ok=True)
    emitted = [_write_judge(folder, judge_id, lines, cached[judge_id], limits, earlier[judge_id])
               for judge_id, lines in entries.items()]
    return EmitSummary(folder, emitted, skipped)


def _safe_id(judge_id: str) -> str:
    """The judge id in a file name: the id itself when it is one (letters, digits, ``.``, ``_``
    and ``-``, not starting with ``.``); else its other characters written as ``_`` and 8 hex
    digits of its hash appended, so that two ids never share a name (``a/b`` is not ``a_b``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", judge_id).lstrip(".") or "judge"
    if safe == judge_id:
        return safe
    return f"{safe}-{hashlib.sha256(judge_id.encode()).hexdigest()[:8]}"


def batch_file_name(judge_id: str, part: int) -> str:
    """``<judge id>.<part, 3 digits>.jsonl`` (the id as :func:`_safe_id` writes it)."""
    return f"{_safe_id(judge_id)}.{part:03d}.jsonl"


def _check_names(judge_ids: Sequence[str]) -> None:
    """Refuse judges whose files would be one file where case is not told apart (macOS, Windows):
    one sentence, before anything is written."""
    seen: dict[str, str] = {}
    for judge_id in judge_ids:
        other = seen.setdefault(_safe_id(judge_id).casefold(), judge_id)
        if other != judge_id:
            raise JudgekitError(
                f"Judges {other!r} and {judge_id!r} would write batch files of one name on a file "
                "system that ignores case; give one of them another id.")


#: how every line judgekit writes begins (json.dumps of :meth:`OpenAIJudge.batch_entry`)
_REQUEST_START = re.compile(
    rb'\{"custom_id": "[0-9a-f]{32}", "method": "POST", "url": "/v1/chat/completions", "body": \{')


def _earlier_files(folder: Path, judge_id: str) -> list[Path]:
    """The judge's files an earlier emit wrote into ``folder`` (``<id>.NNN.jsonl``): their calls
    are pending in the new files or answered, and running them again would pay twice, so they are
    replaced. A file of that name judgekit did not write (its first line is no request: answers
    of ``vllm run-batch -o``, paid for) is one sentence, before anything is written or deleted."""
    if not folder.is_dir():
        return []
    pattern = re.compile(re.escape(_safe_id(judge_id)) + r"\.\d{3,}\.jsonl")
    found = sorted(p for p in folder.iterdir() if pattern.fullmatch(p.name) and p.is_file())
    for path in found:
        with path.open("rb") as fh:
            head = fh.read(200)
        if head and not _REQUEST_START.match(head):
            raise JudgekitError(
                f"{path} is not a batch file judgekit wrote (its first line is not a request), and "
                "emitting would replace it: move it, or emit into another folder. Nothing was "
                "written.")
    return found


def _write_judge(folder: Path, judge_id: str, lines: list[bytes], cached: int,
                 limits: BatchLimits, earlier: list[Path]) -> EmittedJudge:
    """One judge's requests in files within ``limits``, each written whole or not at all, in place
    of the judge's files of an earlier emit (``earlier``, deleted)."""
    for path in earlier:
        path.unlink()
    out = EmittedJudge(judge_id, len(lines), cached, removed=len(earlier))
    for n, part in enumerate(split_batches([len(line) for line in lines], limits), start=1):
        path = folder / batch_file_name(judge_id, n)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as fh:
            for i in part:
                fh.write(lines[i])
        os.replace(tmp, path)
        out.files.append(path)
        out.bytes += sum(len(lines[i]) for i in part)
    return out


__all__ = [
    "EmitSummary", "EmittedJudge", "Planned", "batch_file_name", "emit_batch", "plan_panel",
    "skip_reason",
]
