"""The lean HTTP client's own bounds: a body over ``max_body`` is never read
into memory, whether its ``Content-Length`` says so, its chunks add up to more, or it runs to the
end of the connection; a whole request never outlasts ``deadline_s``."""

from __future__ import annotations

import asyncio

import pytest
from test_lean_http import RawServer

from judgekit.judges.bounds import CallDeadline, ResponseTooLarge
from judgekit.judges.lean_http import LeanHTTP

LIMIT = 4096


def post(server, *, max_body=LIMIT, deadline_s=None, timeout_s=5.0):
    async def go():
        lean = LeanHTTP(f"http://127.0.0.1:{server.port}/v1", {}, timeout_s, max_body=max_body,
                        deadline_s=deadline_s)
        try:
            return await lean.post("/chat/completions", b"{}")
        finally:
            await lean.aclose()

    return asyncio.run(go())


def head(extra: str) -> bytes:
    return f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{extra}\r\n".encode()


@pytest.mark.parametrize("reply", [
    # declares a terabyte and sends nothing more: refused at once, not awaited
    head("content-length: 1000000000000\r\n"),
    # chunks that add up to more than the limit
    head("transfer-encoding: chunked\r\n") + b"800\r\n" + b"x" * 2048 + b"\r\n" + b"1000\r\n" + b"x" * 4096,
    # no length: the body runs to the end of the connection
    head("connection: close\r\n") + b"x" * (LIMIT + 1),
])
@pytest.mark.timeout(60)  # a hang guard: never waits for the read timeout (120 s)
def test_a_body_over_the_limit_is_refused(reply):
    server = RawServer(lambda n: reply, close_after=True)
    try:
        with pytest.raises(ResponseTooLarge, match="larger than 4096 bytes"):
            post(server, timeout_s=120.0)
    finally:
        server.stop()


def test_a_body_at_the_limit_is_read():
    body = b"x" * LIMIT
    server = RawServer(lambda n: head(f"content-length: {LIMIT}\r\n") + body)
    try:
        assert post(server)[2] == body
    finally:
        server.stop()


@pytest.mark.timeout(60)  # a hang guard
def test_a_dripping_body_is_cut_at_the_deadline():
    body = b'{"a": 1}' * 10
    drip = [(0, head(f"content-length: {len(body)}\r\n"))] + [(0.1, body[i:i + 1]) for i in range(len(body))]
    server = RawServer(lambda n: drip)
    try:
        with pytest.raises(CallDeadline, match="within 1s"):
            post(server, timeout_s=0.5, deadline_s=1.0)  # each read < 0.5 s; the whole > 8 s
    finally:
        server.stop()
