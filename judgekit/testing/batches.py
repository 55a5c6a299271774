"""The provider batch APIs of the fake server: Anthropic Message Batches, OpenAI Files + Batches.

A batch ends at its ``polls``-th status request (0: at the first); then every request in it is
answered as a single request would be (script, faults and counters included) and the results
are kept for the results endpoint (Anthropic) or as an output file (OpenAI).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from judgekit.testing.providers import (
    anthropic_batch,
    batch_error_line,
    batch_result_line,
    error_body,
    no_route,
    openai_batch,
)
from judgekit.testing.transport import multipart_file, send_json, send_raw

__all__ = ["BATCH_PATHS", "BatchEndpoints"]

#: path prefixes served by :class:`BatchEndpoints`.
BATCH_PATHS = ("/v1/messages/batches", "/v1/batches", "/v1/files")

#: answers one request of a batch: ``(api, params, has_auth) -> completion body``, or the name of
#: the fault that failed it.
#: a batched request's completion body, the fault that failed it, or a raw results line (bytes:
#: a hostile one, written as it is)
_BatchAnswer = Callable[[str, dict[str, Any], bool], "dict[str, Any] | str | bytes"]


class BatchEndpoints:
    """The batches and files one fake server holds, and the routes that serve them.

    ``answer`` answers one request of a batch; ``on_submit(n)`` is told of every batch of ``n``
    requests submitted; ``base_url()`` is the server's URL (for Anthropic's ``results_url``).
    """

    def __init__(self, answer: _BatchAnswer, on_submit: Callable[[int], None], base_url: Callable[[], str]) -> None:
        self.answer = answer
        self.on_submit = on_submit
        self.base_url = base_url
        #: provider batches: id -> {"api", "requests", "polls", "results"}
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        #: a batch ends at its ``polls``-th status request (0: at once)
        self.polls = 0

    async def route(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request under :data:`BATCH_PATHS`."""
        parts = path.strip("/").split("/")
        now = time.time()
        if path == "/v1/messages/batches" and method == "POST":
            body = json.loads(raw or b"{}")
            reqs = [(r["custom_id"], r["params"]) for r in body.get("requests", [])]
            bid = self._new_batch("anthropic", reqs, headers)
            return await send_json(writer, 200, self._anthropic(bid, now))
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4 and method == "GET":
            if parts[3] not in self.batches:
                return await send_json(writer, 404, error_body("anthropic", "not_found_error", "no batch"))
            self._poll(parts[3])
            return await send_json(writer, 200, self._anthropic(parts[3], now))
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "results":
            b = self.batches.get(parts[3])
            if b is None or b["results"] is None:
                return await send_json(writer, 404, error_body("anthropic", "not_found_error", "not ended"))
            jsonl = _jsonl(b["results"])
            return await send_raw(writer, 200, jsonl, {"content-type": "application/binary"})
        if path == "/v1/files" and method == "POST":
            content = multipart_file(headers.get("content-type", ""), raw)
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = content
            return await send_json(writer, 200, {"id": fid, "object": "file", "bytes": len(content),
                                                 "created_at": int(now), "filename": "batch.jsonl",
                                                 "purpose": "batch", "status": "processed"})
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            data = self.files.get(parts[2])
            if data is None:
                return await send_json(writer, 404, error_body("openai", "not_found", "no such file"))
            return await send_raw(writer, 200, data, {"content-type": "application/octet-stream"})
        if path == "/v1/batches" and method == "POST":
            body = json.loads(raw or b"{}")
            text = self.files.get(str(body.get("input_file_id")), b"").decode()
            reqs = [(r["custom_id"], r["body"]) for r in map(json.loads, filter(None, text.splitlines()))]
            bid = self._new_batch("openai", reqs, headers)
            return await send_json(writer, 200, openai_batch(bid, self.batches[bid]))
        if parts[:2] == ["v1", "batches"] and len(parts) == 3 and method == "GET":
            if parts[2] not in self.batches:
                return await send_json(writer, 404, error_body("openai", "not_found", "no batch"))
            self._poll(parts[2])
            return await send_json(writer, 200, openai_batch(parts[2], self.batches[parts[2]]))
        return await send_json(writer, 404, no_route(method, path))

    def _new_batch(self, api: str, reqs: list[tuple[str, dict[str, Any]]], headers: dict[str, str]) -> str:
        self.on_submit(len(reqs))
        bid = f"{'msgbatch' if api == 'anthropic' else 'batch'}_{len(self.batches) + 1}"
        self.batches[bid] = {"api": api, "requests": reqs, "polls": 0, "results": None,
                             "has_auth": bool(headers.get("authorization") or headers.get("x-api-key")),
                             "created": time.time()}
        return bid

    def _poll(self, bid: str) -> None:
        b = self.batches[bid]
        b["polls"] += 1
        if b["results"] is None and b["polls"] >= self.polls:
            results = [self._result(b["api"], cid, params, b["has_auth"]) for cid, params in b["requests"]]
            b["results"] = results
            if b["api"] == "openai":
                fid = f"file-out-{bid}"
                self.files[fid] = _jsonl(results)
                b["output_file_id"] = fid

    def _result(self, api: str, custom_id: str, params: dict[str, Any], has_auth: bool) -> dict[str, Any] | bytes:
        out = self.answer(api, params, has_auth)
        if isinstance(out, bytes):
            return out
        if isinstance(out, str):
            return batch_error_line(api, custom_id, out)
        return batch_result_line(api, custom_id, out)

    def _anthropic(self, bid: str, now: float) -> dict[str, Any]:
        url = f"{self.base_url()}/v1/messages/batches/{bid}/results"
        return anthropic_batch(bid, self.batches[bid], now, url)


def _jsonl(results: list[dict[str, Any] | bytes]) -> bytes:
    """A results file: one JSON line per result (a raw line as it is)."""
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in results)
