"""Axis helpers: round tick values and their labels."""

from __future__ import annotations

import math
from collections.abc import Sequence

from judgekit.report.escape import fmt_num

__all__ = ["nice_ticks", "tick_label"]


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi] (1, 2, 2.5 or 5 times a power of ten)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-6:
        if t >= lo - step * 1e-6:
            ticks.append(round(t, 10))
        t += step
    return ticks


def tick_label(v: float, ticks: Sequence[float]) -> str:
    """Tick value ``v`` with as many decimals as the step between ``ticks`` needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    digits = max(0, min(4, -math.floor(math.log10(step)) if step < 1 else 0))
    if step < 1 and round(step * 10**digits) % 10 != 0 and round(step * 10 ** (digits + 1)) % 10 != 0:
        digits += 1
    return fmt_num(v, digits)

