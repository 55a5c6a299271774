"""CLI: `judgekit labelstudio push|pull|config` and `judgekit sample`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from judgekit.cli.options import InputPath, OutputPath, checked_where, name_list, store_option
from judgekit.core.console import echo
from judgekit.errors import JudgekitError
from judgekit.store.database import Store

if TYPE_CHECKING:  # pandas is imported by the commands that use it (keeps `judgekit --help` light)
    import pandas as pd

    from judgekit.annotation.sampling import SampleSpec

url_option = click.option(
    "--url", default=None, help="Label Studio address (default: env LABEL_STUDIO_URL)."
)
token_option = click.option(
    "--token",
    default=None,
    help="Label Studio API token (default: env LABEL_STUDIO_API_KEY; prefer the variable, a flag "
    "lands in your shell history).",
)


@click.group("labelstudio", context_settings={"help_option_names": ["-h", "--help"]})
def labelstudio_group() -> None:
    """Collect human ratings with Label Studio: push items as tasks, pull annotations back.

    \b
    The server address and token come from --url/--token or LABEL_STUDIO_URL and
    LABEL_STUDIO_API_KEY; they are never written to the store or printed.
    Example:
      export LABEL_STUDIO_URL=http://127.0.0.1:8080 LABEL_STUDIO_API_KEY=...
      judgekit labelstudio push --rubric restrictiveness --rubric refusal_form \\
        --sample pilot --project pilot
      judgekit labelstudio pull --project pilot
    """


@labelstudio_group.command("config")
@click.option("--rubric", "rubrics", multiple=True, required=True, help="Rubric name or YAML path (repeatable).")
@click.option("--no-comment", is_flag=True, help="Leave out the free-text comment box.")
def config_cmd(rubrics: tuple[str, ...], no_comment: bool) -> None:
    """Print the labeling config (XML) generated from the rubrics.

    Example: judgekit labelstudio config --rubric restrictiveness --rubric refusal_form
    """
    from judgekit.annotation.labelstudio import label_config, load_rubrics

    echo(label_config(load_rubrics(rubrics), comment=not no_comment), lines=True)


@labelstudio_group.command("push")
@click.option("--rubric", "rubrics", multiple=True, required=True,
              help="Rubric to rate (repeatable: several rubrics in one pass).")
@click.option("--project", required=True, help="Label Studio project title (created if missing).")
@click.option("--items", "items_path", type=InputPath(dir_okay=False, path_type=Path), default=None,
              help="Items file (CSV/JSONL/Parquet: item_id, prompt or messages, response, metadata).")
@click.option("--sample", "sample", default=None,
              help="A sample recorded with `judgekit sample` (its name), or a sample spec YAML to draw now.")
@click.option("--escalated", default=None,
              help="The items a selective cascade escalated to people (a sample recorded with "
                   "`judgekit escalate apply --record NAME`).")
@click.option("--meta", default=None,
              help="Metadata columns to show annotators in Label Studio, comma-separated, or 'all' "
              "(all but label-like columns). Default: none, so annotators do not see which model "
              "wrote a response.")
@click.option("--overlap-annotators", default=2, show_default=True, type=click.IntRange(2, 20),
              help="Annotators wanted on the sample's overlap items.")
@click.option("--chunk-size", default=500, show_default=True, type=click.IntRange(1, 10000),
              help="Tasks per import request.")
@click.option("--no-comment", is_flag=True, help="Leave out the free-text comment box.")
@click.option("--show-ids", is_flag=True,
              help="Tasks carry the item ids (default: an opaque key the store maps back, since "
                   "every annotator can read task data in the Data Manager).")
@url_option
@token_option
@store_option
def push_cmd(
    rubrics: tuple[str, ...],
    project: str,
    items_path: Path | None,
    sample: str | None,
    escalated: str | None,
    meta: str | None,
    overlap_annotators: int,
    chunk_size: int,
    no_comment: bool,
    show_ids: bool,
    url: str | None,
    token: str | None,
    store_path: str,
) -> None:
    """Push items to a Label Studio project as tasks (blind to every judge's labels and, unless
    --show-ids, to the item ids).

    Items come from --items FILE or from a --sample (a recorded sample's name, or a spec YAML drawn
    now). Pushing again adds only items the project does not have. Items from a file are also
    stored, so ratings pulled later can be sliced by their metadata.

    \b
    Example:
      judgekit sample --name pilot --size 300 --rubric restrictiveness --by severity,prompt_type
      judgekit labelstudio push --rubric restrictiveness --rubric refusal_form \\
        --sample pilot --project pilot
    """

    def run() -> list[str]:
        """The push; returns the lines to print."""
        import functools

        from judgekit.annotation.labelstudio import LabelStudioClient, load_rubrics, push
        from judgekit.annotation.sampling import record_sample
        from judgekit.store.task_keys import known_keys, task_keys

        out: list[str] = []
        if sum(x is not None for x in (items_path, sample, escalated)) != 1:
            raise JudgekitError("Give exactly one of --items FILE, --sample NAME|SPEC.yaml or --escalated NAME.")
        rubs = load_rubrics(rubrics)
        meta_cols: list[str] | str | None = (
            None if meta is None or meta.strip() == "none" else "all" if meta.strip() == "all"
            else [c.strip() for c in meta.split(",") if c.strip()])
        # items from a file may start a store; a sample is drawn from (or recorded in) an existing one
        with (Store(store_path) if items_path is not None else Store.open_existing(store_path)) as store:
            items, overlap, new_sample = _items_to_push(store, items_path, sample, escalated, out)
            with LabelStudioClient(url, token) as client:
                result = push(
                    client,
                    items,
                    rubs,
                    project,
                    overlap=overlap,
                    overlap_annotators=overlap_annotators,
                    meta=meta_cols,
                    comment=not no_comment,
                    chunk_size=chunk_size,
                    task_keys=None if show_ids else functools.partial(task_keys, store),
                    known_keys=functools.partial(known_keys, store),
                )
            if overlap is None:  # items from a file
                store.put_items(items, source=str(items_path))
            if new_sample is not None:  # recorded only once the push went through
                record_sample(store, *new_sample)
        return out + result.lines()

    _print_redacted(url, token, run)


def _items_to_push(store: Store, items_path: Path | None, sample: str | None, escalated: str | None,
                   out: list[str]) -> tuple[pd.DataFrame, pd.Series | None, tuple[str, pd.DataFrame] | None]:
    """The items ``labelstudio push`` sends: from ``--items`` (no overlap flags: the caller stores
    them), an ``--escalated`` design or a ``--sample`` (a spec YAML is drawn now: its summary
    goes to ``out`` and its (name, design) is returned, to record once the push went through)."""
    from judgekit.annotation.sampling import load_spec, sample_design, sample_items
    from judgekit.io.tables import read_table
    from judgekit.store.data import validate_items

    new_sample: tuple[str, pd.DataFrame] | None = None
    if items_path is not None:
        items = validate_items(read_table(items_path), source=str(items_path))
        store.check_item_texts(items, source=str(items_path))  # before anything is pushed
        return items, None, None
    if escalated is not None:
        from judgekit.selective.apply import escalated_design

        design = escalated_design(store, escalated)
    else:
        assert sample is not None
        if sample.endswith((".yaml", ".yml")) or Path(sample).is_file():
            spec = load_spec(sample)
            design, summary = sample_items(store, spec, record=False)
            out.extend(summary.lines())
            new_sample = (spec.name, design)
        else:
            design = sample_design(store, sample)
    return store.items(design["item_id"].tolist()), design.set_index("item_id")["overlap"], new_sample


def _print_redacted(url: str | None, token: str | None, run: Callable[[], list[str]]) -> None:
    """Run a push or pull with every error redacted (the token, the address, provider keys),
    then print its lines redacted too."""
    from judgekit.annotation.labelstudio.redact import Redactor

    redactor = Redactor.for_label_studio(url, token)
    with redactor.guard():
        lines = run()
    for line in lines:
        echo(redactor.text(line))


@labelstudio_group.command("pull")
@click.option("--project", default=None, help="Label Studio project title to pull from (API).")
@click.option("--from-export", "from_export", type=InputPath(dir_okay=False, path_type=Path), default=None,
              help="Read a Label Studio export file instead (JSON, JSON_MIN or CSV).")
@click.option("--rubric", "rubrics", multiple=True,
              help="Rubrics rated (needed with --from-export; default for --project: the pushed ones).")
@click.option("--reference", "reference", multiple=True,
              help="An adjudicator's email: their labels are the gold reference (repeatable).")
@click.option("--annotator-map", default=None,
              help="Label Studio user id → rater id for exports, e.g. '2=alice@x.org,3=bob@x.org'.")
@url_option
@token_option
@store_option
def pull_cmd(
    project: str | None,
    from_export: Path | None,
    rubrics: tuple[str, ...],
    reference: tuple[str, ...],
    annotator_map: str | None,
    url: str | None,
    token: str | None,
    store_path: str,
) -> None:
    """Pull annotations into the store as human ratings (rater id = annotator email).

    Cancelled annotations are skipped; an annotator's latest annotation of a task counts (a revised
    label replaces the stored one, which is kept in the rating history). Pulling twice adds
    nothing. Every choice is checked against the rubric; on any error nothing is written.

    \b
    Example:
      judgekit labelstudio pull --project pilot
      judgekit labelstudio pull --from-export export.json --rubric restrictiveness \\
        --annotator-map '2=alice@example.org,3=bob@example.org'
    """

    def run() -> list[str]:
        """The pull; returns the lines to print."""
        import os

        from judgekit.annotation.labelstudio import (
            ENV_TOKEN,
            ENV_URL,
            LabelStudioClient,
            load_rubrics,
            parse_annotator_map,
            pull,
        )

        if (project is None) == (from_export is None):
            raise JudgekitError("Give exactly one of --project NAME or --from-export FILE.")
        rubs = load_rubrics(rubrics) if rubrics else None
        amap = parse_annotator_map(annotator_map)
        have_server = bool((url or os.environ.get(ENV_URL)) and (token or os.environ.get(ENV_TOKEN)))
        client = LabelStudioClient(url, token) if (project is not None or have_server) else None
        try:
            with Store(store_path) as store:
                summary = pull(
                    store,
                    project,
                    client=client,
                    rubrics=rubs,
                    from_export=from_export,
                    annotator_map=amap,
                    reference=reference,
                )
        finally:
            if client is not None:
                client.close()
        return summary.lines()

    _print_redacted(url, token, run)


@click.command("sample")
@click.option("--name", default=None, help="Name to record the sample under (e.g. the project).")
@click.option("--size", type=click.IntRange(1), default=None, help="Number of items to choose.")
@click.option("--spec", "spec_path", type=InputPath(dir_okay=False, path_type=Path), default=None,
              help="A sample spec YAML (its fields are the options here; flags override it).")
@click.option("--rubric", default=None, help="Rubric whose judge ratings mark disagreement/instability.")
@click.option("--judges", default=None, help="The panel's judges, comma-separated (default: all).")
@click.option("--by", "strata", default=None, help="Metadata columns defining the strata, comma-separated.")
@click.option("--min-per-stratum", type=click.IntRange(0), default=None, help="Items each stratum gets at least (with --by-conversation: conversations, "
                   "each with all its turns; a floor that alone exceeds --size wins, with a warning).")
@click.option("--random-share", type=click.FloatRange(0, 1), default=None,
              help="Share of the sample drawn purely at random (default 0.3).")
@click.option("--overlap", type=click.FloatRange(0, 1), default=None,
              help="Share of the chosen items for at least two annotators (default 0.2).")
@click.option("--no-targeted", is_flag=True, default=False, help="Do not put judge disagreement first.")
@click.option("--exclude-rated", is_flag=True, default=False, help="Leave out items a human already rated.")
@click.option("--by-conversation", is_flag=True, default=False,
              help="Draw whole conversations (every turn), so per-turn figures such as Drift(t) can be "
                   "checked against people; --size is a target in items, --min-per-stratum counts "
                   "conversations. "
                   "Example: judgekit sample --name drift --size 600 --by-conversation --by model,severity "
                   "--min-per-stratum 10")
@click.option("--conversation-column", default=None,
              help="With --by-conversation: the column naming the conversation (default conversation_id).")
@click.option("--where", "where", multiple=True, callback=checked_where,
              help="Draw only from the items whose COLUMN is one of the values (repeat: all must "
                   "hold), e.g. --where model=m-eroding --where severity=4,5.")
@click.option("--groups", "groups", default=None,
              help="The analysis's groups (item columns, comma-separated), checked for the "
                   "labelled conversations its corrected figures need, e.g. --groups "
                   "model,severity for Drift(t | tier).")
@click.option("--seed", type=int, default=None, help="Random seed (default 0).")
@click.option("--items", "items_path", type=InputPath(dir_okay=False, path_type=Path), default=None,
              help="Add these items to the store first (CSV/JSONL/Parquet).")
@click.option("--replace", is_flag=True, help="Replace a recorded sample of the same name.")
@click.option("--out", "out_path", type=OutputPath(dir_okay=False, path_type=Path), default=None,
              help="Also write the design table (item_id, reason, stratum, weight, overlap) here.")
@click.option("--from-plan", "plan_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Take --size from a plan `judgekit plan --out` wrote: the units it needs beyond those already "
                   "labelled (whole conversations when it counts conversations), drawn at random unless "
                   "--random-share says otherwise.")
@click.option("--active", "active_judge", default=None, metavar="JUDGE",
              help="Draw by JUDGE's confidence (trials, --judges panel): each unit with a recorded, "
                   "floored probability ∝ sqrt(predicted error), --size the expected number; run "
                   "again on the same --name for the next round. Needs --rubric.")
@click.option("--harm-rubric", "harm_rubric", default=None, metavar="RUBRIC",
              help="Add the column harm_tier (tiers 1–5 of H from the human RUBRIC ratings, shared by "
                   "a prompt_id, as the analysis takes H) to stratify by it: --by model,harm_tier.")
@click.option("--floor", "active_floor", type=click.FloatRange(0, 1, min_open=True), default=0.2,
              show_default=True, help="With --active: no probability below this share of the uniform rate.")
@store_option
def sample_cmd(
    name: str | None,
    size: int | None,
    spec_path: Path | None,
    rubric: str | None,
    judges: str | None,
    strata: str | None,
    min_per_stratum: int | None,
    random_share: float | None,
    overlap: float | None,
    no_targeted: bool,
    exclude_rated: bool,
    by_conversation: bool,
    conversation_column: str | None,
    where: tuple[str, ...],
    groups: str | None,
    seed: int | None,
    items_path: Path | None,
    replace: bool,
    out_path: Path | None,
    plan_path: Path | None,
    active_judge: str | None,
    active_floor: float,
    harm_rubric: str | None,
    store_path: str,
) -> None:
    """Choose which items people should rate, and record the design in the store.

    A random share (unbiased agreement), at least N items per stratum, then items where the panel's
    judges disagree or abstain, then items a judge labels differently across trials; a share of the
    chosen items is marked for two annotators. `judgekit labelstudio push --sample NAME` sends it.

    \b
    Example:
      judgekit sample --name pilot --size 300 --rubric restrictiveness \\
        --by severity,prompt_type --min-per-stratum 10 --random-share 0.4 --overlap 0.25
    """
    import pandas as pd

    from judgekit.annotation.sampling import sample_items
    from judgekit.io.tables import read_table, table_format, write_table
    from judgekit.store.data import validate_items

    if active_judge is not None:
        cluster = (conversation_column or "conversation_id") if by_conversation else None
        _sample_active(store_path, name, size, rubric, active_judge, judges, active_floor, seed,
                       cluster)
        return
    flags: dict[str, object] = {
        "name": name, "size": size, "rubric": rubric,
        "judges": [j.strip() for j in judges.split(",") if j.strip()] if judges else None,
        "strata": [s.strip() for s in strata.split(",") if s.strip()] if strata else None,
        "min_per_stratum": min_per_stratum, "random_share": random_share, "overlap": overlap,
        "seed": seed, "targeted": False if no_targeted else None,
        "exclude_rated": True if exclude_rated else None,
        "by_conversation": True if by_conversation else None,
        "conversation_column": conversation_column,
    }
    spec = _sample_spec(spec_path, plan_path, flags)
    if out_path is not None:
        table_format(out_path)  # a bad ending is an error before anything is drawn or stored
    # One transaction: a failed draw or --out write leaves neither the items nor the sample behind
    # (a recorded name cannot be drawn again without --replace). Without --items the draw needs a
    # store that exists: a mistyped --store is an error, not a new empty store.
    opened = Store(store_path) if items_path is not None else Store.open_existing(store_path)
    with opened as store, store.transaction():
        if items_path is not None:
            store.put_items(validate_items(read_table(items_path), source=str(items_path), need_response=False),
                            source=str(items_path))
        design, summary = sample_items(
            store, spec, replace=replace, where=where,
            groups=name_list("--groups", groups) or [],
            computed=_harm_tiers(store, harm_rubric))
        if out_path is not None:
            write_table(pd.DataFrame(design), out_path)
    for line in summary.lines():
        echo(line)


def _sample_spec(spec_path: Path | None, plan_path: Path | None, flags: dict[str, object]) -> SampleSpec:
    """The sample's spec: the ``--spec`` file's fields, each flag given over them, the size from
    ``--from-plan``; one sentence when no name or size results."""
    from judgekit.annotation.sampling import load_spec, spec_from_dict

    base: dict[str, object] = {}
    if spec_path is not None:
        base = load_spec(spec_path).model_dump(exclude_unset=True)
    base.update({k: v for k, v in flags.items() if v is not None})
    if plan_path is not None:
        if flags["size"] is not None:
            raise JudgekitError("Give --size or --from-plan, not both.")
        _from_plan(base, plan_path)
    if "name" not in base or "size" not in base:
        raise JudgekitError("Give --name and --size (or a --spec file that has them).")
    # the spec file is named in messages about its rubric, judges and strata unless a flag set one
    from_file = spec_path if all(flags[k] is None for k in ("rubric", "judges", "strata")) else None
    return spec_from_dict(base, source="judgekit sample", file=from_file)


def _harm_tiers(store: Store, harm_rubric: str | None) -> pd.DataFrame | None:
    """``--harm-rubric``: the items' harm_tier column from harm ratings (None without it)."""
    if harm_rubric is None:
        return None
    from judgekit.analysis.inputs import harm_tiers

    return harm_tiers(store, store.items(), harm_rubric=harm_rubric)


def _from_plan(base: dict[str, object], plan_path: Path) -> None:
    """The sample's size (and rubric, and whole conversations) from a plan (``--from-plan``),
    set in ``base``."""
    from judgekit.gate.plan import read_plan_budget

    n_items, whole, plan_rubric = read_plan_budget(plan_path)
    base["size"] = n_items
    base["exclude_rated"] = True  # the plan counts the pilot's labels: draw the rest
    # the plan's figures are the study's: draw at random (representative), unless told otherwise
    base.setdefault("random_share", 1.0)
    if "rubric" not in base and plan_rubric is not None:
        base["rubric"] = plan_rubric
    if whole:
        base["by_conversation"] = True


def _sample_active(store_path: str, name: str | None, size: int | None, rubric: str | None,
                   judge: str, judges: str | None, floor: float, seed: int | None,
                   cluster: str | None) -> None:
    """`sample --active`: the next round of an active sample (judgekit.annotation.active)."""
    from judgekit.annotation.active import DrawRule, sample_active

    if not (name and size and rubric):
        raise JudgekitError("--active needs --name, --size and --rubric.")
    panel = [j.strip() for j in (judges or "").split(",") if j.strip()]
    with Store.open_existing(store_path) as store, store.transaction():
        lines = sample_active(store, name, judge, size, rubric=rubric, panel=panel,
                              how=DrawRule(floor=floor), seed=seed or 0, cluster_col=cluster)
    for line in lines:
        echo(line)


COMMANDS: list[click.Command] = [labelstudio_group, sample_cmd]
