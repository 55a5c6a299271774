"""The points a line chart draws: an estimate, its 95% CI, its n, and why a CI is missing.

A point may be given as a tuple ``(x, y)``, ``(x, y, low, high)``, ``(x, y, low, high, n)`` or
``(x, y, low, high, n, undefined)``, or as a mapping with the keys ``x``, ``y``, ``low``,
``high``, ``n`` and ``undefined`` (all but ``x`` and ``y`` optional). ``undefined`` is the reason
a figure or its interval could not be computed (e.g. "one tier only: C needs two"); the chart
writes it in the point's tooltip. Missing values (None/NaN) are never drawn as zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from judgekit.report.escape import fmt_int, fmt_num, is_num

__all__ = ["Point", "has_ci", "to_points"]

_KEYS = ("x", "y", "low", "high", "n", "undefined")


@dataclass(frozen=True)
class Point:
    """One drawn estimate: ``y`` at ``x`` with its interval ``[low, high]`` (None: none)."""

    x: float
    y: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    undefined: str | None = None

    @property
    def has_ci(self) -> bool:
        """Both bounds are numbers."""
        return self.low is not None and self.high is not None

    def describe(self, name: str, n_label: str = "n") -> str:
        """The tooltip: ``model-a: turn 3, 0.812 [0.790, 0.830], n = 40`` or, without a CI,
        ``…, 0.812, no 95% CI: <why>``."""
        x = fmt_num(self.x, 3) if not float(self.x).is_integer() else str(int(self.x))
        text = f"{name}: x = {x}, "
        if self.y is None:
            text += "undefined"
        else:
            text += fmt_num(self.y, 3)
            if self.has_ci:
                text += f" [{fmt_num(self.low, 3)}, {fmt_num(self.high, 3)}]"
            else:
                text += ", no 95% CI"
        if self.undefined:
            text += f": {self.undefined}"
        if self.n is not None:
            text += f", {n_label} = {fmt_int(self.n)}"
        return text


def _num(v: Any) -> float | None:
    return float(v) if is_num(v) else None


def _point(p: Any) -> Point | None:
    if isinstance(p, Mapping):
        vals = [p.get(k) for k in _KEYS]
    else:
        try:
            vals = list(p)
        except TypeError:
            return None
        if len(vals) < 2:
            return None
        vals = (vals + [None] * len(_KEYS))[: len(_KEYS)]
    x = _num(vals[0])
    if x is None:
        return None
    n = vals[4]
    why = vals[5]
    return Point(x=x, y=_num(vals[1]), low=_num(vals[2]), high=_num(vals[3]),
                 n=int(n) if is_num(n) else None, undefined=str(why) if why else None)


def to_points(points: Iterable[Any]) -> list[Point]:
    """The points in x order; a point without a usable x is dropped, one without y is kept (a
    gap in the line)."""
    out = [q for q in (_point(p) for p in points) if q is not None]
    return sorted(out, key=lambda q: q.x)


def has_ci(series: Mapping[str, Iterable[Any]]) -> bool:
    """Whether any point of ``series`` carries an interval."""
    return any(p.has_ci for pts in series.values() for p in to_points(pts))
