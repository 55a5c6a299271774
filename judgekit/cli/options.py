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
