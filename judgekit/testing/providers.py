"""The JSON the fake server sends back, in the Anthropic and the OpenAI shapes.

Completions (with usage and prompt-cache counts), error bodies, and the batch objects and
result lines of the Anthropic Message Batches and OpenAI Batch APIs: just enough of each that
the official SDKs parse them unchanged.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

__all__ = [
    "anthropic_batch", "anthropic_message", "batch_error_line", "batch_result_line", "error_body",
    "no_route", "openai_batch", "openai_completion", "wants_prompt_cache",
]


def error_body(api: str, kind: str, message: str) -> dict[str, Any]:
    """An error response body as ``api`` writes it."""
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": kind}}


def no_route(method: str, path: str) -> dict[str, Any]:
    """The 404 body for a path the fake does not serve."""
    return {"error": {"message": f"no route {method} {path}"}}


def wants_prompt_cache(body: dict[str, Any]) -> bool:
    """True when an Anthropic request marks its system prompt (or itself) with ``cache_control``."""
    system = body.get("system")
    if isinstance(system, list):
        return any(isinstance(b, dict) and b.get("cache_control") for b in system)
    return bool(body.get("cache_control"))


def anthropic_message(
    number: int, model: str, text: str, *, input_tokens: int, output_tokens: int,
    prefix_tokens: int, cache_hit: bool, wants_cache: bool,
) -> dict[str, Any]:
    """A Messages API answer; with ``wants_cache`` the ``prefix_tokens`` of the system prompt
    count as cache reads on a hit and as cache writes otherwise, as the real API reports them."""
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens - (prefix_tokens if wants_cache else 0),
            "output_tokens": output_tokens,
            "cache_read_input_tokens": (prefix_tokens if cache_hit else 0) if wants_cache else 0,
            "cache_creation_input_tokens": prefix_tokens if wants_cache and not cache_hit else 0,
        },
    }


def openai_completion(
    number: int, model: str, text: str, *, input_tokens: int, output_tokens: int, cached_tokens: int,
    logprobs: list[tuple[str, float]] | None = None,
) -> dict[str, Any]:
    """A Chat Completions answer, with ``cached_tokens`` of the prompt reported as cached, and
    ``choices[0].logprobs.content`` when ``logprobs`` (``(token, logprob)`` pairs) is given."""
    body: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }
    if logprobs is not None:
        body["choices"][0]["logprobs"] = {"content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []} for t, lp in logprobs
        ]}
    return body


def batch_result_line(api: str, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """One succeeded request of a batch, as its results file lists it."""
    if api == "anthropic":
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": body}}
    return {"id": f"req_{custom_id}", "custom_id": custom_id,
            "response": {"status_code": 200, "request_id": "r", "body": body}, "error": None}


def batch_error_line(api: str, custom_id: str, fault: str) -> dict[str, Any]:
    """One request of a batch that a scripted ``fault`` failed, as its results file lists it."""
    if api == "anthropic":
        return {"custom_id": custom_id, "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "api_error", "message": f"scripted {fault}"}}}}
    return {"id": f"req_{custom_id}", "custom_id": custom_id, "response": {
        "status_code": 500, "request_id": "r", "body": {"error": {"message": f"scripted {fault}"}}},
        "error": None}


def anthropic_batch(
    bid: str, batch: dict[str, Any], now: float, results_url: str
) -> dict[str, Any]:
    """The Message Batches object of ``batch`` (``{"requests", "results", "created", ...}``)."""
    ended = batch["results"] is not None
    n = len(batch["requests"])
    ok = sum(1 for r in batch["results"] or [] if isinstance(r, dict) and r["result"]["type"] == "succeeded")
    return {
        "id": bid, "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": {"processing": 0 if ended else n, "succeeded": ok,
                           "errored": (n - ok) if ended else 0, "canceled": 0, "expired": 0},
        "created_at": _iso(batch["created"]), "expires_at": _iso(batch["created"] + 86400),
        "ended_at": _iso(now) if ended else None, "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": results_url if ended else None,
    }


def openai_batch(bid: str, batch: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI Batch object of ``batch``."""
    ended = batch["results"] is not None
    n = len(batch["requests"])
    return {
        "id": bid, "object": "batch", "endpoint": "/v1/chat/completions",
        "input_file_id": "file-in", "completion_window": "24h",
        "status": "completed" if ended else "in_progress",
        "created_at": int(batch["created"]), "output_file_id": batch.get("output_file_id"),
        "error_file_id": None,
        "request_counts": {"total": n, "completed": n if ended else 0, "failed": 0},
    }


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, tz=dt.UTC).isoformat().replace("+00:00", "Z")
