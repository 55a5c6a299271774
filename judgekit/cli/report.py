"""The ``report`` command: the judge report (HTML, Markdown, JSON) from a store and a verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from judgekit.cli.options import (
    InputPath,
    OutputPath,
    by_columns,
    json_option,
    quiet_option,
    store_note,
    store_option,
    write_json,
)
from judgekit.core.console import echo
from judgekit.errors import JudgekitError


@click.command("report")
@store_option
@click.option("--rubric", "rubric_name", required=True, help="Rubric name (e.g. refusal) or YAML path.")
@click.option("--verdict", "verdict_path", type=InputPath(path_type=Path), default=None,
              help="verdict.json from `judgekit gate`; without it the report says no judge is trusted yet.")
@click.option("--by", "by", multiple=True,
              help="Item metadata column to slice by (repeat, or 'model,category'). When the items carry a "
                   "turn column, agreement per turn is added as a slice (e.g. --by model gives model and turn).")
@click.option("--reference", default=None,
              help="Reference rater id, or 'consensus' (default: the adjudicated rater, else the human majority).")
@click.option("--out", "out", required=True, type=OutputPath(path_type=Path),
              help="Output folder (report.html, report.md, report.json), or a file name ending in .html.")
@click.option("--disagreements", "per_judge", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many of the worst disagreements to list per judge.")
@click.option("--resamples", type=click.IntRange(min=100), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals (at least 100).")
@click.option("--view", "view", default=None,
              help="A view of the rubric (its 'views:'), e.g. --view binary: judges rated under the full "
                   "rubric are collapsed into it; pass the verdict of a policy with the same 'view:'.")
@click.option("--probes", "probes_path", type=InputPath(path_type=Path), default=None,
              help="probes.json from `judgekit probe`: adds the Probes section "
                   "(e.g. --probes results/probes.json).")
@json_option
@quiet_option
def report_cmd(
    store_path: str,
    rubric_name: str,
    verdict_path: Path | None,
    by: tuple[str, ...],
    reference: str | None,
    out: Path,
    per_judge: int,
    resamples: int,
    view: str | None,
    probes_path: Path | None = None,
    json_out: str | None = None,
    quiet: bool = False,
) -> None:
    """Write the judge report: HTML (self-contained, opens offline), Markdown and JSON.

    \b
    At the top, the verdict in plain words: which judge is trusted for the rubric, and each
    failed check with its figure, threshold and n. Then per judge: the confusion matrix as a
    heatmap, agreement per slice against the human-human ceiling and the gate threshold,
    abstentions and errors, label distribution beside the humans', tokens and cost, and the
    worst disagreements linked to their items. When the items carry a turn column, agreement
    and the signed bias per turn of the conversation, with their 95% CIs, get a section.

    \b
    Example:
      judgekit report --store judgekit.db --rubric refusal --verdict verdict.json \\
        --by model --out reports/refusal
      judgekit report --rubric refusal --view binary --verdict verdict.json --out reports/binary
      judgekit report --rubric refusal --verdict verdict.json --out reports/ --json   # summary on stdout
    """
    from judgekit.agreement.report import agreement_report, read_codes
    from judgekit.report import write_report
    from judgekit.report.collect import collect_extras, report_by
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict, match_store

    rubric = load_rubric(rubric_name)
    with Store.open_existing(store_path) as real_store:
        from judgekit.store.database import has_ratings

        has_judges = has_ratings(real_store, rubric.id, None if view else rubric.hash, "judge")
        store: Any = real_store
        if view is not None:
            from judgekit.rubric.views import ViewSource, rubric_view

            rubric = rubric_view(rubric, view)
            store = ViewSource(real_store, rubric)
        verdict = load_verdict(verdict_path) if verdict_path is not None else None
        codes, unreadable = None, None
        try:
            codes = read_codes(store, rubric)  # the ratings, read once for every section and the hashes
        except JudgekitError as exc:  # (a verdict that no longer matches is said first)
            unreadable = exc
        if verdict is not None and (verdict["rubric"], verdict["rubric_hash"]) == (rubric.id, rubric.hash):
            # the verdict must still describe this store; another rubric, an older edit of this
            # one, or a judge whose identity changed are shown in the report as "not trusted"
            match_store(verdict, store, rubric, codes=codes)
        out_dir, stem = (out.parent, out.stem) if out.suffix.lower() in (".html", ".htm") else (out, "report")
        if out_dir.exists() and not out_dir.is_dir():
            raise JudgekitError(f"{out_dir} is a file; --out needs a folder (it is created if missing).")
        if unreadable is not None:
            raise unreadable
        assert codes is not None
        agreement = agreement_report(store, rubric=rubric, by=report_by(store, by_columns(by)), reference=reference,
                                     n_resamples=resamples, codes=codes).to_dict()
        if view is None:
            extras = collect_extras(store, rubric, agreement, per_judge=per_judge, verdict=verdict, codes=codes)
        else:
            from judgekit.report.collect import collect_view_extras

            extras = collect_view_extras(store, rubric, agreement, per_judge=per_judge, verdict=verdict,
                                         codes=codes)
        if probes_path is not None:
            from judgekit.report.probes import read_probes

            extras["probes"] = read_probes(probes_path, rubric.id)
    paths = write_report(out_dir, agreement, verdict, extras=extras, stem=stem)
    from judgekit.report.summary import summarise

    summary = summarise(agreement, verdict, extras)
    store_note(store_path, has_judges, rubric.id, None if view else rubric.hash, quiet=quiet or json_out == "-")
    if json_out is not None:  # what the report says, and where it is
        import json

        write_json(json_out, json.dumps({"summary": summary, "files": {k: str(p) for k, p in paths.items()}},
                                        indent=1, default=str))
    if quiet or json_out == "-":
        return
    echo(summary["verdict"]["headline"])
    for j in summary["judges"]:
        echo(f"  {j['status']:<12} {j['judge']}")
        for c in j["failed_checks"]:
            echo(f"               failed {c['sentence']}")
    for kind, p in paths.items():
        echo(f"wrote {kind:<8} {p}")


COMMANDS: list[click.Command] = [report_cmd]
