"""``judgekit judge PANEL --emit-batch DIR`` and ``--ingest-batch FILE``: the batch-file path of
a judge panel (:mod:`judgekit.judges.batchfile`, :mod:`judgekit.judges.batchingest`)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from judgekit.core.console import echo
from judgekit.errors import JudgekitError
from judgekit.judges.panelfile import Panel
from judgekit.store.database import Store


def check_batch_options(emit_dir: Path | None, ingest: tuple[Path, ...], *, reparse: bool,
                        dry_run: bool, no_wait: bool) -> None:
    """``--emit-batch`` and ``--ingest-batch`` each stand alone: any other mode with them is one
    sentence."""
    if emit_dir is not None and ingest:
        raise JudgekitError("--emit-batch writes requests and --ingest-batch reads answers; give one "
                            "of them per run.")
    given = "--emit-batch" if emit_dir is not None else "--ingest-batch"
    for flag, on in (("--reparse", reparse), ("--dry-run", dry_run), ("--no-wait", no_wait)):
        if on:
            raise JudgekitError(f"{given} cannot be combined with {flag}; run them separately.")


def run_batch_files(panel: Panel, store: Store, emit_dir: Path | None, ingest: tuple[Path, ...],
                    *, only: list[str] | None, as_json: bool, quiet: bool) -> None:
    """Emit the panel's pending requests into ``emit_dir`` (the store is only read), or ingest
    the answer files ``ingest`` into the store."""
    if emit_dir is not None:
        from judgekit.judges.batchfile import emit_batch

        emitted = emit_batch(panel, store, emit_dir, only=only)
        lines, data = emitted.lines(), asdict(emitted)
    else:
        from judgekit.judges.batchingest import ingest_batch

        ingested = ingest_batch(panel, store, list(ingest), only=only)
        lines, data = ingested.lines(), asdict(ingested)
    if as_json:
        click.echo(json.dumps(data, indent=1, default=str))
    elif not quiet:
        for line in lines:
            echo(line)


__all__ = ["check_batch_options", "run_batch_files"]
