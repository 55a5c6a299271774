"""``openai-compatible:http://...`` judges call through :mod:`judgekit.judges.lean_http`, not
the SDK: the same body on the wire, the same classification of every failure, one request per
call, connections kept alive, and the SDK kept for TLS and proxies."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from judgekit.judges.base import JudgeCallError, JudgeContext, JudgeEntry, JudgeRequest, build_judge
from judgekit.judges.lean_http import LeanHTTP, LeanHTTPError, lean_usable
from judgekit.prompt import answer_schema, system_prompt, user_message
from judgekit.rubric import load_rubric
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


def outcome(judge):
    try:
        return call(judge)[0].raw
    except JudgeCallError as exc:
        return (exc.reason, exc.retryable, exc.fatal, exc.rate_limited, exc.retry_after)


def test_lean_is_used_for_plain_http_without_a_proxy():
    assert lean_usable("http://127.0.0.1:8000/v1", {})
    assert lean_usable("http://gpu-node/v1", {})
    assert not lean_usable("https://api.example.com/v1", {})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"HTTP_PROXY": "http://proxy:3128"})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"all_proxy": "socks5://p:1080"})
    assert not lean_usable("http://127.0.0.1:port/v1", {})
    assert not lean_usable("http://127.0.0.1:8000/v1", {"JUDGEKIT_LEAN_HTTP": "0"})
    assert lean_usable("http://127.0.0.1:8000/v1", {"JUDGEKIT_LEAN_HTTP": "1"})
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
        server.inject("disconnect")
        lean = outcome(judge_for(lean_entry))
        assert lean[0].startswith("connection error (") and lean[1:] == (True, False, False, None)
        assert outcome(judge_for(lean_entry)) == label_reply("full_refusal")


def test_a_refused_connection_is_a_retryable_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    got = outcome(judge_for(JudgeEntry(id="j", model=f"openai-compatible:http://127.0.0.1:{port}/v1#m")))
    assert got == ("connection error (cannot connect (ConnectionRefusedError))", True, False, False, None)


# ------------------------------------------------------------------ a raw HTTP server
class RawServer:
    """A loopback server answering each request with ``reply(n)`` (bytes), counting connections
    and requests; ``close_after`` closes the connection after each answer without saying so."""

    def __init__(self, reply, *, close_after: bool = False) -> None:
        self.reply, self.close_after = reply, close_after
        self.connections = self.requests = 0
        self.paths: list[str] = []
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
                lines = head.decode().split("\r\n")
                self.paths.append(lines[0])
                length = next(int(v) for k, _, v in (x.partition(": ") for x in lines[1:])
                              if k.lower() == "content-length")
                await reader.readexactly(length)
                self.requests += 1
                writer.write(self.reply(self.requests))
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


def test_a_request_is_sent_once_even_when_its_connection_is_lost():
    """Reused at once, a connection the server is closing loses the request: that call fails
    (retryable; the panel retries it), as with the SDK, and is never sent twice."""
    server = RawServer(plain, close_after=True)
    client = LeanHTTP(f"http://127.0.0.1:{server.port}/v1", {}, 5.0)
    results: list[object] = []

    async def go():
        try:
            for _ in range(6):
                try:
                    results.append((await client.post("/chat/completions", b"{}"))[0])
                except LeanHTTPError as exc:
                    results.append(str(exc))
        finally:
            await client.aclose()

    try:
        asyncio.run(go())
        assert server.requests == results.count(200) >= 3
        assert all(r == 200 or "connection" in str(r) for r in results)
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
