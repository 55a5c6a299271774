"""An :class:`~judgekit.analysis.result.AnalysisResult` as terminal tables (presentation only).

What ``judgekit analyze`` and ``judgekit demo`` print: the result's title, definitions and notes,
then its summary tables (per model and slice, not per prompt); with ``--verbose`` or ``--correct``
also the per-prompt lines of a distribution (:func:`print_prompts`: with one or few prompts the
bootstrap interval of a summary is degenerate, so each prompt's own rate shows with its Wilson
interval), the raw-vs-corrected tables (:func:`print_correction`) and the PPI-corrected figures
(:func:`print_ppi`: raw, human-only and corrected per figure; RCE_t | tier rows and the
per-prompt table are in the files only). The files are written by
:func:`judgekit.report.analysis.write_results`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from judgekit.analysis.columns import interval_text
from judgekit.analysis.distribution.exchangeability import EXCHANGEABLE
from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.core.console import clean, safe_text


def fmt(v: Any, digits: int = 3) -> str:
    """A cell: ``0.123`` (``digits`` decimals, no ``-0.000``), ``—`` for missing, else ``str``."""
    if v is None or v is pd.NA:
        return "—"
    if isinstance(v, float):
        if v != v:
            return "—"
        return f"{v:.{digits}f}" if abs(v) >= 0.5 * 10**-digits else f"{0.0:.{digits}f}"
    return str(v)


def ci(row: pd.Series, value: str, lo: str, hi: str) -> str:
    """``0.812 [0.79, 0.83]`` from the columns ``value``, ``lo`` and ``hi`` of ``row``
    (:func:`judgekit.analysis.columns.interval_text`: ``0.812 (no CI)`` without bounds, ``—``
    without a value; the bounds with 2 decimals to keep terminal tables narrow)."""
    return interval_text(row[value], row[lo], row[hi], 3, bound_digits=2)


def print_table(console: Console, title: str, header: list[str],
                rows: Sequence[Sequence[str | Text]], untrusted: bool) -> None:
    """A terminal table. Strings are data (model names, slice values, criterion names) and are
    printed as they are, never read as rich markup: ``gpt-4o [temp=0.7]`` keeps its brackets and
    ``[/x]`` cannot crash the command; control characters in them are shown as escapes
    (:func:`judgekit.core.console.clean`). Pass a :class:`Text` for a styled cell."""
    full = f"{UNTRUSTED} — {title}" if untrusted else title
    t = RichTable(title=Text(clean(full)), title_justify="left")
    for i, h in enumerate(header):
        t.add_column(Text(clean(h)), justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*[c if isinstance(c, Text) else Text(clean(c)) for c in r])
    console.print(t)


def _print_untrusted(console: Console, result: AnalysisResult) -> None:
    """The UNTRUSTED banner of a result run without a passing verdict (nothing otherwise)."""
    if not result.trusted:
        console.print(Text(f" {UNTRUSTED}: {clean(str(result.untrusted_reason))} ", style="bold white on red"))


def _print_head(console: Console, result: AnalysisResult) -> None:
    """The banner, the title, the definitions and the notes of ``result``."""
    _print_untrusted(console, result)
    console.print(Text(clean(result.title), style="bold"))
    for k, v in result.definitions.items():
        console.print(f"  [dim]{safe_text(k)}:[/dim] {safe_text(v)}")
    for n in result.notes if result.trusted else result.notes[1:]:
        console.print(f"  [yellow]note:[/yellow] {safe_text(n)}")


def print_distribution(console: Console, result: AnalysisResult) -> None:
    """A refusal distribution: its head, then the refusal rate per model and per slice."""
    _print_head(console, result)
    bad = not result.trusted
    for t in result.tables:
        if t.key != "by_model" and not t.key.startswith("by_"):
            continue
        slice_col = [c for c in t.frame.columns[1:2] if t.key != "by_model"]
        rows = [
            [str(r["model"]), *[fmt(r[c]) for c in slice_col], fmt(r["n_prompts"]),
             fmt(r["n_samples"]), ci(r, "mean_rate", "ci_low", "ci_high"),
             fmt(r["pooled_rate"]),
             ci(r, "share_not_constant", "not_constant_ci_low", "not_constant_ci_high"),
             fmt(r["single_sample_prompts"])]
            for _, r in t.frame.iterrows()
        ]
        print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "),
                    ["model", *slice_col, "prompts", "samples", "mean rate [95% CI]", "pooled",
                     "not constant [95% CI]", "1-sample prompts"], rows, bad)
    for t in result.tables:  # the emitted refusal-pool strings (rules:knowledge-leak)
        if t.key == "pool_strings" or t.key.startswith("pool_strings_by_"):
            cols = list(t.frame.columns)
            print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "), cols,
                        [[fmt(r[c]) for c in cols] for _, r in t.frame.iterrows()], bad)


def print_calibration(console: Console, result: AnalysisResult) -> None:
    """A calibration: its head, then C, RCE and Drift per model, per turn, per slice, and the
    benign look-alikes."""
    _print_head(console, result)
    bad = not result.trusted
    summary = result.table("summary")
    print_table(console, "Calibration per model", [
        "model", "convs", "C [95% CI]", "tied", "C ties=½", "RCE [95% CI]", "E[R−H]",
        "Drift(last) [95% CI]"], [
        [str(r["model"]), fmt(r["n_clusters"]), ci(r, "C", "C_ci_low", "C_ci_high"),
         fmt(r["tied_share"]), ci(r, "C_half", "C_half_ci_low", "C_half_ci_high"),
         ci(r, "RCE", "RCE_ci_low", "RCE_ci_high"), fmt(r["signed_error"]),
         ci(r, "drift_last_turn", "drift_last_ci_low", "drift_last_ci_high")]
        for _, r in summary.iterrows()], bad)
    if any(t.key == "by_turn" for t in result.tables):
        bt = result.table("by_turn")
        print_table(console, "C(t) and Drift(t) per turn", [
            "model", "turn", "C(t) [95% CI]", "RCE_t", "Drift(t) [95% CI]", "mean R"], [
            [str(r["model"]), fmt(r["turn"]), ci(r, "C", "C_ci_low", "C_ci_high"),
             fmt(r["RCE"]), ci(r, "drift", "drift_ci_low", "drift_ci_high"), fmt(r["mean_R"])]
            for _, r in bt.iterrows()], bad)
    for t in result.tables:
        if t.key.startswith("by_") and t.key not in ("by_turn", "by_tier_turn") \
                and not t.key.endswith("_turn") and len(t.frame.columns) > 1:
            col = t.frame.columns[1]
            print_table(console, f"Calibration per model and {col}", [
                "model", col, "C [95% CI]", "RCE [95% CI]", "Drift(last) [95% CI]"], [
                [str(r["model"]), str(r[col]), ci(r, "C", "C_ci_low", "C_ci_high"),
                 ci(r, "RCE", "RCE_ci_low", "RCE_ci_high"),
                 ci(r, "drift_last_turn", "drift_last_ci_low", "drift_last_ci_high")]
                for _, r in t.frame.iterrows()], bad)
    if any(t.key == "lookalikes" for t in result.tables):
        lk = result.table("lookalikes")
        print_table(console, "Benign look-alikes (over-refusal)", [
            "model", "prompts", "mean R [95% CI]", "R >= 0.75 [95% CI]"], [
            [str(r["model"]), fmt(r["n_prompts"]), ci(r, "mean_R", "mean_R_ci_low",
                                                      "mean_R_ci_high"),
             ci(r, "over_refusal_rate", "over_ci_low", "over_ci_high")]
            for _, r in lk.iterrows()], bad)


def print_criteria(console: Console, result: AnalysisResult) -> None:
    """Experiment criteria: the banner (if untrusted), then one row per criterion with its
    value, threshold, per-seed values and PASS/FAIL."""
    _print_untrusted(console, result)
    table = result.table("criteria")
    print_table(console, "Experiment criteria", [
        "criterion", "rater", "n", "value [95% CI]", "threshold", "per seed", "result"], [
        [str(r["criterion"]), str(r["rater"]), fmt(r["n"]), ci(r, "value", "ci_low", "ci_high"),
         f"{r['op']} {r['threshold']:g}" if r["op"] else "—",
         r["per_values"] if isinstance(r["per_values"], str) and r["per_values"] else "—",
         Text.assemble(("PASS", "green") if r["result"] == "PASS" else ("FAIL", "red")
                       if r["result"] == "FAIL" else ("descriptive", "dim"),
                       f" ({clean(r['reason'])})" if r["reason"] else "")]
        for _, r in table.iterrows()], not result.trusted)
    if result.meta.get("figures"):  # a judge trusted for some criteria only: say which, and what is left out
        for n in result.notes if result.trusted else result.notes[1:]:
            console.print(f"  [yellow]note:[/yellow] {safe_text(n)}")


def written_summary(written: Sequence[Path], out_dir: Path) -> str:
    """``wrote N files to DIR (open DIR/<kind>.html)``: the line printed once
    :func:`judgekit.report.analysis.write_results` has written ``written``."""
    html = next(p for p in written if p.suffix == ".html")
    return f"wrote {len(written)} files to {out_dir} (open {html})"


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


def _has(r: pd.Series, col: str) -> bool:
    v = r.get(col)
    return v is not None and not pd.isna(v)


def _miss(r: pd.Series) -> str:
    """The judge's miss, raw − corrected (signed; "—" where either is missing)."""
    from judgekit.verdict.numbers import signed

    if not (_has(r, "raw") and _has(r, "corrected")):
        return "—"
    return signed(float(r["raw"]) - float(r["corrected"]))


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
                 ci(r, "corrected", "ci_low", "ci_high") if _has(r, "ci_low")
                 else "— (see note)", _miss(r)]
                for _, r in frame.iterrows()]
        method = str(frame["method"].iloc[0]) if len(frame) else ""
        units = set(frame["n_unit"]) if "n_unit" in frame.columns else set()
        n = f"n ({units.pop()}s)" if len(units) == 1 else "n"  # what n counts (one_number)
        print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "),
                    ["model", *slice_col, n, "raw [95% CI]", "n labelled",
                     f"corrected ({method}) [95% CI]", "miss (raw − corrected)"], rows,
                    not result.trusted)
        for _, r in frame.iterrows():
            if r["note"]:
                where = " / ".join(str(r[c]) for c in ["model", *slice_col])
                console.print(f"  [yellow]note:[/yellow] {safe_text(where)}: {safe_text(r['note'])}")


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
                         ci(r, "corrected", "ci_low", "ci_high") if _has(r, "ci_low")
                         else "— (see note)", _miss(r),
                         fmt(r["effective_labels"], 0), fmt(r["lam"], 2)])
        unit = str(frame["unit"].iloc[0])
        print_table(console, t.title.removeprefix(f"{UNTRUSTED} — "),
                    [*keys, "figure", f"n ({unit}s labelled/all)", "raw [95% CI]",
                     "human-only [95% CI]", "corrected [95% CI]",
                     "miss", "eff. labels", "λ"],
                    rows, not result.trusted)
        estimators = sorted(set(frame["estimator"].astype(str)))
        console.print(f"  estimator: {safe_text('; '.join(estimators))}; resampling unit: "
                      f"{safe_text(unit)}; miss = raw − corrected (the judge's error)")
        by_note: dict[str, list[str]] = {}
        for _, r in frame.iterrows():
            if r["note"]:
                where = " / ".join(str(r[k]) for k in keys)
                by_note.setdefault(str(r["note"]), []).append(f"{where} {r['figure']}")
        for note, rows_ in by_note.items():
            shown = "; ".join(rows_[:6]) + (f"; and {len(rows_) - 6} more" if len(rows_) > 6
                                             else "")
            console.print(f"  [yellow]note:[/yellow] {safe_text(shown)} — {safe_text(note)}")
