"""What the labels a cascade keeps cost: each judge's cost per item from its recorded calls, and
the cascade's cost per kept label.

Judge ``j`` is asked about the items no earlier judge kept, a share ``reach_j = 1 - sum_{i<j}
coverage_i`` of all items (``reach_0 = 1``). With ``c_j`` its recorded cost per item (the USD of
its stored calls under the rubric / the items it rated, trials included), the cascade costs
``sum_j reach_j c_j`` per item and ``sum_j reach_j c_j / coverage`` per kept label. Judges whose
labels were imported (no recorded call) have an unknown cost, and so then has the cascade; the
panel judges a ``panel`` confidence reads (``with``) are not counted unless they are in the cascade.
"""

from __future__ import annotations

from typing import Any

from judgekit.selective.judgments import Judgments
from judgekit.store.calls import usage_by_judge
from judgekit.store.database import Store


def cascade_costs(store: Store, rubric_id: str, rubric_hash: str, j: Judgments,
                  coverages: list[float]) -> dict[str, Any]:
    """``{"per_item": {judge: USD or None}, "cascade_per_item": USD or None,
    "per_kept_label": USD or None}`` (see the module docstring)."""
    usage = {u.judge_id: u for u in usage_by_judge(store, rubric_id, rubric_hash)}
    per_item: dict[str, float | None] = {}
    for k, judge in enumerate(j.judges):
        rated = sum(1 for lab in j.labels[k] if lab is not None)
        u = usage.get(judge)
        per_item[judge] = None if u is None or u.calls == 0 or rated == 0 else u.cost_usd / rated
    total: float | None = 0.0
    reach = 1.0
    for judge, cov in zip(j.judges, coverages, strict=True):
        c = per_item[judge]
        if c is None:
            total = None
            break
        total = (total or 0.0) + reach * c
        reach -= cov
    kept = sum(coverages)
    return {"per_item": per_item, "cascade_per_item": total,
            "per_kept_label": None if total is None or kept == 0 else total / kept}


__all__ = ["cascade_costs"]
