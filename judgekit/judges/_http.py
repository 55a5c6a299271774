"""Shared by the SDK-backed judges: mapping SDK exceptions to :class:`JudgeCallError`."""

from __future__ import annotations

import math
from typing import Any

from judgekit.judges.base import JudgeCallError
from judgekit.judges.bounds import bound_failure


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds; HTTP dates ignored, and so is
    a value that is not a finite number). The wait itself is capped by the judge's
    ``max_backoff_s`` (:meth:`~judgekit.judges.limits.RetryPolicy.delay`)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                seconds = float(value) * scale
            except ValueError:
                continue
            if math.isfinite(seconds):
                return max(seconds, 0.0)
    return None


def map_error(exc: BaseException, sdk: Any, timeout_s: float) -> JudgeCallError:
    """Classify an exception of the ``anthropic`` or ``openai`` SDK (same class names); a bound
    crossed (:mod:`judgekit.judges.bounds`: body too large, call deadline) is named as such."""
    bound = bound_failure(exc)
    if bound is not None:
        return bound
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if isinstance(exc, sdk.APITimeoutError):
        return JudgeCallError(f"timeout after {timeout_s:g}s", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return JudgeCallError(f"connection error ({type(exc).__name__})", retryable=True)
    if isinstance(exc, sdk.APIResponseValidationError):
        return JudgeCallError("malformed response body", retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        if status == 429:
            return JudgeCallError(
                "rate limited (429)", retryable=True, retry_after=retry_after(headers),
                rate_limited=True,
            )
        if status in (401, 403):
            return JudgeCallError(
                f"authentication failed ({status}): check the API key", retryable=False, fatal=True
            )
        if status == 404:
            return JudgeCallError(
                "not found (404): check the model name and base URL", retryable=False, fatal=True
            )
        if status is not None and (status >= 500 or status in (408, 409)):
            return JudgeCallError(
                f"server error ({status})", retryable=True, retry_after=retry_after(headers)
            )
        return JudgeCallError(f"request rejected ({status})", retryable=False)
    if isinstance(exc, RecursionError):
        return JudgeCallError("malformed response body: JSON nested too deep", retryable=True)
    if isinstance(exc, ValueError):  # a 200 whose body is not JSON
        return JudgeCallError("malformed response body", retryable=True)
    return JudgeCallError(f"unexpected {type(exc).__name__}", retryable=False)
