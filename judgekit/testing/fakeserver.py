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
without a response), ``unparseable`` (a well-formed reply whose text is not a label), and the hostile
answers of :mod:`judgekit.testing.hostile` (``huge``, ``deep``, ``nan_usage``, ``huge_usage``,
``drip``, ``contradictory``, ``absurd_retry``; ``huge_bytes`` and ``drip_s`` size them).

Run it as a separate process (benchmarks): ``python -m judgekit.testing.fakeserver --latency 0.1
--rate 429=0.05 --rate 500=0.02``; it prints ``READY <url>``; ``GET /_stats`` returns the counters.
To serve a judge of one's own study: ``--port 8765 --script myjudge:answer``
(:mod:`judgekit.testing.fakeserver`; the default answer ignores what the response says).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import inspect
import json
import random
import signal
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.testing.batches import BATCH_PATHS, BatchEndpoints
from judgekit.testing.hostile import (
    DEEP_LEVELS,
    FAULTS,
    HOSTILE,
    UNPARSEABLE,
    Injection,
    check_kind,
    pick_fault,
    send_hostile,
)
from judgekit.testing.providers import (
    anthropic_message,
    error_body,
    no_route,
    openai_completion,
    wants_prompt_cache,
)
from judgekit.testing.script import (
    FakeRequest,
    Reply,
    Script,
    default_script,
    label_reply,
    parse_request,
)
from judgekit.testing.transport import read_request, send_json, send_raw

__all__ = [
    "FAULTS", "FakeRequest", "FakeServer", "FakeStats", "Reply", "Script",
    "default_script", "label_reply", "main",
]

#: faults that fail a request of a provider batch (the others do not happen inside a batch)
_BATCH_FAULTS = ("429", "500", "529", "401", "hang", "disconnect", "malformed")


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
    ``keep_requests`` keeps the last requests (without any key) in :attr:`requests`;
    ``huge_bytes`` is the size of a ``huge`` answer, ``drip_s`` the pause between the bytes of a
    ``drip`` one.
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
        huge_bytes: int = 300 * 2**20,
        drip_s: float = 1.0,
    ) -> None:
        self.script: Script = script or default_script
        self.latency = latency
        self.rates = dict(rates or {})
        for kind in self.rates:
            check_kind(kind)
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.rng = random.Random(seed)
        self.keep_requests = keep_requests
        self.huge_bytes = huge_bytes
        self.drip_s = drip_s
        self.requests: list[FakeRequest] = []
        self.stats = FakeStats()
        self.port = 0
        self._injected: list[Injection] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._seen_prefixes: set[tuple[str, str, str]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._batch_api = BatchEndpoints(self._answer_batched, self._count_batch, lambda: self.url)
        #: provider batches: id -> {"api", "requests", "polls", "results"}
        self.batches = self._batch_api.batches
        #: uploaded and output files of the OpenAI Files API: id -> content
        self.files = self._batch_api.files

    # ------------------------------------------------------------------ control
    @property
    def url(self) -> str:
        """Base URL for the Anthropic SDK (host root)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI SDK and ``openai-compatible:`` specs (with ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def batch_polls(self) -> int:
        """A batch ends at its ``batch_polls``-th status request (0: at once)."""
        return self._batch_api.polls

    @batch_polls.setter
    def batch_polls(self, n: int) -> None:
        self._batch_api.polls = n

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
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port or 0, backlog=512)
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
        check_kind(kind)
        with self._lock:
            self._injected.append(
                Injection(kind, times, match, self.retry_after if retry_after is None else retry_after)
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
                request = await read_request(reader)
                if request is None:
                    break
                keep = await self._respond(request.method, request.path, request.headers, request.body, writer)
                if not keep or request.headers.get("connection", "").lower() == "close":
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
            return await send_json(writer, 200, self.stats.as_dict())
        if method == "GET" and path in ("/health", "/v1/models"):
            return await send_json(writer, 200, {"status": "ok", "data": []})
        if path.startswith(BATCH_PATHS):
            return await self._batch_api.route(method, path, headers, raw, writer)
        if method != "POST" or path not in ("/v1/messages", "/v1/chat/completions"):
            return await send_json(writer, 404, no_route(method, path))
        api = "anthropic" if path == "/v1/messages" else "openai"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return await send_json(writer, 400, error_body(api, "invalid_request_error", "body is not JSON"))
        req = parse_request(api, body, headers)
        with self._lock:
            st = self.stats
            st.requests += 1
            st.by_api[api] += 1
            st.by_model[req.model] += 1
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            self._keep(req)
            fault, retry_after = self._pick_fault(req)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            if fault is not None:
                with self._lock:
                    self.stats.faults[fault] += 1
            if fault == "429":
                hdr = {"retry-after": f"{retry_after:g}", "retry-after-ms": f"{retry_after * 1000:g}"}
                return await send_json(writer, 429, error_body(api, "rate_limit_error", "rate limited"), hdr)
            if fault == "401":
                # Like a provider that quotes the key it was given (the worst case for leaks):
                # whatever judgekit keeps of an error must not be the provider's message.
                given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
                return await send_json(writer, 401, error_body(api, "authentication_error",
                                                           f"invalid API key provided: {given}"))
            if fault in ("500", "529"):
                code = 529 if fault == "529" and api == "anthropic" else (503 if fault == "529" else 500)
                kind = "overloaded_error" if code == 529 else "api_error"
                return await send_json(writer, code, error_body(api, kind, "scripted server error"))
            if fault == "hang":
                await asyncio.sleep(self.hang_s)
                return False
            if fault == "disconnect":
                return False
            if fault == "malformed":
                return await send_raw(writer, 200, b'{"id": "broken", "choices": [ {"mess')
            if fault in HOSTILE:
                def completion(text: str | None) -> dict[str, Any]:
                    reply = self._reply(req, None) if text is None else Reply(text)
                    return self._completion(api, req, reply)

                return await send_hostile(writer, fault, api, completion, huge_bytes=self.huge_bytes,
                                          drip_s=self.drip_s, codes=req.codes)
            return await send_json(writer, 200, self._completion(api, req, self._reply(req, fault)))
        finally:
            with self._lock:
                self.stats.in_flight -= 1

    # ------------------------------------------------------------------ batches
    def _count_batch(self, n_requests: int) -> None:
        with self._lock:
            self.stats.batches += 1
            self.stats.batch_requests += n_requests

    def _answer_batched(self, api: str, params: dict[str, Any], has_auth: bool) -> dict[str, Any] | str | bytes:
        """One request of a provider batch: its completion body, the fault that failed it, or
        (``deep``) a results line nested 200,000 levels deep."""
        req = parse_request(api, params, {"authorization": "x"} if has_auth else {})
        with self._lock:
            fault, _ = self._pick_fault(req)
            self._keep(req)
        if fault == "deep":
            return b'{"custom_id": "?", "x": ' + b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS + b"}"
        if fault in _BATCH_FAULTS:
            with self._lock:
                self.stats.faults[fault] += 1
            return fault
        return self._completion(api, req, self._reply(req, fault))

    # ------------------------------------------------------------------ answers
    def _keep(self, req: FakeRequest) -> None:
        """Keep ``req`` among the last ``keep_requests`` (call with the lock held)."""
        if self.keep_requests:
            self.requests.append(req)
            del self.requests[: -self.keep_requests]

    def _reply(self, req: FakeRequest, fault: str | None) -> Reply:
        """The script's answer to ``req``, or an unparseable one when that is the fault."""
        out = self.script(req)
        reply = out if isinstance(out, Reply) else Reply(str(out))
        if fault == "unparseable":
            reply = Reply(UNPARSEABLE)
        return reply

    def _pick_fault(self, req: FakeRequest) -> tuple[str | None, float]:
        return pick_fault(self._injected, self.rates, self.rng, self.retry_after, req.user)

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
        prefix_tokens = min(sys_tokens, inp)
        if api == "anthropic":
            return anthropic_message(self.stats.requests, req.model, reply.text, input_tokens=inp,
                                     output_tokens=out, prefix_tokens=prefix_tokens, cache_hit=hit,
                                     wants_cache=wants_prompt_cache(req.body))
        logprobs = None
        if req.body.get("logprobs") is True:  # as OpenAI: token log-probabilities when asked
            logprobs = reply.logprobs if reply.logprobs is not None else [
                (reply.text[i:i + 4], 0.0) for i in range(0, len(reply.text), 4)]
        return openai_completion(self.stats.requests, req.model, reply.text, input_tokens=inp,
                                 output_tokens=out, cached_tokens=prefix_tokens if hit else 0,
                                 logprobs=logprobs)


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
    _add_serve_options(ap)  # --port, --script (judgekit.testing.fakeserver)
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        _fail(f"--port {args.port} is not a port; give one from 1 to 65535 (0: a free one).")
    script = _load_script(args.script)
    rates = {}
    for r in args.rate:
        kind, _, p = r.partition("=")
        rates[kind] = float(p)
    server = FakeServer(script, latency=args.latency, rates=rates, retry_after=args.retry_after,
                        seed=args.seed, keep_requests=0)
    server.port = args.port
    try:
        server.start()
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
              "pick another --port.", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"READY {server.url}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    server.stop()


# Command-line options of the standalone fake provider (``python -m judgekit.testing.fakeserver``)
# that let it serve a judge of one's own study: ``--port N`` (a fixed port, so a panel file can name
# ``http://127.0.0.1:N/v1``) and ``--script module:function`` (the function that answers each
# request; :class:`judgekit.testing.script.FakeRequest` in, a label reply out).
#
# Without ``--script`` the server answers with :func:`judgekit.testing.script.default_script`, which
# does not read the response for its meaning: it returns the label named by a ``LABEL=<code>``
# marker in the response, else a label picked from the rubric's codes by a hash of the response
# text — stable, but unrelated to what the response says. A study's judge needs a script.



def _add_serve_options(ap: argparse.ArgumentParser) -> None:
    """Add ``--port`` and ``--script`` to the fake provider's argument parser."""
    ap.add_argument("--port", type=int, default=0,
                    help="port on 127.0.0.1 to listen on (default: a free one, printed in READY)")
    ap.add_argument("--script", default=None, metavar="MODULE:FUNCTION",
                    help="the function answering each request, e.g. myjudge:answer (a module on "
                         "the path or in the current folder); default: a LABEL=<code> marker in "
                         "the response, else a stable pick that ignores what the response says")


def _load_script(spec: str | None) -> Any:
    """The callable named by ``module:function`` (None → None); a bad name exits with one
    sentence (exit code 2)."""
    if spec is None:
        return None
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        _fail(f"--script {spec!r}: give it as MODULE:FUNCTION, e.g. --script myjudge:answer.")
    if module.endswith(".py"):  # importing "evil.py" would run evil.py before failing on ".py"
        _fail(f"--script {spec!r}: name the module {module!r} without .py (--script {module[:-3]}:{name}).")
    if not all(part.isidentifier() for part in module.split(".")):
        _fail(f"--script {spec!r}: module {module!r} is not a module name (dotted Python names, no "
              "paths or leading dots); run from the folder holding it or put it on PYTHONPATH.")
    if not name.isidentifier() or name.startswith("_"):
        _fail(f"--script {spec!r}: {name!r} is not a public function name; name the function that "
              "answers each request.")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a module in the current folder, as `python -m` finds it
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        _fail(f"--script {spec!r}: cannot import module {module!r} ({exc}); run from the folder "
              "holding it or put it on PYTHONPATH.")
    fn = getattr(mod, name, None)
    if not callable(fn):
        _fail(f"--script {spec!r}: module {module!r} has no function {name!r}.")
    if not inspect.isfunction(fn) or not _takes_one(fn):
        _fail(f"--script {spec!r}: {name!r} is not a Python function of one argument (the request); "
              "name a function such as def answer(req): ...")
    return fn


def _takes_one(fn: Any) -> bool:
    """Whether ``fn`` can be called with the request alone."""
    try:
        inspect.signature(fn).bind(None)
    except (TypeError, ValueError):
        return False
    return True


def _fail(message: str) -> Any:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


if __name__ == "__main__":
    main()
