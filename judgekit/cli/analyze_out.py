"""What the ``judgekit analyze`` commands share: ``--where`` and ``--by``, the progress bar, the
corrected figures beside the raw ones, and the output (terminal tables, ``--out DIR``, ``--json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli.options import checked_where
from judgekit.core.console import echo, lazy_console, resolved
from judgekit.store.database import Store

if TYPE_CHECKING:  # the analyses (pandas, numpy) are imported by the commands that run them
    from judgekit.analysis.result import AnalysisResult

console = lazy_console()
err_console = lazy_console(stderr=True)


def add_correction_tables(result: AnalysisResult, store: Store, rubric: Any, ratings: Any, items: Any,
                    *, method: str, reference: str | None, weights: dict[str, float],
                    figure: str, slices: list[str], model_col: str, n_boot: int,
                    seed: int, cluster_col: str | None = None) -> None:
    from judgekit.agreement.adjudicate import reference_warning
    from judgekit.analysis.correction.design import Reference
    from judgekit.analysis.correction.tables import add_correction, correction_tables
    from judgekit.analysis.inputs import reference_ratings
    from judgekit.analysis.options import ItemColumns, Resampling

    ref, ref_name = reference_ratings(store, rubric, reference)
    warning = reference_warning(store, rubric, ref_name)
    if warning:
        echo(warning, err=True)
    tables = correction_tables(ratings, Reference(ref, ref_name), items, rubric=rubric,
                               weights=weights, figure=figure, method=method,
                               columns=ItemColumns(model=model_col, prompt=cluster_col, by=slices),
                               resampling=Resampling(max(n_boot, 1), seed))
    add_correction(result, tables, method=method, reference_name=ref_name)
def where_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--where", "where", multiple=True, callback=checked_where,
        help="Keep only the items whose COLUMN is one of the values (repeat: all must hold), e.g. "
             "--where severity=4,5 --where tactic=roleplay.")(f)


def sliced(items: Any, frames: list[Any], where: tuple[str, ...], by: list[str]) -> tuple[Any, list[Any], str | None]:
    """``--where`` applied to the items and the ratings, and the ``--by a+b`` columns added."""
    from judgekit.analysis.slicing import cross_columns, parse_where, restrict

    items, frames, note = restrict(items, frames, parse_where(where))
    return cross_columns(items, by), frames, note


def population(where: tuple[str, ...], everything: int, kept: int) -> list[tuple[str, list[str]]]:
    """The part of the items ``--where`` restricts an analysis to, as its trust guard reads it
    (:class:`judgekit.analysis.trust.TrustContext`): none when the filter kept all ``everything``
    items, since the analysis is then the one without it."""
    from judgekit.analysis.slicing import parse_where

    return [] if kept == everything else [(c, list(v)) for c, v in parse_where(where)]


def noted(result: AnalysisResult, note: str | None, where: tuple[str, ...]) -> AnalysisResult:
    if note:
        result.notes.append(note)
        result.meta["where"] = list(where)
    return result


@contextmanager
def progress_bar(label: str, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (transient: it disappears when done)."""
    if quiet:
        yield lambda advance, total: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeRemainingColumn(), console=resolved(err_console), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(advance: int, total: int) -> None:
            bar.update(task, advance=advance, total=total)

        yield update


# --------------------------------------------------------------------------- output
def finish(result: AnalysisResult, out_dir: Path | None, json_out: str | None = None) -> None:
    """The result's files (``--out DIR``) and JSON (``--json``: on stdout with ``-``, else into the
    file); with ``--json`` alone stdout holds the JSON only, and what was written is said on stderr."""
    to_stdout = json_out == "-"
    if out_dir is not None:
        from judgekit.report.analysis import write_results
        from judgekit.report.analysis_terminal import written_summary

        echo(written_summary(write_results(result, out_dir), out_dir), err=to_stdout)
    elif json_out is None:
        console.print("[dim](pass --out DIR to write JSON, Markdown, HTML with charts, SVG and CSV)[/dim]")
    if json_out is not None:
        from judgekit.cli.options import write_json
        from judgekit.report.analysis import to_json

        write_json(json_out, json.dumps(to_json(result), indent=1, ensure_ascii=False))


def print_corrections(result: AnalysisResult, correct: str | None) -> None:
    if correct:
        from judgekit.report.active_design import print_active_designs
        from judgekit.report.analysis_terminal import print_correction, print_ppi

        print_correction(console, result)
        print_ppi(console, result)
        print_active_designs(console, result)


