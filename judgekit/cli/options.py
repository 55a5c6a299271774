"""Options shared by several command groups."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import click

from judgekit.core.paths import regular_input, regular_output
from judgekit.store.database import DEFAULT_STORE


class InputPath(click.Path):
    """A path the command reads: a special file (FIFO, device, socket) is refused with one
    sentence before the command runs (see :mod:`judgekit.core.paths`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        regular_input(os.fsdecode(path))
        return path


class OutputPath(click.Path):
    """A path the command writes (a file, or a folder to write files in): a special file there is
    refused with one sentence before anything is written."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        regular_output(os.fsdecode(path))
        return path


store_option = click.option(
    "--store",
    "store_path",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="JUDGEKIT_STORE",
    help="SQLite store file (env JUDGEKIT_STORE).",
)


def by_columns(by: Iterable[str]) -> list[str]:
    """The ``--by`` values as slice specs: repeatable, comma-separated, ``a+b`` crossed."""
    return [c.strip() for v in by for c in v.split(",") if c.strip()]


#: ``--json`` alone: the result as JSON on stdout (the tables then go nowhere, notes to stderr);
#: ``--json PATH``: also write it to that file (a path where a file is meant).
def _json_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--json PATH``: a special file there is refused before the command runs, as for every
    other output path (``-`` is stdout)."""
    if value and value != "-":
        regular_output(value)
    return value


json_option = click.option(
    "--json", "json_out", is_flag=False, flag_value="-", default=None, metavar="[PATH]",
    callback=_json_path,
    help="The result as JSON: on stdout with --json alone (no table), or into PATH with --json PATH.")

quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="Print nothing but errors (files are still written; the exit code tells the result).")


def store_note(store_path: str, has_judges: bool, rubric_id: str, rubric_hash: str | None, *,
               quiet: bool = False) -> None:
    """On stderr, once the command has its result (an error stays one line): which store file it
    read, and a warning when that store held no judge rating under the rubric (``has_judges``
    from :func:`judgekit.store.database.has_ratings`: a mistyped --store, or no panel run yet)."""
    from pathlib import Path

    from judgekit.core.console import echo

    shown = store_path if store_path == ":memory:" else str(Path(store_path).resolve())
    if not quiet:
        echo(f"store: {shown}", err=True)
    if not has_judges:
        echo(f"warning: the store {shown} has no judge ratings for {rubric_id}"
             + (f" (hash {rubric_hash})" if rubric_hash else "")
             + ": run `judgekit judge PANEL.yaml` or import a judge's labels (--judges), "
               "or check --store.", err=True)


def write_json(json_out: str | None, text: str) -> None:
    """``--json``: ``text`` on stdout for ``-``, else into the file (and say where)."""
    if not json_out:
        return
    if json_out == "-":
        click.echo(text)
        return
    from judgekit.core.atomic import write_text_atomic
    from judgekit.core.console import echo

    write_text_atomic(json_out, text)
    echo(f"wrote {json_out}")
