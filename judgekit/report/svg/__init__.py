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

from judgekit.report.svg.axes import nice_ticks
from judgekit.report.svg.bars import bar_chart
from judgekit.report.svg.draw import PALETTE
from judgekit.report.svg.heatmaps import heatmap
from judgekit.report.svg.intervals import interval_chart
from judgekit.report.svg.lines import line_chart

__all__ = ["PALETTE", "bar_chart", "heatmap", "interval_chart", "line_chart", "nice_ticks"]
