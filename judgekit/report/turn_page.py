"""The "Agreement per turn" section of the HTML judge report (figures: :mod:`judgekit.report.turns`).

Two charts and a table: every judge's agreement with the reference per turn (95% CI band or
whiskers, n in the tooltips) with the human–human ceiling per turn overlaid dashed, and every
judge's signed bias per turn around the dashed zero line; then the per-turn table.
"""

from __future__ import annotations

from typing import Any

from judgekit.report import svg, turns
from judgekit.report.escape import esc, is_num
from judgekit.report.page import table

__all__ = ["turn_section"]


def _y_range(*layers: turns.Points) -> tuple[float, float]:
    vals = [float(v) for pts in layers for ps in pts.values() for p in ps for v in p[1:4] if is_num(v)]
    return (-1.0, 1.0) if vals and min(vals) < 0 else (0.0, 1.0)


def turn_section(agreement: dict[str, Any], summary: dict[str, Any]) -> str:
    """The section's HTML, or ``""`` when the report has no per-turn slices."""
    grid = turns.turn_grid(agreement, summary["metric"], summary["metric_name"])
    if grid is None:
        return ""
    series, overlay = turns.agreement_by_turn(agreement, summary["metric"])
    name = summary["metric_name"]
    col = turns.turn_by(agreement) or "turn"
    out = ['<p class="small muted">Judges misread multi-turn intent: agreement over all items can hide a '
           "judge that fails on the late turns, and a bias that grows with the turn moves drift figures. "
           "Each point: the figure on the items of that turn, with its 95% CI.</p>", '<div class="charts">']
    out.append("<figure>" + svg.line_chart(
        series, overlay=overlay, layers=("judge vs the reference", "human–human ceiling") if overlay else None,
        title=f"{name} vs the reference, per {col}", x_label=col, y_label=name, y_range=_y_range(series, overlay),
        style=svg.LineStyle(n_label="items rated")) + "<figcaption>" + esc(
        "Band or bars: bootstrap 95% CI over the items of the turn; hollow marker: no CI (reason in the tooltip)."
        + (" Dashed: the human–human ceiling on the same turn." if overlay else
           " No human–human ceiling is drawn: fewer than two humans rated the same items of a turn."))
        + "</figcaption></figure>")
    bias = turns.bias_by_turn(agreement)
    if bias:
        what, bseries = bias
        vals = [abs(float(v)) for ps in bseries.values() for p in ps for v in p[1:4] if is_num(v)]
        span = max([*vals, 0.05])
        out.append("<figure>" + svg.line_chart(
            bseries, title=f"Signed bias per {col} ({what})", x_label=col, y_label="signed bias",
            y_range=(-span, span), hline=0.0, style=svg.LineStyle(n_label="items")) + "<figcaption>" + esc(
            "Dot: the judge's signed bias on the items of the turn; band or bars: bootstrap 95% CI; dashed: no "
            "bias. A line drifting off zero as turns go on is a judge whose error grows with the conversation.")
            + "</figcaption></figure>")
    out.append("</div>")
    out.append(f"<h3>{esc(grid.title)}</h3>" + table(grid.header, grid.rows, numeric=grid.numeric))
    out.append(f'<p class="small muted">{esc(grid.note)}</p>')
    return "".join(out)
