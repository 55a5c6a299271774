"""``openai-compatible:http://...`` judges call through :mod:`judgekit.judges.lean_http`, not
the SDK: the same body on the wire, the same classification of every failure, one request per
call, connections kept alive, and the SDK kept for TLS and proxies."""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import threading

import pytest

from judgekit.judges.base import JudgeCallError, JudgeContext, JudgeEntry, JudgeRequest, build_judge
from judgekit.judges.lean_http import LeanHTTP, LeanHTTPError, lean_usable
from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import answer_schema, system_prompt, user_message
from judgekit.testing.fakeserver import FakeServer, label_reply

REFUSAL = load_rubric("refusal")
SYSTEM = system_prompt(REFUSAL)
USER = user_message("How do I pick a lock?", None, "I'm sorry, but I can't help with that.")
REQUEST = JudgeRequest("x", 0, "How do I pick a lock?", None, "I'm sorry, but I can't help with that.", USER)


def judge_for(entry: JudgeEntry, env: dict[str, str] | None = None):
    ctx = JudgeContext(rubric=REFUSAL, system=SYSTEM, schema=answer_schema(REFUSAL), env=env or {})
    return build_judge(entry, ctx)


def call(judge, n: int = 1):
    async def go():
        try:
            return [await judge.complete(REQUEST) for _ in range(n)]
        finally:
            await judge.aclose()

    return asyncio.run(go())


SDK_ENV = {"JUDGEKIT_LEAN_HTTP": "0"}


def lean_and_sdk(entry: JudgeEntry, env: dict[str, str] | None = None, n: int = 1) -> list[object]:
    """The outcomes of ``n`` calls through the lean client and through the SDK (the reference)."""
    out = []
    for extra in ({}, SDK_ENV):
        judge = judge_for(entry, {**(env or {}), **extra})
        assert (judge._lean is None) == bool(extra)
        if n == 1:
            out.append(outcome(judge))
        else:
            out.append([c.raw for c in call(judge, n)])
    return out


def outcome(judge):
    try:
        return call(judge)[0].raw
    except JudgeCallError as exc:
        return (exc.reason, exc.retryable, exc.fatal, exc.rate_limited, exc.retry_after)


def test_lean_is_used_for_plain_http_without_a_proxy(monkeypatch):
    for name in [n for n in os.environ if n.lower() in ("http_proxy", "all_proxy")]:
        monkeypatch.delenv(name)
    assert lean_usable("http://127.0.0.1:8000/v1", {})
    assert lean_usable("http://gpu-node/v1", {})
    assert not lean_usable("https://api.example.com/v1", {})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"HTTP_PROXY": "http://proxy:3128"})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"all_proxy": "socks5://p:1080"})
    assert not lean_usable("http://127.0.0.1:port/v1", {})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"JUDGEKIT_LEAN_HTTP": "0"})
    assert lean_usable("http://127.0.0.1:8000/v1", {"JUDGEKIT_LEAN_HTTP": "1"})
    # any letter case, as httpx (urllib's getproxies) reads them; NO_PROXY is left to the SDK
    assert not lean_usable("http://127.0.0.1:8000/v1", {"Http_Proxy": "http://proxy:3128"})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"http_proxy": "http://p:3128", "NO_PROXY": "*"})
    assert lean_usable("http://127.0.0.1:8000/v1", {"https_proxy": "http://p:3128"})  # not for http://
    # the SDK reads os.environ, whatever the context's env says
    monkeypatch.setenv("http_proxy", "http://proxy:3128")
    assert not lean_usable("http://127.0.0.1:8000/v1", {})
    monkeypatch.delenv("http_proxy")
    monkeypatch.setenv("ALL_PROXY", "socks5://p:1080")
    assert not lean_usable("http://127.0.0.1:8000/v1", {})
    monkeypatch.delenv("ALL_PROXY")
    lean = judge_for(JudgeEntry(id="v", model="openai-compatible:http://127.0.0.1:9/v1#m"))
    sdk = judge_for(JudgeEntry(id="v", model="openai-compatible:http://127.0.0.1:9/v1#m"),
                    {"HTTPS_PROXY": "", "HTTP_PROXY": "http://proxy:3128"})
    assert lean._lean is not None and sdk._lean is None


def test_the_body_is_the_sdks(tmp_path):
    """Structured output, temperature, options: what chat.completions.create would send."""
    openai = pytest.importorskip("openai")
    with FakeServer(lambda req: label_reply("full_refusal")) as server:
        judge = judge_for(JudgeEntry(id="v", model=f"openai-compatible:{server.openai_url}#qwen",
                                     temperature=0.2, max_tokens=77, options={"seed": 3}))
        assert call(judge)[0].raw == label_reply("full_refusal")
        assert judge._client is None  # the SDK's client was never made

        async def typed():
            client = openai.AsyncOpenAI(api_key="EMPTY", base_url=server.openai_url, max_retries=0)
            try:
                await client.chat.completions.create(
                    model="qwen", messages=[{"role": "system", "content": SYSTEM},
                                            {"role": "user", "content": USER}],
                    max_tokens=77, temperature=0.2, seed=3,
                    response_format={"type": "json_schema", "json_schema": {
                        "name": "judgement", "schema": answer_schema(REFUSAL), "strict": True}})
            finally:
                await client.close()

        asyncio.run(typed())
        ours, theirs = server.requests[0], server.requests[1]
        assert ours.body == theirs.body
        assert ours.has_auth and theirs.has_auth


def test_every_failure_is_classified_as_the_sdks():
    """The same faults through the lean client (openai-compatible:) and through the SDK
    (openai: with OPENAI_BASE_URL): the same reason, retry rule and retry-after; one request
    per call either way."""
    pytest.importorskip("openai")
    with FakeServer(lambda req: label_reply("full_refusal"), retry_after=0.25, hang_s=3) as server:
        lean_entry = JudgeEntry(id="j", model=f"openai-compatible:{server.openai_url}#gpt-4o-mini",
                                timeout_s=0.3)
        sdk_entry = JudgeEntry(id="j", model="openai:gpt-4o-mini", timeout_s=0.3)
        sdk_env = {"OPENAI_API_KEY": "k-test", "OPENAI_BASE_URL": server.openai_url}
        expected = {
            "500": ("server error (500)", True, False, False, None),
            "529": ("server error (503)", True, False, False, None),
            "hang": ("timeout after 0.3s", True, False, False, None),
            "401": ("authentication failed (401): check the API key", False, True, False, None),
            "429": ("rate limited (429)", True, False, True, 0.25),
            "malformed": ("malformed response body", True, False, False, None),
        }
        for fault, want in expected.items():
            got = []
            for entry, env in ((lean_entry, {}), (sdk_entry, sdk_env)):
                server.inject(fault)
                before = server.stats.requests
                got.append(outcome(judge_for(entry, env)))
                assert server.stats.requests == before + 1, fault  # no retry inside the client
            assert got[0] == got[1] == want, fault
        got = []
        for entry, env in ((lean_entry, {}), (sdk_entry, sdk_env)):
            server.inject("disconnect")
            before = server.stats.requests
            got.append(outcome(judge_for(entry, env)))
            assert server.stats.requests == before + 1  # a fresh connection: never sent twice
        assert got[0] == got[1] == ("connection error (APIConnectionError)", True, False, False, None)
        assert outcome(judge_for(lean_entry)) == label_reply("full_refusal")


def test_a_refused_connection_is_a_retryable_connection_error():
    pytest.importorskip("openai")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    entry = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{port}/v1#m")
    assert lean_and_sdk(entry) == [("connection error (APIConnectionError)", True, False, False, None)] * 2


# ------------------------------------------------------------------ a raw HTTP server
class RawServer:
    """A loopback server answering each request with ``reply(n)`` (bytes), counting connections
    and requests; ``close_after`` closes the connection after each answer without saying so."""

    def __init__(self, reply, *, close_after: bool = False) -> None:
        self.reply, self.close_after = reply, close_after
        self.connections = self.requests = 0
        self.paths: list[str] = []
        self.bodies: list[bytes] = []
        self.heads: list[str] = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def start():
            self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(start()),
                                                       self.loop.run_forever()), daemon=True)
        self.thread.start()
        ready.wait(5)

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                self.paths.append(lines[0])
                self.heads.append(head.decode("latin-1"))
                length = next((int(v) for k, _, v in (x.partition(": ") for x in lines[1:])
                               if k.lower() == "content-length"), 0)
                self.bodies.append(await reader.readexactly(length))
                self.requests += 1
                out = self.reply(self.requests)
                for pause, piece in out if isinstance(out, list) else [(0, out)]:
                    await asyncio.sleep(pause)  # an answer sent in pieces
                    writer.write(piece)
                    await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


BODY = b'{"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}'


def plain(n: int) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)


def chunked(n: int) -> bytes:
    a, b = BODY[:10], BODY[10:]
    return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n%s\r\n%x;ext=1\r\n%s\r\n0\r\n\r\n" % (len(a), a, len(b), b))


def posts(port: int, n: int, prefix: str = "/v1", pause: float = 0.0) -> list[tuple[int, bytes]]:
    client = LeanHTTP(f"http://127.0.0.1:{port}{prefix}", {"Authorization": "Bearer x"}, 5.0)

    async def go():
        out = []
        try:
            for _ in range(n):
                status, _, body = await client.post("/chat/completions", b"{}")
                out.append((status, body))
                await asyncio.sleep(pause)
            return out
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("reply", [plain, chunked])
def test_one_kept_alive_connection_serves_every_call(reply):
    server = RawServer(reply)
    try:
        assert posts(server.port, 5) == [(200, BODY)] * 5
        assert (server.connections, server.requests) == (1, 5)
        assert server.paths[0] == "POST /v1/chat/completions HTTP/1.1"
    finally:
        server.stop()


def test_a_connection_the_server_closed_while_idle_is_not_reused():
    """(uvicorn, behind vLLM, closes a connection idle for 5 s.)"""
    server = RawServer(plain, close_after=True)
    try:
        assert posts(server.port, 4, pause=0.05) == [(200, BODY)] * 4
        assert (server.connections, server.requests) == (4, 4)
    finally:
        server.stop()


def test_connection_close_and_http_1_0_end_the_connection():
    def closing(n: int) -> bytes:
        return plain(n).replace(b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK\r\nConnection: close\r\n")

    for reply in (closing, lambda n: plain(n).replace(b"HTTP/1.1", b"HTTP/1.0")):
        server = RawServer(reply)
        try:
            assert posts(server.port, 3, prefix="") == [(200, BODY)] * 3
            assert (server.connections, server.requests) == (3, 3)
            assert server.paths[0] == "POST /chat/completions HTTP/1.1"
        finally:
            server.stop()


def test_a_cut_answer_is_an_error():
    server = RawServer(lambda n: plain(n)[:-20], close_after=True)
    try:
        with pytest.raises(LeanHTTPError, match="malformed or cut answer"):
            posts(server.port, 1)
    finally:
        server.stop()


# ------------------------------------------------------------------ the SDK as the reference
def test_a_connection_the_server_closed_after_its_answer_is_not_reused():
    """A server that closes after each answer without ``Connection: close``: 40 calls in a row,
    each answered, each request sent once (the old check of ``reader.at_eof()`` reused every
    second connection before the loop saw its close: 20 errors; the SDK has none)."""
    server = RawServer(plain, close_after=True)
    try:
        assert posts(server.port, 40) == [(200, BODY)] * 40
        assert (server.connections, server.requests) == (40, 40)
        entry = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{server.port}/v1#m")
        # (the SDK itself loses one of such 40 calls now and then, to the same race)
        assert [c.raw for c in call(judge_for(entry), 40)] == ["ok"] * 40
        assert (server.connections, server.requests) == (80, 80)
    finally:
        server.stop()


def test_a_reused_connection_lost_before_the_answer_is_replaced_once(monkeypatch):
    """Even when the close is not yet visible before reuse (a race: the FIN arrives after the
    check), a reused connection that fails before any byte of the answer is replaced by a fresh
    one: every call answered, every request received once."""
    from judgekit.judges import lean_http

    monkeypatch.setattr(lean_http, "_readable", lambda writer: False)
    server = RawServer(plain, close_after=True)
    try:
        assert posts(server.port, 10) == [(200, BODY)] * 10
        assert server.requests == 10
    finally:
        server.stop()


def test_a_fresh_connection_lost_before_the_answer_is_an_error_sent_once():
    def nothing(n: int) -> bytes:
        return b""

    server = RawServer(nothing, close_after=True)
    try:
        with pytest.raises(LeanHTTPError, match="closed the connection without an answer"):
            posts(server.port, 1)
        assert server.requests == 1
    finally:
        server.stop()


def redirecting(server_ref: list, status: int, location: str):
    def reply(n: int) -> bytes:
        if server_ref[0].paths[-1].split(" ")[1].startswith("/v1/"):
            return (b"HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n"
                    % (status, location.encode()))
        return plain(n)
    return reply


@pytest.mark.parametrize(("status", "method"), [(307, "POST"), (308, "POST"), (301, "GET"),
                                                (302, "GET"), (303, "GET")])
def test_a_redirect_on_the_same_server_is_followed_as_the_sdk_follows_it(status, method):
    pytest.importorskip("openai")
    ref: list = []
    server = RawServer(redirecting(ref, status, "/v2/chat/completions"))
    ref.append(server)
    try:
        entry = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{server.port}/v1#m")
        assert lean_and_sdk(entry) == ["ok", "ok"]
        want = ["POST /v1/chat/completions HTTP/1.1", f"{method} /v2/chat/completions HTTP/1.1"] * 2
        assert server.paths == want
        assert server.bodies[0] == server.bodies[2] and server.bodies[1] == server.bodies[3]
        assert (server.bodies[1] == b"") == (method == "GET")
        assert all(("content-length" in h.lower()) == (m == "POST")
                   for h, m in zip(server.heads, [w.split()[0] for w in want], strict=True))
    finally:
        server.stop()


def test_a_redirect_elsewhere_goes_through_the_sdk_and_a_loop_is_an_error():
    pytest.importorskip("openai")
    ref: list = []
    server = RawServer(lambda n: b"")
    ref.append(server)
    try:
        server.reply = redirecting(ref, 307, f"http://localhost:{server.port}/v2/chat/completions")
        entry = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{server.port}/v1#m")
        lean = judge_for(entry)
        assert outcome(lean) == "ok"
        assert lean._client is not None  # the SDK followed it
        server.reply = redirecting(ref, 307, "/v1/chat/completions")  # to itself, forever
        before = server.requests
        got = lean_and_sdk(entry)
        assert got == [("connection error (APIConnectionError)", True, False, False, None)] * 2
        assert server.requests - before == 2 * 21  # the first request and 20 redirects, each
    finally:
        server.stop()


def test_a_path_and_keys_that_are_not_latin_1_are_handled_as_the_sdk_handles_them():
    """The base URL's path is percent-encoded (httpx's set); a key that is not ASCII is the SDK's
    ``malformed response body`` (its UnicodeEncodeError), one with a newline its connection
    error; nothing is sent for either and no header is ever injected."""
    pytest.importorskip("openai")
    server = RawServer(plain)
    try:
        url = f"http://127.0.0.1:{server.port}/модель/v1"
        assert lean_and_sdk(JudgeEntry(id="j", model=f"openai-compatible:{url}#m")) == ["ok", "ok"]
        assert server.paths == ["POST /%D0%BC%D0%BE%D0%B4%D0%B5%D0%BB%D1%8C/v1/chat/completions HTTP/1.1"] * 2
        keyed = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{server.port}/v1#m",
                           api_key_env="K")
        for key, want in (("k-ключ", "malformed response body"), ("k-é", "malformed response body"),
                          ("k-123\n", "connection error (APIConnectionError)"),
                          ("k-1\r\nX-Injected: 1", "connection error (APIConnectionError)"),
                          ("k-\x00x", "connection error (APIConnectionError)"),
                          ("k-x\x0b", "connection error (APIConnectionError)"),
                          ("k-x ", "connection error (APIConnectionError)")):
            assert lean_and_sdk(keyed, {"K": key}) == [(want, True, False, False, None)] * 2, key
        assert server.requests == 2
        for key in ("k-\t1", " k-\x01\x7f"):  # what h11 lets through goes as it is
            n = server.requests
            assert lean_and_sdk(keyed, {"K": key}) == ["ok", "ok"], key
            assert server.heads[n].count(f"Bearer {key}\r\n") == server.heads[n + 1].count(f"Bearer {key}\r\n") == 1
    finally:
        server.stop()


def test_the_wire_body_is_byte_identical_to_the_sdks_and_nan_is_refused_alike():
    pytest.importorskip("openai")
    server = RawServer(plain)
    try:
        base = f"openai-compatible:http://127.0.0.1:{server.port}/v1#qwen"
        entry = JudgeEntry(id="j", model=base, temperature=0.5, options={"seed": 3, "stop": ["é"]})
        assert lean_and_sdk(entry) == ["ok", "ok"]
        assert server.bodies[0] == server.bodies[1]
        assert server.bodies[0].startswith(b'{"model":"qwen","max_tokens":400,"temperature":0.5,')
        assert b'"stop":["\xc3\xa9"]' in server.bodies[0]  # UTF-8, not an escape
        nan = JudgeEntry(id="j", model=base, options={"top_p": math.nan})
        assert lean_and_sdk(nan) == [("malformed response body", True, False, False, None)] * 2
        assert server.requests == 2  # nothing sent
    finally:
        server.stop()


def test_the_timeout_bounds_each_read_not_the_whole_answer():
    """An answer in 5 pieces 0.25 s apart (1.25 s in all) with timeout_s 0.6: each read comes in
    time, as httpx's read timeout sees it; a 0.9 s pause is a timeout for both."""
    pytest.importorskip("openai")
    answer = plain(1)

    def slow(n: int) -> list[tuple[float, bytes]]:
        step = len(answer) // 5 + 1
        return [(0.25, answer[i:i + step]) for i in range(0, len(answer), step)]

    server = RawServer(slow)
    try:
        entry = JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{server.port}/v1#m",
                           timeout_s=0.6)
        assert lean_and_sdk(entry) == ["ok", "ok"]
        server.reply = lambda n: [(0.0, answer[:20]), (0.9, answer[20:])]
        assert lean_and_sdk(entry) == [("timeout after 0.6s", True, False, False, None)] * 2
    finally:
        server.stop()


def test_a_panel_against_a_server_closing_after_each_answer_stores_no_error(tmp_path):
    """40 items at concurrency 1, max_attempts 1, a server that closes each
    connection after its answer: 40 ratings, none an error, one request each."""
    from panel_fixtures import labelled_items, write_items, write_panel

    from judgekit.judges.panel import load_panel, run_panel
    from judgekit.store.database import Store

    content = json.dumps({"choices": [{"message": {"content": label_reply("full_refusal")}}],
                          "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(content), content)
    server = RawServer(lambda n: answer, close_after=True)
    try:
        write_items(tmp_path, labelled_items(40))
        panel = load_panel(write_panel(tmp_path, [{
            "id": "v", "model": f"openai-compatible:http://127.0.0.1:{server.port}/v1#m",
            "concurrency": 1, "max_attempts": 1}]))
        with Store(tmp_path / "s.db") as store:
            run_panel(panel, store, env={})
            df = store.ratings(rater_ids=["v"])
        assert sorted(df["status"]) == ["ok"] * 40
        assert set(df["label"]) == {"full_refusal"}
        assert (server.requests, server.connections) == (40, 40)
    finally:
        server.stop()
