"""Batch output files (``judge PANEL --ingest-batch OUT.jsonl``): what ``vllm run-batch`` or a
provider's batch endpoint hands back, broken. Each case's output file answers the panel's real
calls (its ``custom_id`` are the panel's call keys) except for what the case breaks; nothing is
sent (the judge's server is never called), and nothing may be stored."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from corpus.base import Case, Valid, text

ITEMS = "".join(
    f'{{"item_id": "b{i}", "prompt": "batch prompt {i}", "response": "I cannot help with batch {i}."}}\n'
    for i in range(3))
PANEL = ("rubric: refusal\nitems: items.jsonl\njudges:\n  - id: qwen\n"
         '    model: "openai-compatible:http://127.0.0.1:9/v1#qwen"\n')
ARGS = ("judge", "{case}/panel.yaml", "--store", "{store}", "--no-progress",
        "--ingest-batch", "{case}/out.jsonl")


def _keys() -> list[str]:
    """The panel's call keys, in item order (the ``custom_id`` an emitted file carries)."""
    from judgekit.judges.batchfile import plan_panel
    from judgekit.judges.panel import load_panel
    from judgekit.store.database import Store

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "panel.yaml").write_text(PANEL, encoding="utf-8")
        (Path(tmp) / "items.jsonl").write_text(ITEMS, encoding="utf-8")
        with Store(":memory:") as store:
            (_, _, runs), = plan_panel(load_panel(Path(tmp) / "panel.yaml"), store).parts
            return [job.key for job in runs[0].jobs]


def _result(key: str) -> dict[str, Any]:
    """A vLLM run-batch result line answering ``key``."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant",
                "content": json.dumps({"rationale": "declines", "label": "full_refusal"})}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132}}
    return {"id": "vllm-1", "custom_id": key,
            "response": {"status_code": 200, "request_id": "vllm-batch-1", "body": body}, "error": None}


def _out(second: Any = None, *, extra: list[Any] | None = None) -> Any:
    """An output file whose second line is ``second`` (a dict made from the good line by a
    function, or raw bytes), plus ``extra`` lines at the end."""

    def make(_template: Path) -> bytes:
        rows: list[Any] = [_result(k) for k in _keys()]
        if callable(second):
            rows[1] = second(rows[1])
        elif second is not None:
            rows[1] = second
        rows += [r(rows) if callable(r) else r for r in extra or []]
        return b"".join(r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n" for r in rows)

    return make


def _set(**changes: Any) -> Any:
    return lambda row: {**row, **changes}


def batch_case(cid: str, out: Any, expect: tuple[str, ...]) -> Case:
    files = {"out.jsonl": out, "panel.yaml": text(PANEL), "items.jsonl": text(ITEMS)}
    return Case(id=f"batch-{cid}", kind="batch-output", files=files, args=ARGS,
                expect=("Nothing was stored", *expect))


CASES = [
    batch_case("not-json", _out(b'{"custom_id": "abc", "respo\n'), ("line 2 is not JSON",)),
    batch_case("not-object", _out(b"[1, 2, 3]\n"), ("line 2 is not a JSON object",)),
    batch_case("not-utf8", _out(b'{"custom_id": "\xff\xfe"}\n'), ("line 2 is not UTF-8",)),
    batch_case("deep", _out(b"[" * 20_000 + b"]" * 20_000 + b"\n"), ("line 2 is JSON nested too deep",)),
    batch_case("no-custom-id", _out(_set(custom_id=None)), ("line 2 has no custom_id",)),
    batch_case("custom-id-number", _out(_set(custom_id=7)), ("line 2 has no custom_id",)),
    batch_case("custom-id-empty", _out(_set(custom_id="")), ("line 2 has no custom_id",)),
    batch_case("neither", _out(_set(response=None, error=None)),
               ("line 2 has neither a response nor an error",)),
    batch_case("response-text", _out(_set(response="ok")), ("line 2 has a response that is not an object",)),
    batch_case("error-number", _out(_set(response=None, error=5)),
               ("line 2 has an error that is neither text nor an object",)),
    batch_case("status-text", _out(_set(response={"status_code": "200", "body": {}})),
               ("line 2 has a response without a status_code",)),
    batch_case("unknown-custom-id", _out(_set(custom_id="f" * 32)),
               ("line 2", "is not a call of this panel's judges")),
    batch_case("duplicate", _out(extra=[lambda rows: rows[0]]),
               ("line 4", "has a result already on line 1")),
]

VALID = [Valid("batch-output", {"out.jsonl": _out(), "panel.yaml": text(PANEL), "items.jsonl": text(ITEMS)},
               ARGS)]
