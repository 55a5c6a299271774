"""Small dependency-free inline-SVG charts for reports.

Each function returns one ``<svg>`` element as a string, ready to drop into an HTML page (or to
save as a ``.svg`` file: the output is well-formed XML). Every piece of text (titles, labels,
series names, tooltips) is escaped with :func:`judgekit.report.escape.esc`, so labels taken from
data (model names, slice keys, rater ids) cannot inject markup. Missing values (``None``/NaN)
are skipped or marked, never drawn as zero.

Charts scale with the page (``viewBox`` plus ``max-width: 100%``), use a colour-blind-safe
palette (Okabe–Ito) and carry a ``<title>`` for screen readers and tooltips.

Every estimate a line chart draws carries its 95% CI and n where the caller has them: a point is
``(x, y)``, ``(x, y, low, high)``, ``(x, y, low, high, n)`` or ``(x, y, low, high, n, why)`` (or a
mapping with those keys; :mod:`judgekit.report.svg.points`), drawn with a band or whiskers; a
point without an interval gets a hollow marker and ``why`` in its tooltip.

Overlaying two series (the API other parts pass their figures through): ``line_chart(series,
overlay=other, layers=(name_of_series, name_of_other), ...)`` draws ``other`` as a second layer,
dashed with square markers, each of its series in the colour of the series of the same name in
``series``. Use it for raw vs judge-error-corrected estimates (``layers=("raw", "corrected")``)
and for the judge's figures vs the reference's on the human-labelled items (``layers=("judge",
"reference, labelled items")``). From an analysis, set ``Chart.overlay`` and ``Chart.layers``
(:class:`judgekit.analysis.result.Chart`): the HTML page, the SVG files, the caption and the JSON
carry both layers.

>>> svg = line_chart({"gpt4": [(1, 0.8, 0.75, 0.85, 40), (2, 0.7, 0.64, 0.76, 40)]},
...                  overlay={"gpt4": [(1, 0.78), (2, 0.6)]}, layers=("raw", "corrected"),
...                  title="C(t)", x_label="turn", y_label="C")
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

from judgekit.report.svg.bars import bar_chart
from judgekit.report.svg.draw import PALETTE, nice_ticks
from judgekit.report.svg.heatmaps import heatmap
from judgekit.report.svg.intervals import interval_chart
from judgekit.report.svg.lines import LineStyle, line_chart

__all__ = ["PALETTE", "LineStyle", "bar_chart", "heatmap", "interval_chart", "line_chart", "nice_ticks"]
