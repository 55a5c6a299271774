"""Interval charts: one estimate with its 95% CI per row, beside a ceiling and reference lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from judgekit.report.escape import esc, fmt_int, fmt_num, is_num
from judgekit.report.svg.draw import (
    GRID,
    MUTED,
    PALETTE,
    clip,
    coord,
    diamond,
    legend_row,
    nice_ticks,
    no_data,
    open_svg,
    svg_text,
    text_width,
    tick_label,
)

__all__ = ["interval_chart"]


#: reference lines of an interval chart: colour and dash pattern, so several lines stay apart.
_REF_STYLES = [("#cf222e", "6 4"), ("#9a6700", "2 3"), ("#24292f", "9 3 2 3"), ("#bf3989", "4 2")]
_CEILING = "#6e40c9"


def interval_chart(
    rows: list[dict[str, Any]],
    *,
    title: str,
    x_range: tuple[float, float] = (-1.0, 1.0),
    reference_lines: dict[str, float] | None = None,
    x_label: str | None = None,
    width: int = 720,
) -> str:
    """Dot-and-whisker rows: one estimate with its 95% CI per slice.

    Parameters
    ----------
    rows : dicts with ``label`` (str), ``value``, ``low``, ``high`` (floats or None), ``n``
        (int) and ``ceiling`` (the human–human figure on the same slice, drawn as a hollow
        diamond, or None). A row with no value is written as "undefined" (with ``undefined``,
        the reason, if the row has that key).
    reference_lines : name → x, drawn as dashed vertical lines (e.g. the gate threshold).
    x_range : the axis; values outside it are drawn at the edge with an arrow.

    Example: ``interval_chart([{"label": "all", "value": .8, "low": .76, "high": .83, "n": 2239,
    "ceiling": .85}], title="kappa vs reference", x_range=(0, 1), reference_lines={"gate": .6})``.
    """
    lo_x, hi_x = float(x_range[0]), float(x_range[1])
    if not hi_x > lo_x:
        raise ValueError(f"interval_chart: x_range {x_range!r} must be (low, high) with low < high.")
    refs = {k: float(v) for k, v in (reference_lines or {}).items() if is_num(v)}
    labels = [clip(r.get("label", ""), 34) for r in rows]
    left = 16 + max(60.0, max((text_width(lab, 12) for lab in labels), default=0) + 10)
    right = 190.0
    plot_w = max(200.0, width - left - right)
    width = int(left + plot_w + right)
    row_h = 26.0
    legend = [("judge estimate, 95% CI", PALETTE[0], "dot")]
    if any(is_num(r.get("ceiling")) for r in rows):
        legend.append(("human–human ceiling", _CEILING, "diamond"))
    styles = {k: _REF_STYLES[i % len(_REF_STYLES)] for i, k in enumerate(refs)}
    legend += [(f"{k} = {fmt_num(v)}", styles[k][0], f"dash:{styles[k][1]}") for k, v in refs.items()]
    leg, top = legend_row(legend, left, 46, plot_w)
    top += 8
    plot_h = max(row_h, len(rows) * row_h)
    height = top + plot_h + 46
    parts = open_svg(width, height, title) + leg

    def sx(x: float) -> float:
        return left + (min(max(x, lo_x), hi_x) - lo_x) / (hi_x - lo_x) * plot_w

    for i in range(0, len(rows), 2):  # zebra stripes first, so grid lines stay visible
        parts.append(f'<rect x="4" y="{coord(top + i * row_h)}" width="{coord(width - 8)}" height="{coord(row_h)}" fill="#f6f8fa"/>')
    ticks = [t for t in nice_ticks(lo_x, hi_x, 8) if lo_x - 1e-9 <= t <= hi_x + 1e-9]
    for t in ticks:
        strong = abs(t) < 1e-12
        parts.append(f'<line x1="{coord(sx(t))}" y1="{coord(top)}" x2="{coord(sx(t))}" y2="{coord(top + plot_h)}" '
                     f'stroke="{MUTED if strong else GRID}"/>')
        parts.append(svg_text(sx(t), top + plot_h + 16, tick_label(t, ticks), anchor="middle", size=11, fill=MUTED))
    if x_label:
        parts.append(svg_text(left + plot_w / 2, top + plot_h + 36, x_label, anchor="middle", fill=MUTED))
    parts.append(svg_text(left + plot_w + 12, top - 6, "estimate [95% CI]   n", size=11, fill=MUTED))
    for i, r in enumerate(rows):
        cy = top + (i + 0.5) * row_h
        full = "" if r.get("label") is None else str(r.get("label"))
        parts.append(svg_text(left - 8, cy + 4, labels[i], anchor="end", tip=full if labels[i] != full else None))
        marks, est = _marks(r, full, cy, sx, (lo_x, hi_x))
        parts += marks
        if est is None:
            est = "undefined"
            parts.append(svg_text(left + plot_w / 2, cy + 4, "undefined" + (f": {clip(r.get('undefined'), 60)}" if r.get("undefined") else ""),
                              anchor="middle", size=11, fill=MUTED, extra=' font-style="italic"'))
        parts.append(svg_text(left + plot_w + 12, cy + 4, est, size=11))
        parts.append(svg_text(width - 10, cy + 4, fmt_int(r.get("n")), anchor="end", size=11, fill=MUTED))
    for k, x in refs.items():
        if lo_x <= x <= hi_x:
            colour, dash = styles[k]
            parts.append(f'<line x1="{coord(sx(x))}" y1="{coord(top - 4)}" x2="{coord(sx(x))}" y2="{coord(top + plot_h + 4)}" '
                         f'stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"><title>{esc(f"{k} = {fmt_num(x)}")}</title></line>')
    if not rows:
        no_data(parts, left + plot_w / 2, top + row_h / 2 + 4)
    parts.append("</svg>")
    return "".join(parts)


def _marks(r: dict[str, Any], full: str, cy: float, sx: Callable[[float], float],
           x_range: tuple[float, float]) -> tuple[list[str], str | None]:
    """A row's ceiling diamond, CI whisker and estimate dot (an arrow when it is off the axis), and
    the estimate as text (``None``: undefined)."""
    lo_x, hi_x = x_range
    marks: list[str] = []
    est = None
    v, lo, hi, ceil = r.get("value"), r.get("low"), r.get("high"), r.get("ceiling")
    if is_num(ceil):
        marks.append(f'<g>{diamond(sx(float(ceil)), cy, 6, _CEILING)}'
                     f"<title>{esc(f'human–human ceiling {fmt_num(ceil)}')}</title></g>")
    if is_num(lo) and is_num(hi):
        marks.append(f'<line x1="{coord(sx(float(lo)))}" y1="{coord(cy)}" x2="{coord(sx(float(hi)))}" y2="{coord(cy)}" '
                     f'stroke="{PALETTE[0]}" stroke-width="2.5"/>')
        for e in (lo, hi):
            marks.append(f'<line x1="{coord(sx(float(e)))}" y1="{coord(cy - 5)}" x2="{coord(sx(float(e)))}" '
                         f'y2="{coord(cy + 5)}" stroke="{PALETTE[0]}" stroke-width="2"/>')
    if is_num(v):
        fv = float(v)
        tip = f"{full}: {fmt_num(fv)}" + (f" [{fmt_num(lo)}, {fmt_num(hi)}]" if is_num(lo) and is_num(hi) else "")
        marks.append(f'<circle cx="{coord(sx(fv))}" cy="{coord(cy)}" r="5" fill="{PALETTE[0]}"><title>{esc(tip)}</title></circle>')
        if fv < lo_x or fv > hi_x:
            ax = sx(fv) + (-10 if fv < lo_x else 10)
            marks.append(svg_text(ax, cy + 4, "◀" if fv < lo_x else "▶", anchor="middle", size=10, fill=PALETTE[0]))
        est = fmt_num(fv) + (f" [{fmt_num(lo)}, {fmt_num(hi)}]" if is_num(lo) and is_num(hi) else "")
    return marks, est
