"""Agreement when the items are rated under several rubrics (a panel's ``rubric_by``: one rubric
per framing): one report per group of items under its own rubric, and a pooled report over all
the groups when their rubrics have the same codes and values (the labels then mean the same).

Each group report is :func:`judgekit.agreement.report.agreement_report` on the store, restricted
to the group's items, under the group's rubric (its current hash). The pooled report joins the
groups' ratings (each group's own items under its own rubric) and reads them under the first
group's rubric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgekit.agreement.report import agreement_report
from judgekit.rubric.model import Rubric


@dataclass(frozen=True)
class RubricGroup:
    """Items rated under one rubric: ``label`` names them (``framing=1``)."""

    label: str
    rubric: Rubric
    item_ids: tuple[str, ...]


def _codes_agree(rubrics: Sequence[Rubric]) -> bool:
    """True when every rubric has the same codes, in the same order, with the same values."""
    first = rubrics[0]
    return all(r.codes == first.codes and r.values == first.values for r in rubrics[1:])


def per_rubric_reports(
    store: Any,
    groups: Sequence[RubricGroup],
    *,
    by: Sequence[str] = (),
    pooled_by: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """``{"groups": [{"label", "rubric", "rubric_hash", "report"}], "pooled": report | None,
    "pooled_note": str}``. ``by`` slices each group's report, ``pooled_by`` the pooled one;
    ``options`` go to :func:`agreement_report` (judges, humans, reference, n_resamples, seed)."""
    out: list[dict[str, Any]] = []
    for g in groups:
        report = agreement_report(store, rubric=g.rubric, only_items=list(g.item_ids), by=by,
                                  **options).to_dict()
        out.append({"label": g.label, "rubric": g.rubric.id, "rubric_hash": g.rubric.hash,
                    "report": report})
    rubrics = {g.rubric.ref: g.rubric for g in groups}
    pooled = None
    if len(rubrics) == 1:
        note = "every group is rated under one rubric: the groups' reports are its slices"
    elif _codes_agree(list(rubrics.values())):
        first = groups[0].rubric
        parts = []
        for g in groups:
            r = store.ratings(rubric=g.rubric)
            parts.append(r[r["item_id"].astype(str).isin(set(g.item_ids))])
        joined = pd.concat(parts, ignore_index=True)
        joined["rubric"] = first.id
        pooled = agreement_report(joined, rubric=first, items=store.items(), by=pooled_by,
                                  **options).to_dict()
        pooled["rubric"] = ", ".join(_rubrics_ids(groups))
        note = (f"pooled over {', '.join(_rubrics_ids(groups))}: their codes and values are the same")
    else:
        note = ("not pooled: the rubrics " + ", ".join(_rubrics_ids(groups))
                + " have different codes or values")
    return {"groups": out, "pooled": pooled, "pooled_note": note}


def _rubrics_ids(groups: Sequence[RubricGroup]) -> list[str]:
    """The distinct rubric ids of ``groups``, in order."""
    return list(dict.fromkeys(g.rubric.id for g in groups))


__all__ = ["RubricGroup", "per_rubric_reports"]
