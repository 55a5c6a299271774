"""`judgekit adjudicate`: a reference rater from several human annotators (docs/agreement.md)."""

from __future__ import annotations

from pathlib import Path

import click

from judgekit.cli.options import OutputPath, name_list, store_option
from judgekit.core.console import echo

#: tied items listed on the terminal (all of them go to --ties)
_SHOWN = 20


@click.command("adjudicate", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--rubric", "rubric_name", required=True, help="Rubric the annotators labelled under.")
@click.option("--raters", required=True, help="The human annotators, comma-separated (at least two).")
@click.option("--as", "name", required=True, help="Rater id of the reference to write (kind reference).")
@click.option("--min-raters", type=click.IntRange(min=1, max=1000), default=1, show_default=True,
              help="Leave out items fewer annotators labelled (2: no item rests on one annotator).")
@click.option("--ties", "ties_path", default=None, type=OutputPath(dir_okay=False, path_type=Path),
              help="Write the tied items (item_id, votes) here (.csv, .jsonl, .json, .parquet) for a "
                   "person to adjudicate.")
@store_option
def adjudicate_cmd(rubric_name: str, raters: str, name: str, min_raters: int, ties_path: Path | None,
                   store_path: str) -> None:
    """Write the majority label of several annotators as a reference rater; items where the
    annotators tie are left out and listed for adjudication.

    The new rater is a reference like any other: `agree --reference NAME`, `reference: NAME` in a
    gate or selective policy, `analyze ... --correct ppi --reference NAME`.

    \b
    Example:
      judgekit adjudicate --rubric refusal --raters ann1,ann2,ann3 --as majority --ties ties.csv
    """
    import pandas as pd

    from judgekit.agreement.adjudicate import adjudicate
    from judgekit.io.tables import write_table
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    names = name_list("--raters", raters) or []
    rubric = load_rubric(rubric_name)
    with Store.open_existing(store_path) as store:
        adj = adjudicate(store, rubric, names, name, min_raters=min_raters)
    echo(f"wrote reference {name!r}: {adj.summary()}")
    if adj.ties:
        shown = list(adj.ties.items())[:_SHOWN]
        echo("tied (adjudicate these, e.g. with `labelstudio push`, then import the adjudicator's "
             "labels as a reference):")
        for item, votes in shown:
            echo(f"  {item}  " + ", ".join(f"{lab} x{k}" for lab, k in votes.items()))
        if len(adj.ties) > _SHOWN:
            echo(f"  ... and {len(adj.ties) - _SHOWN} more" + ("" if ties_path else " (--ties FILE lists all)"))
    if ties_path is not None:
        rows = [{"item_id": i, "votes": "; ".join(f"{lab}:{k}" for lab, k in v.items())}
                for i, v in adj.ties.items()]
        write_table(pd.DataFrame(rows, columns=["item_id", "votes"]), ties_path)
        echo(f"wrote {ties_path} ({len(rows)} tied items)")


COMMANDS = [adjudicate_cmd]
