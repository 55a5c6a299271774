"""Line charts: one line with markers per series; a missing point breaks the line."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from judgekit.report.escape import esc, fmt_num, is_num
from judgekit.report.svg.axes import nice_ticks, tick_label
from judgekit.report.svg.draw import (
    GRID,
    MUTED,
    PALETTE,
    coord,
    legend_row,
    no_data,
    open_svg,
    svg_text,
)

__all__ = ["line_chart"]


def _finite_pairs(points: Iterable[tuple[Any, Any]]) -> list[tuple[float, float] | None]:
    """Points as floats, with ``None`` where a point is missing (a gap in the line)."""
    out: list[tuple[float, float] | None] = []
    for p in points:
        try:
            x, y = p
        except (TypeError, ValueError):
            out.append(None)
            continue
        out.append((float(x), float(y)) if is_num(x) and is_num(y) else None)
    return out


def line_chart(
    series: Mapping[str, Sequence[tuple[float, float | None]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    hline: float | None = None,
    width: int = 640,
    height: int = 320,
) -> str:
    """Lines with markers, one per series, with a legend.

    Parameters
    ----------
    series : name → list of ``(x, y)`` points, drawn in x order; a point with a missing
        (None/NaN) coordinate breaks the line there.
    y_range : fixed y axis ``(low, high)``; default: the data (and ``hline``) padded to round ticks.
    hline : a horizontal reference line (dashed), e.g. 0 for a drift chart or 0.5 for chance C.

    Example: ``line_chart({"model-a": [(1, .9), (2, .8)]}, title="C by turn", x_label="turn",
    y_label="C", y_range=(0, 1), hline=0.5)``.
    """
    names = list(series)
    clean = {n: sorted((p for p in _finite_pairs(series[n]) if p is not None), key=lambda p: p[0]) for n in names}
    # keep gaps: rebuild in x order with None markers where the input had a missing y
    raw = {n: _finite_pairs(sorted(series[n], key=lambda p: p[0] if is_num(p[0]) else math.inf)) for n in names}
    xs = [p[0] for pts in clean.values() for p in pts]
    ys = [p[1] for pts in clean.values() for p in pts]

    legend_items = [(n, PALETTE[i % len(PALETTE)], "line") for i, n in enumerate(names)]
    left, right, top = 64.0, 20.0, 34.0
    plot_w = width - left - right
    parts = open_svg(width, height, title)
    legend, top = legend_row(legend_items, left, top + 8, plot_w) if names else ([], top)
    parts += legend
    top += 6
    bottom = 48.0
    plot_h = max(40.0, height - top - bottom)

    if y_range is not None:
        y_lo, y_hi = float(y_range[0]), float(y_range[1])
        yt = [t for t in nice_ticks(y_lo, y_hi) if y_lo - 1e-9 <= t <= y_hi + 1e-9]
    else:
        vals = ys + ([float(hline)] if is_num(hline) else [])
        y_lo, y_hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        yt = nice_ticks(y_lo, y_hi)
        y_lo, y_hi = min(yt[0], y_lo), max(yt[-1], y_hi)
    if y_hi == y_lo:
        y_lo, y_hi = y_lo - 1, y_hi + 1
    if xs:
        x_lo, x_hi = min(xs), max(xs)
    else:
        x_lo, x_hi = 0.0, 1.0
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    distinct_x = sorted(set(xs))
    if distinct_x and len(distinct_x) <= 12 and all(float(x).is_integer() for x in distinct_x):
        xt = [float(x) for x in range(int(x_lo), int(x_hi) + 1)]
        if len(xt) > 12:
            xt = distinct_x
    else:
        xt = [t for t in nice_ticks(x_lo, x_hi, 6) if x_lo - 1e-9 <= t <= x_hi + 1e-9]

    def sx(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * plot_w

    def sy(y: float) -> float:
        y = min(max(y, y_lo), y_hi)
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    # grid and axes
    for t in yt:
        parts.append(f'<line x1="{coord(left)}" y1="{coord(sy(t))}" x2="{coord(left + plot_w)}" y2="{coord(sy(t))}" stroke="{GRID}"/>')
        parts.append(svg_text(left - 6, sy(t) + 4, tick_label(t, yt), anchor="end", size=11, fill=MUTED))
    for t in xt:
        parts.append(f'<line x1="{coord(sx(t))}" y1="{coord(top + plot_h)}" x2="{coord(sx(t))}" y2="{coord(top + plot_h + 4)}" stroke="{MUTED}"/>')
        parts.append(svg_text(sx(t), top + plot_h + 17, tick_label(t, xt) if not float(t).is_integer() else str(int(t)),
                          anchor="middle", size=11, fill=MUTED))
    parts.append(f'<line x1="{coord(left)}" y1="{coord(top + plot_h)}" x2="{coord(left + plot_w)}" y2="{coord(top + plot_h)}" stroke="{MUTED}"/>')
    parts.append(f'<line x1="{coord(left)}" y1="{coord(top)}" x2="{coord(left)}" y2="{coord(top + plot_h)}" stroke="{MUTED}"/>')
    parts.append(svg_text(left + plot_w / 2, height - 10, x_label, anchor="middle", fill=MUTED))
    ymid = top + plot_h / 2
    parts.append(svg_text(16, ymid, y_label, anchor="middle", fill=MUTED, extra=f' transform="rotate(-90 16 {coord(ymid)})"'))

    if is_num(hline) and y_lo <= float(hline) <= y_hi:
        hy = sy(float(hline))
        parts.append(f'<line x1="{coord(left)}" y1="{coord(hy)}" x2="{coord(left + plot_w)}" y2="{coord(hy)}" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>')

    if not xs:
        no_data(parts, left + plot_w / 2, top + plot_h / 2)
    for i, n in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        segs: list[list[tuple[float, float]]] = [[]]
        for p in raw[n]:
            if p is None:
                segs.append([])
            else:
                segs[-1].append(p)
        for seg in segs:
            if len(seg) >= 2:
                d = " ".join(f"{'M' if k == 0 else 'L'}{coord(sx(x))},{coord(sy(y))}" for k, (x, y) in enumerate(seg))
                parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2.5" stroke-linejoin="round"/>')
        for x, y in clean[n]:
            parts.append(
                f'<circle cx="{coord(sx(x))}" cy="{coord(sy(y))}" r="3.5" fill="{colour}">'
                f"<title>{esc(n)}: x = {esc(fmt_num(x, 3))}, y = {esc(fmt_num(y, 3))}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)
