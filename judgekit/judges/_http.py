"""Shared by the SDK-backed judges: mapping SDK exceptions to :class:`JudgeCallError`."""

from __future__ import annotations

from typing import Any

from judgekit.judges.base import JudgeCallError


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds; HTTP dates ignored)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(float(value) * scale, 0.0)
            except ValueError:
                continue
    return None


def map_error(exc: BaseException, sdk: Any, timeout_s: float) -> JudgeCallError:
    """Classify an exception of the ``anthropic`` or ``openai`` SDK (same class names)."""
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
    if isinstance(exc, ValueError):  # a 200 whose body is not JSON
        return JudgeCallError("malformed response body", retryable=True)
    return JudgeCallError(f"unexpected {type(exc).__name__}", retryable=False)
