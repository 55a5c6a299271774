"""Options shared by several command groups."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from judgekit.core.paths import regular_input, regular_output
from judgekit.errors import JudgekitError, excerpt
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


class FiniteFloatRange(click.FloatRange):
    """A float range that also refuses ``nan`` (which no comparison of a range excludes) with one
    sentence."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            name = param.opts[0] if param is not None and param.opts else "the value"
            raise JudgekitError(f"{name} {excerpt(str(value))} is not a number; give a finite number.")
        return number


def name_list(option: str, text: str | None) -> list[str] | None:
    """``a,b`` → ``["a", "b"]`` (None when the option is not given); an empty list, an empty name
    (``a,,b``) or a name given twice is one sentence naming ``option``."""
    if text is None:
        return None
    names = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise JudgekitError(f"{option} {excerpt(text)} has an empty name; write NAME,NAME with no empty entry.")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise JudgekitError(f"{option} {excerpt(text)} names {excerpt(twice)} twice; name each once.")
    return names


def checked_where(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--where COLUMN=VALUE,VALUE``: an empty value (``a,,b``) or one given twice is one sentence."""
    for spec in value:
        col, eq, values = spec.partition("=")
        if eq:
            name_list(f"--where {col.strip()}=", values)
    return value


store_option = click.option(
    "--store",
    "store_path",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="JUDGEKIT_STORE",
    help="Store: a SQLite file, or a PostgreSQL database postgresql://user@host/db (env JUDGEKIT_STORE).",
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
        if os.path.isdir(value):
            raise JudgekitError(f"--json {excerpt(value)} is a folder; give a file path (e.g. "
                                f"{excerpt(os.path.join(value, 'result.json'))}) or --json alone for stdout.")
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
    from judgekit.store.postgres import is_postgres_url, redact_url

    if is_postgres_url(store_path):
        shown = redact_url(store_path)  # a database, named without its password
    else:
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


def stacked(*decorators: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The ``decorators`` applied as if written one above the other, the first on top."""

    def apply(f: Any) -> Any:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


#: ``--json``, ``--quiet`` and ``--store``: the options of a command that reads the store and prints
#: (or writes) a result.
result_options = stacked(json_option, quiet_option, store_option)

#: ``--store``, ``--format`` and ``--out``: the options of an ``export`` command.
export_file_options = stacked(
    store_option,
    click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"]), default=None,
                 help="Output format (default: from the --out file ending)."),
    click.option("--out", "out", required=True, type=OutputPath(dir_okay=False, path_type=Path),
                 help="File to write (written atomically)."),
)
