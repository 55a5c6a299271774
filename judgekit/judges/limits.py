"""Pacing calls: the retry policy, adaptive concurrency and per-provider rate limits.

* :class:`RetryPolicy` — exponential backoff with full jitter, ``retry-after`` honoured, a bounded
  number of attempts. The SDKs' own retries are off (``max_retries=0``) so the two never multiply.
* :class:`AdaptiveConcurrency` — AIMD: at most ``limit`` calls in flight; sustained 429s halve
  the limit (once per round of calls, not once per concurrent 429), each success adds
  ``1/limit`` until the configured concurrency is reached again.
* :class:`RateLimiter` — requests and tokens per minute, shared by every judge of one provider and
  model; when concurrency is already at its minimum, a 429's ``retry-after`` pauses the group.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a call is made: a run that sends nothing needs no asyncio
    import asyncio


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and backoff for one call."""

    max_attempts: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1), never more
        than ``max_backoff_s``: a provider's ``retry-after`` is honoured up to that bound (a
        hostile or broken one asking for 31 years, or NaN, does not hold the run)."""
        cap = min(self.max_backoff_s, self.backoff_s * (2 ** (min(attempt, 64) - 1)))
        wait = rng.uniform(0, cap)  # full jitter: spreads a burst of retries
        if retry_after is not None and math.isfinite(retry_after):
            # The provider said when; add a little jitter so the herd does not return at once.
            asked = min(max(retry_after, 0.0), self.max_backoff_s)
            wait = asked + rng.uniform(0, min(asked, 1.0) * 0.1 + 0.001)
        return min(wait, self.max_backoff_s)


class AdaptiveConcurrency:
    """A semaphore whose size adapts to rate limiting (AIMD).

    The limit halves when rate limiting is *sustained*: at least ``min_limited`` of the recent
    outcomes (the last ``2 x limit``, at least 20) were 429s and they are at least ``threshold`` of
    them. A lone 429 among successes only delays its own request (its ``retry-after`` is
    honoured), so random 429s do not collapse the throughput, while a provider that rejects a
    large share of requests sees the panel back off within a few responses. Each success adds
    ``1/limit`` (about +1 per round of calls) until the configured concurrency is back.
    """

    def __init__(
        self, maximum: int, minimum: int = 1, *, threshold: float = 0.15, min_limited: int = 3
    ) -> None:
        self.maximum = maximum
        self.minimum = max(1, min(minimum, maximum))
        self.limit = float(maximum)
        self.threshold = threshold
        self.min_limited = min_limited
        self.active = 0
        self.epoch = 0
        self.decreases = 0
        self.lowest = float(maximum)
        self._recent: deque[bool] = deque()
        self._limited = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def at_minimum(self) -> bool:
        return self.limit <= self.minimum

    async def acquire(self) -> int:
        """Wait for a slot; returns the epoch the call started in."""
        import asyncio

        while self.active >= int(self.limit):
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut in self._waiters:
                    self._waiters.remove(fut)
                raise
        self.active += 1
        return self.epoch

    def release(self) -> None:
        self.active -= 1
        self._wake()

    def _wake(self) -> None:
        free = int(self.limit) - self.active
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                free -= 1

    def _observe(self, limited: bool) -> None:
        self._recent.append(limited)
        self._limited += limited
        window = max(20, int(2 * self.limit))
        while len(self._recent) > window:
            self._limited -= self._recent.popleft()

    def on_success(self) -> None:
        self._observe(False)
        if self.limit < self.maximum:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
            self._wake()

    def on_rate_limited(self, epoch: int) -> bool:
        """Record a 429 of a call started in ``epoch``; True when the limit was lowered."""
        self._observe(True)
        # Calls started before the last decrease were sent at the old rate: their 429s are
        # already accounted for.
        if epoch != self.epoch:
            return False
        if self._limited < self.min_limited or self._limited < self.threshold * len(self._recent):
            return False
        self.limit = max(float(self.minimum), self.limit / 2)
        self.lowest = min(self.lowest, self.limit)
        self.epoch += 1
        self.decreases += 1
        self._recent.clear()
        self._limited = 0
        return True


class RateLimiter:
    """Requests and tokens per minute for one provider/model; ``pause`` on ``retry-after``."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._next_request = 0.0
        self._tokens = float(tpm) if tpm else 0.0
        self._refilled = time.monotonic()
        self._paused_until = 0.0
        self._lock: asyncio.Lock | None = None  # made by the first acquire() that waits

    def tighten(self, rpm: float | None, tpm: float | None) -> None:
        """Judges sharing a group: the strictest limit wins."""
        if rpm is not None:
            self.rpm = rpm if self.rpm is None else min(self.rpm, rpm)
        if tpm is not None:
            self.tpm = tpm if self.tpm is None else min(self.tpm, tpm)
            self._tokens = min(self._tokens or self.tpm, self.tpm)

    def pause(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request of about ``tokens`` tokens may be sent."""
        if self.rpm is None and self.tpm is None and self._paused_until == 0.0:
            return
        import asyncio

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while True:
                now = time.monotonic()
                wait = self._paused_until - now
                if self.rpm:
                    wait = max(wait, self._next_request - now)
                if self.tpm:
                    self._tokens = min(
                        float(self.tpm), self._tokens + (now - self._refilled) * self.tpm / 60.0
                    )
                    self._refilled = now
                    need = min(float(tokens), float(self.tpm))
                    if self._tokens < need:
                        wait = max(wait, (need - self._tokens) * 60.0 / self.tpm)
                if wait <= 0:
                    break
                await asyncio.sleep(wait)
            if self.rpm:
                self._next_request = max(now, self._next_request) + 60.0 / self.rpm
            if self.tpm:
                self._tokens -= tokens

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once the real usage is known."""
        if self.tpm:
            self._tokens -= actual - estimated
