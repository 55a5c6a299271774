"""Options shared by several command groups."""

from __future__ import annotations

import click

from judgekit.store import DEFAULT_STORE

store_option = click.option(
    "--store",
    "store_path",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="JUDGEKIT_STORE",
    help="SQLite store file (env JUDGEKIT_STORE).",
)
