"""The raw-vs-corrected tables of ``analyze ... --correct`` in the terminal (presentation only)."""

from __future__ import annotations

from rich.console import Console

from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.analysis.terminal import ci, fmt, print_table
from judgekit.core.console import safe_text


def print_correction(console: Console, result: AnalysisResult) -> None:
    """Each ``corrected*`` table: model (and slice), n, raw [95% CI], n labelled, corrected
    [95% CI]; a group whose correction was refused prints its sentence below the table."""
    for t in result.tables:
        if t.key != "corrected" and not t.key.startswith("corrected_by_"):
            continue
        frame = t.frame
        slice_col = [str(c) for c in frame.columns[1:2] if t.key != "corrected"]
        rows = [[str(r["model"]), *[fmt(r[c]) for c in slice_col], fmt(r["n_total"]),
                 ci(r, "raw", "raw_ci_low", "raw_ci_high"), fmt(r["n_labelled"]),
                 ci(r, "corrected", "ci_low", "ci_high") if r["note"] == "" else "— (see note)"]
                for _, r in frame.iterrows()]
        method = str(frame["method"].iloc[0]) if len(frame) else ""
        print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "),
                    ["model", *slice_col, "n", "raw [95% CI]", "n labelled",
                     f"corrected ({method}) [95% CI]"], rows, not result.trusted)
        for _, r in frame.iterrows():
            if r["note"]:
                where = " / ".join(str(r[c]) for c in ["model", *slice_col])
                console.print(f"  [yellow]note:[/yellow] {safe_text(where)}: {safe_text(r['note'])}")
