"""`judgekit escalate calibrate|apply`: selective judging with a guarantee (docs/selective.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from judgekit.cli.options import store_option
from judgekit.core.console import echo


@contextmanager
def _naming(policy_path: Path) -> Iterator[None]:
    """A problem the policy causes in the store ("Selective policy: ...") names the policy file."""
    from judgekit.errors import JudgekitError

    try:
        yield
    except JudgekitError as exc:
        text = str(exc)
        if text.startswith("Selective policy:"):
            raise JudgekitError(f"Selective policy {policy_path}:{text.removeprefix('Selective policy:')}") from None
        raise


def _one_annotator(store: object, rubric_name: str, reference: str) -> str | None:
    """The warning that the reference is one annotator among several (None otherwise)."""
    from judgekit.agreement.adjudicate import reference_warning
    from judgekit.rubric.model import load_rubric

    return reference_warning(store, load_rubric(rubric_name), reference)


@click.group("escalate", context_settings={"help_option_names": ["-h", "--help"]})
def escalate_group() -> None:
    """Trust each judge of a cascade where it is confident, escalate the rest to people.

    \b
    Example:
      judgekit escalate calibrate annotations/xstest-v2/selective.yaml --out calibration.json
      judgekit escalate apply annotations/xstest-v2/selective.yaml calibration.json --record sel1
      judgekit labelstudio push --rubric refusal --escalated sel1 --project escalated
    """


@escalate_group.command("calibrate")
@click.argument("policy_path", metavar="POLICY.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_path", default="calibration.json", show_default=True,
              type=click.Path(dir_okay=False, path_type=Path), help="The calibration JSON to write.")
@store_option
def calibrate_cmd(policy_path: Path, out_path: Path, store_path: str) -> None:
    """Choose each judge's confidence threshold on the human-labelled items (fixed-sequence
    testing, exact Clopper-Pearson bound) for agreement >= 1 - alpha with probability >= 1 - delta;
    print the coverage per judge and overall. Exit 2, writing nothing, when no judge can keep any
    item at the target."""
    from judgekit.errors import JudgekitError
    from judgekit.selective.calibrate import calibrate_policy, summary_lines, write_calibration
    from judgekit.selective.judgments import load_call_confidence
    from judgekit.selective.policy import load_selective_policy
    from judgekit.store.database import Store

    policy = load_selective_policy(policy_path)
    with Store.open_existing(store_path) as store, _naming(policy_path):
        cal, _ = calibrate_policy(store, policy, call_confidence=load_call_confidence(store, policy))
        warning = _one_annotator(store, policy.rubric, policy.reference)
    if warning:
        echo(warning, err=True)
    for line in summary_lines(cal):
        echo(line)
    if not cal.met:
        raise JudgekitError(
            f"No judge of {policy_path} keeps any item at agreement >= {1 - policy.alpha:.2f} with "
            f"probability >= {1 - policy.delta:.2f} on {cal.n_calibration} calibration items: raise "
            "alpha or delta, label more items, or use a better confidence; nothing written."
        )
    write_calibration(out_path, cal)
    echo(f"wrote {out_path}")


@escalate_group.command("apply")
@click.argument("policy_path", metavar="POLICY.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("calibration", metavar="CALIBRATION.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--record", "record", default=None,
              help="Record who labels what as this sample (push its escalated items with "
                   "`labelstudio push --escalated NAME`).")
@click.option("--replace", is_flag=True, help="Replace a sample recorded under the same name.")
@store_option
def apply_cmd(policy_path: Path, calibration: Path, record: str | None, replace: bool, store_path: str) -> None:
    """Keep each new item (rated by the cascade, no human label) at the first judge confident
    enough, escalate the rest; print the coverage and, with --record, store the design."""
    from judgekit.selective.apply import apply_policy, coverage_lines, record_escalation
    from judgekit.selective.calibrate import read_calibration
    from judgekit.selective.judgments import load_call_confidence
    from judgekit.selective.policy import load_selective_policy
    from judgekit.store.database import Store

    policy = load_selective_policy(policy_path)
    cal = read_calibration(calibration, policy)
    with Store.open_existing(store_path) as store, _naming(policy_path):
        assignments = apply_policy(store, policy, cal, call_confidence=load_call_confidence(store, policy),
                                   where=str(calibration))
        for line in coverage_lines(assignments):
            echo(line)
        for line in cal.guarantee:
            echo(line)
        if record is not None:
            record_escalation(store, record, assignments, replace=replace)
            echo(f"recorded sample {record!r} (reason kept|escalated, stratum = who labels it)")


@escalate_group.command("labels")
@click.argument("policy_path", metavar="POLICY.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("sample")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Table to write (.csv, .jsonl, .json, .parquet): item_id, label, labelled_by (a judge or humans), source (judge|human).")
@store_option
def labels_cmd(policy_path: Path, sample: str, out_path: Path, store_path: str) -> None:
    """Write the labels of a recorded selective study: the judge's where a judge kept the item,
    the humans' (modal) where it was escalated; empty while nobody has labelled it."""
    from judgekit.io.tables import write_table
    from judgekit.selective.apply import selective_labels
    from judgekit.selective.policy import load_selective_policy
    from judgekit.store.database import Store

    policy = load_selective_policy(policy_path)
    with Store.open_existing(store_path) as store, _naming(policy_path):
        df = selective_labels(store, sample, policy)
    write_table(df, out_path)
    counts = df.groupby("source")["label"].agg(["size", "count"])
    for source, row in counts.iterrows():
        echo(f"{source}: {int(row['size'])} items, {int(row['count'])} labelled")
    echo(f"wrote {out_path}")


COMMANDS = [escalate_group]
