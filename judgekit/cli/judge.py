"""``judgekit judge`` (run a judge panel) and ``judgekit export ratings``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli.options import InputPath, OutputPath, export_file_options, store_option
from judgekit.core.console import echo
from judgekit.errors import JudgekitError
from judgekit.store.database import Store

if TYPE_CHECKING:
    from judgekit.judges.panelfile import Panel


@click.command("judge")
@click.argument("panel_file", metavar="PANEL.yaml", type=InputPath(dir_okay=False, path_type=Path))
@store_option
@click.option("--only", "only", multiple=True, help="Run only this judge id (repeatable).")
@click.option("--reparse", is_flag=True,
              help="Re-parse the stored raw completions with the current parser; makes no calls.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Live progress bar (default: on when stderr is a terminal).")
@click.option("--dry-run", is_flag=True,
              help="Send nothing: print how many calls a run would make and their estimated cost.")
@click.option("--no-wait", is_flag=True,
              help="Batch-mode judges: submit and collect what has ended, then exit (run again later).")
@click.option("--emit-batch", "emit_dir", type=OutputPath(file_okay=False, path_type=Path), default=None,
              help="Send nothing: write the pending calls as OpenAI Batch files (DIR/JUDGE.001.jsonl) "
                   "for vllm run-batch or a batch API.")
@click.option("--ingest-batch", "ingest", multiple=True,
              type=InputPath(exists=True, dir_okay=False, path_type=Path),
              help="Record the answers of a batch output file (vllm run-batch, OpenAI Batch) as a run "
                   "would (repeatable).")
@click.option("--worker", "worker", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="Run as a named worker (NAME, else host:pid) beside others on one store; the "
                   "summary adds the whole run's progress. Put it after PANEL.yaml.")
@click.option("--status", is_flag=True,
              help="Send nothing: print the whole run's progress (answered, pending, leased by "
                   "each live worker) from the store.")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON on stdout (no text).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors (the exit code tells the result).")
def judge_cmd(
    panel_file: Path,
    store_path: str,
    only: tuple[str, ...],
    reparse: bool,
    show_progress: bool | None,
    dry_run: bool,
    no_wait: bool,
    as_json: bool,
    quiet: bool = False,
    emit_dir: Path | None = None,
    ingest: tuple[Path, ...] = (),
    worker: str | None = None,
    status: bool = False,
) -> None:
    """Run a judge panel over items; ratings go to the store (resumable, cached).

    \b
    The panel file names the rubric, the items and the judges:
      rubric: refusal
      items: items.jsonl            # item_id, prompt or messages, response, metadata
      judges:
        - {id: haiku, model: "anthropic:claude-haiku-4-5", trials: 3, concurrency: 16}
        - {id: local, model: "openai-compatible:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct"}
        - {id: keywords, model: "rules:refusal-keywords"}
    A rubric per framing, chosen from an item column, or {{name}} of the rubric filled from it:
      rubric_by: {column: framing, rubrics: {1: leak_direct.yaml, 7: leak_elaboration.yaml}}
      variables: [framing_instruction]      # with rubric: leak_framed.yaml
    (see docs/panels.md; agreement per framing: judgekit agree --panel panel.yaml --by framing)
    A call already answered is never sent again: rerunning after a crash sends only what is
    missing. Exit 0 when the run finished (failed calls are stored as status=error and retried
    by the next run), 1 when it could not finish, 2 on bad input.

    \b
    Several runs on one store split the work: each call is sent by the run that claimed it
    (a lease in the store), so starting a second run beside a slow one sends nothing twice.
    A run ends when nothing is left to claim and says how many calls another run is still
    answering. Claims last 120 s (JUDGEKIT_LEASE_S sets other seconds), renewed while the run
    is alive and released when it ends; those of a killed run are free at once on the same
    machine (its process is gone), elsewhere once they expire. Many machines, one panel:
    `judge PANEL --worker NAME` on each, one --store; `--status` shows all (docs/scale.md).

    A judge on one's own GPUs, offline: --emit-batch DIR, then vllm run-batch -i DIR/JUDGE.001.jsonl
    -o out.jsonl --model MODEL, then --ingest-batch out.jsonl (docs/panels.md, "Batch files").

    \b
    Example:
      judgekit judge panel.yaml --store study.db --dry-run    # calls and cost, nothing sent
      judgekit judge panel.yaml --store study.db
      judgekit agree --rubric refusal --store study.db
    """
    from judgekit.judges.lease import lease_seconds, worker_name
    from judgekit.judges.panel import load_panel, run_panel
    from judgekit.judges.progress import RichProgress
    from judgekit.judges.reparse import reparse_panel
    from judgekit.judges.run_progress import WorkerReport, run_progress

    panel = load_panel(panel_file)
    only_ids = list(only) or None
    if status:
        others = (reparse, dry_run, no_wait, emit_dir is not None, bool(ingest), worker is not None)
        return _status(panel, store_path, only_ids, as_json=as_json, others=others)
    if emit_dir is not None or ingest:
        return _batch_files(panel, store_path, emit_dir, ingest, only_ids, as_json=as_json, quiet=quiet,
                            other_modes=(reparse, dry_run, no_wait))
    lease_seconds(os.environ)  # a bad JUDGEKIT_LEASE_S is refused before a store is created
    name = worker_name(worker)  # so is a bad worker name
    with _panel_store(store_path, reparse=reparse, dry_run=dry_run) as store:
        if reparse:
            return _print(reparse_panel(panel, store, only=only_ids), as_json=False, quiet=False)
        progress = RichProgress(enabled=False if quiet or as_json else show_progress)  # its console on stderr, made if a bar is drawn
        summary = run_panel(panel, store, only=only_ids, progress=None if dry_run else progress,
                            dry_run=dry_run, wait=not no_wait, worker=name)
        report = WorkerReport(name, summary, run_progress(panel, store, only=only_ids)) \
            if name and not dry_run else summary
    _print(report, as_json=as_json, quiet=quiet)
    if summary.interrupted:
        sys.exit(130)
    if not summary.complete:
        sys.exit(1)


def _print(report: Any, *, as_json: bool, quiet: bool) -> None:
    """A summary (run, worker, re-parse) as JSON on stdout, or its lines."""
    if as_json:
        import json

        click.echo(json.dumps(report.as_dict(), indent=1, default=str))
    elif not quiet:
        for line in report.lines():
            echo(line)


def _status(panel: Panel, store_path: str, only: list[str] | None, *, as_json: bool,
            others: tuple[bool, ...]) -> None:
    """``--status``: the whole run's progress from an existing store; sends and writes nothing
    (refused beside the options that run or change something, ``others``)."""
    from judgekit.judges.run_progress import run_progress

    if any(others):
        raise JudgekitError("--status only reads the store; run it without --reparse, --dry-run, "
                            "--no-wait, --emit-batch, --ingest-batch and --worker.")
    with Store.open_existing(store_path) as store:
        _print(run_progress(panel, store, only=only), as_json=as_json, quiet=False)


def _batch_files(panel: Panel, store_path: str, emit_dir: Path | None, ingest: tuple[Path, ...],
                 only: list[str] | None, *, as_json: bool, quiet: bool,
                 other_modes: tuple[bool, bool, bool]) -> None:
    """``--emit-batch`` (the store only read, as by a dry run) or ``--ingest-batch``; refused
    with ``--reparse``, ``--dry-run`` or ``--no-wait`` (``other_modes``)."""
    from judgekit.cli.judge_batch import check_batch_options, run_batch_files

    reparse, dry_run, no_wait = other_modes
    check_batch_options(emit_dir, ingest, reparse=reparse, dry_run=dry_run, no_wait=no_wait)
    if ingest and store_path != ":memory:" and not Path(store_path).exists():
        from judgekit.judges.batchingest import check_batch_outputs

        check_batch_outputs(panel, list(ingest), only=only)  # a bad file creates no store
    with _panel_store(store_path, reparse=False, dry_run=emit_dir is not None) as store:
        run_batch_files(panel, store, emit_dir, ingest, only=only, as_json=as_json, quiet=quiet)


def _panel_store(store_path: str, *, reparse: bool, dry_run: bool) -> Store:
    """The store a panel runs on: ``--reparse`` re-parses what is stored (a mistyped --store is
    an error, not a new empty store); a dry run writes nothing, so creates no store either (a
    store that does not exist yet has nothing answered, every call is pending)."""
    if reparse:
        return Store.open_existing(store_path)
    if dry_run and store_path != ":memory:" and not Path(store_path).exists():
        return Store(":memory:")
    return Store(store_path)


@click.group("export")
def export_group() -> None:
    """Export tables from the store: ratings (with tokens and cost), items, or judge calls (raw answers).

    Example: judgekit export ratings --format csv --out ratings.csv
    """


@export_group.command("ratings")
@export_file_options
@click.option("--rubric", "rubric_name", default=None, help="Only this rubric (name, name@version or path).")
@click.option("--rater", "raters", multiple=True, help="Only this rater id (repeatable).")
@click.option("--view", "view", default=None,
              help="Only the labels stored under this view of --rubric (those imported with "
                   "import --view), e.g. --rubric refusal --view binary.")
@click.option("--items", "with_items", is_flag=True,
              help="Add each item's metadata columns (model, category, ...) after the rating's.")
@click.option("--epoch", is_flag=True,
              help="created_at as seconds since 1970 (default: ISO 8601 in UTC).")
def export_ratings_cmd(
    store_path: str, fmt: str | None, out: Path, rubric_name: str | None, raters: tuple[str, ...],
    view: str | None = None, with_items: bool = False, epoch: bool = False,
) -> None:
    """Write the long ratings table, with each judge call's tokens and cost.

    \b
    Columns: item_id, rater_id, rater_kind, rubric, rubric_hash, label, value, trial, status,
    rationale, created_at (ISO 8601 UTC; --epoch: seconds), source, judge_spec, input_tokens, output_tokens, cached_tokens,
    cost_usd, latency_s, attempts (call columns are empty for humans and cached reuse),
    match_rule, match_string (what fired in a rule judge's answer: the refusal-pool string or
    keyword of rules:knowledge-leak, as configured; empty otherwise).

    \b
    Example:
      judgekit export ratings --store demo.db --format parquet --out ratings.parquet
      judgekit export ratings --store leak.db --rater leak-rules --out leak.csv   # + match_string
      judgekit export ratings --rubric refusal --view binary --out binary_labels.csv
      judgekit export ratings --items --out ratings_with_metadata.csv   # + model, category, ...
    """
    from judgekit.judges.export import ratings_with_calls
    from judgekit.rubric.model import load_rubric

    if view is not None and not rubric_name:
        raise JudgekitError(f"--view {view} is a view of a rubric; give the rubric too: --rubric "
                            f"NAME --view {view}.")
    with Store.open_existing(store_path) as store:
        rubric = load_rubric(rubric_name) if rubric_name else None
        if rubric is not None and view is not None:
            from judgekit.rubric.views import rubric_view

            rubric = rubric_view(rubric, view)
        df = ratings_with_calls(store, rubric=rubric, raters=list(raters) or None)
        if with_items and not df.empty:
            from judgekit.io.export_items import with_item_metadata

            df = with_item_metadata(df, store)
    if not epoch:
        from judgekit.io.export_items import iso_times

        df = iso_times(df)
    if df.empty:
        raise JudgekitError(
            f"Store {store.path} has no ratings{' for these filters' if rubric or raters else ''}; "
            "nothing to export."
        )
    _write_export(df, out, fmt, "ratings")


def _write_export(df: Any, out: Path, fmt: str | None, what: str) -> None:
    """An export's table into ``out`` in ``fmt`` (else the format its ending names), and the line
    saying so."""
    from judgekit.io.tables import write_table

    if fmt is None and out.suffix.lower().lstrip(".") not in ("csv", "jsonl", "parquet"):
        raise JudgekitError(f"{out}: cannot tell the format from the ending; pass --format csv|jsonl|parquet.")
    write_table(df, out, fmt)
    click.echo(f"Wrote {len(df)} {what} to {out}.")


@export_group.command("items")
@export_file_options
def export_items_cmd(store_path: str, fmt: str | None, out: Path) -> None:
    """Write the stored items: item_id, prompt, messages, response and every metadata column.

    A panel file's `items:` can read it: the panel then judges the stored items under their
    stored ids (the recipe after `import --id-from content`, see docs/import.md).

    \b
    Example:
      judgekit export items --store study.db --out items.jsonl
    """
    from judgekit.io.export_items import items_table

    with Store.open_existing(store_path) as store:
        df = items_table(store)
    if df.empty:
        raise JudgekitError(f"Store {store.path} has no items; nothing to export.")
    _write_export(df, out, fmt, "items")


@export_group.command("calls")
@export_file_options
@click.option("--judge", "judges", multiple=True, help="Only this judge id (repeatable).")
def export_calls_cmd(store_path: str, fmt: str | None, out: Path, judges: tuple[str, ...]) -> None:
    """Write every judge call with its raw completion (to audit abstentions and parsing).

    \b
    Columns: key, judge_id, spec, params, rubric, item_id, trial, raw, status, label, rationale,
    error, input_tokens, output_tokens, cached_tokens, cost_usd, latency_s, attempts, ...

    \b
    Example:
      judgekit export calls --store demo.db --judge scripted-llm --out calls.jsonl
    """
    from judgekit.judges.export import calls_table

    with Store.open_existing(store_path) as store:
        df = calls_table(store, judges=list(judges) or None)
    if df.empty:
        raise JudgekitError(f"Store {store.path} has no judge calls{' for these judges' if judges else ''}; "
                            "nothing to export.")
    _write_export(df, out, fmt, "calls")


COMMANDS: list[click.Command] = [judge_cmd, export_group]
