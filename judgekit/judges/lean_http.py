"""A lean HTTP/1.1 client for judges served over plain ``http://`` (vLLM, SGLang, Ollama on one's
own machines, the fake provider): JSON POSTs on kept-alive connections, nothing else.

An ``openai-compatible:http://...`` judge sends its calls here instead of through the SDK (when
no proxy is configured): the SDK's import (~0.5 s) and the HTTP stack's per-request work (its
connection pool looks through every connection for each request; headers, URL and model objects
are built per call) are most of a judge's start-up and CPU at 64 connections on a small machine.
It behaves as the SDK's HTTP stack (httpx, ``follow_redirects=True``) does where a judge's
stored result could differ:

* the URL path is percent-encoded with httpx's safe set; a header value that is not ASCII raises
  :class:`UnicodeEncodeError` (a :class:`ValueError`, as httpx does), one with CR, LF or NUL
  raises :class:`LeanHTTPError` (httpx's ``LocalProtocolError``) — nothing is sent either way;
* connections are reused last-in first-out; before reuse an idle connection whose socket is
  readable (the server closed it, or sent something unasked) is dropped, as httpcore drops it;
  a REUSED connection that fails before any byte of the answer (the server closed it meanwhile)
  is replaced by a fresh one and the request sent again once (the server had closed it, so it
  did not take the request; a server that reads a request and then drops a kept-alive
  connection without a byte of answer gets it twice);
  a fresh connection that fails is an error (the panel retries the call);
* ``timeout_s`` bounds the connect, the write, and each read separately (httpx's
  ``Timeout(timeout_s)``); ``deadline_s`` bounds the whole request, redirects included (an answer
  that drips one byte a second is cut then: :class:`~judgekit.judges.bounds.CallDeadline`);
* a body over ``max_body`` bytes is not read further (:class:`~judgekit.judges.bounds.ResponseTooLarge`;
  a ``Content-Length`` over it is refused before the body is read), nor is a head over 1 MiB;
* 301/302/303/307/308 with a ``Location`` on the same host and port are followed (303, and 301/302
  of a POST, become a GET without a body), at most 20 times (httpx's limit; more is a
  :class:`LeanHTTPError`); a redirect elsewhere raises :class:`LeanRedirect` (the judge then
  sends that call through the SDK);
* a response is read by ``Content-Length``, ``Transfer-Encoding: chunked`` or to the end of the
  connection; ``Connection: close`` (or HTTP/1.0) closes the connection after it.

Errors: :class:`LeanHTTPError` (could not connect, connection lost, a malformed response; the
SDK's ``APIConnectionError``) and :class:`TimeoutError`; an HTTP status is returned, not raised —
the judge classifies both.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import sys
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin, urlsplit

from judgekit.judges.base import DEFAULT_MAX_RESPONSE_BYTES
from judgekit.judges.bounds import CallDeadline, ResponseTooLarge

if TYPE_CHECKING:  # imported by the first call: building a judge (a rerun) needs no asyncio
    import asyncio

#: proxy settings the SDK (httpx, ``trust_env``) would honour for an ``http://`` URL, in any case
#: (``http_proxy``, ``HTTP_PROXY``, ...): with any of them set the SDK sends the calls
_PROXY_VARIABLES = ("http_proxy", "all_proxy")
#: ``JUDGEKIT_LEAN_HTTP=0`` sends every call through the SDK
_LEAN_ENV = "JUDGEKIT_LEAN_HTTP"
#: httpx's ``DEFAULT_MAX_REDIRECTS``
_MAX_REDIRECTS = 20
_REDIRECTS = (301, 302, 303, 307, 308)
#: httpx's path percent-encode set (``_urlparse.PATH_SAFE``; unreserved characters are safe too)
_PATH_SAFE = "".join(chr(i) for i in range(0x20, 0x7F)
                    if i not in (0x20, 0x22, 0x23, 0x3C, 0x3E, 0x3F, 0x60, 0x7B, 0x7D))
#: httpx's query percent-encode set
_QUERY_SAFE = "".join(chr(i) for i in range(0x20, 0x7F) if i not in (0x20, 0x22, 0x23, 0x3C, 0x3E))
_HEAD_LIMIT = 2**20
#: a header value h11 (the SDK's HTTP/1.1 layer) accepts: ``field_value`` of ``h11._abnf``
_FIELD_VALUE = re.compile(r"(?:[^\x00 \t\n\r\x0b\x0c]+(?:[ \t]+[^\x00 \t\n\r\x0b\x0c]+)*)?")


class LeanHTTPError(Exception):
    """The connection could not be made or broke, or the answer is not HTTP/1.1."""


class LeanRedirect(Exception):
    """A redirect to another host, port or scheme: the SDK follows it, this client does not."""


class _Stale(LeanHTTPError):
    """A reused connection failed before any byte of the answer."""


def lean_usable(base_url: str | None, env: dict[str, str] | None = None) -> bool:
    """Whether calls to ``base_url`` can go through :class:`LeanHTTP`: plain ``http://`` and no
    proxy configured — no ``http_proxy`` / ``all_proxy`` in any letter case in ``env`` nor in
    ``os.environ`` (which is what the SDK reads), nor a system proxy on macOS / Windows (read as
    httpx reads it, ``urllib.request.getproxies``); ``NO_PROXY`` is left to the SDK — unless
    ``JUDGEKIT_LEAN_HTTP=0``."""
    if not base_url or not base_url.lower().startswith("http://"):
        return False
    environ = os.environ if env is None else env
    if environ.get(_LEAN_ENV, "").strip() == "0":
        return False
    for source in (environ, os.environ):
        if any(v and k.lower() in _PROXY_VARIABLES for k, v in source.items()):
            return False
    if sys.platform in ("darwin", "win32"):  # system proxy settings (httpx's trust_env)
        import urllib.request

        if {"http", "all"} & set(urllib.request.getproxies()):
            return False
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - a port that is not a number raises
    except ValueError:
        return False
    return bool(parts.hostname)


class LeanHTTP:
    """JSON POSTs to one ``http://host:port/prefix`` on kept-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout_s: float, *,
                 max_body: int = DEFAULT_MAX_RESPONSE_BYTES, deadline_s: float | None = None) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or 80
        self.prefix = quote(parts.path.rstrip("/"), safe=_PATH_SAFE)
        host = self.host if ":" not in self.host else f"[{self.host}]"
        authority = host if parts.port is None else f"{host}:{self.port}"
        self.origin = f"http://{authority}"
        self.timeout_s = timeout_s
        self.max_body = max_body
        self.deadline_s = deadline_s
        fixed = {"Host": authority, "Accept": "application/json", "Content-Type": "application/json",
                 **headers}
        #: why no request can be sent (a header value httpx refuses), raised by every post
        self._bad: Exception | None = None
        for name, value in fixed.items():
            if not value.isascii():
                self._bad = UnicodeEncodeError("ascii", value, 0, len(value),
                                               f"the {name} header is not ASCII")
            elif not _FIELD_VALUE.fullmatch(value):
                self._bad = LeanHTTPError(f"the {name} header holds CR, LF, NUL or edge blanks")
        self._head = "" if self._bad else "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """(status, headers with lower-case names, body) of ``POST prefix+path``, same-origin
        redirects followed, within ``deadline_s`` in all."""
        if self._bad is not None:
            raise self._bad
        if self.deadline_s is None:
            return await self._post(path, body)
        import asyncio

        outer = asyncio.timeout(self.deadline_s)
        try:
            async with outer:
                return await self._post(path, body)
        except TimeoutError:
            if outer.expired():
                raise CallDeadline(self.deadline_s) from None
            raise

    async def _post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        method, target = "POST", self.prefix + quote(path, safe=_PATH_SAFE)
        for _ in range(_MAX_REDIRECTS + 1):
            status, headers, content = await self._request(method, target, body)
            location = headers.get("location")
            if status not in _REDIRECTS or location is None:
                return status, headers, content
            url = urlsplit(urljoin(self.origin + target, location))
            try:
                same = (url.scheme == "http" and url.hostname == self.host
                        and (url.port or 80) == self.port)
            except ValueError:
                raise LeanHTTPError("invalid Location header") from None
            if not same:
                raise LeanRedirect(url.geturl())
            if status == 303 or (status in (301, 302) and method == "POST"):
                method, body = "GET", b""
            target = quote(url.path or "/", safe=_PATH_SAFE)
            if url.query:
                target += "?" + quote(url.query, safe=_QUERY_SAFE)
        raise LeanHTTPError(f"more than {_MAX_REDIRECTS} redirects")

    async def _request(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        import asyncio

        length = "" if method == "GET" else f"Content-Length: {len(body)}\r\n"
        request = f"{method} {target} HTTP/1.1\r\n{self._head}{length}\r\n".encode("ascii") + body
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.timeout_s) as timer:
            conn = self._take()
            reused = conn is not None
            if conn is None:
                conn = await self._connect()
            try:
                try:
                    status, headers, content, keep = await self._exchange(conn, request, timer, reused)
                except _Stale:  # the server closed it meanwhile
                    _close(conn[1])
                    timer.reschedule(loop.time() + self.timeout_s)
                    conn = await self._connect()
                    status, headers, content, keep = await self._exchange(conn, request, timer, False)
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
            if reader.at_eof() or writer.is_closing() or _readable(writer):
                _close(writer)  # closed by the server while idle (or it sent something unasked)
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
        self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes,
        timer: asyncio.Timeout, reused: bool,
    ) -> tuple[int, dict[str, str], bytes, bool]:
        import asyncio

        reader, writer = conn
        loop = asyncio.get_running_loop()
        timer.reschedule(loop.time() + self.timeout_s)  # the write's own timeout
        try:
            writer.write(request)
            await writer.drain()
        except (ConnectionError, OSError) as exc:
            if reused:
                raise _Stale("stale connection") from None
            raise LeanHTTPError(f"connection lost ({type(exc).__name__})") from None
        timer.reschedule(loop.time() + self.timeout_s)  # the first read's
        answer = _Answer(reader, timer, self.timeout_s, loop, self.max_body)
        try:
            if not await answer.fill():
                if reused:
                    raise _Stale("stale connection")
                raise LeanHTTPError("the server closed the connection without an answer")
        except (ConnectionError, OSError) as exc:
            if reused:
                raise _Stale("stale connection") from None
            raise LeanHTTPError(f"connection lost ({type(exc).__name__})") from None
        try:
            head = (await answer.until(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            version, code, *_ = head[0].split(" ", 2)
            status = int(code)
            headers: dict[str, str] = {}
            for line in head[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            if headers.get("transfer-encoding", "").lower() == "chunked":
                content = await _chunked(answer)
            elif "content-length" in headers:
                length = int(headers["content-length"])
                if length < 0:
                    raise ValueError("negative Content-Length")
                if length > self.max_body:
                    raise ResponseTooLarge(self.max_body)
                content = await answer.exactly(length)
            else:  # no length: the body runs to the end of the connection
                content = await answer.rest()
                headers["connection"] = "close"
        except (ValueError, ConnectionError, OSError) as exc:
            raise LeanHTTPError(f"malformed or cut answer ({type(exc).__name__})") from None
        keep = (version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                and not answer.buf)
        return status, headers, content, keep

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            _close(writer)
            with contextlib.suppress(Exception):
                await writer.wait_closed()


class _Answer:
    """The bytes of one answer as they arrive; each read that brings bytes restarts the timer
    (httpx's read timeout is per read)."""

    def __init__(self, reader: asyncio.StreamReader, timer: asyncio.Timeout, timeout_s: float,
                 loop: asyncio.AbstractEventLoop, max_body: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        self.reader, self.timer, self.timeout_s, self.loop = reader, timer, timeout_s, loop
        self.max_body = max_body
        self.buf = bytearray()

    async def fill(self) -> bool:
        data = await self.reader.read(65536)
        if not data:
            return False
        self.buf += data
        self.timer.reschedule(self.loop.time() + self.timeout_s)
        return True

    async def until(self, sep: bytes) -> bytes:
        start = 0
        while (i := self.buf.find(sep, start)) < 0:
            if len(self.buf) > _HEAD_LIMIT:
                raise ValueError("answer head too long")
            start = max(len(self.buf) - len(sep) + 1, 0)
            if not await self.fill():
                raise ValueError("cut answer")
        out = bytes(self.buf[:i])
        del self.buf[:i + len(sep)]
        return out

    async def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not await self.fill():
                raise ValueError("cut answer")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def rest(self) -> bytes:
        while len(self.buf) <= self.max_body and await self.fill():
            pass
        if len(self.buf) > self.max_body:
            raise ResponseTooLarge(self.max_body)
        out = bytes(self.buf)
        self.buf.clear()
        return out


async def _chunked(answer: _Answer) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size = int((await answer.until(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size < 0:
            raise ValueError("negative chunk size")
        total += size
        if total > answer.max_body:
            raise ResponseTooLarge(answer.max_body)
        if size == 0:
            while await answer.until(b"\r\n"):
                pass  # trailers
            return b"".join(parts)
        parts.append(await answer.exactly(size))
        if await answer.exactly(2) != b"\r\n":
            raise ValueError("chunk not followed by CRLF")


def _readable(writer: asyncio.StreamWriter) -> bool:
    """Whether an idle connection's socket has something to read (EOF or bytes), as httpcore's
    ``is_readable``: a non-blocking poll."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()


__all__ = [ "LeanHTTP", "LeanHTTPError", "LeanRedirect",
           "lean_usable"]
