"""``judgekit store copy SRC DST``: move a study between a SQLite file and a PostgreSQL database
(either way, or file to file), verified by digests (:mod:`judgekit.store.copy`)."""

from __future__ import annotations

import click

from judgekit.core.console import echo


@click.group("store")
def store_group() -> None:
    """Work on a store as a whole (SQLite file or PostgreSQL database)."""


@click.command("copy")
@click.argument("src")
@click.argument("dst")
def copy_cmd(src: str, dst: str) -> None:
    """Copy the study in store SRC into the new, empty store DST (a file path or a
    postgresql://user@host/db URL); each table's digest is checked on both sides before the
    copy commits."""
    from judgekit.store.copy import copy_store
    from judgekit.store.database import Store

    with Store.open_existing(src) as source, Store(dst) as target:
        result = copy_store(source, target)
        echo(f"copied {source.path} → {target.path}:")
        for table, n in result.rows.items():
            echo(f"  {table:<15} {n:>9} rows  sha256 {result.digests[table][:16]}")


store_group.add_command(copy_cmd)

COMMANDS: list[click.Command] = [store_group]
