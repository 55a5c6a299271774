"""Bounds on what a provider can make a judge hold or wait for (the provider is untrusted input).

* **Size**: a response body (success or error) larger than the judge's ``max_response_bytes``
  (default :data:`DEFAULT_MAX_RESPONSE_BYTES`, 16 MiB) is not read further: the call is an
  ``error`` rating, ``response body larger than N bytes``. A ``Content-Length`` over the limit is
  refused before the body is read; a chunked or unbounded body is cut once the limit is passed.
  Memory held for one call's answer is therefore at most about the limit (plus the parsed JSON).
* **Time**: ``timeout_s`` bounds each connect, write and read; ``call_deadline_s`` (default
  ``2 × timeout_s + 5``) bounds one attempt as a whole, so a body that drips one byte a second is
  cut at the deadline. Waits between attempts never exceed ``max_backoff_s``, whatever
  ``Retry-After`` says (:class:`~judgekit.judges.limits.RetryPolicy`).
* **Shape**: JSON nested deeper than the interpreter's parser allows (``RecursionError``, about
  1,000 levels) and token counts that are not whole numbers from 0 to :data:`MAX_TOKEN_COUNT`
  (``NaN``, 10^30, ``"12"``, ``-1``) make the call an ``error`` rating with the reason.

The SDK judges apply the size and deadline bounds through the SDKs' public ``http_client``
option: an ``httpx`` client whose response hook wraps each call's byte stream
(:func:`bounded_http_client`; a provider batch's results, up to 10,000 answers in one file, are
not cut at one answer's size). The lean HTTP client applies them itself.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import AsyncIterator
from typing import Any

from judgekit.judges.base import DEFAULT_MAX_RESPONSE_BYTES, JudgeCallError

#: the largest token count one call may report (a trillion; real calls are below a million)
MAX_TOKEN_COUNT = 10**12


class ResponseTooLarge(Exception):
    """A response body over the judge's ``max_response_bytes``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reason = f"response body larger than {limit} bytes (the judge's max_response_bytes)"
        super().__init__(self.reason)


class CallDeadline(TimeoutError):
    """One attempt took longer than the judge's ``call_deadline_s`` in all."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.reason = deadline_reason(seconds)
        super().__init__(self.reason)


def deadline_reason(seconds: float) -> str:
    return f"no complete answer within {seconds:g}s (the judge's call_deadline_s)"


def call_deadline(timeout_s: float, call_deadline_s: float | None) -> float:
    """Seconds one attempt may take in all: ``call_deadline_s``, else ``2 × timeout_s + 5``."""
    return call_deadline_s if call_deadline_s is not None else timeout_s * 2 + 5


def bound_failure(exc: BaseException) -> JudgeCallError | None:
    """The error rating of a bound crossed anywhere in ``exc``'s chain (an SDK wraps what its
    HTTP client raised in ``APIConnectionError``), or None."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ResponseTooLarge):
            return JudgeCallError(cur.reason, retryable=False)
        if isinstance(cur, CallDeadline):
            return JudgeCallError(cur.reason, retryable=True)
        cur = cur.__cause__ or cur.__context__
    return None


def loads_response(content: bytes | str) -> Any:
    """A response body parsed as JSON; a body that is not JSON, or nested too deep for the
    parser, is a :class:`JudgeCallError` naming which."""
    try:
        return json.loads(content)
    except RecursionError:
        raise JudgeCallError("malformed response body: JSON nested too deep", retryable=True) from None
    except ValueError:
        raise JudgeCallError("malformed response body", retryable=True) from None


def token_count(usage: Any, name: str) -> int:
    """``usage[name]`` as a token count: missing or null is 0; else a whole number (a JSON integer)
    from 0 to :data:`MAX_TOKEN_COUNT`, kept as written — anything else (``NaN``, ``1e30``,
    ``10**30``, ``"12"``, ``-1``, ``true``) is a :class:`JudgeCallError`."""
    value = usage.get(name) if isinstance(usage, dict) else None
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    shown = repr(value) if not isinstance(value, float) or math.isfinite(value) else str(value)
    if len(shown) > 40:
        shown = shown[:39] + "…"
    raise JudgeCallError(
        f"malformed response body: usage {name} = {shown} is not a token count "
        f"(a whole number from 0 to {MAX_TOKEN_COUNT})", retryable=True,
    )


@functools.cache
def _bounded_stream(package: str) -> type:
    """``AsyncByteStream`` of the SDK's HTTP package (``httpx``, or the ``httpx2`` fork the
    ``anthropic`` SDK ships with), cut at a size and a deadline; made on first use: the HTTP
    package is imported only by the SDK judges."""
    import asyncio
    import importlib

    base = importlib.import_module(package).AsyncByteStream

    class BoundedStream(base):  # type: ignore[valid-type,misc]
        """The body stream of one response, cut at ``limit`` bytes and at ``deadline``
        (``time.monotonic``)."""

        def __init__(self, inner: Any, limit: int, deadline: float, seconds: float) -> None:
            self.inner, self.limit, self.deadline, self.seconds = inner, limit, deadline, seconds

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            it = self.inner.__aiter__()
            while True:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise CallDeadline(self.seconds)
                try:
                    async with asyncio.timeout(left):
                        chunk = await it.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError as exc:
                    if time.monotonic() < self.deadline:
                        raise  # httpx's own read timeout
                    raise CallDeadline(self.seconds) from exc
                seen += len(chunk)
                if seen > self.limit:
                    raise ResponseTooLarge(self.limit)
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BoundedStream


#: the endpoints of one judge call, whose answers are bounded; a provider batch's endpoints (its
#: results file holds up to 10,000 answers) are left to the SDK's timeouts
_BOUNDED_PATHS = ("/messages", "/chat/completions")


def bounded_http_client(sdk: Any, max_bytes: int, deadline_s: float) -> Any:
    """The SDK's default ``httpx`` client (``sdk.DefaultAsyncHttpxClient``: its timeouts,
    connection limits and redirects) with a response hook that, for a call's endpoint
    (:data:`_BOUNDED_PATHS`), refuses a ``Content-Length`` over ``max_bytes`` and wraps the body
    stream so that it is cut there and at the deadline."""

    async def bound(response: Any) -> None:
        if not response.request.url.path.endswith(_BOUNDED_PATHS):
            return  # a batch's results file: as large as the batch (see _BOUNDED_PATHS)
        digits = (response.headers.get("content-length") or "").strip()
        if digits.isascii() and digits.isdigit() and (len(digits) > 18 or int(digits) > max_bytes):
            raise ResponseTooLarge(max_bytes)
        package = type(response).__module__.partition(".")[0]
        response.stream = _bounded_stream(package)(
            response.stream, max_bytes, time.monotonic() + deadline_s, deadline_s)

    return sdk.DefaultAsyncHttpxClient(event_hooks={"response": [bound]})


__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "MAX_TOKEN_COUNT", "CallDeadline", "ResponseTooLarge",
           "bound_failure", "bounded_http_client", "call_deadline", "deadline_reason", "loads_response",
           "token_count"]
