"""The per-prompt lines of ``analyze distribution`` in the terminal (presentation only).

The summaries per model resample prompts; with one or few prompts their bootstrap interval is
degenerate, so the terminal also shows each prompt's own refusal rate with its Wilson interval
and its counts (``not constant (3 of 5)``), prompts that are not constant first.
"""

from __future__ import annotations

from rich.console import Console

from judgekit.analysis.exchangeability import EXCHANGEABLE
from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.analysis.terminal import ci, fmt, print_table
from judgekit.core.console import safe_text

#: prompts printed at most (the rest are in the per_prompt table of --out)
MAX_PROMPTS = 15


def print_prompts(console: Console, result: AnalysisResult, *, limit: int = MAX_PROMPTS) -> None:
    """Per prompt: model, unit (and sample group), rated samples, rate [Wilson 95%], behaviour."""
    frame = next((t for t in result.tables if t.key == "per_prompt"), None)
    if frame is None or frame.frame.empty:
        return
    pp = frame.frame
    unit = [str(c) for c in result.meta.get("prompt_unit", [])]
    extra = [str(c) for c in result.meta.get("slices", []) if c in pp.columns and c not in unit]
    order = pp.assign(_nc=pp["behaviour"].str.startswith("not constant")).sort_values(
        "_nc", ascending=False, kind="stable")
    shown = order.head(limit)
    rows = [[str(r["model"]), *[fmt(r[c]) for c in unit + extra], fmt(r["n_rated"]),
             ci(r, "rate", "ci_low", "ci_high"), str(r["behaviour"])]
            for _, r in shown.iterrows()]
    title = frame.title.removeprefix(f"{UNTRUSTED} — ")
    print_table(console, title, ["model", *unit, *extra, "rated", "rate [Wilson 95%]",
                                 "behaviour"], rows, not result.trusted)
    n_nc = int(order["_nc"].sum())
    rest = len(pp) - len(shown)
    more = f"; {rest} more prompts in the per_prompt table (--out)" if rest > 0 else ""
    console.print(f"  [dim]{n_nc} of {len(pp)} prompts not constant{safe_text(more)}; "
                  f"{safe_text(EXCHANGEABLE)}.[/dim]")
