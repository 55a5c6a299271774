"""`judgekit plan`: the human-labelled units a gate policy needs, before labelling (docs/gate.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from judgekit.cli.options import FiniteFloatRange, store_option
from judgekit.core.console import echo


@click.command("plan")
@click.argument("policy", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--budget", type=click.IntRange(2, 10_000_000), default=None,
              help="Labelled units you can afford (conversations when the policy has analysis_fidelity, else "
                   "items): also print the smallest margin each check resolves at it.")
@click.option("--assume-kappa", type=FiniteFloatRange(-1, 1, min_open=True, max_open=True), default=None,
              help="Plan the agreement floor for this κ instead of the pilot's estimate.")
@click.option("--assume-sd", type=FiniteFloatRange(0, 2, min_open=True), default=None,
              help="Without a pilot: the per-conversation SD of the difference judge − reference of a fidelity "
                   "figure (e.g. 0.12).")
@click.option("--judge", default=None, help="Plan for this judge of the policy only (the one to certify).")
@click.option("--assured", is_flag=True,
              help="Budget the study's figures at the upper 80% confidence limit of the pilot's spread (Browne "
                   "1995): more labels, but a pilot whose spread came out low no longer plans too few.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the plan as JSON here (`judgekit sample --from-plan` reads it).")
@store_option
def plan_cmd(policy: Path, budget: int | None, assume_kappa: float | None, assume_sd: float | None,
             judge: str | None, assured: bool, out_path: Path | None, store_path: str) -> None:
    """Plan before labelling: per check, the human-labelled units needed to decide it with 80%
    power at the policy's threshold (from a pilot: the judge's ratings and a few human labels in
    the store), the smallest margin a --budget resolves, and the checks no budget can decide.

    \b
    Example:
      judgekit plan policy.yaml --store pilot.db --budget 150 --out plan.json
      judgekit sample --name main --from-plan plan.json --by-conversation --store pilot.db
    """
    from judgekit.core.atomic import write_text_atomic
    from judgekit.gate.plan import make_plan
    from judgekit.store.database import Store

    with Store.open_existing(store_path) as store:
        plan = make_plan(store, policy, budget=budget, assume_kappa=assume_kappa, judge=judge, assume_sd=assume_sd,
                         assured=assured)
    for line in plan["lines"]:
        echo(line)  # plain text: echo cleans it; no markup, so nothing to escape
    if out_path is not None:
        write_text_atomic(out_path, json.dumps({"policy": str(policy), **plan}, indent=1))
        echo(f"wrote {out_path}")


COMMANDS: list[click.Command] = [plan_cmd]
