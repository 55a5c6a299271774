"""Overlay two runs of one analysis on the same charts: raw vs corrected, judge vs reference.

The analyses draw one layer per chart. To compare two estimates of the same figures — the raw
(judge-only) figures beside the judge-error-corrected ones, or the judge's figures beside the
reference's on the human-labelled items — run the analysis twice and pass both results'
charts here: each chart of ``primary`` gets the chart of the same key in ``secondary`` as its
dashed overlay layer (:attr:`judgekit.analysis.result.Chart.overlay`), and ``layers`` names the
two layers in the legend and the caption.

Example::

    raw = calibration(judge_ratings, items, harm, rubric=r, verdicts=v)
    ref = calibration(reference_ratings, labelled_items, harm, rubric=r, verdicts=v)
    raw.charts = overlay_charts(raw.charts, ref.charts, ("judge", "reference, labelled items"))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from judgekit.analysis.result import Chart

__all__ = ["overlay_charts"]


def overlay_charts(primary: Sequence[Chart], secondary: Sequence[Chart], layers: tuple[str, str]) -> list[Chart]:
    """``primary``'s charts, each with the ``secondary`` chart of the same key as its overlay
    (a chart without a partner is kept as it is). The title says what is compared:
    ``C(t) — judge vs reference, labelled items``. Charts are copied, never changed in place."""
    if len(layers) != 2 or not all(isinstance(x, str) and x for x in layers):
        raise ValueError(f"overlay_charts: layers must be two names, e.g. ('raw', 'corrected'); got {layers!r}.")
    other = {c.key: c for c in secondary}
    out: list[Chart] = []
    for c in primary:
        o = other.get(c.key)
        if o is None:
            out.append(replace(c))
            continue
        out.append(replace(c, title=f"{c.title} — {layers[0]} vs {layers[1]}",
                           overlay={k: list(v) for k, v in o.series.items()}, layers=layers))
    return out
