"""Drawing primitives shared by the charts: colours, the ``<svg>`` element, text, legend, marks.

Every piece of text goes through :func:`judgekit.report.escape.esc` here, so a chart cannot emit
unescaped data text by accident.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from judgekit.report.escape import esc, fmt_num

__all__ = [ "GRID", "INK", "MUTED", "PALETTE", "clip", "coord", "diamond", "legend_row",
    "nice_ticks", "no_data", "open_svg", "svg_text", "text_width", "tick_label",
]

#: Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#000000"]
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#d8dee4"
_CHAR_W = 0.6  # average glyph width as a share of the font size (sans-serif)
_TITLE_W = 0.66  # the same for the bold title, with room to spare


def text_width(text: str, size: float = 12) -> float:
    """About how wide ``text`` is drawn at ``size`` (no font metrics: a fixed share per glyph)."""
    return len(text) * size * _CHAR_W


def clip(text: Any, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (None becomes "")."""
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def coord(x: float) -> str:
    """A coordinate: short, and never 'nan'."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def open_svg(width: float, height: float, title: str) -> list[str]:
    """The opening of a chart: the ``<svg>`` element, its ``<title>``, a white background and the
    title drawn on top. Close it with ``"</svg>"``."""
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="jk-chart" viewBox="0 0 {coord(width)} {coord(height)}" '
        f'width="{coord(width)}" height="{coord(height)}" role="img" aria-label="{esc(title)}" '
        f'style="max-width:100%;height:auto" font-family="{esc(_FONT)}" font-size="12" fill="{INK}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="0" y="0" width="{coord(width)}" height="{coord(height)}" fill="#ffffff"/>',
        _title_text(title, width),
    ]


def _title_text(title: str, width: float) -> str:
    """A chart's title drawn across its top, inside its width: smaller type for a long title
    (down to 10 px), and cut with an ellipsis only when even that does not fit (the full title
    stays in the chart's ``<title>`` and ``aria-label``)."""
    room = max(width - 16, 40)
    size = 14.0
    if len(title) * size * _TITLE_W > room:
        size = max(10.0, room / (max(len(title), 1) * _TITLE_W))
    limit = max(int(room / (size * _TITLE_W)), 8)
    return (f'<text x="{coord(width / 2)}" y="20" text-anchor="middle" font-size="{coord(size)}" '
            f'font-weight="600">{esc(clip(title, limit))}</text>')


def svg_text(x: float, y: float, text: Any, *, anchor: str = "start", size: float = 12, fill: str = INK,
             weight: str | None = None, extra: str = "", tip: Any = None) -> str:
    """A ``<text>`` element (escaped), with ``tip`` as its tooltip when given."""
    w = f' font-weight="{weight}"' if weight else ""
    t = f"<title>{esc(tip)}</title>" if tip is not None else ""
    return (
        f'<text x="{coord(x)}" y="{coord(y)}" text-anchor="{anchor}" font-size="{coord(size)}" fill="{fill}"{w}{extra}>'
        f"{t}{esc(text)}</text>"
    )


def legend_row(items: Sequence[tuple[str, str, str]], x: float, y: float, max_w: float) -> tuple[list[str], float]:
    """A wrapping legend: ``items`` are (name, colour, mark), mark one of line, dot, box, diamond,
    dash[:pattern] (vertical), dashline (horizontal), band, whisker, hollow.

    Returns the SVG parts and the y below the legend.
    """
    parts: list[str] = []
    cx, cy = x, y
    for name, colour, mark in items:
        label = clip(name, 40)
        w = 22 + text_width(label, 12) + 16
        if cx > x and cx + w > x + max_w:
            cx, cy = x, cy + 18
        if mark == "line":
            parts.append(f'<line x1="{coord(cx)}" y1="{coord(cy - 4)}" x2="{coord(cx + 16)}" y2="{coord(cy - 4)}" stroke="{colour}" stroke-width="2.5"/>')
        elif mark == "dashline":
            parts.append(f'<line x1="{coord(cx)}" y1="{coord(cy - 4)}" x2="{coord(cx + 16)}" y2="{coord(cy - 4)}" stroke="{colour}" stroke-width="2.5" stroke-dasharray="4 3"/>')
        elif mark.startswith("dash"):
            dash = mark.partition(":")[2] or "4 3"
            parts.append(f'<line x1="{coord(cx + 8)}" y1="{coord(cy - 12)}" x2="{coord(cx + 8)}" y2="{coord(cy + 4)}" stroke="{colour}" stroke-width="2" stroke-dasharray="{esc(dash)}"/>')
        elif mark == "diamond":
            parts.append(diamond(cx + 8, cy - 4, 5, colour))
        elif mark == "band":
            parts.append(f'<rect x="{coord(cx + 1)}" y="{coord(cy - 11)}" width="14" height="14" fill="{colour}" fill-opacity="0.25"/>')
        elif mark == "whisker":
            parts.append(f'<line x1="{coord(cx + 8)}" y1="{coord(cy - 11)}" x2="{coord(cx + 8)}" y2="{coord(cy + 3)}" stroke="{colour}" stroke-width="1.5"/>'
                         f'<line x1="{coord(cx + 5)}" y1="{coord(cy - 11)}" x2="{coord(cx + 11)}" y2="{coord(cy - 11)}" stroke="{colour}" stroke-width="1.5"/>'
                         f'<line x1="{coord(cx + 5)}" y1="{coord(cy + 3)}" x2="{coord(cx + 11)}" y2="{coord(cy + 3)}" stroke="{colour}" stroke-width="1.5"/>')
        elif mark == "hollow":
            parts.append(f'<circle cx="{coord(cx + 8)}" cy="{coord(cy - 4)}" r="4" fill="#ffffff" stroke="{colour}" stroke-width="1.5"/>')
        elif mark == "dot":
            parts.append(f'<circle cx="{coord(cx + 8)}" cy="{coord(cy - 4)}" r="4.5" fill="{colour}"/>')
        else:
            parts.append(f'<rect x="{coord(cx + 2)}" y="{coord(cy - 10)}" width="12" height="12" fill="{colour}"/>')
        parts.append(svg_text(cx + 22, cy, label, tip=name if label != name else None))
        cx += w
    return parts, cy + 10


def diamond(cx: float, cy: float, r: float, colour: str, *, fill: str = "#ffffff") -> str:
    """A diamond of radius ``r`` around ``(cx, cy)`` (the mark of a human–human ceiling)."""
    pts = f"{coord(cx)},{coord(cy - r)} {coord(cx + r)},{coord(cy)} {coord(cx)},{coord(cy + r)} {coord(cx - r)},{coord(cy)}"
    return f'<polygon points="{pts}" fill="{fill}" stroke="{colour}" stroke-width="2"/>'


def no_data(parts: list[str], x: float, y: float) -> None:
    """Append the "no data to draw" note at ``(x, y)``."""
    parts.append(svg_text(x, y, "no data to draw", anchor="middle", fill=MUTED, extra=' font-style="italic"'))


# Axis helpers: round tick values and their labels.


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

