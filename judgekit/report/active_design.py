"""What an active labelling design bought, per corrected figure (``--correct ppi`` on a sample
drawn by ``judgekit sample --active``): the design, the labels used, the effective number of
labels, the labels a uniform sample would need for the same interval width and the saving.

The figures are the rows of the result's ``ppi_*`` tables that carry ``uniform_labels``
(:func:`judgekit.analysis.correction.active.active_mean_row`); the per-tier rows are in the
files only. Saving = 1 − labels used / uniform labels (the labelled conversations of the
figure's domain against what uniform sampling, with the same estimator, needs for the width).
"""

from __future__ import annotations

import math

from rich.console import Console

from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.report.analysis_terminal import fmt, print_table

#: the tables summarised (their per-turn rows included); per-tier rows stay in the files
TABLES = ("ppi_active_rates", "ppi_summary", "ppi_by_turn")


def saving_text(used: float, uniform: float) -> str:
    """``used`` labels against ``uniform``'s for the same width, as a saving (``−`` when a
    uniform sample would need fewer; ``—`` when unknown)."""
    if math.isinf(uniform) and uniform > 0:
        return "uniform cannot reach it"
    if not (math.isfinite(uniform) and uniform > 0 and used > 0):
        return "—"
    return f"{1 - used / uniform:.0%}".replace("-", "−")


def print_active_designs(console: Console, result: AnalysisResult) -> None:
    """One table per active ``ppi_*`` table of ``result``: per figure, the design, labels used
    (of all), effective labels, uniform labels at the same width and the saving."""
    sample = (result.meta.get("ppi") or {}).get("sample")
    design = f"active, sample {sample}" if sample else "active"
    for t in result.tables:
        if t.key not in TABLES or "uniform_labels" not in t.frame.columns:
            continue
        frame = t.frame
        keys = [str(c) for c in frame.columns[:list(frame.columns).index("figure")]]
        rows = []
        for _, r in frame.iterrows():
            used, uni = float(r["n_labelled"]), float(r["uniform_labels"])
            rows.append([*[fmt(r[k]) for k in keys], str(r["figure"]), design,
                         f"{fmt(r['n_labelled'])}/{fmt(r['n_clusters'])}",
                         fmt(r["effective_labels"], 0),
                         "—" if math.isinf(uni) or not math.isfinite(uni) else fmt(uni, 0),
                         saving_text(used, uni)])
        unit = str(frame["unit"].iloc[0]) if len(frame) else "conversation"
        title = t.title.removeprefix(f"{UNTRUSTED} — ")
        print_table(console, f"Labels bought by the design — {title}",
                    [*keys, "figure", "design", f"{unit}s labelled/all", "effective labels",
                     "uniform labels, same width", "saving"], rows, not result.trusted)
