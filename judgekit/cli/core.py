"""Core commands: rubrics, import, agree, gate, demo."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from judgekit.data import parse_rater_map
from judgekit.errors import JudgekitError
from judgekit.rubric import available_rubrics, load_rubric
from judgekit.store import DEFAULT_STORE, Store

console = Console(highlight=False, soft_wrap=True)

store_option = click.option(
    "--store",
    "store_path",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="JUDGEKIT_STORE",
    help="SQLite store file (env JUDGEKIT_STORE).",
)


@click.command("rubrics")
@click.argument("name", required=False)
def rubrics_cmd(name: str | None) -> None:
    """List the shipped rubrics, or show one (its codes, values, aliases and hash).

    Example: judgekit rubrics refusal
    """
    if name is None:
        for n in available_rubrics():
            r = load_rubric(n)
            console.print(f"{r.id:<22} {r.level:<8} {r.hash}  {r.title}")
        return
    r = load_rubric(name)
    console.print(f"[bold]{r.title}[/bold]  {r.ref}  ({r.level})")
    for lab in r.labels:
        console.print(f"  {lab.code:<26} {lab.value:<5g} {lab.description.strip()[:90]}")
    if r.aliases:
        console.print("  aliases: " + ", ".join(f"{a}→{c}" for a, c in r.aliases.items()))


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--rubric", "rubric_name", required=True, help="Rubric name (e.g. refusal) or YAML path.")
@click.option("--raters", default=None, help="Wide format: human rater columns, 'a,b' or 'alice=col_a,bob=col_b'.")
@click.option("--judges", default=None, help="Wide format: judge columns, same syntax as --raters.")
@click.option("--reference", default=None, help="Wide format: the adjudicated (gold) label column, e.g. 'final=final_label'.")
@click.option("--kind", "rater_kind", type=click.Choice(["human", "judge", "reference"]), default="human",
              show_default=True, help="Long format: rater kind when the file has no rater_kind column.")
@click.option("--items", "items_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Optional items file whose metadata columns are joined on item_id.")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "json", "parquet"]), default=None,
              help="File format (default: from the file ending).")
@store_option
def import_cmd(
    file: Path,
    rubric_name: str,
    raters: str | None,
    judges: str | None,
    reference: str | None,
    rater_kind: str,
    items_path: Path | None,
    fmt: str | None,
    store_path: str,
) -> None:
    """Import human or judge labels into the store (CSV, JSONL, Parquet).

    \b
    Long format: one row per rating with item_id, rater_id, label (+ rater_kind, trial, ...).
    Wide format: one row per item, one column per rater, named with --raters/--judges/--reference.
    Labels go through the rubric's aliases; any other column is item metadata usable with --by.

    \b
    Example:
      judgekit import annotations/xstest-v2/xstest_v2_labels.csv --rubric refusal \\
        --raters annotation_1,annotation_2 --reference final=final_label \\
        --judges string_match=strmatch_label,gpt4=gpt4_label
    """
    from judgekit.io.ratings import import_ratings

    rubric = load_rubric(rubric_name)
    with Store(store_path) as store:
        summary = import_ratings(
            store,
            file,
            rubric,
            raters=parse_rater_map(raters),
            judges=parse_rater_map(judges),
            reference=parse_rater_map(reference),
            rater_kind=rater_kind,
            fmt=fmt,
            items_path=items_path,
        )
    for line in summary.lines():
        click.echo(line)


def _load_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgekitError(f"{path}: no such file; check the path.") from None
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{path}: invalid JSON at line {exc.lineno}.") from None
    if not isinstance(data, dict):
        raise JudgekitError(f"{path}: expected a JSON object.")
    return data


COMMANDS: list[click.Command] = [rubrics_cmd, import_cmd]
