"""Core commands: rubrics, import, agree, gate, demo."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli.options import (
    InputPath,
    OutputPath,
    by_columns,
    json_option,
    name_list,
    quiet_option,
    result_options,
    store_note,
    store_option,
    write_json,
)
from judgekit.core.console import clean, echo, lazy_console, safe_text
from judgekit.errors import JudgekitError
from judgekit.store.database import Store, has_ratings

if TYPE_CHECKING:
    from judgekit.io.ratings import ImportSummary
    from judgekit.rubric.model import Rubric

console = lazy_console()


@click.command("rubrics")
@click.argument("name", required=False)
def rubrics_cmd(name: str | None) -> None:
    """List the shipped rubrics, or show one (its codes, values, aliases and hash).

    Example: judgekit rubrics refusal
    """
    from judgekit.rubric.model import available_rubrics, load_rubric

    if name is None:
        for n in available_rubrics():
            r = load_rubric(n)
            console.print(safe_text(f"{r.id:<22} {r.level:<8} {r.hash}  {r.title}"))
        return
    r = load_rubric(name)
    console.print(f"[bold]{safe_text(r.title)}[/bold]  {safe_text(r.ref)}  ({safe_text(r.level)})")
    import shutil
    import textwrap

    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    for lab in r.labels:
        # the description in full, wrapped at word boundaries under its own column
        head = clean(f"  {lab.code:<26} {lab.value:<5g} ")
        # cleaned first (control characters as visible escapes), so the wrap measures what prints
        text = textwrap.fill(clean(" ".join(lab.description.split())), width=width, initial_indent=head,
                             subsequent_indent=" " * len(head), break_long_words=False,
                             break_on_hyphens=False)
        echo(text, lines=True)
    if r.aliases:
        echo(textwrap.fill(clean("aliases: " + ", ".join(f"{a}→{c}" for a, c in r.aliases.items())), width=width,
                           initial_indent="  ", subsequent_indent="    ", break_long_words=False,
                           break_on_hyphens=False), lines=True)
    for p in r.alias_patterns:  # plain echo: a pattern's backslashes and brackets are not markup
        echo(f"  pattern: {p.pattern} → {p.code}")
    for rg in r.alias_ranges:
        echo(f"  range: {rg.describe()} → {rg.code}")
    for vname, view in r.views.items():
        groups = ", ".join(f"{vc} = {' + '.join(k for k, v in view.codes.items() if v == vc)}"
                           for vc in view.view_codes)
        pos = f"; positive: {view.positive}" if view.positive else ""
        echo(f"  view {vname}: {groups}{pos}")


@click.command("import")
@click.argument("file", type=InputPath(dir_okay=False, path_type=Path))
@click.option("--rubric", "rubric_name", required=True, help="Rubric name (e.g. refusal) or YAML path.")
@click.option("--raters", default=None, help="Wide format: human rater columns, 'a,b' or 'alice=col_a,bob=col_b'.")
@click.option("--judges", default=None, help="Wide format: judge columns, same syntax as --raters.")
@click.option("--reference", default=None, help="Wide format: the adjudicated (gold) label column, e.g. 'final=final_label'.")
@click.option("--kind", "rater_kind", type=click.Choice(["human", "judge", "reference"]), default="human",
              show_default=True, help="Long format: rater kind when the file has no rater_kind column.")
@click.option("--items", "items_path", default=None, type=InputPath(dir_okay=False, path_type=Path),
              help="Optional items file whose metadata columns are joined on item_id (or --join-on COLUMN).")
@click.option("--id-prefix", default=None,
              help="Put this before every item id of the file (e.g. 'gpt4:' when several models' files reuse ids).")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "json", "parquet", "inspect"]),
              default=None,
              help="File format (default: from the file ending; .eval and Inspect .json logs are inspect).")
@click.option("--scorers", default=None,
              help="Inspect logs: the scorers to import as judges, 'a,b' (default: all).")
@click.option("--view", "view", default=None,
              help="A view of the rubric (its 'views:'), e.g. --view binary: the labels are in the view's codes and are stored under the view (refusal@1:binary), never as full-rubric labels.")
@click.option("--map", "column_map", default=None,
              help="Read the file's columns as judgekit's, judgekit_name=file_column: "
                   "e.g. --map item_id=_id,response=Response,prompt=question.")
@click.option("--items-map", "items_column_map", default=None,
              help="--map for the --items file, e.g. --items-map prompt=Behavior.")
@click.option("--key-column", default=None,
              help="JSON object of lists {key: [row, ...]}: each key becomes this column, "
                   "e.g. --key-column behavior_id.")
@click.option("--flatten", is_flag=True,
              help="Nested JSON objects (or Parquet structs) become a.b columns, e.g. "
                   "{\"meta\": {\"model\": \"x\"}} -> meta.model.")
@click.option("--id-from", "id_from", type=click.Choice(["content", "row"]), default=None,
              help="No id column: make item ids from the prompt/messages + response (content: the "
                   "same text gets the same id in every file; after --join-on, the text as stored) or the "
                   "file name, a digest of its path and the row number (row: labels.csv@1a2b3c4d:1).")
@click.option("--join-on", "join_on", default=None,
              help="Join the --items file on this column instead of item_id: --join-on behavior_id, "
                   "or --join-on behavior_id=BehaviorID when the items file names it otherwise.")
@click.option("--set", "set_values", multiple=True, metavar="COLUMN=VALUE",
              help="A metadata column with this value for every item of the file (repeatable), "
                   "e.g. --set model=gpt-4o --set dataset=xstest; stored as text, as written.")
@result_options
def import_cmd(
    file: Path,
    rubric_name: str,
    raters: str | None,
    judges: str | None,
    reference: str | None,
    rater_kind: str,
    items_path: Path | None,
    id_prefix: str | None,
    fmt: str | None,
    scorers: str | None,
    view: str | None,
    column_map: str | None,
    items_column_map: str | None,
    key_column: str | None,
    flatten: bool,
    id_from: str | None,
    join_on: str | None,
    set_values: tuple[str, ...],
    json_out: str | None,
    quiet: bool,
    store_path: str,
) -> None:
    """Import human or judge labels into the store (CSV, JSONL, Parquet, Inspect logs).

    \b
    Long format: one row per rating with item_id, rater_id, label (+ rater_kind, trial, ...).
    Wide format: one row per item, one column per rater, named with --raters/--judges/--reference.
    Inspect AI log (.eval or .json): the samples are the items, each scorer is a judge.
    Labels go through the rubric's aliases; any other column is item metadata usable with --by.

    \b
    Example:
      judgekit import annotations/xstest-v2/xstest_v2_labels.csv --rubric refusal \\
        --raters annotation_1,annotation_2 --reference final=final_label \\
        --judges string_match=strmatch_label,gpt4=gpt4_label
      judgekit import logs/2025-05-01T10-00-00_refusal_x.eval --rubric refusal \\
        --scorers model_graded_qa
      judgekit import binary_labels.csv --rubric refusal --view binary --raters alice,bob
      judgekit import gpt4o.csv --rubric refusal --raters ann1,ann2 --set model=gpt-4o

    \b
    Files from other benchmarks, as they are (see docs/import.md):
      judgekit import judged.csv --rubric harm.yaml --map item_id=_id,response=Response \\
        --raters human_1,human_2 --judges llama=llama_guard
      judgekit import by_behavior.json --key-column behavior_id --id-from content \\
        --rubric harm.yaml --judges gpt4=gpt4_verdict --items behaviors.csv --join-on behavior_id
    """
    from judgekit.io.constants import parse_set_options
    from judgekit.io.mapping import parse_column_map
    from judgekit.io.ratings import ImportOptions, import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.deferred import DeferredStore
    from judgekit.store.rating_input import parse_rater_map

    rubric = _with_view(load_rubric(rubric_name), view)
    file = _local_file(file)
    set_columns = parse_set_options(set_values)
    file_map = parse_column_map(column_map, source=str(file))
    items_map = parse_column_map(items_column_map, source=str(items_path or file), option="--items-map")
    # created on first use, after the input is read and validated: a failed first import leaves no store
    with DeferredStore(store_path) as store:
        summary = import_ratings(store, file, rubric, ImportOptions(
            raters=parse_rater_map(raters), judges=parse_rater_map(judges),
            reference=parse_rater_map(reference), rater_kind=rater_kind, fmt=fmt,
            items_path=items_path, id_prefix=id_prefix,
            scorers=[x.strip() for x in scorers.split(",") if x.strip()] if scorers else None,
            column_map=file_map, items_column_map=items_map, key_column=key_column,
            flatten=flatten, id_from=id_from, join_on=join_on, set_columns=set_columns,
        ))
    _print_import(summary, json_out, quiet)


def _local_file(file: Path) -> Path:
    """The file to import: a Hugging Face dataset file (``hf://``, docs/integrations/hf.md) as
    its local copy; one sentence when there is no such file, before the store is opened (a typo
    must not leave an empty store behind)."""
    if str(file).startswith("hf:/"):
        from judgekit.integrations.hf import local_copy

        file = local_copy(file)
    if not file.exists():
        raise JudgekitError(f"{file}: no such file; check the path.")
    return file


def _print_import(summary: ImportSummary, json_out: str | None, quiet: bool) -> None:
    """What an import wrote: as JSON (``--json``) and as lines (unless ``--quiet`` or the JSON
    goes to stdout)."""
    if json_out is not None:
        doc = dataclasses.asdict(summary)
        doc["written"] = summary.written._asdict() if summary.written is not None else None
        write_json(json_out, json.dumps(doc, indent=1, default=str))
    if quiet or json_out == "-":
        return
    for line in summary.lines():
        echo(line)


@click.command("agree")
@click.option("--rubric", "rubric_name", default=None,
              help="Rubric name or YAML path (required unless --panel is given).")
@click.option("--panel", "panel_file", default=None, type=InputPath(dir_okay=False, path_type=Path),
              help="A panel file with rubric_by/variables: one report per framing under its own "
                   "rubric, and a pooled one where the codes agree, e.g. --panel panel.yaml --by framing.")
@click.option("--by", "by", multiple=True, help="Item metadata column to slice by (repeatable, or comma-separated).")
@click.option("--judges", default=None, help="Judge rater ids to report (default: all).")
@click.option("--humans", default=None, help="Human rater ids (default: all).")
@click.option("--reference", default=None, help="Reference rater id, or 'consensus' (default: the adjudicated rater if any).")
@click.option("--resamples", default=1000, show_default=True, help="Bootstrap resamples for the CIs.")
@click.option("--seed", default=0, show_default=True)
@click.option("--sample", "sample", default=None,
              help="Only the items of this sample (see `judgekit sample`).")
@click.option("--random-only", is_flag=True,
              help="With --sample: only its random share, so the estimate is unbiased.")
@json_option
@quiet_option
@click.option("--view", "view", default=None,
              help="A view of the rubric (its 'views:'), e.g. --view binary: judges rated under the full rubric are collapsed into the view and compared with labels given in it.")
@click.option("--between", "between", default=None,
              help="Compare two raters with each other on every item both rated, no human "
                   "needed, per --by slice and by human_rated (yes/no), with 95% CIs, e.g. "
                   "--between judge-a,judge-b or --between judge-a,panel:majority.")
@store_option
def agree_cmd(
    rubric_name: str | None,
    panel_file: Path | None,
    by: tuple[str, ...],
    judges: str | None,
    humans: str | None,
    reference: str | None,
    resamples: int,
    seed: int,
    sample: str | None,
    random_only: bool,
    json_out: str | None,
    quiet: bool,
    view: str | None,
    between: str | None,
    store_path: str,
) -> None:
    """Agreement report: each judge against the human reference, each human, and the ceiling.

    A sample chosen by `judgekit sample` puts disagreements first, so agreement on all of its
    items is biased low; --sample NAME --random-only reports on its random share only.

    \b
    Example:
      judgekit agree --rubric refusal --by model --by prompt_safety --json agreement.json
      judgekit agree --rubric refusal --json | jq '.slices[0].judges'    # JSON on stdout
      judgekit agree --rubric refusal --sample pilot --random-only
      judgekit agree --rubric refusal --view binary
      judgekit agree --rubric refusal --between keywords,scripted-llm --by model
      judgekit agree --panel leak-panel.yaml --by framing    # each framing under its own rubric
    """
    from judgekit.agreement.report import agreement_report
    from judgekit.cli.agree_panel import one_annotator_warning
    from judgekit.report.terminal import print_agreement
    from judgekit.rubric.model import load_rubric

    cols = by_columns(by)
    if panel_file is not None:
        from judgekit.cli.agree_panel import agree_by_panel

        for given, option, instead in (
            (view, "--view", "agree per framing rubric with --rubric NAME --view VIEW"),
            (between, "--between", "compare two judges per framing rubric with --rubric NAME --between A,B"),
        ):
            if given is not None:
                raise JudgekitError(f"{option} cannot be combined with --panel yet; {instead}.")

        agree_by_panel(panel_file, rubric_name=rubric_name, by=cols, judges=_split(judges),
                       humans=_split(humans), reference=reference, resamples=resamples, seed=seed,
                       sample=sample, json_out=json_out, store_path=store_path, quiet=quiet)
        return
    if rubric_name is None:
        raise JudgekitError("agree needs --rubric NAME (or --panel PANEL.yaml for a panel with "
                            "a rubric per framing).")
    rubric = _with_view(load_rubric(rubric_name), view)
    if between is not None:
        _agree_between(rubric, between, cols, resamples=resamples, seed=seed, json_out=json_out,
                       store_path=store_path, quiet=quiet,
                       others={"--judges": judges, "--humans": humans, "--reference": reference,
                               "--sample": sample})
        return
    if random_only and not sample:
        raise JudgekitError("--random-only needs --sample NAME (the sample whose random share to use).")
    with Store.open_existing(store_path) as store:
        has_judges = has_ratings(store, rubric.id, rubric.hash, "judge")
        only_items = _sample_items(store, sample, random_only=random_only) if sample else None
        report = agreement_report(
            _viewed(store, rubric), rubric=rubric, only_items=only_items, by=cols,
            judges=_split(judges), humans=_split(humans), reference=reference,
            n_resamples=resamples, seed=seed,
        ).to_dict()
        warning = one_annotator_warning(_viewed(store, rubric), rubric, report["reference"])
    if warning:  # one annotator as the truth while others exist: its agreement with the rest
        echo(warning, err=True)
    store_note(store_path, has_judges, rubric.id, rubric.hash, quiet=quiet or json_out == "-")
    if not quiet and json_out != "-":
        print_agreement(console, report)
    write_json(json_out, json.dumps(report, indent=1))


def _sample_items(store: Store, sample: str, *, random_only: bool) -> list[str]:
    """The items of ``sample`` (``--random-only``: of its random share), with a note when the
    sample is not a simple random one."""
    from judgekit.annotation.sampling import sample_design

    design = sample_design(store, sample)
    if random_only:
        design = design[design["reason"] == "random"]
        if design.empty:
            raise JudgekitError(
                f"Sample {sample!r} has no random share; draw it with a random fraction "
                "(see `judgekit sample --help`)."
            )
    elif (design["reason"] != "random").any():
        console.print(
            f"[yellow]note:[/yellow] sample {safe_text(repr(sample))} is not a simple random sample "
            "(disagreements and strata were chosen first); add --random-only for an "
            "unbiased estimate."
        )
    return design["item_id"].astype(str).tolist()


def _agree_between(rubric: Any, spec: str, by: list[str], *, resamples: int, seed: int,
                   json_out: str | None, store_path: str, others: dict[str, Any],
                   quiet: bool = False) -> None:
    """``agree --between A,B``: the two raters compared on every item both rated."""
    from judgekit.agreement.between import between_report, parse_pair
    from judgekit.report.analysis_terminal import print_table
    from judgekit.report.between import INTRO, between_table, between_warnings

    given = [k for k, v in others.items() if v]
    if given:
        raise JudgekitError(f"--between compares two raters with each other; drop {given[0]}.")
    pair = parse_pair(spec)
    with Store.open_existing(store_path) as store:
        comparison = between_report(_viewed(store, rubric), rubric=rubric, pair=pair, by=by,
                                    n_resamples=resamples, seed=seed)
    header, rows, _ = between_table([comparison])
    if not quiet and json_out != "-":
        print_table(console, f"{pair[0]} vs {pair[1]} under {rubric.id}", header[1:],
                    [r[1:] for r in rows], False)
        echo(INTRO)
        for w in between_warnings([comparison]):
            echo(f"note: {w}")
    write_json(json_out, json.dumps(comparison, indent=1))


@click.command("gate")
@click.argument("policy", type=InputPath(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", default=".", show_default=True, type=OutputPath(file_okay=False, path_type=Path),
              help="Folder for verdict.json and verdict.md.")
@click.option("--sequential", is_flag=True, default=False,
              help="Decide RCE_t and Drift(t) with anytime-valid confidence sequences read round by round, so you "
                   "may label in batches and stop when they are decided (docs/gate.md).")
@click.option("--round-size", type=click.IntRange(1, 1_000_000), default=20, show_default=True,
              help="With --sequential: the least new conversations per round; a round is one or more whole imports "
                   "of labels in the order they were stored (a file's rows are never cut into rounds).")
@click.option("--rounds", default=None,
              help="With --sequential: the recorded samples (labelling batches) in order, comma-separated, e.g. "
                   "pilot,batch2 — each is one round (instead of --round-size); each must be recorded before its labels.")
@result_options
def gate_cmd(policy: Path, out_dir: Path, sequential: bool, round_size: int, rounds: str | None,
             json_out: str | None, quiet: bool, store_path: str) -> None:
    """Apply a gate policy: writes verdict.json; exit 0 pass, 1 fail, 3 inconclusive, 2 bad input.

    Each check and judge is pass, fail or inconclusive (its CI straddles the threshold, or too
    few items); an inconclusive judge gets a label budget: about how many more units (human-rated
    items, double-rated items, conversations, or items judged) would likely decide it, or
    "undecidable" and why. With analysis_fidelity the verdict also says which figures it
    certifies. --sequential reads RCE_t and Drift(t) round by round (docs/gate.md). Exit 0
    when every judge passes, 1 when any fails, 3 when none fails but some is inconclusive, 2 for
    bad input. A policy with `view: NAME` gates under a
    view of its rubric (e.g. view: binary; see docs/rubrics.md).

    \b
    Example:
      judgekit gate annotations/xstest-v2/policy.yaml --out results/
      judgekit gate policy.yaml --json | jq '.judges[].state'    # the verdict on stdout
    """
    from judgekit.core.atomic import ensure_folder, write_text_atomic
    from judgekit.gate.run import explain, gate_reference_warning, run_gate
    from judgekit.report.escape import md_list
    from judgekit.report.terminal import print_verdict
    from judgekit.verdict.log import record_verdict

    with Store.open_existing(store_path) as store:
        ensure_folder(out_dir)  # before the gate records its verdict in the store
        if rounds is not None and not sequential:
            raise JudgekitError("--rounds is read by --sequential; add --sequential (or drop --rounds).")
        verdict, _ = run_gate(store, policy, sequential=round_size if sequential else None,
                              rounds=name_list("--rounds", rounds), record=False)
        warning = gate_reference_warning(store, policy, verdict["reference"])
        if warning:  # stderr only: the verdict and the exit code are the same without it
            echo(warning, err=True)
        store_note(store_path, has_ratings(store, verdict["rubric"], verdict.get("rubric_hash"), "judge"),
                   verdict["rubric"], verdict.get("rubric_hash"), quiet=quiet or json_out == "-")
        lines = explain(verdict)
        text = json.dumps(verdict, indent=1)
        # the digest is recorded only once every output is written and verdict.json is on disk:
        # a write that fails leaves the store as it was
        path = write_text_atomic(out_dir / "verdict.json", text)
        write_text_atomic(out_dir / "verdict.md", "\n".join(["# Verdict", "", *md_list(lines)]) + "\n")
        if json_out not in (None, "-"):
            write_text_atomic(json_out, text)
        _durable(path)
        record_verdict(store, verdict)
    if not quiet and json_out != "-":
        print_verdict(console, verdict, lines)
        echo(f"wrote {path}")
    if json_out not in (None, "-"):
        echo(f"wrote {json_out}")
    write_json("-" if json_out == "-" else None, text)
    raise SystemExit({"pass": 0, "fail": 1, "inconclusive": 3}[verdict["state"]])


@click.command("demo")
@click.option("--out", "out_dir", default="judgekit-demo", show_default=True,
              type=OutputPath(file_okay=False, path_type=Path), help="Output folder (store, JSON, Markdown, HTML).")
@click.option("--resamples", default=1000, show_default=True, help="Bootstrap resamples for the CIs.")
@click.option("--verbose", "-v", is_flag=True, help="Print every step's tables (agreement, gate, probes, analyses).")
def demo_cmd(out_dir: Path, resamples: int, verbose: bool) -> None:
    """Run the whole pipeline offline on shipped data and write a report.

    Imports the XSTest v2 human labels and two automatic judges, computes their agreement overall,
    by safe/unsafe prompt and by model, checks the published human–human figures, gates both
    judges with the shipped policy, runs an offline judge panel and the refusal analyses, and
    writes JSON, Markdown and HTML. Prints a short summary (what ran, each verdict, where the
    report is); --verbose prints every step's tables as well.

    \b
    Example:
      judgekit demo --out judgekit-demo
    """
    from judgekit.demo import run_demo

    run_demo(out_dir, console=console, n_resamples=resamples, verbose=verbose)


def _with_view(rubric: Rubric, view: str | None) -> Rubric:
    """``rubric``, or its view ``view`` (:mod:`judgekit.rubric.views`)."""
    if view is None:
        return rubric
    from judgekit.rubric.views import rubric_view

    return rubric_view(rubric, view)


def _viewed(store: Store, rubric: Rubric) -> Any:
    """``store``, seen through ``rubric`` when it is a view."""
    from judgekit.rubric.views import ViewRubric, ViewSource

    return ViewSource(store, rubric) if isinstance(rubric, ViewRubric) else store


def _durable(path: Path) -> None:
    """Flush ``path`` and its folder's entry to the disk (a verdict is recorded only after)."""
    import contextlib
    import os

    from judgekit.core.oserrors import os_error

    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise os_error(exc, "cannot write it") from None
    with contextlib.suppress(OSError):  # not every file system syncs a folder
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _split(text: str | None) -> list[str] | None:
    if not text:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


COMMANDS: list[click.Command] = [rubrics_cmd, import_cmd, agree_cmd, gate_cmd, demo_cmd]
