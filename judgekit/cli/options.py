"""Options shared by several command groups."""

from __future__ import annotations

from collections.abc import Iterable

import click

from judgekit.store.database import DEFAULT_STORE

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
