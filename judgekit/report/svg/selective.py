"""The coverage-agreement chart of selective judging: for each judge of a cascade, its agreement
with the humans on the items it keeps against the share it keeps, as its confidence threshold
falls; the cascade's points at several targets; the target ``1 - alpha`` as a dashed line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.report.svg.lines import LineStyle, line_chart


def coverage_agreement_chart(
    curves: Mapping[str, Sequence[Mapping[str, Any]]],
    cascade: Sequence[Mapping[str, Any]],
    *,
    target: float,
    title: str = "Coverage and agreement with the humans (calibration items)",
) -> str:
    """``curves``: judge -> points ``{"coverage", "agreement"}``; ``cascade``: the cascade's
    ``{"coverage", "agreement"}`` at several alphas. Names are escaped by :func:`line_chart`."""
    series: dict[str, list[tuple[float, float]]] = {
        str(name): sorted((float(p["coverage"]), float(p["agreement"])) for p in pts)
        for name, pts in curves.items() if pts
    }
    if cascade:
        series["cascade (calibrated at each alpha)"] = sorted(
            (float(p["coverage"]), float(p["agreement"])) for p in cascade)
    low = min([target, *[y for pts in series.values() for _, y in pts]], default=target)
    return line_chart(series, title=title, x_label="coverage (share of items kept)",
                      y_label="agreement on kept items", y_range=(max(0.0, low - 0.05), 1.0),
                      hline=target, style=LineStyle(ci="none"))


__all__ = ["coverage_agreement_chart"]
