"""Retry policy, adaptive concurrency and rate limits (no timing assertions)."""

from __future__ import annotations

import asyncio
import random

import pytest

from judgekit.judges.limits import AdaptiveConcurrency, RateLimiter, RetryPolicy


def test_backoff_is_exponential_capped_and_jittered():
    policy = RetryPolicy(max_attempts=5, backoff_s=1.0, max_backoff_s=4.0)
    rng = random.Random(0)
    for attempt, cap in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)):
        waits = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert all(0 <= w <= cap for w in waits)
        assert max(waits) > cap * 0.8  # full jitter spreads over the whole range


def test_retry_after_is_honoured():
    # a retry-after above the backoff (0.01 s) and within max_backoff_s is waited in full
    policy = RetryPolicy(backoff_s=0.01, max_backoff_s=30.0)
    rng = random.Random(0)
    waits = [policy.delay(1, 3.0, rng) for _ in range(50)]
    assert all(3.0 <= w <= 3.2 for w in waits)


@pytest.mark.parametrize("asked", [1e9, float("inf"), 31.0])
def test_retry_after_never_waits_past_max_backoff(asked):
    # Retry-After: 1000000000 held the run for 31 years
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=5.0)
    rng = random.Random(0)
    waits = [policy.delay(a, asked, rng) for a in (1, 2, 10, 100) for _ in range(20)]
    assert all(0 <= w <= 5.0 for w in waits)


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "-5", "soon"])
def test_a_retry_after_that_is_not_a_finite_number_is_ignored_or_zero(value):
    from judgekit.judges._http import retry_after

    got = retry_after({"retry-after": value})
    assert got is None or got == 0.0
    assert RetryPolicy(max_backoff_s=2.0).delay(1, got, random.Random(0)) <= 2.0


def test_sustained_rate_limiting_halves_and_successes_recover():
    c = AdaptiveConcurrency(16)
    epoch = c.epoch
    # a lone 429 among successes does not lower the limit
    for _ in range(30):
        c.on_success()
    assert c.on_rate_limited(epoch) is False and c.limit == 16
    # the window is the last max(20, 2 x 16) = 32 outcomes: 4 of 32 = 12.5% < 15% does not,
    # 5 of 32 = 15.6% does
    assert [c.on_rate_limited(epoch) for _ in range(4)] == [False, False, False, True]
    assert c.limit == 8 and c.epoch == epoch + 1
    # 429s of calls sent before the decrease do not lower it again
    for _ in range(5):
        assert c.on_rate_limited(epoch) is False
    assert c.limit == 8
    # sustained again at the new rate: 8 -> 4 -> 2 -> 1, never below the minimum
    for _ in range(10):
        for _ in range(3):
            c.on_rate_limited(c.epoch)
    assert c.limit == 1 and c.at_minimum and c.lowest == 1
    # additive increase: +1/limit per success, back to 16 in about sum(1..15) successes
    n = 0
    while c.limit < 16:
        c.on_success()
        n += 1
    assert 100 <= n <= 140 and c.limit == 16


def test_concurrency_limit_is_enforced():
    async def go():
        c = AdaptiveConcurrency(3)
        active = peak = 0

        async def task():
            nonlocal active, peak
            await c.acquire()
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.001)
            active -= 1
            c.release()

        await asyncio.gather(*(task() for _ in range(20)))
        return peak

    assert asyncio.run(go()) == 3


def test_rate_limiter_without_limits_never_waits_and_tightens_to_the_strictest():
    async def go():
        r = RateLimiter()
        for _ in range(1000):
            await r.acquire(100)
        return r

    r = asyncio.run(go())
    r.tighten(600, None)
    r.tighten(1200, 50_000)
    assert (r.rpm, r.tpm) == (600, 50_000)


def test_tokens_per_minute_bucket_is_debited_and_settled():
    async def go():
        r = RateLimiter(tpm=6000)
        await r.acquire(1000)
        left = r._tokens
        r.settle(1000, 1500)  # the call used more than estimated
        return left, r._tokens

    left, after = asyncio.run(go())
    assert 4999 <= left <= 5100 and after == left - 500
