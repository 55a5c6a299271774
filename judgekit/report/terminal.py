"""The agreement and verdict tables on the terminal (rich), for the command line and the demo.

Every piece of user text goes through :func:`judgekit.core.console.safe_text` or a
:class:`~judgekit.core.console.SafeConsole` (see :mod:`judgekit.core.console`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported when something is printed with it, not by ``echo``
    from rich.console import Console
    from rich.table import Table
from judgekit.core.console import clean, resolved, safe_text
from judgekit.verdict.numbers import num


def f3(fig: dict | None, ci: bool = True) -> str:
    """``0.812 [0.79, 0.83]`` or ``undefined``."""
    if fig is None:
        return "—"
    if fig["value"] is None:
        return "undef."
    s = num(float(fig["value"]))
    if ci and fig.get("low") is not None:
        s += f" [{num(float(fig['low']), 2)}, {num(float(fig['high']), 2)}]"
    return s


def pct(fig: dict | None) -> str:
    if fig is None or fig["value"] is None:
        return "—"
    return f"{100 * fig['value']:.1f}%"


def _metric(report: dict) -> str:
    return "weighted_kappa" if report["level"] in ("ordinal", "interval") else "kappa"


def print_grid(console: Console, grid: Any) -> None:
    """A :class:`judgekit.report.trust.Grid` as a terminal table (every cell through
    :func:`safe_text`), with its note underneath."""
    console = resolved(console)
    from rich.table import Table
    t = Table(title=safe_text(grid.title), title_justify="left")
    for i, col in enumerate(grid.header):
        t.add_column(safe_text(col), justify="right" if i in grid.numeric else "left")
    for row in grid.rows:
        t.add_row(*[safe_text(c) for c in row])
    if grid.rows and not fits(console, t) and len(grid.header) > 2:
        t = _grid_long(grid)
    if grid.rows:
        console.print(t)
    else:
        console.print(f"[bold]{safe_text(grid.title)}[/bold]")
    if grid.note:
        console.print(f"[dim]{safe_text(grid.note)}[/dim]")


def print_agreement(console: Console, report: dict[str, Any]) -> None:
    """The agreement report as terminal tables: overall (with the human–human ceiling named for
    what it is), the pairwise human matrix, the leave-one-out ceiling beside each judge,
    coverage, signed bias, per class, per slice (items rated), and precision/recall/F1 per
    class and slice. Slices are printed in the report's order."""
    console = resolved(console)
    from rich.table import Table

    from judgekit.report import trust

    ref = report["reference"]
    ref_txt = ref["rater"] + f" ({ref['kind']})" if ref["rater"] else "consensus of the humans"
    humans = ", ".join(report.get("ceiling_raters") or report["humans"]) or "none"
    metric = _metric(report)
    mname = "weighted κ" if metric == "weighted_kappa" else "Cohen κ"
    console.print(
        f"[bold]Agreement under {safe_text(report['rubric'])}[/bold] ({safe_text(report['level'])}; "
        f"hash {safe_text(report['rubric_hash'])}); reference: {safe_text(ref_txt)}; humans: {safe_text(humans)}; "
        f"{int(report['confidence'] * 100)}% bootstrap CIs over items ({report['n_resamples']} resamples)."
    )
    overall = report["slices"][0]
    hc = overall["human_ceiling"]
    # the pooled ceiling is Fleiss' κ for more than two humans: named so, never "Cohen κ", and on
    # its own line (the like-for-like comparison is the leave-one-out table below)
    console.print(
        f"[italic]human–human ceiling: {safe_text(trust.ceiling_label(overall, metric))}[/italic] {f3(hc.get(metric))}; "
        f"% agree {pct(hc['percent_agreement'])}; Krippendorff α {f3(hc['alpha'])}; Gwet AC1 {f3(hc['ac1'])}; "
        f"n {hc['n']} items rated by two humans or more."
    )
    title, header, judge_rows = _headline_rows(overall, metric, mname)
    console.print(_rater_table(console, title, header, judge_rows))
    for grid in (trust.pairwise_grid(report, overall), trust.loo_grid(report, overall),
                 trust.coverage_grid(report, overall), trust.bias_grid(report, overall)):
        if grid is not None:
            print_grid(console, grid)

    t = Table(title="Per class: recall / precision against the reference", title_justify="left")
    t.add_column("judge")
    labels = report["labels"]
    for lab in labels:
        t.add_column(safe_text(lab), justify="right")
    for name, j in overall["judges"].items():
        cm = j["vs_reference"]["confusion"]
        cells = []
        for lab in labels:
            r, p, s = cm["recall"][lab], cm["precision"][lab], cm["support"][lab]
            rs = "—" if r is None else f"{r:.2f}"
            ps = "—" if p is None else f"{p:.2f}"
            warn = " [red]✗[/red]" if (r is not None and s >= 10 and r < 0.5) else ""
            cells.append(f"{rs} / {ps} (n={s}){warn}")
        t.add_row(safe_text(name), *cells)
    console.print(t)

    for by in report["by"]:
        rows = [s for s in report["slices"] if s["by"] == by]  # the report's order: 1, 2, 10, (missing)
        t = _by_table(report, by, rows, metric, mname)
        if not fits(console, t):  # many judges: one row per slice and judge, not 3 columns per judge
            t = _by_table_long(report, by, rows, metric, mname)
        console.print(t)
    if report["by"]:
        for name in report["judges"]:
            grid = trust.per_class_grid(report, name, wide=False)
            if grid is not None:
                print_grid(console, grid)
    for w in report.get("warnings", []):
        console.print(f"[yellow]note:[/yellow] {safe_text(w)}")


def _headline_rows(overall: dict[str, Any], metric: str, mname: str
                   ) -> tuple[str, tuple[str, ...], list[list[str]]]:
    """The judges' headline table: against the reference, or, with a consensus of several humans,
    against the consensus of the other humans beside the humans on the same items (leave-one-out;
    ``headline`` of :mod:`judgekit.agreement.headline`). Every figure with its n."""
    from judgekit.report import trust

    judges = overall["judges"]
    loo = any((j.get("headline") or {}).get("basis") == "leave-one-out" for j in judges.values())
    rows = []
    for name, j in judges.items():
        v, head = j["vs_reference"], j.get("headline") or {}
        cov = safe_text(trust.coverage_words(j.get("coverage"))) if j.get("coverage") else str(v["n"])
        delta = "—" if j["alpha_delta"] is None else f"{j['alpha_delta']:+.3f}"
        if loo:
            hum = head.get("humans") or {}
            rows.append([safe_text(name), cov, str(j["n_abstain"]), str(j["n_error"]), str(head.get("n")),
                         pct(head.get("percent_agreement")), f3(head.get(metric)), f3(hum.get(metric)),
                         f3((head.get("difference") or {}).get(metric)), delta])
        else:
            rows.append([safe_text(name), cov, str(j["n_abstain"]), str(j["n_error"]), str(v["n"]),
                         pct(v["percent_agreement"]), f3(v[metric]), f3(v["alpha"]), f3(v["ac1"]), delta])
    # the figures' n is its own column unless it is every judge's rated count (then that column says it)
    own_n = loo or any(j["vs_reference"]["n"] != j.get("n_rated") for j in judges.values())
    if not own_n:
        rows = [r[:4] + r[5:] for r in rows]
    if loo:
        return ("Judges against the consensus of the other humans (leave-one-out, all items; "
                "like for like with the humans on the same items)",
                ("rater", "rated of in scope", "abstain", "error", "n", "% agree", mname,
                 f"humans' {mname}, same items", "difference", "Δα joining humans"), rows)
    return ("Judges against the reference (all items)",
            ("rater", "rated of in scope", "abstain", "error", *(("n",) if own_n else ()), "% agree", mname,
             "Krippendorff α", "Gwet AC1", "Δα joining humans"), rows)


def _rater_table(console: Console, title: str, header: tuple[str, ...], rows: list[list[str]]) -> Table:
    """One row per rater (the first cell, already safe), or, when that does not fit the console
    with no cell wrapped, one row per rater and figure (the long layout). The rater column is
    never truncated or wrapped in either."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    widest = max((cell_len(Text.from_markup(r[0]).plain) for r in rows), default=0)
    t = Table(title=title, title_justify="left")
    for i, col in enumerate(header):
        if i == 0:
            t.add_column(col, no_wrap=True, min_width=max(widest, len(col)))
        else:
            t.add_column(col, justify="right")
    for row in rows:
        t.add_row(*row)
    if not rows or fits(console, t):
        return t
    t = Table(title=f"{title} (one row per figure)", title_justify="left")
    t.add_column(header[0], no_wrap=True, min_width=max(widest, len(header[0])))
    t.add_column("figure")
    t.add_column("value", justify="right", no_wrap=True)
    for row in rows:
        for k, (col, cell) in enumerate(zip(header[1:], row[1:], strict=True)):
            t.add_row(row[0] if k == 0 else "", col, cell, end_section=k == len(row) - 2)
    return t


def _grid_long(grid: Any) -> Table:
    """A grid too wide for the terminal, one row per (row, column): the row's name, the
    column's name and the cell."""
    from rich.table import Table
    t = Table(title=f"{safe_text(grid.title)} (one row per figure)", title_justify="left")
    t.add_column(safe_text(grid.header[0]) or " ")
    t.add_column("figure")
    t.add_column("value", justify="right")
    for row in grid.rows:
        for k, (col, cell) in enumerate(zip(grid.header[1:], row[1:], strict=False)):
            t.add_row(safe_text(row[0]) if k == 0 else "", safe_text(col), safe_text(cell),
                      end_section=k == len(row) - 2)
    return t


def fits(console: Console, table: Table) -> bool:
    """Whether ``table`` fits the console's width with no cell wrapped (a header may wrap between
    words): each column as wide as its widest cell, plus the padding and the borders. If it
    does, each column gets that width, so rich wraps the headers only."""
    console = resolved(console)
    from rich.measure import Measurement

    options = console.options.update(width=10**6, max_width=10**6)  # else clamped to the width
    if Measurement.get(console, options, table).maximum <= console.width:
        return True  # fits as it is
    total = 1
    widths = []
    for col in table.columns:
        widest = max((Measurement.get(console, options, c).maximum for c in col.cells), default=0)
        header = Measurement.get(console, options, col.header).minimum if col.header else 0
        widths.append(max(widest, header))
        total += widths[-1] + 3  # a space either side and the border
    if total > console.width:
        return False
    for col, width in zip(table.columns, widths, strict=True):  # so rich wraps headers, not cells
        col.width = width
    return True


def _humans_kappa(report: dict[str, Any]) -> str:
    overall = report["slices"][0]
    return f"humans {safe_text(overall['human_ceiling'].get('kappa_name') or 'κ')}"


def _slice_columns(report: dict[str, Any], by: str, title: str) -> Table:
    """A per-slice table's first columns: the slice, its items in scope and the humans'
    agreement."""
    from rich.table import Table
    t = Table(title=title, title_justify="left")
    t.add_column(safe_text(by))
    t.add_column("in scope", justify="right")
    t.add_column("humans % agree", justify="right")
    t.add_column(_humans_kappa(report), justify="right")
    return t


def _by_table(report: dict[str, Any], by: str, rows: list[dict[str, Any]], metric: str, mname: str) -> Table:
    """One row per slice, three columns per judge (the wide layout)."""
    t = _slice_columns(report, by, f"By {safe_text(by)}")
    for name in report["judges"]:
        t.add_column(f"{safe_text(name)} rated", justify="right")
        t.add_column(f"{safe_text(name)} {mname}", justify="right")
        t.add_column(f"{safe_text(name)} % agree", justify="right")
    for s in rows:
        cells = [safe_text(s["key"]), str(s.get("n_in_scope", s["n_items"])),
                 pct(s["human_ceiling"]["percent_agreement"]), f3(s["human_ceiling"]["kappa"])]
        for name in report["judges"]:
            j = s["judges"].get(name)
            if j is None:
                cells += ["0", "—", "—"]
                continue
            v = j["vs_reference"]
            cells += [str(j["n_rated"]), f3(v[metric]), pct(v["percent_agreement"])]
        t.add_row(*cells)
    return t


def _by_table_long(report: dict[str, Any], by: str, rows: list[dict[str, Any]], metric: str,
                   mname: str) -> Table:
    """One row per slice and judge (the long layout, for many judges): the slice's human
    figures on its first row."""
    t = _slice_columns(report, by, f"By {safe_text(by)} (one row per judge)")
    t.add_column("judge")
    t.add_column("rated", justify="right")
    t.add_column(mname, justify="right")
    t.add_column("% agree", justify="right")
    for s in rows:
        head = [safe_text(s["key"]), str(s.get("n_in_scope", s["n_items"])),
                pct(s["human_ceiling"]["percent_agreement"]), f3(s["human_ceiling"]["kappa"])]
        names = list(report["judges"])
        for k, name in enumerate(names):
            j = s["judges"].get(name)
            if j is None:
                cells = ["0", "—", "—"]
            else:
                v = j["vs_reference"]
                cells = [str(j["n_rated"]), f3(v[metric]), pct(v["percent_agreement"])]
            t.add_row(*(head if k == 0 else [""] * 4), safe_text(name), *cells,
                      end_section=k == len(names) - 1)
    return t


def print_verdict(console: Console, verdict: dict[str, Any], lines: list[str]) -> None:
    console = resolved(console)
    from rich.table import Table
    shown = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]",
             "inconclusive": "[yellow]INCONCLUSIVE[/yellow]"}
    status = shown[verdict.get("state", "pass" if verdict["passed"] else "fail")]
    console.print(f"[bold]Gate for {safe_text(verdict['rubric'])}[/bold]: {status}")
    t = Table(show_header=True, title_justify="left")
    for col in ("judge", "check", "figure", "threshold", "n", "result"):
        t.add_column(col)
    for j in verdict["judges"]:
        for c in j["checks"]:
            fig = c["figure"]
            thr = c["threshold"]
            t.add_row(
                safe_text(j["judge"]), safe_text(c["name"]),
                f"{fig:.3f}" if isinstance(fig, float) else safe_text(fig),
                f"{thr:.3f}" if isinstance(thr, float) else safe_text(thr),
                safe_text(c["n"]),
                {"pass": "[green]pass[/green]", "fail": "[red]FAIL[/red]",
                 "inconclusive": "[yellow]inconclusive[/yellow]"}[c.get("state", "pass" if c["passed"] else "fail")],
            )
    console.print(t)
    for line in lines:
        console.print(clean(line), markup=False)
