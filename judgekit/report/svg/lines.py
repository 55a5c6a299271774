"""Line charts: one line with markers per series, each point with its 95% CI (a band or
whiskers), and an optional second layer of the same series drawn dashed (an overlay).

The overlay is how two estimates of one figure are compared on one chart: raw vs
judge-error-corrected, or the judge's labels vs the reference's on the labelled items. A series of
the overlay takes the colour of the series of the same name in ``series`` (so "model-a raw" and
"model-a corrected" share a colour and differ in dash and marker); ``layers`` names the two layers
in the legend. A missing point breaks the line; a point drawn without an interval has a hollow
marker and says why in its tooltip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from judgekit.report.escape import esc, is_num
from judgekit.report.svg.draw import (
    GRID,
    INK,
    MUTED,
    PALETTE,
    coord,
    legend_row,
    nice_ticks,
    no_data,
    open_svg,
    svg_text,
    tick_label,
)
from judgekit.report.svg.points import Point, to_points

__all__ = ["CiStyle", "LineStyle", "line_chart"]

CiStyle = Literal["auto", "band", "whiskers", "none"]


@dataclass(frozen=True)
class LineStyle:
    """How a line chart draws its intervals and what its tooltips count.

    ``ci``: ``band`` (shaded), ``whiskers`` (bars, dodged a little so they stay apart), ``none``,
    or ``auto``: a band when at most two lines are drawn, else whiskers. ``n_label``: what n
    counts, in the tooltips (e.g. ``conversations``). ``width`` and ``height`` in pixels.
    """

    ci: CiStyle = "auto"
    n_label: str = "n"
    width: int = 640
    height: int = 320

_OVERLAY_DASH = "6 4"


def _colours(names: Sequence[str], extra: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for n in [*names, *extra]:
        if n not in out:
            out[n] = PALETTE[len(out) % len(PALETTE)]
    return out


def line_chart(
    series: Mapping[str, Sequence[Any]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    hline: float | None = None,
    overlay: Mapping[str, Sequence[Any]] | None = None,
    layers: tuple[str, str] | None = None,
    style: LineStyle = LineStyle(),
) -> str:
    """Lines with markers, one per series, each point with its 95% CI, and a legend.

    Parameters
    ----------
    series : name → points, drawn in x order. A point is ``(x, y)``, ``(x, y, low, high)``,
        ``(x, y, low, high, n)`` or ``(x, y, low, high, n, why)`` or a mapping with those keys
        (:mod:`judgekit.report.svg.points`); a point with a missing y breaks the line there.
    overlay : a second layer, same format, drawn dashed with square markers; a name also in
        ``series`` keeps that series' colour.
    layers : the legend names of the two layers, e.g. ``("raw", "corrected")`` or
        ``("judge", "reference, labelled items")``.
    style : the intervals' drawing (``band``, ``whiskers``, ``none`` or ``auto``), what n counts
        in the tooltips and the size (:class:`LineStyle`).
    y_range : fixed y axis ``(low, high)``; default: the data, their CIs (and ``hline``) padded
        to round ticks.
    hline : a horizontal reference line (dashed), e.g. 0 for a drift chart or 0.5 for chance C.

    Example: ``line_chart({"model-a": [(1, .9, .85, .95, 40), (2, .8, .72, .87, 40)]},
    title="C by turn", x_label="turn", y_label="C", y_range=(0, 1), hline=0.5)``.
    """
    overlay = overlay or {}
    main = {n: to_points(series[n]) for n in series}
    over = {n: to_points(overlay[n]) for n in overlay}
    colour = _colours(list(main), list(over))
    layers_drawn = [(n, p, False) for n, p in main.items()] + [(n, p, True) for n, p in over.items()]
    drawn = [q for _, pts, _ in layers_drawn for q in pts if q.y is not None]
    n_lines = sum(1 for _, pts, _ in layers_drawn if any(q.y is not None for q in pts))
    ci, n_label, width, height = style.ci, style.n_label, style.width, style.height
    draw_ci = ("band" if n_lines <= 2 else "whiskers") if ci == "auto" else ci
    any_ci = draw_ci != "none" and any(q.has_ci for q in drawn)
    no_ci = any(not q.has_ci for q in drawn) and any_ci
    left, right, top = 64.0, 20.0, 34.0
    plot_w = width - left - right
    parts = open_svg(width, height, title)
    legend_items = _legend(colour, layers if over else None, any_ci and draw_ci, no_ci)
    legend, top = legend_row(legend_items, left, top + 8, plot_w) if main or over else ([], top)
    parts += legend
    top += 6
    bottom = 48.0
    plot_h = max(40.0, height - top - bottom)

    y_lo, y_hi, yt = _y_axis(drawn, any_ci, y_range, hline)
    x_lo, x_hi, xt = _x_axis([q.x for q in drawn])
    # the lines are dodged apart (in drawing order) so their bars and markers stay visible side
    # by side at each x: see _dodge (bands need it only for a lonely point's whiskers)
    bars = draw_ci == "whiskers" or (draw_ci == "band" and any(
        q.has_ci and _lonely(q, pts) for _, pts, _ in layers_drawn for q in pts if q.y is not None))
    step_px = (plot_w - 2 * _PAD_MAX) * _min_gap(sorted({q.x for q in drawn}), x_hi - x_lo) / (x_hi - x_lo)
    gap, cap = _dodge(n_lines, step_px) if bars and n_lines > 1 else (0.0, 3.0)
    pad = (n_lines - 1) / 2 * gap + cap + 4.0 if gap else 0.0  # room for the outer bars at the ends
    frame = _Frame(left, top, plot_w, plot_h, x_lo, x_hi, y_lo, y_hi, pad)
    parts += frame.axes(xt, yt, x_label, y_label, height)
    if is_num(hline) and y_lo <= float(hline) <= y_hi:
        hy = frame.sy(float(hline))
        parts.append(f'<line x1="{coord(left)}" y1="{coord(hy)}" x2="{coord(left + plot_w)}" y2="{coord(hy)}" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>')
    if not drawn:
        no_data(parts, left + plot_w / 2, top + plot_h / 2)
    k = -1
    for name, pts, is_over in layers_drawn:
        if not any(q.y is not None for q in pts):
            continue
        k += 1
        off = (k - (n_lines - 1) / 2) * gap
        parts += _layer(frame, name, pts, colour[name], is_over=is_over, off=off,
                        look=_Look(draw_ci, cap, any_ci, n_label))
    parts.append("</svg>")
    return "".join(parts)


def _legend(colour: Mapping[str, str], layers: tuple[str, str] | None, ci: str | bool,
            no_ci: bool) -> list[tuple[str, str, str]]:
    """The legend's entries: each series, the two layers' line styles, the CI's drawing (``ci``:
    ``band``, ``whiskers`` or false when none is drawn) and the hollow marker of a point without
    one."""
    items = [(n, colour[n], "line") for n in colour]
    if layers:
        items += [(f"{layers[0]}: solid, ●", INK, "line"), (f"{layers[1]}: dashed, ■", INK, "dashline")]
    if ci:
        items.append(("95% CI", MUTED, "band" if ci == "band" else "whisker"))
    if no_ci:
        items.append(("no 95% CI (see tooltip)", MUTED, "hollow"))
    return items


@dataclass(frozen=True)
class _Frame:
    """The plot area in pixels and the data range it shows."""

    left: float
    top: float
    plot_w: float
    plot_h: float
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float
    pad: float  # room at each end of the x axis for the outer bars of dodged lines

    def sx(self, x: float) -> float:
        return self.left + self.pad + (x - self.x_lo) / (self.x_hi - self.x_lo) * (self.plot_w - 2 * self.pad)

    def sy(self, y: float) -> float:
        y = min(max(y, self.y_lo), self.y_hi)
        return self.top + self.plot_h - (y - self.y_lo) / (self.y_hi - self.y_lo) * self.plot_h

    def axes(self, xt: Sequence[float], yt: Sequence[float], x_label: str, y_label: str,
             height: float) -> list[str]:
        """The grid, the ticks, the two axis lines and their labels."""
        left, top, plot_w, plot_h, sx, sy = self.left, self.top, self.plot_w, self.plot_h, self.sx, self.sy
        parts: list[str] = []
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
        return parts


def _y_axis(drawn: list[Point], any_ci: bool, y_range: tuple[float, float] | None,
            hline: float | None) -> tuple[float, float, list[float]]:
    """``(low, high, ticks)`` of the y axis: ``y_range``, else the data, their CIs (and ``hline``)
    padded to round ticks."""
    ys = [q.y for q in drawn if q.y is not None]
    if any_ci:
        ys += [v for q in drawn for v in (q.low, q.high) if v is not None]
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
    return y_lo, y_hi, yt


def _x_axis(xs: list[float]) -> tuple[float, float, list[float]]:
    """``(low, high, ticks)`` of the x axis: whole numbers when there are at most 12 of them."""
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    distinct_x = sorted(set(xs))
    if distinct_x and len(distinct_x) <= 12 and all(float(x).is_integer() for x in distinct_x):
        xt = [float(x) for x in range(int(x_lo), int(x_hi) + 1)]
        if len(xt) > 12:
            xt = distinct_x
    else:
        xt = [t for t in nice_ticks(x_lo, x_hi, 6) if x_lo - 1e-9 <= t <= x_hi + 1e-9]
    return x_lo, x_hi, xt


@dataclass(frozen=True)
class _Look:
    """How every line's intervals and markers are drawn."""

    draw_ci: str  # band, whiskers or none
    cap: float  # half-width of a whisker's caps
    any_ci: bool  # some point has an interval: a point without one is hollow
    n_label: str


def _segments(pts: list[Point]) -> list[list[Point]]:
    """The runs of points between missing ones (a missing y breaks the line)."""
    segs: list[list[Point]] = [[]]
    for q in pts:
        if q.y is None:
            segs.append([])
        else:
            segs[-1].append(q)
    return [s for s in segs if s]


def _layer(frame: _Frame, name: str, pts: list[Point], c: str, *, is_over: bool, off: float,
           look: _Look) -> list[str]:
    """One series (or overlay) as an SVG group: its band, line, whiskers and markers."""
    sx, sy, cap = frame.sx, frame.sy, look.cap
    layer = "overlay" if is_over else "series"
    parts = [f'<g class="{layer}" data-series="{esc(name)}">']
    dash = f' stroke-dasharray="{_OVERLAY_DASH}"' if is_over else ""
    if look.draw_ci == "band":  # one polygon per run of points that all have an interval
        for seg in _segments(pts):
            runs: list[list[Point]] = [[]]
            for q in seg:
                if q.has_ci:
                    runs[-1].append(q)
                else:
                    runs.append([])
            for run in runs:
                if len(run) < 2:
                    continue
                upper = [f"{coord(sx(q.x) + off)},{coord(sy(q.high or 0.0))}" for q in run]
                lower = [f"{coord(sx(q.x) + off)},{coord(sy(q.low or 0.0))}" for q in reversed(run)]
                parts.append(f'<polygon class="ci-band" points="{" ".join(upper + lower)}" fill="{c}" '
                             f'fill-opacity="{0.10 if is_over else 0.18}" stroke="none"/>')
    for seg in _segments(pts):
        if len(seg) >= 2:
            d = " ".join(f"{'M' if i == 0 else 'L'}{coord(sx(q.x) + off)},{coord(sy(q.y or 0.0))}"
                         for i, q in enumerate(seg))
            parts.append(f'<path d="{d}" fill="none" stroke="{c}" stroke-width="2.5" stroke-linejoin="round"{dash}/>')
    for q in pts:
        if q.y is None:
            continue
        x = sx(q.x)
        if q.has_ci and (look.draw_ci == "whiskers" or (look.draw_ci == "band" and _lonely(q, pts))):
            wx = x + off
            y1, y2 = sy(q.low or 0.0), sy(q.high or 0.0)
            parts.append(f'<line class="ci-whisker" x1="{coord(wx)}" y1="{coord(y1)}" x2="{coord(wx)}" y2="{coord(y2)}" '
                         f'stroke="{c}" stroke-width="1.5"{dash}/>')
            for yy in (y1, y2):
                parts.append(f'<line class="ci-cap" x1="{coord(wx - cap)}" y1="{coord(yy)}" x2="{coord(wx + cap)}" '
                             f'y2="{coord(yy)}" stroke="{c}" stroke-width="1.5"/>')
        hollow = look.any_ci and not q.has_ci
        fill = "#ffffff" if hollow else c
        tip = f"<title>{esc(q.describe(name, look.n_label))}</title>"
        if is_over:
            parts.append(f'<rect x="{coord(x + off - 3.5)}" y="{coord(sy(q.y) - 3.5)}" width="7" height="7" fill="{fill}" '
                         f'stroke="{c}" stroke-width="1.5">{tip}</rect>')
        else:
            parts.append(f'<circle cx="{coord(x + off)}" cy="{coord(sy(q.y))}" r="3.5" fill="{fill}" stroke="{c}" '
                         f'stroke-width="1.5">{tip}</circle>')
    parts.append("</g>")
    return parts


_PAD_MAX = 30.0  # the most room the dodge may take at each end of the x axis (pixels)


def _min_gap(xs: Sequence[float], span: float) -> float:
    """The smallest distance between two neighbouring x values (``span`` when there is one)."""
    gaps = [b - a for a, b in pairwise(xs) if b > a]
    return min(gaps) if gaps else span


def _dodge(n_lines: int, step_px: float) -> tuple[float, float]:
    """``(gap, cap)``: pixels between neighbouring lines' bars at one x, and the half-width of a
    bar's caps. The ``n_lines`` bars of one x take at most 60% of the ``step_px`` between
    neighbouring x values (so the groups of two x values stay apart), at most 12 px between two
    bars (enough for a marker, 7 px, and both caps) and at least 3 px (so two bars never share an
    x, even when very many lines crowd a narrow chart); a cap is at most a third of the gap."""
    gap = min(12.0, max(3.0, 0.6 * step_px / n_lines))
    return gap, min(3.0, gap / 3)


def _lonely(q: Point, pts: list[Point]) -> bool:
    """A point whose interval no band shows (no neighbour with an interval): it gets whiskers."""
    i = pts.index(q)
    nb = [pts[j] for j in (i - 1, i + 1) if 0 <= j < len(pts)]
    return not any(p.has_ci and p.y is not None for p in nb)
