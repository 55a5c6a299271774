"""A lean HTTP/1.1 client for judges served over plain ``http://`` (vLLM, SGLang, Ollama on one's
own machines, the fake provider): JSON POSTs on kept-alive connections, nothing else.

An ``openai-compatible:http://...`` judge sends its calls here instead of through the SDK (when
no proxy is configured): the SDK's import (~0.5 s) and the HTTP stack's per-request work (its
connection pool looks through every connection for each request; headers, URL and model objects
are built per call) are most of a judge's start-up and CPU at 64 connections on a small machine.
What goes over the wire is the same request body, with the same ``Authorization`` header.

* Connections are reused last-in first-out; an idle connection the server has closed is dropped
  before use. A request is sent once: a connection lost before the answer is an error (the
  panel retries the call, as it does when the SDK reports it).
* A response is read by ``Content-Length`` or ``Transfer-Encoding: chunked``; ``Connection:
  close`` (or HTTP/1.0) closes the connection after it.
* ``timeout_s`` bounds the whole request; a request that times out closes its connection.

Errors: :class:`LeanHTTPError` (could not connect, connection lost, a malformed response) and
:class:`TimeoutError`; an HTTP status is returned, not raised — the judge classifies both.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # imported by the first call: building a judge (a rerun) needs no asyncio
    import asyncio

#: proxy settings the SDK (httpx) would honour: with any of them set the SDK sends the calls
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")
#: ``JUDGEKIT_LEAN_HTTP=0`` sends every call through the SDK
LEAN_ENV = "JUDGEKIT_LEAN_HTTP"


class LeanHTTPError(Exception):
    """The connection could not be made or broke, or the answer is not HTTP/1.1."""


def lean_usable(base_url: str | None, env: dict[str, str] | None = None) -> bool:
    """Whether calls to ``base_url`` can go through :class:`LeanHTTP`: plain ``http://`` and no
    proxy configured (``HTTP_PROXY``, ``ALL_PROXY``; TLS and proxies stay with the SDK), unless
    ``JUDGEKIT_LEAN_HTTP=0``."""
    if not base_url or not base_url.lower().startswith("http://"):
        return False
    environ = os.environ if env is None else env
    if environ.get(LEAN_ENV, "").strip() == "0":
        return False
    if any(environ.get(v) for v in PROXY_VARIABLES):
        return False
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - a port that is not a number raises
    except ValueError:
        return False
    return bool(parts.hostname)


class LeanHTTP:
    """JSON POSTs to one ``http://host:port/prefix`` on kept-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout_s: float) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        host = self.host if ":" not in self.host else f"[{self.host}]"
        authority = host if parts.port is None else f"{host}:{self.port}"
        self.timeout_s = timeout_s
        fixed = {"Host": authority, "Accept": "application/json", "Content-Type": "application/json",
                 **headers}
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, body) of ``POST prefix+path``."""
        import asyncio

        head = (f"POST {self.prefix}{path} HTTP/1.1\r\n{self._head}"
                f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
        async with asyncio.timeout(self.timeout_s):
            conn = self._take() or await self._connect()
            try:
                status, headers, content, keep = await self._exchange(conn, head + body)
            except BaseException:
                _close(conn[1])
                raise
            if keep:
                self._idle.append(conn)
            else:
                _close(conn[1])
            return status, headers, content

    def _take(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        while self._idle:
            reader, writer = self._idle.pop()
            if reader.at_eof() or writer.is_closing():  # closed by the server while idle
                _close(writer)
                continue
            return reader, writer
        return None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        import asyncio

        try:
            return await asyncio.open_connection(self.host, self.port, limit=2**20)
        except OSError as exc:
            raise LeanHTTPError(f"cannot connect ({type(exc).__name__})") from None

    async def _exchange(
        self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes
    ) -> tuple[int, dict[str, str], bytes, bool]:
        import asyncio

        reader, writer = conn
        try:
            writer.write(request)
            await writer.drain()
            first = await reader.readline()
        except (ConnectionError, OSError) as exc:
            raise LeanHTTPError(f"connection lost ({type(exc).__name__})") from None
        if not first:
            raise LeanHTTPError("the server closed the connection without an answer")
        try:
            version, code, *_ = first.decode("latin-1").split(" ", 2)
            status = int(code)
            headers: dict[str, str] = {}
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n"):
                    break
                if not line:
                    raise LeanHTTPError("connection closed inside the answer's headers")
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            if headers.get("transfer-encoding", "").lower() == "chunked":
                content = await _chunked(reader)
            elif "content-length" in headers:
                content = await reader.readexactly(int(headers["content-length"]))
            else:  # no length: the body runs to the end of the connection
                content = await reader.read()
                headers["connection"] = "close"
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError,
                OSError) as exc:
            raise LeanHTTPError(f"malformed or cut answer ({type(exc).__name__})") from None
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        return status, headers, content, keep

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            _close(writer)
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readline()).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)  # the CRLF after the chunk


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()


__all__ = ["LEAN_ENV", "PROXY_VARIABLES", "LeanHTTP", "LeanHTTPError", "lean_usable"]
