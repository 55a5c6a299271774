"""Just enough HTTP/1.1 over asyncio streams for the fake server: read a request, write a response.

Keep-alive, ``content-length`` bodies, JSON responses, and the ``file`` part of a multipart upload
(the OpenAI Files API). No chunked encoding, no TLS: the SDKs need neither on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["HttpRequest", "multipart_file", "read_request", "send_json", "send_raw"]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}


@dataclass
class HttpRequest:
    """One request as read off the connection (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


async def read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    """The next request on a connection, or None when the client closed it or sent garbage.

    Raises :class:`asyncio.IncompleteReadError` when the body is cut short.
    """
    request_line = await reader.readline()
    if not request_line:
        return None
    parts = request_line.decode("latin-1").split()
    if len(parts) < 2:
        return None
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(n) if n else b""
    return HttpRequest(parts[0], parts[1], headers, body)


async def send_json(
    writer: asyncio.StreamWriter, status: int, payload: Any, headers: dict[str, str] | None = None
) -> bool:
    """Write ``payload`` as a JSON response; True (the connection stays open)."""
    return await send_raw(writer, status, json.dumps(payload).encode(), headers)


async def send_raw(
    writer: asyncio.StreamWriter, status: int, body: bytes, headers: dict[str, str] | None = None
) -> bool:
    """Write a response with ``body`` as it is; ``headers`` are added after the JSON content type."""
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json", f"content-length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    return True


def multipart_file(content_type: str, raw: bytes) -> bytes:
    """The ``file`` part of a multipart/form-data upload."""
    from email.parser import BytesParser
    from email.policy import HTTP

    msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    for part in msg.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    return b""
