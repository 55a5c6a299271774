"""A fake LLM provider on 127.0.0.1: Anthropic Messages and OpenAI Chat Completions.

The official ``anthropic`` and ``openai`` SDKs run against it unchanged through ``base_url``
(``server.url`` for Anthropic, ``server.openai_url`` — with ``/v1`` — for OpenAI). It answers from
a *script* (a function of the request), adds latency, injects faults on demand and counts calls
and tokens. Tests, benchmarks and the offline demo use it; nothing patches SDK internals.

>>> from judgekit.testing.fakeserver import FakeServer, label_reply
>>> with FakeServer(lambda req: label_reply("full_refusal")) as server:
...     server.url.startswith("http://127.0.0.1:")
True

Faults (``inject`` for the next *n* matching requests, ``rates`` for random ones, seeded):
``429`` (with ``retry-after``), ``500``, ``529`` (overloaded), ``401`` (bad key; the error message
quotes the key received, as the worst provider would), ``hang`` (no answer before the
client's timeout), ``malformed`` (a 200 whose body is not JSON), ``disconnect`` (connection closed
without a response), ``unparseable`` (a well-formed reply whose text is not a label).

Run it as a separate process (benchmarks): ``python -m judgekit.testing.fakeserver --latency 0.1
--rate 429=0.05 --rate 500=0.02``; it prints ``READY <url>``; ``GET /_stats`` returns the counters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from judgekit.prompt import judged_response, unfence

FAULTS = ("429", "500", "529", "401", "hang", "malformed", "disconnect", "unparseable")


@dataclass
class FakeRequest:
    """What the script sees of one request."""

    api: str  #: "anthropic" or "openai"
    model: str
    system: str
    user: str  #: text of the last user message
    body: dict[str, Any]
    has_auth: bool  #: an API key header arrived (its value is never kept)
    headers: dict[str, str] = field(default_factory=dict)  #: request headers, keys removed

    @property
    def item(self) -> str | None:
        """The fenced item (conversation + response), as the judge sees it as data."""
        return unfence(self.user)

    @property
    def response(self) -> str | None:
        """The response being judged."""
        return judged_response(self.user)

    @property
    def codes(self) -> list[str]:
        """The rubric codes offered (from the answer schema, else from the system prompt)."""
        schema = _schema_of(self.body)
        if schema:
            enum = schema.get("properties", {}).get("label", {}).get("enum")
            if enum:
                return [str(c) for c in enum]
        m = re.search(r"exactly one of: ([a-z0-9_, ]+)\.", self.system)
        return [c.strip() for c in m.group(1).split(",")] if m else []


@dataclass
class Reply:
    """A scripted answer; token counts default to ~4 characters a token."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


Script = Callable[[FakeRequest], "str | Reply"]


def label_reply(label: str, rationale: str = "scripted answer") -> str:
    """The JSON answer a well-behaved judge gives."""
    return json.dumps({"rationale": rationale, "label": label})


def default_script(req: FakeRequest) -> str:
    """A ``LABEL=<code>`` marker in the judged response wins; else a stable pick from the codes."""
    resp = req.response or ""
    m = re.search(r"LABEL=([a-z0-9_]+)", resp)
    codes = req.codes or ["unknown"]
    if m:
        return label_reply(m.group(1))
    import zlib

    return label_reply(codes[zlib.crc32(resp.encode()) % len(codes)])


@dataclass
class _Injected:
    kind: str
    remaining: int
    match: str | None
    retry_after: float


@dataclass
class FakeStats:
    """Counters (read them between runs; ``reset`` clears them)."""

    requests: int = 0  #: every request received, faulted or not
    answered: int = 0  #: 200 responses with a completion
    faults: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    by_api: Counter[str] = field(default_factory=Counter)
    input_tokens: int = 0
    output_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    batches: int = 0  #: provider batches submitted
    batch_requests: int = 0  #: judge requests inside those batches

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "answered": self.answered,
            "faults": dict(self.faults),
            "by_model": dict(self.by_model),
            "by_api": dict(self.by_api),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "max_in_flight": self.max_in_flight,
            "batches": self.batches,
            "batch_requests": self.batch_requests,
        }


class FakeServer:
    """The fake provider. Use as a context manager, or ``start()`` / ``stop()``.

    Parameters: ``script`` answers each request (default :func:`default_script`); ``latency``
    seconds before each answer; ``rates`` maps a fault kind to its probability per request;
    ``hang_s`` how long a ``hang`` lasts; ``seed`` makes random faults reproducible;
    ``keep_requests`` keeps the last requests (without any key) in :attr:`requests`.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        latency: float = 0.0,
        rates: dict[str, float] | None = None,
        retry_after: float = 0.05,
        hang_s: float = 30.0,
        seed: int = 0,
        keep_requests: int = 1000,
    ) -> None:
        self.script: Script = script or default_script
        self.latency = latency
        self.rates = dict(rates or {})
        for kind in self.rates:
            _check_kind(kind)
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.rng = random.Random(seed)
        self.keep_requests = keep_requests
        self.requests: list[FakeRequest] = []
        self.stats = FakeStats()
        self.port = 0
        self._injected: list[_Injected] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._seen_prefixes: set[tuple[str, str, str]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        #: provider batches: id -> {"api", "requests", "polls", "results"}
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        #: a batch ends at its ``batch_polls``-th status request (0: at once)
        self.batch_polls = 0

    # ------------------------------------------------------------------ control
    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK (host root)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK and ``openai-compatible:`` specs (with ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeServer:
        """Bind 127.0.0.1 on a free port and serve from a background thread."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="fakeserver", daemon=True)
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._bind(), loop)
        fut.result(timeout=10)
        return self

    async def _bind(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=512)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        """Stop serving and join the thread."""
        loop = self._loop
        if loop is None:
            return

        async def _close() -> None:
            if self._server is not None:
                self._server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.sleep(0)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        loop.close()
        self._loop = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def inject(
        self, kind: str, times: int = 1, *, match: str | None = None, retry_after: float | None = None
    ) -> None:
        """Fault the next ``times`` requests (whose user message contains ``match``, if given)."""
        _check_kind(kind)
        with self._lock:
            self._injected.append(
                _Injected(kind, times, match, self.retry_after if retry_after is None else retry_after)
            )

    def reset(self) -> None:
        """Clear the counters, the kept requests and pending injections."""
        with self._lock:
            self.stats = FakeStats()
            self.requests.clear()
            self._injected.clear()

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                parts = request_line.decode("latin-1").split()
                if len(parts) < 2:
                    break
                method, path = parts[0], parts[1]
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = line.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(n) if n else b""
                keep = await self._respond(method, path, headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _respond(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        path = path.split("?")[0]
        if method == "GET" and path == "/_stats":
            return await _send(writer, 200, self.stats.as_dict())
        if method == "GET" and path in ("/health", "/v1/models"):
            return await _send(writer, 200, {"status": "ok", "data": []})
        if path.startswith(("/v1/messages/batches", "/v1/batches", "/v1/files")):
            return await self._batch_route(method, path, headers, raw, writer)
        if method != "POST" or path not in ("/v1/messages", "/v1/chat/completions"):
            return await _send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
        api = "anthropic" if path == "/v1/messages" else "openai"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return await _send(writer, 400, _error(api, "invalid_request_error", "body is not JSON"))
        req = _request(api, body, headers)
        with self._lock:
            st = self.stats
            st.requests += 1
            st.by_api[api] += 1
            st.by_model[req.model] += 1
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            if self.keep_requests:
                self.requests.append(req)
                del self.requests[: -self.keep_requests]
            fault, retry_after = self._pick_fault(req)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            if fault is not None:
                with self._lock:
                    self.stats.faults[fault] += 1
            if fault == "429":
                hdr = {"retry-after": f"{retry_after:g}", "retry-after-ms": f"{retry_after * 1000:g}"}
                return await _send(writer, 429, _error(api, "rate_limit_error", "rate limited"), hdr)
            if fault == "401":
                # Like a provider that quotes the key it was given (the worst case for leaks):
                # whatever judgekit keeps of an error must not be the provider's message.
                given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
                return await _send(writer, 401, _error(api, "authentication_error",
                                                       f"invalid API key provided: {given}"))
            if fault in ("500", "529"):
                code = 529 if fault == "529" and api == "anthropic" else (503 if fault == "529" else 500)
                kind = "overloaded_error" if code == 529 else "api_error"
                return await _send(writer, code, _error(api, kind, "scripted server error"))
            if fault == "hang":
                await asyncio.sleep(self.hang_s)
                return False
            if fault == "disconnect":
                return False
            if fault == "malformed":
                return await _send_raw(writer, 200, b'{"id": "broken", "choices": [ {"mess')
            out = self.script(req)
            reply = out if isinstance(out, Reply) else Reply(str(out))
            if fault == "unparseable":
                reply = Reply("I would need more context before I could say anything about this.")
            return await _send(writer, 200, self._completion(api, req, reply))
        finally:
            with self._lock:
                self.stats.in_flight -= 1

    # ------------------------------------------------------------------ batches
    async def _batch_route(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        parts = path.strip("/").split("/")
        now = time.time()
        if path == "/v1/messages/batches" and method == "POST":
            body = json.loads(raw or b"{}")
            reqs = [(r["custom_id"], r["params"]) for r in body.get("requests", [])]
            bid = self._new_batch("anthropic", reqs, headers)
            return await _send(writer, 200, self._anthropic_batch(bid, now))
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4 and method == "GET":
            if parts[3] not in self.batches:
                return await _send(writer, 404, _error("anthropic", "not_found_error", "no batch"))
            self._poll(parts[3])
            return await _send(writer, 200, self._anthropic_batch(parts[3], now))
        if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "results":
            b = self.batches.get(parts[3])
            if b is None or b["results"] is None:
                return await _send(writer, 404, _error("anthropic", "not_found_error", "not ended"))
            results: list[dict[str, Any]] = b["results"]
            jsonl = b"".join(json.dumps(r).encode() + b"\n" for r in results)
            return await _send_raw(writer, 200, jsonl, {"content-type": "application/binary"})
        if path == "/v1/files" and method == "POST":
            content = _multipart_file(headers.get("content-type", ""), raw)
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = content
            return await _send(writer, 200, {"id": fid, "object": "file", "bytes": len(content),
                                             "created_at": int(now), "filename": "batch.jsonl",
                                             "purpose": "batch", "status": "processed"})
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            data = self.files.get(parts[2])
            if data is None:
                return await _send(writer, 404, _error("openai", "not_found", "no such file"))
            return await _send_raw(writer, 200, data, {"content-type": "application/octet-stream"})
        if path == "/v1/batches" and method == "POST":
            body = json.loads(raw or b"{}")
            text = self.files.get(str(body.get("input_file_id")), b"").decode()
            reqs = [(r["custom_id"], r["body"]) for r in map(json.loads, filter(None, text.splitlines()))]
            bid = self._new_batch("openai", reqs, headers)
            return await _send(writer, 200, self._openai_batch(bid, now))
        if parts[:2] == ["v1", "batches"] and len(parts) == 3 and method == "GET":
            if parts[2] not in self.batches:
                return await _send(writer, 404, _error("openai", "not_found", "no batch"))
            self._poll(parts[2])
            return await _send(writer, 200, self._openai_batch(parts[2], now))
        return await _send(writer, 404, {"error": {"message": f"no route {method} {path}"}})

    def _new_batch(self, api: str, reqs: list[tuple[str, dict[str, Any]]], headers: dict[str, str]) -> str:
        with self._lock:
            self.stats.batches += 1
            self.stats.batch_requests += len(reqs)
            bid = f"{'msgbatch' if api == 'anthropic' else 'batch'}_{len(self.batches) + 1}"
            self.batches[bid] = {"api": api, "requests": reqs, "polls": 0, "results": None,
                                 "has_auth": bool(headers.get("authorization") or headers.get("x-api-key")),
                                 "created": time.time()}
        return bid

    def _poll(self, bid: str) -> None:
        b = self.batches[bid]
        b["polls"] += 1
        if b["results"] is None and b["polls"] >= self.batch_polls:
            results = [self._batch_result(b["api"], cid, params, b["has_auth"])
                       for cid, params in b["requests"]]
            b["results"] = results
            if b["api"] == "openai":
                fid = f"file-out-{bid}"
                self.files[fid] = b"".join(json.dumps(r).encode() + b"\n" for r in results)
                b["output_file_id"] = fid

    def _batch_result(self, api: str, custom_id: str, params: dict[str, Any], has_auth: bool) -> dict[str, Any]:
        req = _request(api, params, {"authorization": "x"} if has_auth else {})
        with self._lock:
            fault, _ = self._pick_fault(req)
            if self.keep_requests:
                self.requests.append(req)
                del self.requests[: -self.keep_requests]
        if fault in ("429", "500", "529", "401", "hang", "disconnect", "malformed"):
            with self._lock:
                self.stats.faults[fault] += 1
            if api == "anthropic":
                return {"custom_id": custom_id, "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": f"scripted {fault}"}}}}
            return {"id": f"req_{custom_id}", "custom_id": custom_id, "response": {
                "status_code": 500, "request_id": "r", "body": {"error": {"message": f"scripted {fault}"}}},
                "error": None}
        out = self.script(req)
        reply = out if isinstance(out, Reply) else Reply(str(out))
        if fault == "unparseable":
            reply = Reply("I would need more context before I could say anything about this.")
        body = self._completion(api, req, reply)
        if api == "anthropic":
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": body}}
        return {"id": f"req_{custom_id}", "custom_id": custom_id,
                "response": {"status_code": 200, "request_id": "r", "body": body}, "error": None}

    def _anthropic_batch(self, bid: str, now: float) -> dict[str, Any]:
        b = self.batches[bid]
        ended = b["results"] is not None
        n = len(b["requests"])
        ok = sum(1 for r in b["results"] or [] if r["result"]["type"] == "succeeded")
        iso = _iso(b["created"])
        return {
            "id": bid, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0 if ended else n, "succeeded": ok,
                               "errored": (n - ok) if ended else 0, "canceled": 0, "expired": 0},
            "created_at": iso, "expires_at": _iso(b["created"] + 86400),
            "ended_at": _iso(now) if ended else None, "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{bid}/results" if ended else None,
        }

    def _openai_batch(self, bid: str, now: float) -> dict[str, Any]:
        b = self.batches[bid]
        ended = b["results"] is not None
        n = len(b["requests"])
        return {
            "id": bid, "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": "file-in", "completion_window": "24h",
            "status": "completed" if ended else "in_progress",
            "created_at": int(b["created"]), "output_file_id": b.get("output_file_id"),
            "error_file_id": None,
            "request_counts": {"total": n, "completed": n if ended else 0, "failed": 0},
        }

    def _pick_fault(self, req: FakeRequest) -> tuple[str | None, float]:
        for inj in self._injected:
            if inj.remaining > 0 and (inj.match is None or inj.match in req.user):
                inj.remaining -= 1
                return inj.kind, inj.retry_after
        self._injected = [i for i in self._injected if i.remaining > 0]
        if self.rates:
            x = self.rng.random()
            acc = 0.0
            for kind, p in self.rates.items():
                acc += p
                if x < acc:
                    return kind, self.retry_after
        return None, 0.0

    def _completion(self, api: str, req: FakeRequest, reply: Reply) -> dict[str, Any]:
        sys_tokens = len(req.system) // 4 + 1
        user_tokens = len(req.user) // 4 + 1
        inp = reply.input_tokens if reply.input_tokens is not None else sys_tokens + user_tokens
        out = reply.output_tokens if reply.output_tokens is not None else len(reply.text) // 4 + 1
        with self._lock:
            # A repeated system prompt is a prompt-cache hit, as with the real providers.
            prefix = (api, req.model, req.system)  # providers cache per model
            hit = prefix in self._seen_prefixes
            self._seen_prefixes.add(prefix)
            self.stats.answered += 1
            self.stats.input_tokens += inp
            self.stats.output_tokens += out
        cached = min(sys_tokens, inp) if hit else 0
        if api == "anthropic":
            wants_cache = _anthropic_cache_control(req.body)
            return {
                "id": f"msg_{self.stats.requests}",
                "type": "message",
                "role": "assistant",
                "model": req.model,
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": inp - (min(sys_tokens, inp) if wants_cache else 0),
                    "output_tokens": out,
                    "cache_read_input_tokens": cached if wants_cache else 0,
                    "cache_creation_input_tokens": (
                        min(sys_tokens, inp) if wants_cache and not hit else 0
                    ),
                },
            }
        return {
            "id": f"chatcmpl-{self.stats.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": reply.text},
                }
            ],
            "usage": {
                "prompt_tokens": inp,
                "completion_tokens": out,
                "total_tokens": inp + out,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }


def _iso(t: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(t, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    """The ``file`` part of a multipart/form-data upload."""
    from email.parser import BytesParser
    from email.policy import HTTP

    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    for part in msg.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    return b""


def _check_kind(kind: str) -> None:
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; use one of {', '.join(FAULTS)}")


def _anthropic_cache_control(body: dict[str, Any]) -> bool:
    system = body.get("system")
    if isinstance(system, list):
        return any(isinstance(b, dict) and b.get("cache_control") for b in system)
    return bool(body.get("cache_control"))


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return rf.get("json_schema", {}).get("schema")
    oc = body.get("output_config")
    if isinstance(oc, dict):
        fmt = oc.get("format")
        if isinstance(fmt, dict):
            return fmt.get("schema")
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _request(api: str, body: dict[str, Any], headers: dict[str, str]) -> FakeRequest:
    messages = body.get("messages") or []
    if api == "anthropic":
        system = _text_of(body.get("system"))
    else:
        system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") == "system")
    users = [m for m in messages if m.get("role") == "user"]
    user = _text_of(users[-1].get("content")) if users else ""
    has_auth = bool(headers.get("authorization") or headers.get("x-api-key"))
    kept = {k: v for k, v in headers.items() if k not in ("authorization", "x-api-key", "api-key")}
    return FakeRequest(api, str(body.get("model", "")), system, user, body, has_auth, kept)


def _error(api: str, kind: str, message: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": kind}}


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}


async def _send(
    writer: asyncio.StreamWriter, status: int, payload: Any, headers: dict[str, str] | None = None
) -> bool:
    return await _send_raw(writer, status, json.dumps(payload).encode(), headers)


async def _send_raw(
    writer: asyncio.StreamWriter, status: int, body: bytes, headers: dict[str, str] | None = None
) -> bool:
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json", f"content-length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    return True


# --------------------------------------------------------------------------- as a process
def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM/SIGINT; print ``READY <url>`` once bound."""
    ap = argparse.ArgumentParser(prog="python -m judgekit.testing.fakeserver", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--rate", action="append", default=[], metavar="KIND=P",
                    help="random fault rate, e.g. 429=0.05 (repeatable)")
    ap.add_argument("--retry-after", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rates = {}
    for r in args.rate:
        kind, _, p = r.partition("=")
        rates[kind] = float(p)
    server = FakeServer(latency=args.latency, rates=rates, retry_after=args.retry_after,
                        seed=args.seed, keep_requests=0).start()
    print(f"READY {server.url}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    server.stop()


if __name__ == "__main__":
    main()
