"""Answers of a batch file back into the store: ``judgekit judge PANEL --ingest-batch OUT.jsonl``.

Reads the output JSONL that ``vllm run-batch`` and the OpenAI Batch API write, one result a line::

    {"id": ..., "custom_id": "<call key>",
     "response": {"status_code": 200, "request_id": ..., "body": {<chat completion>}},
     "error": null}

and records each result as an online run records a streamed answer: the body is read by the same
parser (:func:`~judgekit.judges.openai.batch_output_result`, which a provider batch's results go
through too), the answer by the same :func:`~judgekit.judges.record.record` (rubric parsing,
abstentions, followers, cost, the call and its rating), written by the panel's own writer; a
failed request (``status_code`` other than 200, or an ``error``) is an ``error`` rating, retried
by the next run. A call answered already (by an online run, an earlier ingest) is skipped: a
file can be ingested twice and pays nothing twice.

All or nothing: every line of every file is checked before anything is written; a line that is
not a result, a ``custom_id`` that is not a call of the panel's judges, or the same ``custom_id``
twice is one sentence naming the file and line, and nothing is stored. The results are then
written in one transaction with the panel's items.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.judges.base import DEFAULT_MAX_RESPONSE_BYTES, Completion, JudgeCallError
from judgekit.judges.batchfile import Planned, plan_panel, skip_reason
from judgekit.judges.bounds import ResponseTooLarge, loads_response
from judgekit.judges.jobs import Job, JudgeRun
from judgekit.judges.openai import batch_output_result
from judgekit.judges.panel import Panel
from judgekit.judges.plan import judge_jobs
from judgekit.judges.record import Answer, record
from judgekit.store.database import Store

_FORMAT = ('{"custom_id", "response": {"status_code", "body"}, "error"}, as vllm run-batch and '
           "the OpenAI Batch API write it")


@dataclass(slots=True)
class _Target:
    """The call a ``custom_id`` names: its judge's run and its pending job (None: answered)."""

    run: JudgeRun
    job: Job | None


@dataclass(slots=True)
class BatchResult:
    """One line of an output file: the call key, its answer or failure, and where it was read."""

    key: str
    result: Completion | JudgeCallError
    file: Path
    line: int
    #: the response body's bytes as a server sends it (compact JSON), 0 for a failure
    body_bytes: int = 0


@dataclass
class IngestedJudge:
    """What the files brought for one judge."""

    judge_id: str
    ok: int = 0
    abstain: int = 0
    error: int = 0
    answered_before: int = 0  #: results for calls answered already: skipped
    still_pending: int = 0  #: the judge's calls the files did not answer


@dataclass
class IngestSummary:
    """What :func:`ingest_batch` recorded."""

    files: int
    results: int
    judges: list[IngestedJudge] = field(default_factory=list)
    #: the panel's derived raters written after the answers (``panel:majority``: ratings)
    aggregates: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"Ingested {self.results:,} results from {self.files} batch output file"
               f"{'s' if self.files != 1 else ''}."]
        for j in self.judges:
            line = (f"  {j.judge_id}: ratings {j.ok:,} ok, {j.abstain:,} abstain, {j.error:,} error; "
                    f"{j.answered_before:,} results for calls answered already (skipped); "
                    f"{j.still_pending:,} calls still without an answer")
            out.append(line)
        for rater, n in self.aggregates.items():
            out.append(f"  {rater}: {n:,} derived ratings")
        if any(j.error or j.still_pending for j in self.judges):
            out.append("Calls with an error or without an answer: emit again (--emit-batch) or run "
                       "the panel online.")
        return out


def ingest_batch(panel: Panel, store: Store, files: Sequence[Path], *,
                 only: Sequence[str] | None = None, env: dict[str, str] | None = None) -> IngestSummary:
    """Record the results in ``files`` for ``panel``'s judges into ``store`` (module docstring);
    a bad line raises one :class:`JudgekitError` and nothing is written."""
    planned = plan_panel(panel, store, only=only, env=env)
    targets = _targets(planned)
    results = read_batch_outputs(files, targets, max_line=_max_line(planned))
    by_judge: dict[str, IngestedJudge] = {}
    for res in results:
        target = targets[res.key]
        counts = by_judge.setdefault(target.run.entry.id, IngestedJudge(target.run.entry.id))
        if target.job is None:
            counts.answered_before += 1
            continue
        limit = target.run.entry.max_response_bytes
        if isinstance(res.result, Completion) and res.body_bytes > limit:
            # online the body is cut off at the judge's bound: an error, never a label
            record(target.run, target.job, Answer.failed(ResponseTooLarge(limit).reason))
        elif isinstance(res.result, Completion):
            record(target.run, target.job, Answer(res.result, None, 0.0, 1))
        else:
            record(target.run, target.job, Answer.failed(res.result.reason))
    answered = {r.key for r in results}
    for target in targets.values():
        if target.job is not None and target.job.key not in answered:
            counts = by_judge.setdefault(target.run.entry.id, IngestedJudge(target.run.entry.id))
            counts.still_pending += 1
    _write(store, planned)
    for _, _, runs in planned.parts:
        for run in runs:
            if run.entry.id in by_judge:
                counts, s = by_judge[run.entry.id], run.summary
                counts.ok, counts.abstain, counts.error = (counts.ok + s.ok, counts.abstain + s.abstain,
                                                           counts.error + s.error)
    return IngestSummary(len(files), len(results), list(by_judge.values()),
                         aggregates=_write_aggregates(store, planned))


def check_batch_outputs(panel: Panel, files: Sequence[Path], *, only: Sequence[str] | None = None,
                        env: dict[str, str] | None = None) -> None:
    """Check every line of ``files`` as :func:`ingest_batch` does, with no store: which calls a
    line may answer does not depend on what is stored (so a bad file need not create one)."""
    with Store(":memory:") as store:
        planned = plan_panel(panel, store, only=only, env=env)
        read_batch_outputs(files, _targets(planned), max_line=_max_line(planned))


def _targets(planned: Planned) -> dict[str, _Target]:
    """Every call key of the panel's judges a batch file can carry: its run and pending job."""
    out: dict[str, _Target] = {}
    for _, shared, runs in planned.parts:
        for run in runs:
            if skip_reason(run.judge) is not None:
                continue
            pending = {j.key: j for j in run.jobs}
            for job in judge_jobs(run.params, shared.rubric, run.entry, shared.items,
                                  by_item_id=run.judge.by_item_id):
                out.setdefault(job.key, _Target(run, pending.get(job.key)))
    return out


def _max_line(planned: Planned) -> int:
    """The longest result line read: twice the largest ``max_response_bytes`` of the judges (a
    body's text may grow in JSON escapes) and 64 KiB for the line's own fields."""
    bounds = [run.entry.max_response_bytes for _, _, runs in planned.parts for run in runs]
    return 2 * max(bounds, default=DEFAULT_MAX_RESPONSE_BYTES) + 2**16


def _write(store: Store, planned: Planned) -> None:
    """The panel's items and everything recorded, in one transaction."""
    with store.transaction():
        for panel, shared, _ in planned.parts:
            store.put_items(panel.table, source=str(panel.base_dir / panel.file.items),
                            new_text="if_unlabelled")
            shared.writer.flush()


def _write_aggregates(store: Store, planned: Planned) -> dict[str, int]:
    """The (sub-)panels' derived raters recomputed from the stored ratings, as after an online
    run (:func:`~judgekit.judges.panel_aggregates.write_aggregates`)."""
    from judgekit.judges.panel_aggregates import write_aggregates

    out: dict[str, int] = {}
    for panel, _, _ in planned.parts:
        if panel.file.aggregate:
            for rater, n in write_aggregates(panel, store).items():
                out[rater] = out.get(rater, 0) + n
    return out


def read_batch_outputs(files: Sequence[Path], known: dict[str, Any] | set[str], *,
                       max_line: int = 2 * DEFAULT_MAX_RESPONSE_BYTES + 2**16) -> list[BatchResult]:
    """Every result line of ``files``, checked: each a result object (:data:`_FORMAT`) of at most
    ``max_line`` bytes whose ``custom_id`` is in ``known`` and seen once in all the files; else
    one :class:`JudgekitError` naming the file and line. Blank lines are skipped."""
    seen: dict[str, tuple[Path, int]] = {}
    out: list[BatchResult] = []
    for path in files:
        with Path(path).open("rb") as fh:
            n = 0
            while raw := fh.readline(max_line + 1):
                n += 1
                if len(raw) > max_line:
                    raise JudgekitError(
                        f"Batch output {path} line {n} is longer than {max_line:,} bytes, more than an "
                        "answer of the panel's judges may be (twice their max_response_bytes); it "
                        "cannot be a result of theirs. Nothing was stored.")
                if not raw.strip():
                    continue
                key, result, body_bytes = _read_line(path, n, raw)
                if key not in known:
                    raise JudgekitError(
                        f"Batch output {path} line {n}: custom_id {_shown(key)} is not a call of "
                        "this panel's judges (another panel, rubric, item text or judge parameters, or "
                        "a judge left out by --only); "
                        "ingest it with the panel that emitted it. Nothing was stored.")
                if key in seen:
                    first, m = seen[key]
                    where = f"line {m}" if first == path else f"line {m} of {first}"
                    raise JudgekitError(
                        f"Batch output {path} line {n}: custom_id {_shown(key)} has a result already "
                        f"on {where}; keep one result per call. Nothing was stored.")
                seen[key] = (path, n)
                out.append(BatchResult(key, result, path, n, body_bytes))
    return out


def _read_line(path: Path, n: int, raw: bytes) -> tuple[str, Completion | JudgeCallError, int]:
    """``(custom_id, answer or failure, the answer's body bytes)`` of one line, or one sentence
    saying why it is not a result."""
    problem = None
    try:
        row = loads_response(raw.decode("utf-8"))
    except (UnicodeDecodeError, JudgeCallError) as exc:
        row = None
        problem = "is not UTF-8" if isinstance(exc, UnicodeDecodeError) else "is not JSON"
        if isinstance(exc, JudgeCallError) and "too deep" in exc.reason:
            problem = "is JSON nested too deep"
    if problem is None:
        problem = _shape_problem(row)
    if problem is not None:
        raise JudgekitError(f"Batch output {path} line {n} {problem}: each line must be one result "
                            f"({_FORMAT}). Nothing was stored.")
    key, result = batch_output_result(row)
    body = row["response"].get("body") if isinstance(result, Completion) else None
    return key, result, 0 if body is None else _wire_bytes(body)


def _wire_bytes(body: Any) -> int:
    """The size of a response body as a server sends it: compact JSON, UTF-8 (as vLLM's
    FastAPI answers are written; the output file's own spacing is not the answer's)."""
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def _shape_problem(row: Any) -> str | None:
    """Why a parsed line is not a batch result, or None."""
    if not isinstance(row, dict):
        return "is not a JSON object"
    if not isinstance(row.get("custom_id"), str) or not row["custom_id"]:
        return "has no custom_id (a string)"
    response, error = row.get("response"), row.get("error")
    if response is not None and not isinstance(response, dict):
        return "has a response that is not an object"
    if error is not None and not isinstance(error, str | dict):
        return "has an error that is neither text nor an object"
    if response is None and error is None:
        if "body" in row and "method" in row:
            return ("is a request, not a result (an input file of the batch: give the output file "
                    "vllm run-batch or the batch API wrote)")
        return "has neither a response nor an error"
    status = response.get("status_code") if response is not None else None
    if response is not None and (not isinstance(status, int) or isinstance(status, bool)):
        return "has a response without a status_code (a whole number)"
    return None


def _shown(text: str) -> str:
    """An untrusted ``custom_id`` as a message shows it: quoted, at most 40 characters."""
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:39] + "…"


__all__ = [
    "BatchResult", "IngestSummary", "IngestedJudge", "check_batch_outputs", "ingest_batch",
    "read_batch_outputs",
]
