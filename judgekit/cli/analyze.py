"""``judgekit analyze``: refusal analyses on trusted ratings (distribution, calibration, criteria).

Each command reads one rater's ratings from the store; a judge's ratings need a passing verdict
(``--verdict``, repeatable: one per rubric used) or ``--untrusted``, which stamps every title
UNTRUSTED. Results go to the folder named by ``--out``: JSON, Markdown, an HTML page with the
charts, each chart as SVG and each table as CSV.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from judgekit.cli.analyze_out import (
    add_correction_tables,
    finish,
    noted,
    population,
    print_corrections,
    progress_bar,
    sliced,
    where_option,
)
from judgekit.cli.options import InputPath, OutputPath, by_columns, json_option, store_option
from judgekit.core.console import lazy_console
from judgekit.store.database import Store

if TYPE_CHECKING:  # the analyses (pandas, numpy) are imported by the commands that run them
    from judgekit.analysis.correction.design import Reference
    from judgekit.analysis.result import AnalysisResult

console = lazy_console()
err_console = lazy_console(stderr=True)


# --------------------------------------------------------------------------- shared options
@dataclass(frozen=True)
class _Run:
    """What every analysis command is given beside its own options: the store, the verdicts that
    trust the ratings, where the results go, the slices, and the correction and bootstrap asked
    for (the defaults where a command has no such option)."""

    store_path: str
    verdicts: tuple[Path, ...]
    untrusted: bool
    out_dir: Path | None
    quiet: bool
    json_out: str | None
    by: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    correct: str | None = None
    reference: str | None = None
    sample: str | None = None
    n_boot: int = 1000
    seed: int = 0


_RUN_FIELDS = tuple(f.name for f in fields(_Run))


def _as_run(f: Callable[..., Any]) -> Callable[..., Any]:
    """The command ``f`` called with the shared options packed into one ``run`` (:class:`_Run`)."""

    @functools.wraps(f)
    def command(**kwargs: Any) -> Any:
        run = _Run(**{name: kwargs.pop(name) for name in _RUN_FIELDS if name in kwargs})
        return f(run=run, **kwargs)

    return command


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    f = _as_run(f)
    options = [
        store_option,
        click.option("--verdict", "verdicts", multiple=True,
                     type=InputPath(path_type=Path),
                     help="verdict.json from `judgekit gate` (repeat: one per rubric used)."),
        click.option("--untrusted", is_flag=True,
                     help="Run without a passing verdict (every figure, table and chart title is "
                          "then stamped UNTRUSTED), or show the figures a verdict does not certify, "
                          "stamped UNTRUSTED."),
        click.option("--out", "out_dir", type=OutputPath(file_okay=False, path_type=Path),
                     default=None, help="Folder for the JSON, Markdown, HTML, SVG and CSV outputs."),
        click.option("--quiet", is_flag=True, help="No progress bar."),
        json_option,
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


def _bootstrap_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Seed of the bootstrap (0 or more).")(f)
    f = click.option("--bootstrap", "n_boot", type=click.IntRange(min=0), default=1000,
                     show_default=True,
                     help="Bootstrap resamples (of prompts/conversations) for the 95% CIs.")(f)
    return f


def _item_options(*, by_help: str, prompt_help: str) -> Callable[[Callable[..., Any]],
                                                                  Callable[..., Any]]:
    """--by, --where, --prompt-column and --model-column, with the command's own help."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--model-column", default="model", show_default=True,
                         help="Column naming the model.")(f)
        f = click.option("--prompt-column", default=None, help=prompt_help)(f)
        f = where_option(f)
        return click.option("--by", "by", multiple=True, help=by_help)(f)

    return decorate


def _correct_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--sample", "sample", default=None,
                     help="Recorded sample(s) (`judgekit sample --name`, comma-separated) the "
                          "reference's labels were drawn in, for --correct ppi; with every other "
                          "sample holding labels they are one design (default: those samples; "
                          "none: treated as a simple random sample, with a warning).")(f)
    f = click.option("--reference", "reference", default=None,
                     help="Rater whose labels measure the judge's error for --correct (default: "
                          "the store's one rater of kind reference).")(f)
    f = click.option("--correct", "correct", type=click.Choice(["rogan_gladen", "ppi"]),
                     default=None,
                     help="Also print the figures corrected for the judge's error on the items "
                          "--reference rated, beside the raw ones (n and 95% CI on each), e.g. "
                          "--correct ppi --reference adjudicated.")(f)
    return f


def _reference(store: Store, rubric: Any, run: _Run) -> Reference:
    """The reference rater's labels for ``--correct ppi`` (``--reference``, ``--sample``)."""
    from judgekit.analysis.correction.design import Reference
    from judgekit.analysis.inputs import reference_ratings

    ref, ref_name = reference_ratings(store, rubric, run.reference)
    return Reference(ref, ref_name, store, run.sample)


def _report(result: AnalysisResult, notes: list[str], note: str | None, run: _Run,
            show: Callable[[], None]) -> None:
    """Notes, terminal tables (``show``, unless the JSON goes to stdout) and the files."""
    result.notes.extend(notes)  # judge ratings the verdict does not cover, left out
    noted(result, note, run.where)
    if run.json_out != "-":
        show()
    finish(result, run.out_dir, run.json_out)


# --------------------------------------------------------------------------- distribution
@click.command("distribution")
@click.option("--judge", "--rater", "rater", required=True,
              help="Rater id whose labels are analysed (a judge needs --verdict).")
@click.option("--rubric", "rubric_name", default="refusal", show_default=True,
              help="Rubric the refusal is read from: refusal (full/partial refusal) or "
                   "restrictiveness (R >= --threshold), or a YAML path.")
@click.option("--threshold", default=0.75, show_default=True,
              help="For rubrics without refusal codes: a label counts as refusal when its value "
                   ">= this.")
@click.option("--refusal-codes", default=None,
              help="Codes that count as refusal, comma-separated (default for the refusal "
                   "rubric: full_refusal,partial_refusal).")
@click.option("--form-rubric", default="refusal_form", show_default=True,
              help="Rubric for the distribution of refusal forms (used when the rater has "
                   "ratings under it); with knowledge_leak and a rules:knowledge-leak judge, also "
                   "the table of emitted refusal-pool strings per slice.")
@click.option("--no-forms", is_flag=True, help="Skip the refusal-form distribution.")
@_item_options(
    by_help="Item metadata column to slice by (repeat, or 'severity,tactic'; 'severity+tactic' "
            "crosses them); turn is added when the items have it.",
    prompt_help="Column naming the prompt whose samples are grouped (default: conversation_id, "
                "else prompt_id).")
@click.option("--sample-group", "sample_group", default=None,
              help="Item column splitting a prompt's samples into groups reported apart, for "
                   "samples that are not exchangeable (e.g. --sample-group provenance).")
@_correct_options
@_bootstrap_options
@_common
def distribution_cmd(
    rater: str,
    rubric_name: str,
    threshold: float,
    refusal_codes: str | None,
    form_rubric: str,
    no_forms: bool,
    prompt_column: str | None,
    model_column: str,
    sample_group: str | None,
    run: _Run,
) -> None:
    """Refusal as a distribution over samples: per prompt rate + Wilson 95% CI, forms, stability.

    Items that are several samples of one prompt (same conversation_id/prompt_id and turn, a
    `sample` column) are grouped; per prompt the refusal rate with a Wilson interval, the forms
    of refusal across samples, and per model and slice the share of prompts whose behaviour is
    not constant across samples.

    \b
    Example (synthetic multi-turn data shipped in annotations/):
      judgekit analyze distribution --judge judge-a --rubric restrictiveness \\
        --verdict gate-r/verdict.json --verdict gate-f/verdict.json \\
        --by severity --out results/distribution

    
    Emitted refusal-pool strings per framing (rules:knowledge-leak judge, pool_match: exact):
      judgekit analyze distribution --judge leak-rules --rubric knowledge_leak \
        --refusal-codes verbatim_refusal --form-rubric knowledge_leak --by framing --untrusted
    """
    from judgekit.analysis import inputs
    from judgekit.analysis.distribution.estimate import refusal_distribution
    from judgekit.analysis.options import ItemColumns, Resampling
    from judgekit.analysis.trust import TrustContext
    from judgekit.report.analysis_terminal import print_distribution
    from judgekit.rubric.model import load_rubric

    rubric = load_rubric(rubric_name)
    loaded = inputs.load_verdicts(run.verdicts)
    by_cols = by_columns(run.by)
    codes = [c.strip() for c in refusal_codes.split(",") if c.strip()] if refusal_codes else None
    with Store.open_existing(run.store_path) as store:
        data = inputs.distribution_inputs(store, rubric, rater,
                                          form_rubric=None if no_forms else form_rubric,
                                          verdicts=loaded, untrusted=run.untrusted)
        everything = len(data.items)
        items, (data.ratings, data.forms), note = sliced(data.items, [data.ratings, data.forms],
                                                         run.where, by_cols)
        data.items = items
        with progress_bar("bootstrap (resampling prompts)", run.quiet) as progress:
            result = refusal_distribution(
                data.ratings, data.items, rubric=rubric, forms=data.form_ratings,
                columns=ItemColumns(model=model_column, prompt=prompt_column, by=by_cols,
                                    sample_group=sample_group),
                threshold=threshold, refusal_codes=codes,
                trust=TrustContext(loaded, data.judge_hashes, run.untrusted, store,
                               population(run.where, everything, len(data.items))),
                resampling=Resampling(run.n_boot, run.seed, progress),
            )
        if run.correct:
            _correct_distribution(result, store, rubric, data, run, threshold=threshold,
                                  codes=codes, model_column=model_column)

    def show() -> None:
        from judgekit.report.analysis_terminal import print_prompts

        print_distribution(console, result)
        print_prompts(console, result)
        print_corrections(result, run.correct)

    _report(result, data.notes, note, run, show)


def _correct_distribution(result: AnalysisResult, store: Store, rubric: Any, data: Any, run: _Run, *,
                          threshold: float, codes: list[str] | None, model_column: str) -> None:
    """The refusal rates corrected for the judge's error (``--correct``), beside the raw ones."""
    import pandas as pd

    from judgekit.analysis import inputs
    from judgekit.analysis.distribution.refusal import refusal_definition

    _, indicator = refusal_definition(rubric, threshold=threshold, refusal_codes=codes)
    weights = dict(zip(rubric.codes, indicator(pd.Series(rubric.codes)).tolist(), strict=True))
    add_correction_tables(result, store, rubric, data.ratings, data.items,
                          method=str(run.correct), reference=run.reference, weights=weights,
                          figure="refusal rate", slices=list(result.meta.get("slices", [])),
                          model_col=model_column, n_boot=run.n_boot, seed=run.seed,
                          cluster_col=(result.meta.get("prompt_unit") or [None])[0])
    if run.correct == "ppi":
        from judgekit.analysis.distribution.corrected import add_ppi_distribution

        reference = _reference(store, rubric, run)
        fr = data.form_rubric
        forms = None if fr is None or data.forms is None else (
            data.forms, inputs.optional_reference_ratings(store, fr, reference.name),
            list(fr.codes))
        add_ppi_distribution(result, reference, data.ratings, data.items, indicator=indicator,
                             codes=list(rubric.codes), model_col=model_column, forms=forms)


# --------------------------------------------------------------------------- calibration
@click.command("calibration")
@click.option("--judge", "--rater", "rater", required=True,
              help="Rater id whose restrictiveness labels are analysed (a judge needs --verdict).")
@click.option("--rubric", "rubric_name", default="restrictiveness", show_default=True,
              help="Rubric giving R in [0, 1].")
@click.option("--harm-column", default=None,
              help="Item metadata column with harm tiers 1–5 (→ H = 0, .25, .5, .75, 1). Default: "
                   "human harm_severity ratings in the store.")
@click.option("--harm-rubric", default="harm_severity", show_default=True,
              help="Rubric of the human harm ratings (when --harm-column is not given).")
@click.option("--harm-key", default="prompt_id", show_default=True,
              help="Harm ratings apply to every item sharing this column (harm rates the "
                   "request, so one rated item per prompt is enough); 'none' keeps them per item.")
@click.option("--lookalike-column", default="benign_lookalike", show_default=True,
              help="Item flag marking benign look-alike prompts (reported as over-refusal).")
@click.option("--include-lookalikes", is_flag=True,
              help="Also count benign look-alikes in C, RCE and Drift.")
@_item_options(
    by_help="Item column to slice by (repeat, or 'tactic,category'; 'severity+tactic' crosses "
            "them): C, RCE and Drift(t) per value, e.g. which pressure tactic drives the drift.",
    prompt_help="Column naming the conversation/prompt (cluster of the bootstrap; default: "
                "conversation_id, else prompt_id).")
@_correct_options
@_bootstrap_options
@_common
def calibration_cmd(
    rater: str,
    rubric_name: str,
    harm_column: str | None,
    harm_rubric: str,
    harm_key: str,
    lookalike_column: str,
    include_lookalikes: bool,
    prompt_column: str | None,
    model_column: str,
    run: _Run,
) -> None:
    """Calibration of restrictiveness R to harm H: concordance C, RCE, Drift(t) by turn and tier.

    C = P(R(q1) >= R(q2) | H(q1) > H(q2)) (ties in R concordant; the share of tied pairs and
    C with ties as 1/2 are printed beside it), RCE = E|R − H|, Drift(t) = RCE_t − RCE_1 per turn,
    overall and per severity tier; benign look-alikes reported as over-refusal; 95% bootstrap
    CIs resampling conversations. Charts: C(t) and Drift(t | tier) per model.

    \b
    Example (synthetic multi-turn data shipped in annotations/):
      judgekit analyze calibration --judge judge-a --verdict gate-r/verdict.json \\
        --harm-column severity --by tactic --out results/calibration
    """
    from judgekit.analysis import inputs
    from judgekit.analysis.calibration.estimate import calibration
    from judgekit.analysis.options import ItemColumns, Resampling
    from judgekit.analysis.trust import TrustContext
    from judgekit.report.analysis_terminal import print_calibration
    from judgekit.rubric.model import load_rubric

    rubric = load_rubric(rubric_name)
    loaded = inputs.load_verdicts(run.verdicts)
    with Store.open_existing(run.store_path) as store:
        data = inputs.calibration_inputs(store, rubric, rater, harm_column=harm_column,
                                         harm_rubric=harm_rubric, harm_key=harm_key, verdicts=loaded)
        by_cols = by_columns(run.by)
        everything = len(data.items)
        data.items, (data.ratings,), note = sliced(data.items, [data.ratings], run.where, by_cols)
        columns = ItemColumns(model=model_column, prompt=prompt_column, lookalike=lookalike_column,
                              by=by_cols)
        with progress_bar("bootstrap (resampling conversations)", run.quiet) as progress:
            result = calibration(
                data.ratings, data.items, data.harm, rubric=rubric, harm_source=data.harm_source,
                columns=columns, include_lookalikes=include_lookalikes,
                trust=TrustContext(loaded, data.judge_hashes, run.untrusted, store,
                               population(run.where, everything, len(data.items))),
                resampling=Resampling(run.n_boot, run.seed, progress),
            )
        if run.correct:
            cal_slices = [c for c in ["turn", *[c.strip() for v in run.by for c in v.split(",")
                                                if c.strip()]] if c in data.items.columns]
            from judgekit.analysis.frames import truthy

            corr_items = data.items
            if not include_lookalikes and lookalike_column in corr_items.columns:
                # the scope of C, RCE and Drift: benign look-alikes left out unless included
                corr_items = corr_items[~truthy(corr_items[lookalike_column])]
            add_correction_tables(result, store, rubric, data.ratings, corr_items,
                                  method=run.correct, reference=run.reference,
                                  weights=dict(rubric.values), figure="mean R",
                                  slices=list(dict.fromkeys(cal_slices)), model_col=model_column,
                                  n_boot=run.n_boot, seed=run.seed,
                                  cluster_col=prompt_column or next(
                                      (c for c in ("conversation_id", "prompt_id")
                                       if c in data.items.columns), None))
            if run.correct == "ppi":
                from judgekit.analysis.calibration.corrected import add_ppi_calibration

                add_ppi_calibration(result, _reference(store, rubric, run), data.ratings,
                                    data.items, data.harm, rubric=rubric, columns=columns,
                                    include_lookalikes=include_lookalikes,
                                    resampling=Resampling(run.n_boot, run.seed))

    def show() -> None:
        print_calibration(console, result)
        print_corrections(result, run.correct)

    _report(result, data.notes, note, run, show)


# --------------------------------------------------------------------------- criteria
@click.command("criteria")
@click.argument("criteria_file", type=InputPath(dir_okay=False, path_type=Path))
@click.option("--judge", "--rater", "rater", default=None,
              help="Default rater for criteria that name none (a judge needs --verdict).")
@click.option("--by", "by", multiple=True,
              help="Also give each criterion's rate per value of this item column (repeat, or "
                   "'model,tactic'; 'model+tactic' crosses them), e.g. --by model+turn.")
@where_option
@click.option("--correct", "correct", type=click.Choice(["ppi"]), default=None,
              help="Also print each criterion's rate corrected for the judge's error on the "
                   "items --reference rated (PPI++), beside the raw one.")
@click.option("--reference", "reference", default=None,
              help="Rater whose labels measure the judge's error for --correct (default: the "
                   "store's one rater of kind reference).")
@click.option("--sample", "sample", default=None,
              help="Recorded sample the reference's labels were drawn in (for --correct).")
@_common
def criteria_cmd(
    criteria_file: Path,
    rater: str | None,
    run: _Run,
) -> None:
    """Pre-registered experiment criteria: rate of a label in a group vs a threshold, per seed.

    Prints threshold, pooled value (Wilson 95% CI), per-seed values and PASS/FAIL for each
    criterion. Exit code 0 when every criterion passes, 1 when any fails, 2 on bad input.

    \b
    Example:
      judgekit analyze criteria annotations/synthetic-multiturn/criteria.yaml \\
        --judge judge-a --verdict gate-r/verdict.json --out results/criteria
    """
    from judgekit.analysis import inputs
    from judgekit.analysis.criteria import evaluate_criteria, load_criteria
    from judgekit.analysis.trust import TrustContext
    from judgekit.report.analysis_terminal import print_criteria

    spec = load_criteria(criteria_file)
    loaded = inputs.load_verdicts(run.verdicts)
    with Store.open_existing(run.store_path) as store:
        data = inputs.criteria_inputs(store, loaded)
        by_cols = by_columns(run.by)
        everything = len(data.items)
        data.items, (data.ratings,), note = sliced(data.items, [data.ratings], run.where, by_cols)
        result, passed = evaluate_criteria(
            spec, data.ratings, data.items, rater=rater,
            trust=TrustContext(loaded, data.judge_hashes, run.untrusted, store,
                               population(run.where, everything, len(data.items))),
            source=f"Criteria file {criteria_file}", by=by_cols,
        )
        if run.correct:
            from judgekit.analysis.criteria.corrected import add_ppi_criteria

            add_ppi_criteria(result, store, spec, data.ratings, data.items, rater=rater,
                             reference=run.reference, sample=run.sample,
                             source=f"Criteria file {criteria_file}")

    def show() -> None:
        print_criteria(console, result)
        if run.correct:
            from judgekit.report.analysis_terminal import print_ppi

            print_ppi(console, result)

    table = result.table("criteria")
    _report(result, data.notes, note, run, show)
    n_fail = int((table["result"] == "FAIL").sum())
    n_judged = int((table["result"] != "DESCRIPTIVE").sum())
    out_ = len(result.meta.get("figures") or {}) and n_fail == 0 and not passed  # (certified criteria only)
    click.echo("all criteria pass" if passed else "not every criterion is known to pass (some were left out: "
               "no certificate covers them)" if out_ else f"{n_fail} of {n_judged} criteria FAIL",
               err=run.json_out == "-")
    raise SystemExit(0 if passed else 1)


# --------------------------------------------------------------------------- group
@click.group("analyze")
def analyze_group() -> None:
    """Refusal analyses on trusted ratings: distribution, calibration, criteria.

    A judge's ratings need a passing verdict for each rubric used (`judgekit gate POLICY.yaml`
    writes one; pass it with --verdict); a verdict that certifies some figures only (its policy's
    analysis_fidelity) lets calibration and distribution keep those and leave the others out, and
    criteria keep the pooled rate of each criterion it certifies.
    --untrusted runs anyway and stamps every figure UNTRUSTED. Human and reference raters need
    no verdict. --json writes the result as JSON (to stdout alone, or into a file).

    \b
    Example:
      judgekit analyze calibration --judge judge-a --verdict verdict.json \\
        --harm-column severity --out results/
    """


analyze_group.add_command(distribution_cmd)
analyze_group.add_command(calibration_cmd)
analyze_group.add_command(criteria_cmd)

COMMANDS: list[click.Command] = [analyze_group]
