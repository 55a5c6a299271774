"""Bar charts: grouped bars, one group per outer key and one bar per series."""

from __future__ import annotations

from collections.abc import Mapping

from judgekit.report.escape import esc, fmt_num, is_num
from judgekit.report.svg import draw

__all__ = ["bar_chart"]


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
    yt = draw.nice_ticks(lo, hi if hi > lo else lo + 1, 5)
    y_lo, y_hi = min(yt[0], lo), max(yt[-1], hi)

    n_g, n_s = len(groups), max(1, len(series))
    gnames = [draw.clip(g, 26) for g in groups]
    bar_w = 30.0
    group_w = max(n_s * bar_w + 28, max((draw.text_width(g, 12) for g in gnames), default=0) + 14)
    left, right = 56.0, 16.0
    plot_w = max(width - left - right, n_g * group_w)
    width = int(left + plot_w + right)
    parts = draw.open_svg(width, height, title)
    leg, top = draw.legend_row([(s, draw.PALETTE[i % len(draw.PALETTE)], "box") for i, s in enumerate(series)], left, 46, plot_w)
    parts += leg
    top += 8
    bottom = 40.0
    plot_h = max(40.0, height - top - bottom)

    def sy(y: float) -> float:
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    for t in yt:
        parts.append(f'<line x1="{draw.coord(left)}" y1="{draw.coord(sy(t))}" x2="{draw.coord(left + plot_w)}" y2="{draw.coord(sy(t))}" stroke="{draw.GRID}"/>')
        lab = f"{100 * t:.0f}%" if percent else draw.tick_label(t, yt)
        parts.append(draw.svg_text(left - 6, sy(t) + 4, lab, anchor="end", size=12, fill=draw.MUTED))
    parts.append(f'<line x1="{draw.coord(left)}" y1="{draw.coord(sy(0))}" x2="{draw.coord(left + plot_w)}" y2="{draw.coord(sy(0))}" stroke="{draw.MUTED}"/>')
    slot = plot_w / max(n_g, 1)
    for gi, (g, inner) in enumerate(groups.items()):
        gx = left + gi * slot + (slot - n_s * bar_w) / 2
        for si, s in enumerate(series):
            v = inner.get(s)
            x = gx + si * bar_w
            if not is_num(v):
                parts.append(draw.svg_text(x + bar_w / 2, sy(0) - 4, "–", anchor="middle", size=10, fill=draw.MUTED))
                continue
            fv = float(v)
            y0, y1 = sorted((sy(0), sy(fv)))
            shown = f"{100 * fv:.0f}%" if percent else fmt_num(fv)
            parts.append(
                f'<rect x="{draw.coord(x + 1)}" y="{draw.coord(y0)}" width="{draw.coord(bar_w - 2)}" height="{draw.coord(max(y1 - y0, 0.5))}" '
                f'fill="{draw.PALETTE[si % len(draw.PALETTE)]}"><title>{esc(f"{g} — {s}: {shown}")}</title></rect>'
            )
            parts.append(draw.svg_text(x + bar_w / 2, (y0 - 4) if fv >= 0 else (y1 + 12), shown, anchor="middle", size=11))
        parts.append(draw.svg_text(left + (gi + 0.5) * slot, top + plot_h + 18, gnames[gi], anchor="middle", size=12,
                          tip=g if gnames[gi] != g else None))
    if not n_g:
        draw.no_data(parts, left + plot_w / 2, top + plot_h / 2)
    parts.append("</svg>")
    return "".join(parts)
