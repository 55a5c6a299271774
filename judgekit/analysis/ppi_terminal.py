"""The corrected-figure tables (``ppi_*``) in the terminal (presentation only; RCE_t | tier rows
and the per-prompt table are in the files only).

Per row: the figure's keys (model, turn, tier, ...), n (labelled / all resampling units), the
judge's raw figure, the human-only figure on the labelled units and the corrected figure, each
with its 95% interval, the effective number of labels and λ; the estimator and the unit of
resampling once per table; a row that is not estimable or was refused prints its sentence
below the table."""

from __future__ import annotations

from rich.console import Console

from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.analysis.terminal import ci, fmt, print_table
from judgekit.core.console import safe_text


def print_ppi(console: Console, result: AnalysisResult, *, per_prompt: bool = False) -> None:
    """Each ``ppi_*`` table of ``result`` (``ppi_per_prompt`` only with ``per_prompt``)."""
    for t in result.tables:
        if not t.key.startswith("ppi_") or (t.key == "ppi_per_prompt" and not per_prompt):
            continue
        frame = t.frame
        if t.key == "ppi_by_tier_turn":  # RCE_t | tier is in the files; Drift(t | tier) here
            frame = frame[frame["figure"] != "RCE_t | tier"]
        if frame.empty:
            continue
        keys = [str(c) for c in frame.columns[:list(frame.columns).index("figure")]]
        rows = []
        for _, r in frame.iterrows():
            n = f"{fmt(r['n_labelled'])}/{fmt(r['n_clusters'])}"
            rows.append([*[fmt(r[k]) for k in keys], str(r["figure"]), n,
                         ci(r, "raw", "raw_ci_low", "raw_ci_high"),
                         ci(r, "human", "human_ci_low", "human_ci_high"),
                         ci(r, "corrected", "ci_low", "ci_high") if not r["note"]
                         else "— (see note)",
                         fmt(r["effective_labels"], 0), fmt(r["lam"], 2)])
        unit = str(frame["unit"].iloc[0])
        print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "),
                    [*keys, "figure", f"n ({unit}s labelled/all)", "raw [95% CI]",
                     "human-only [95% CI]", "corrected [95% CI]", "eff. labels", "λ"],
                    rows, not result.trusted)
        estimators = sorted(set(frame["estimator"].astype(str)))
        console.print(f"  estimator: {safe_text('; '.join(estimators))}; resampling unit: "
                      f"{safe_text(unit)}")
        by_note: dict[str, list[str]] = {}
        for _, r in frame.iterrows():
            if r["note"]:
                where = " / ".join(str(r[k]) for k in keys)
                by_note.setdefault(str(r["note"]), []).append(f"{where} {r['figure']}")
        for note, rows_ in by_note.items():
            shown = "; ".join(rows_[:6]) + (f"; and {len(rows_) - 6} more" if len(rows_) > 6
                                             else "")
            console.print(f"  [yellow]note:[/yellow] {safe_text(shown)} — {safe_text(note)}")
