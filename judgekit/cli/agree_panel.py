"""``judgekit agree --panel PANEL.yaml``: agreement per framing, each under its own rubric (a
panel's ``rubric_by`` / ``variables``), then pooled where the rubrics' codes agree. A helper of
:mod:`judgekit.cli.core`'s ``agree`` (no command of its own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.core.console import echo, make_console, safe_text
from judgekit.errors import JudgekitError
from judgekit.store.database import Store


def one_annotator_warning(store: Any, rubric: Any, reference: dict[str, Any]) -> str | None:
    """The warning that an agreement report's reference (its ``reference`` entry) is one human
    annotator while other human raters exist under ``rubric``
    (:func:`judgekit.agreement.adjudicate.reference_warning`), else None; read only for a human
    reference (the lean agreement path loads no pandas otherwise)."""
    if reference.get("kind") != "human":
        return None
    from judgekit.agreement.adjudicate import reference_warning

    return reference_warning(store, rubric, reference["rater"])


def agree_by_panel(
    panel_file: Path,
    *,
    rubric_name: str | None,
    by: list[str],
    judges: list[str] | None,
    humans: list[str] | None,
    reference: str | None,
    resamples: int,
    seed: int,
    sample: str | None,
    json_out: str | None,
    quiet: bool = False,
    store_path: str,
) -> None:
    """Print (and with ``json_out`` write) one agreement report per sub-panel of ``panel_file``."""
    from judgekit.agreement.per_rubric import RubricGroup, per_rubric_reports
    from judgekit.judges.panelfile import load_panel
    from judgekit.report.terminal import print_agreement

    if rubric_name is not None:
        raise JudgekitError("Give --rubric or --panel, not both: the panel names the rubric of each "
                            "framing.")
    if sample is not None:
        raise JudgekitError("--sample cannot be combined with --panel; restrict the panel's items "
                            "file instead.")
    panel = load_panel(panel_file)
    if not panel.groups:
        raise JudgekitError(
            f"Panel file {panel_file} has neither rubric_by nor variables, so it has one rubric; "
            f"use agree --rubric {panel.rubric.id.split('@')[0]} instead."
        )
    split = panel.file.rubric_by.column if panel.file.rubric_by else None
    inner = [c for c in by if c != split]  # the groups are the slices of the rubric_by column
    groups = [RubricGroup(g.label, g.rubric, tuple(g.items["item_id"].astype(str)))
              for g in panel.groups]
    with Store.open_existing(store_path) as store:
        result = per_rubric_reports(store, groups, by=inner, pooled_by=by, judges=judges,
                                    humans=humans, reference=reference, n_resamples=resamples,
                                    seed=seed)
        rubrics = {(g.rubric.id, g.rubric.hash): g.rubric for g in groups}
        first = {(g["rubric"], g["rubric_hash"]): g["report"]["reference"] for g in result["groups"]}
        warnings = [one_annotator_warning(store, rubrics[key], ref) for key, ref in first.items()]
    for warning in filter(None, warnings):  # stderr only, one line per rubric
        echo(warning, err=True)
    from judgekit.cli.options import write_json

    text = json.dumps(result, indent=1)
    if json_out == "-" or quiet:  # JSON on stdout, or nothing: no table
        write_json(json_out, text)
        return
    console = make_console()
    for g in result["groups"]:
        console.print(f"[bold]== {safe_text(g['label'])}: {safe_text(g['rubric'])} ==[/bold]")
        print_agreement(console, g["report"])
    console.print(f"[bold]== pooled ==[/bold] {safe_text(result['pooled_note'])}")
    if result["pooled"] is not None:
        print_agreement(console, result["pooled"])
    write_json(json_out, text)


__all__ = ["agree_by_panel"]
