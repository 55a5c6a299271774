"""Small dependency-free inline-SVG charts for reports.

Each function returns one ``<svg>`` element as a string, ready to drop into an HTML page (or to
save as a ``.svg`` file: the output is well-formed XML). Every piece of text (titles, labels,
series names, tooltips) is escaped with :func:`judgekit.report.escape.esc`, so labels taken from
data (model names, slice keys, rater ids) cannot inject markup. Missing values (``None``/NaN)
are skipped or marked, never drawn as zero.

Charts scale with the page (``viewBox`` plus ``max-width: 100%``), use a colour-blind-safe
palette (Okabe–Ito) and carry a ``<title>`` for screen readers and tooltips.

>>> svg = line_chart({"gpt4": [(1, 0.8), (2, 0.7)]}, title="C(t)", x_label="turn", y_label="C")
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from judgekit.report.escape import esc, fmt_int, fmt_num, is_num

__all__ = ["PALETTE", "bar_chart", "heatmap", "interval_chart", "line_chart", "nice_ticks"]

#: Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#000000"]
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"
_INK = "#1f2328"
_MUTED = "#57606a"
_GRID = "#d8dee4"
_THRESHOLD = "#cf222e"
#: reference lines of an interval chart: colour and dash pattern, so several lines stay apart.
_REF_STYLES = [("#cf222e", "6 4"), ("#9a6700", "2 3"), ("#24292f", "9 3 2 3"), ("#bf3989", "4 2")]
_CEILING = "#6e40c9"
_CHAR_W = 0.6  # average glyph width as a share of the font size (sans-serif)


# ----------------------------------------------------------------------------- helpers
def _text_w(text: str, size: float = 12) -> float:
    return len(text) * size * _CHAR_W


def _clip(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _f(x: float) -> str:
    """A coordinate: short, and never 'nan'."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def _open(width: float, height: float, title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="jk-chart" viewBox="0 0 {_f(width)} {_f(height)}" '
        f'width="{_f(width)}" height="{_f(height)}" role="img" aria-label="{esc(title)}" '
        f'style="max-width:100%;height:auto" font-family="{esc(_FONT)}" font-size="12" fill="{_INK}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="0" y="0" width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
        f'<text x="{_f(width / 2)}" y="20" text-anchor="middle" font-size="14" font-weight="600">'
        f"{esc(_clip(title, 110))}</text>",
    ]


def _txt(x: float, y: float, text: Any, *, anchor: str = "start", size: float = 12, fill: str = _INK,
         weight: str | None = None, extra: str = "", tip: Any = None) -> str:
    w = f' font-weight="{weight}"' if weight else ""
    t = f"<title>{esc(tip)}</title>" if tip is not None else ""
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{_f(size)}" fill="{fill}"{w}{extra}>'
        f"{t}{esc(text)}</text>"
    )


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


def _tick_label(v: float, ticks: Sequence[float]) -> str:
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    digits = max(0, min(4, -math.floor(math.log10(step)) if step < 1 else 0))
    if step < 1 and round(step * 10**digits) % 10 != 0 and round(step * 10 ** (digits + 1)) % 10 != 0:
        digits += 1
    return fmt_num(v, digits)


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


def _legend_row(items: Sequence[tuple[str, str, str]], x: float, y: float, max_w: float) -> tuple[list[str], float]:
    """A wrapping legend: ``items`` are (name, colour, mark) with mark in line|dot|box|diamond|dash.

    Returns the SVG parts and the y below the legend.
    """
    parts: list[str] = []
    cx, cy = x, y
    for name, colour, mark in items:
        label = _clip(name, 40)
        w = 22 + _text_w(label, 12) + 16
        if cx > x and cx + w > x + max_w:
            cx, cy = x, cy + 18
        if mark == "line":
            parts.append(f'<line x1="{_f(cx)}" y1="{_f(cy - 4)}" x2="{_f(cx + 16)}" y2="{_f(cy - 4)}" stroke="{colour}" stroke-width="2.5"/>')
        elif mark.startswith("dash"):
            dash = mark.partition(":")[2] or "4 3"
            parts.append(f'<line x1="{_f(cx + 8)}" y1="{_f(cy - 12)}" x2="{_f(cx + 8)}" y2="{_f(cy + 4)}" stroke="{colour}" stroke-width="2" stroke-dasharray="{esc(dash)}"/>')
        elif mark == "diamond":
            parts.append(_diamond(cx + 8, cy - 4, 5, colour))
        elif mark == "dot":
            parts.append(f'<circle cx="{_f(cx + 8)}" cy="{_f(cy - 4)}" r="4.5" fill="{colour}"/>')
        else:
            parts.append(f'<rect x="{_f(cx + 2)}" y="{_f(cy - 10)}" width="12" height="12" fill="{colour}"/>')
        parts.append(_txt(cx + 22, cy, label, tip=name if label != name else None))
        cx += w
    return parts, cy + 10


def _diamond(cx: float, cy: float, r: float, colour: str, *, fill: str = "#ffffff") -> str:
    pts = f"{_f(cx)},{_f(cy - r)} {_f(cx + r)},{_f(cy)} {_f(cx)},{_f(cy + r)} {_f(cx - r)},{_f(cy)}"
    return f'<polygon points="{pts}" fill="{fill}" stroke="{colour}" stroke-width="2"/>'


def _no_data(parts: list[str], x: float, y: float) -> None:
    parts.append(_txt(x, y, "no data to draw", anchor="middle", fill=_MUTED, extra=' font-style="italic"'))


# ----------------------------------------------------------------------------- line chart
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
    parts = _open(width, height, title)
    legend, top = _legend_row(legend_items, left, top + 8, plot_w) if names else ([], top)
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
        parts.append(f'<line x1="{_f(left)}" y1="{_f(sy(t))}" x2="{_f(left + plot_w)}" y2="{_f(sy(t))}" stroke="{_GRID}"/>')
        parts.append(_txt(left - 6, sy(t) + 4, _tick_label(t, yt), anchor="end", size=11, fill=_MUTED))
    for t in xt:
        parts.append(f'<line x1="{_f(sx(t))}" y1="{_f(top + plot_h)}" x2="{_f(sx(t))}" y2="{_f(top + plot_h + 4)}" stroke="{_MUTED}"/>')
        parts.append(_txt(sx(t), top + plot_h + 17, _tick_label(t, xt) if not float(t).is_integer() else str(int(t)),
                          anchor="middle", size=11, fill=_MUTED))
    parts.append(f'<line x1="{_f(left)}" y1="{_f(top + plot_h)}" x2="{_f(left + plot_w)}" y2="{_f(top + plot_h)}" stroke="{_MUTED}"/>')
    parts.append(f'<line x1="{_f(left)}" y1="{_f(top)}" x2="{_f(left)}" y2="{_f(top + plot_h)}" stroke="{_MUTED}"/>')
    parts.append(_txt(left + plot_w / 2, height - 10, x_label, anchor="middle", fill=_MUTED))
    ymid = top + plot_h / 2
    parts.append(_txt(16, ymid, y_label, anchor="middle", fill=_MUTED, extra=f' transform="rotate(-90 16 {_f(ymid)})"'))

    if is_num(hline) and y_lo <= float(hline) <= y_hi:
        hy = sy(float(hline))
        parts.append(f'<line x1="{_f(left)}" y1="{_f(hy)}" x2="{_f(left + plot_w)}" y2="{_f(hy)}" stroke="{_MUTED}" stroke-width="1.5" stroke-dasharray="6 4"/>')

    if not xs:
        _no_data(parts, left + plot_w / 2, top + plot_h / 2)
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
                d = " ".join(f"{'M' if k == 0 else 'L'}{_f(sx(x))},{_f(sy(y))}" for k, (x, y) in enumerate(seg))
                parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2.5" stroke-linejoin="round"/>')
        for x, y in clean[n]:
            parts.append(
                f'<circle cx="{_f(sx(x))}" cy="{_f(sy(y))}" r="3.5" fill="{colour}">'
                f"<title>{esc(n)}: x = {esc(fmt_num(x, 3))}, y = {esc(fmt_num(y, 3))}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- heatmap
def _mix(share: float) -> str:
    """White → dark blue by ``share`` in [0, 1]."""
    s = min(max(share, 0.0), 1.0)
    lo, hi = (255, 255, 255), (8, 69, 148)
    r, g, b = (round(a + (z - a) * s) for a, z in zip(lo, hi, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    matrix: list[list[int]],
    *,
    row_labels: list[str],
    col_labels: list[str],
    title: str,
    row_title: str = "reference",
    col_title: str = "judge",
) -> str:
    """A confusion matrix as a heatmap: counts written in the cells.

    Rows are the reference (true) labels, columns the judge's. A cell's shade is its share of
    the row (so a dark diagonal means high recall per class); the diagonal is outlined and each
    row's total is written at the right.

    Example: ``heatmap([[50, 2], [5, 40]], row_labels=["comply", "refuse"],
    col_labels=["comply", "refuse"], title="gpt4 vs final")``.
    """
    n_r, n_c = len(matrix), (len(matrix[0]) if matrix else 0)
    if len(row_labels) != n_r or len(col_labels) != n_c or any(len(r) != n_c for r in matrix):
        raise ValueError(
            f"heatmap: matrix is {n_r}x{n_c} but got {len(row_labels)} row labels and "
            f"{len(col_labels)} column labels (and every row must have {n_c} cells)."
        )
    row_txt = [_clip(r, 32) for r in row_labels]
    col_txt = [_clip(c, 24) for c in col_labels]
    cell_w = max(64.0, min(170.0, max((_text_w(c, 11) for c in col_txt), default=0) + 14))
    cell_h = 40.0
    left = 34 + max(60.0, max((_text_w(r, 12) for r in row_txt), default=0) + 12)
    top = 74.0
    width = left + n_c * cell_w + 70
    height = top + n_r * cell_h + 22
    parts = _open(width, height, title)
    parts.append(_txt(left + n_c * cell_w / 2, 44, f"{col_title} →", anchor="middle", fill=_MUTED, weight="600"))
    ymid = top + n_r * cell_h / 2
    parts.append(_txt(16, ymid, f"{row_title} →", anchor="middle", fill=_MUTED, weight="600",
                      extra=f' transform="rotate(90 16 {_f(ymid)})"'))
    for j, c in enumerate(col_txt):
        parts.append(_txt(left + (j + 0.5) * cell_w, top - 10, c, anchor="middle", size=11,
                          tip=col_labels[j] if c != col_labels[j] else None))
    parts.append(_txt(left + n_c * cell_w + 35, top - 10, "n", anchor="middle", size=11, fill=_MUTED))
    for i, row in enumerate(matrix):
        counts = [int(v) if is_num(v) else 0 for v in row]
        total = sum(counts)
        y = top + i * cell_h
        parts.append(_txt(left - 8, y + cell_h / 2 + 4, row_txt[i], anchor="end",
                          tip=row_labels[i] if row_txt[i] != row_labels[i] else None))
        for j, v in enumerate(counts):
            share = v / total if total else 0.0
            x = left + j * cell_w
            tip = f"{row_title} {row_labels[i]}, {col_title} {col_labels[j]}: {v} ({100 * share:.1f}% of row)"
            parts.append(
                f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell_w)}" height="{_f(cell_h)}" '
                f'fill="{_mix(share)}" stroke="#ffffff" stroke-width="1"><title>{esc(tip)}</title></rect>'
            )
            ink = "#ffffff" if share > 0.55 else _INK
            parts.append(_txt(x + cell_w / 2, y + cell_h / 2 + 1, fmt_int(v), anchor="middle", size=13,
                              fill=ink, weight="600"))
            if total:
                parts.append(_txt(x + cell_w / 2, y + cell_h / 2 + 14, f"{100 * share:.0f}%", anchor="middle",
                                  size=9.5, fill=ink))
            if i == j:
                parts.append(f'<rect x="{_f(x + 1.5)}" y="{_f(y + 1.5)}" width="{_f(cell_w - 3)}" '
                             f'height="{_f(cell_h - 3)}" fill="none" stroke="{_INK}" stroke-width="1.5"/>')
        parts.append(_txt(left + n_c * cell_w + 35, y + cell_h / 2 + 4, fmt_int(total), anchor="middle",
                          size=11, fill=_MUTED))
    if not n_r:
        _no_data(parts, width / 2, top + 10)
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- interval chart
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
    labels = [_clip(r.get("label", ""), 34) for r in rows]
    left = 16 + max(60.0, max((_text_w(lab, 12) for lab in labels), default=0) + 10)
    right = 190.0
    plot_w = max(200.0, width - left - right)
    width = int(left + plot_w + right)
    row_h = 26.0
    legend = [("judge estimate, 95% CI", PALETTE[0], "dot")]
    if any(is_num(r.get("ceiling")) for r in rows):
        legend.append(("human–human ceiling", _CEILING, "diamond"))
    styles = {k: _REF_STYLES[i % len(_REF_STYLES)] for i, k in enumerate(refs)}
    legend += [(f"{k} = {fmt_num(v)}", styles[k][0], f"dash:{styles[k][1]}") for k, v in refs.items()]
    leg, top = _legend_row(legend, left, 46, plot_w)
    top += 8
    plot_h = max(row_h, len(rows) * row_h)
    height = top + plot_h + 46
    parts = _open(width, height, title) + leg

    def sx(x: float) -> float:
        return left + (min(max(x, lo_x), hi_x) - lo_x) / (hi_x - lo_x) * plot_w

    for i in range(0, len(rows), 2):  # zebra stripes first, so grid lines stay visible
        parts.append(f'<rect x="4" y="{_f(top + i * row_h)}" width="{_f(width - 8)}" height="{_f(row_h)}" fill="#f6f8fa"/>')
    ticks = [t for t in nice_ticks(lo_x, hi_x, 8) if lo_x - 1e-9 <= t <= hi_x + 1e-9]
    for t in ticks:
        strong = abs(t) < 1e-12
        parts.append(f'<line x1="{_f(sx(t))}" y1="{_f(top)}" x2="{_f(sx(t))}" y2="{_f(top + plot_h)}" '
                     f'stroke="{_MUTED if strong else _GRID}"/>')
        parts.append(_txt(sx(t), top + plot_h + 16, _tick_label(t, ticks), anchor="middle", size=11, fill=_MUTED))
    if x_label:
        parts.append(_txt(left + plot_w / 2, top + plot_h + 36, x_label, anchor="middle", fill=_MUTED))
    parts.append(_txt(left + plot_w + 12, top - 6, "estimate [95% CI]   n", size=11, fill=_MUTED))
    for i, r in enumerate(rows):
        cy = top + (i + 0.5) * row_h
        full = "" if r.get("label") is None else str(r.get("label"))
        parts.append(_txt(left - 8, cy + 4, labels[i], anchor="end", tip=full if labels[i] != full else None))
        v, lo, hi, ceil = r.get("value"), r.get("low"), r.get("high"), r.get("ceiling")
        if is_num(ceil):
            parts.append(f'<g>{_diamond(sx(float(ceil)), cy, 6, _CEILING)}'
                         f"<title>{esc(f'human–human ceiling {fmt_num(ceil)}')}</title></g>")
        if is_num(lo) and is_num(hi):
            parts.append(f'<line x1="{_f(sx(float(lo)))}" y1="{_f(cy)}" x2="{_f(sx(float(hi)))}" y2="{_f(cy)}" '
                         f'stroke="{PALETTE[0]}" stroke-width="2.5"/>')
            for e in (lo, hi):
                parts.append(f'<line x1="{_f(sx(float(e)))}" y1="{_f(cy - 5)}" x2="{_f(sx(float(e)))}" '
                             f'y2="{_f(cy + 5)}" stroke="{PALETTE[0]}" stroke-width="2"/>')
        if is_num(v):
            fv = float(v)
            tip = f"{full}: {fmt_num(fv)}" + (f" [{fmt_num(lo)}, {fmt_num(hi)}]" if is_num(lo) and is_num(hi) else "")
            parts.append(f'<circle cx="{_f(sx(fv))}" cy="{_f(cy)}" r="5" fill="{PALETTE[0]}"><title>{esc(tip)}</title></circle>')
            if fv < lo_x or fv > hi_x:
                ax = sx(fv) + (-10 if fv < lo_x else 10)
                parts.append(_txt(ax, cy + 4, "◀" if fv < lo_x else "▶", anchor="middle", size=10, fill=PALETTE[0]))
            est = fmt_num(fv) + (f" [{fmt_num(lo)}, {fmt_num(hi)}]" if is_num(lo) and is_num(hi) else "")
        else:
            est = "undefined"
            parts.append(_txt(left + plot_w / 2, cy + 4, "undefined" + (f": {_clip(r.get('undefined'), 60)}" if r.get("undefined") else ""),
                              anchor="middle", size=11, fill=_MUTED, extra=' font-style="italic"'))
        parts.append(_txt(left + plot_w + 12, cy + 4, est, size=11))
        parts.append(_txt(width - 10, cy + 4, fmt_int(r.get("n")), anchor="end", size=11, fill=_MUTED))
    for k, x in refs.items():
        if lo_x <= x <= hi_x:
            colour, dash = styles[k]
            parts.append(f'<line x1="{_f(sx(x))}" y1="{_f(top - 4)}" x2="{_f(sx(x))}" y2="{_f(top + plot_h + 4)}" '
                         f'stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"><title>{esc(f"{k} = {fmt_num(x)}")}</title></line>')
    if not rows:
        _no_data(parts, left + plot_w / 2, top + row_h / 2 + 4)
    parts.append("</svg>")
    return "".join(parts)


# ----------------------------------------------------------------------------- bar chart
def bar_chart(
    groups: Mapping[str, Mapping[str, float | None]],
    *,
    title: str,
    percent: bool | None = None,
    width: int = 640,
    height: int = 300,
) -> str:
    """Grouped bars: one group per outer key, one bar per inner key (the series), with a legend.

    E.g. label distributions: ``bar_chart({"full_refusal": {"judge": .30, "humans": .22}, ...},
    title="labels: judge vs humans")`` shows at a glance a judge that over-calls refusal.
    ``percent`` (default: when every value lies in [0, 1]) writes values as percentages.
    """
    series: list[str] = []
    for inner in groups.values():
        for s in inner:
            if s not in series:
                series.append(s)
    vals = [float(v) for inner in groups.values() for v in inner.values() if is_num(v)]
    if percent is None:
        percent = bool(vals) and all(0 <= v <= 1 for v in vals)
    hi = max([*vals, 0.0])
    lo = min([*vals, 0.0])
    if percent and hi <= 1:
        hi = max(hi, 0.0)
    yt = nice_ticks(lo, hi if hi > lo else lo + 1, 5)
    y_lo, y_hi = min(yt[0], lo), max(yt[-1], hi)

    n_g, n_s = len(groups), max(1, len(series))
    gnames = [_clip(g, 26) for g in groups]
    bar_w = 30.0
    group_w = max(n_s * bar_w + 28, max((_text_w(g, 12) for g in gnames), default=0) + 14)
    left, right = 56.0, 16.0
    plot_w = max(width - left - right, n_g * group_w)
    width = int(left + plot_w + right)
    parts = _open(width, height, title)
    leg, top = _legend_row([(s, PALETTE[i % len(PALETTE)], "box") for i, s in enumerate(series)], left, 46, plot_w)
    parts += leg
    top += 8
    bottom = 40.0
    plot_h = max(40.0, height - top - bottom)

    def sy(y: float) -> float:
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    for t in yt:
        parts.append(f'<line x1="{_f(left)}" y1="{_f(sy(t))}" x2="{_f(left + plot_w)}" y2="{_f(sy(t))}" stroke="{_GRID}"/>')
        lab = f"{100 * t:.0f}%" if percent else _tick_label(t, yt)
        parts.append(_txt(left - 6, sy(t) + 4, lab, anchor="end", size=12, fill=_MUTED))
    parts.append(f'<line x1="{_f(left)}" y1="{_f(sy(0))}" x2="{_f(left + plot_w)}" y2="{_f(sy(0))}" stroke="{_MUTED}"/>')
    slot = plot_w / max(n_g, 1)
    for gi, (g, inner) in enumerate(groups.items()):
        gx = left + gi * slot + (slot - n_s * bar_w) / 2
        for si, s in enumerate(series):
            v = inner.get(s)
            x = gx + si * bar_w
            if not is_num(v):
                parts.append(_txt(x + bar_w / 2, sy(0) - 4, "–", anchor="middle", size=10, fill=_MUTED))
                continue
            fv = float(v)
            y0, y1 = sorted((sy(0), sy(fv)))
            shown = f"{100 * fv:.0f}%" if percent else fmt_num(fv)
            parts.append(
                f'<rect x="{_f(x + 1)}" y="{_f(y0)}" width="{_f(bar_w - 2)}" height="{_f(max(y1 - y0, 0.5))}" '
                f'fill="{PALETTE[si % len(PALETTE)]}"><title>{esc(f"{g} — {s}: {shown}")}</title></rect>'
            )
            parts.append(_txt(x + bar_w / 2, (y0 - 4) if fv >= 0 else (y1 + 12), shown, anchor="middle", size=11))
        parts.append(_txt(left + (gi + 0.5) * slot, top + plot_h + 18, gnames[gi], anchor="middle", size=12,
                          tip=g if gnames[gi] != g else None))
    if not n_g:
        _no_data(parts, left + plot_w / 2, top + plot_h / 2)
    parts.append("</svg>")
    return "".join(parts)
