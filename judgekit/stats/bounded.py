"""A finite-sample interval for the mean of a few bounded values (seeds, prompts)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from judgekit.stats.ppi_core import (
    UNIT_RANGE,
    Bounds,
    Interval,
    as_float,
    clip_to,
    not_estimable,
)


def bounded_mean_interval(values: ArrayLike, *, bounds: Bounds = UNIT_RANGE,
                          level: float = 0.95) -> Interval:
    """A confidence interval for the mean of a few values known to lie in ``bounds`` (a figure
    over 3 seeds, 5 prompts), valid in finite samples whatever their distribution.

    A t interval over 3 seeds assumes normality it cannot check and leaves the range; here the
    interval is the intersection of Hoeffding's (Hoeffding 1963, *JASA* 58:13) and the
    empirical-Bernstein bound of Maurer & Pontil (2009, *COLT*, Thm 4), each at level
    ``1 − α/2`` (so the intersection holds at ``1 − α`` by the union bound): with ``b − a`` the
    range width, ``V`` the sample variance and ``δ = α/4`` per side,

    .. math::

        \\bar x \\pm (b-a)\\sqrt{\\frac{\\ln(1/\\delta)}{2n}} \\ \\cap\\
        \\bar x \\pm \\Big(\\sqrt{\\frac{2V\\ln(2/\\delta)}{n}} + \\frac{7(b-a)\\ln(2/\\delta)}{3(n-1)}\\Big),

    clipped to ``bounds``. With 3 values it is wide — honestly so. Not estimable with fewer
    than 2 finite values or a value outside ``bounds``.
    """
    x = as_float(values, "values")
    x = x[np.isfinite(x)]
    lo_b, hi_b = bounds
    if len(x) < 2:
        return not_estimable(f"{len(x)} value{'s' if len(x) != 1 else ''}: an interval needs at "
                             "least 2 (one value cannot show how much they vary).")
    if (x < lo_b).any() or (x > hi_b).any():
        return not_estimable(f"a value lies outside the range [{lo_b}, {hi_b}] the interval "
                             "relies on.")
    n, span = len(x), hi_b - lo_b
    delta = (1.0 - level) / 4.0
    mean = float(x.mean())
    hoeff = span * math.sqrt(math.log(1.0 / delta) / (2.0 * n))
    var = float(np.var(x, ddof=1))
    bern = math.sqrt(2.0 * var * math.log(2.0 / delta) / n) + 7.0 * span * math.log(
        2.0 / delta) / (3.0 * (n - 1))
    half = min(hoeff, bern)
    return Interval(clip_to(mean, bounds), clip_to(mean - half, bounds), clip_to(mean + half, bounds))
