"""The terminal: the console judgekit prints on, and the agreement and verdict tables.

Presentation only, below both the command line and the demo (which prints the same tables
without going through :mod:`judgekit.cli`).
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def make_console() -> Console:
    """A console that does not squeeze tables to 80 columns when output is piped to a file."""
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 150)


def f3(fig: dict | None, ci: bool = True) -> str:
    """``0.812 [0.79, 0.83]`` or ``undefined``."""
    if fig is None:
        return "—"
    if fig["value"] is None:
        return "undef."
    s = f"{fig['value']:.3f}"
    if ci and fig.get("low") is not None:
        s += f" [{fig['low']:.2f}, {fig['high']:.2f}]"
    return s


def pct(fig: dict | None) -> str:
    if fig is None or fig["value"] is None:
        return "—"
    return f"{100 * fig['value']:.1f}%"


def _metric(report: dict) -> str:
    return "weighted_kappa" if report["level"] in ("ordinal", "interval") else "kappa"


def print_agreement(console: Console, report: dict[str, Any]) -> None:
    """The agreement report as terminal tables: overall, per class, and per slice."""
    ref = report["reference"]
    ref_txt = ref["rater"] + f" ({ref['kind']})" if ref["rater"] else "consensus of the humans"
    metric = _metric(report)
    mname = "weighted κ" if metric == "weighted_kappa" else "Cohen κ"
    console.print(
        f"[bold]Agreement under {report['rubric']}[/bold] ({report['level']}; hash {report['rubric_hash']}); "
        f"reference: {ref_txt}; humans: {', '.join(report['humans']) or 'none'}; "
        f"{int(report['confidence'] * 100)}% bootstrap CIs over items ({report['n_resamples']} resamples)."
    )
    overall = report["slices"][0]
    t = Table(title="Judges against the reference (all items)", title_justify="left")
    for col in ("rater", "n", "abstain", "error", "% agree", mname, "Krippendorff α", "Gwet AC1", "Δα joining humans"):
        t.add_column(col, justify="right" if col != "rater" else "left")
    hc = overall["human_ceiling"]
    t.add_row(
        "[italic]human–human ceiling[/italic]", str(hc["n"]), "", "", pct(hc["percent_agreement"]),
        f3(hc["kappa"]), f3(hc["alpha"]), f3(hc["ac1"]), "",
    )
    for name, j in overall["judges"].items():
        v = j["vs_reference"]
        t.add_row(
            escape(name), str(v["n"]), str(j["n_abstain"]), str(j["n_error"]), pct(v["percent_agreement"]),
            f3(v[metric]), f3(v["alpha"]), f3(v["ac1"]),
            "—" if j["alpha_delta"] is None else f"{j['alpha_delta']:+.3f}",
        )
    console.print(t)

    t = Table(title="Per class: recall / precision against the reference", title_justify="left")
    t.add_column("judge")
    labels = report["labels"]
    for lab in labels:
        t.add_column(lab, justify="right")
    for name, j in overall["judges"].items():
        cm = j["vs_reference"]["confusion"]
        cells = []
        for lab in labels:
            r, p, s = cm["recall"][lab], cm["precision"][lab], cm["support"][lab]
            rs = "—" if r is None else f"{r:.2f}"
            ps = "—" if p is None else f"{p:.2f}"
            warn = " [red]✗[/red]" if (r is not None and s >= 10 and r < 0.5) else ""
            cells.append(f"{rs} / {ps} (n={s}){warn}")
        t.add_row(escape(name), *cells)
    console.print(t)

    for by in report["by"]:
        rows = [s for s in report["slices"] if s["by"] == by]
        t = Table(title=f"By {by}", title_justify="left")
        t.add_column(by)
        t.add_column("n", justify="right")
        t.add_column("humans % agree", justify="right")
        t.add_column(f"humans {mname}", justify="right")
        for name in report["judges"]:
            t.add_column(f"{escape(name)} {mname}", justify="right")
            t.add_column(f"{escape(name)} % agree", justify="right")
        for s in rows:
            cells = [escape(s["key"]), str(s["n_items"]), pct(s["human_ceiling"]["percent_agreement"]),
                     f3(s["human_ceiling"]["kappa"])]
            for name in report["judges"]:
                j = s["judges"].get(name)
                if j is None:
                    cells += ["—", "—"]
                    continue
                v = j["vs_reference"]
                cells += [f3(v[metric]), pct(v["percent_agreement"])]
            t.add_row(*cells)
        console.print(t)
    for w in report.get("warnings", []):
        console.print(f"[yellow]note:[/yellow] {escape(w)}")


def print_verdict(console: Console, verdict: dict[str, Any], lines: list[str]) -> None:
    status = "[green]PASS[/green]" if verdict["passed"] else "[red]FAIL[/red]"
    console.print(f"[bold]Gate for {verdict['rubric']}[/bold]: {status}")
    t = Table(show_header=True, title_justify="left")
    for col in ("judge", "check", "figure", "threshold", "n", "result"):
        t.add_column(col)
    for j in verdict["judges"]:
        for c in j["checks"]:
            fig = c["figure"]
            thr = c["threshold"]
            t.add_row(
                escape(j["judge"]), escape(c["name"]),
                f"{fig:.3f}" if isinstance(fig, float) else str(fig),
                f"{thr:.3f}" if isinstance(thr, float) else str(thr),
                str(c["n"]),
                "[green]pass[/green]" if c["passed"] else "[red]FAIL[/red]",
            )
    console.print(t)
    for line in lines:
        console.print(line, markup=False)
