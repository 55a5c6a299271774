"""Panel aggregates: one derived rater from several judges (pure functions, no I/O).

Rules, stated once (they are in the docs too):

* **One vote per judge.** A judge's trials on an item are first reduced to that judge's vote, so
  a judge asked five times does not outvote a judge asked once. For ``majority`` a judge's vote is
  split over the labels of its ``ok`` trials (3 x refusal + 2 x compliance = 0.6 / 0.4).
* **Abstentions and errors do not vote.** A judge with no ``ok`` trial on an item casts nothing.
  When fewer than ``min_votes`` judges voted, the aggregate abstains with the reason
  (default ``min_votes``: more than half of the panel's judges).
* **Ties** (two labels with the same vote total; for ``median``, a median halfway between two
  codes): ``tie="abstain"`` (default) abstains and names the tied labels; ``"highest"`` /
  ``"lowest"`` take the tied label with the highest / lowest rubric value.
* ``mean`` and ``median`` work on the rubric's values (ordinal or interval rubrics only): a judge's
  vote is the mean (median) of its ``ok`` trials' values; the aggregate's ``value`` is the exact
  mean (median) of the votes, its ``label`` the code whose value is nearest.

The derived rater's id is ``panel:<method>``; it is written with ``rater_kind="judge"``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Literal, get_args

from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric

if TYPE_CHECKING:  # numpy and pandas are imported by aggregate(): loading a panel needs neither
    import pandas as pd

Method = Literal["majority", "mean", "median"]
Tie = Literal["abstain", "highest", "lowest"]
METHODS: tuple[str, ...] = get_args(Method)
TIES: tuple[str, ...] = get_args(Tie)


def default_min_votes(n_judges: int) -> int:
    """More than half of the judges."""
    return n_judges // 2 + 1


def check_method(method: str, rubric: Rubric) -> None:
    if method not in METHODS:
        raise JudgekitError(f"Unknown aggregate {method!r}; use one of {', '.join(METHODS)}.")
    if method != "majority" and rubric.level == "nominal":
        raise JudgekitError(
            f"Aggregate {method!r} needs an ordinal or interval rubric; {rubric.id} is nominal "
            "(use majority)."
        )


def aggregate(
    ratings: pd.DataFrame,
    rubric: Rubric,
    *,
    method: Method = "majority",
    judges: list[str],
    tie: Tie = "abstain",
    min_votes: int | None = None,
) -> pd.DataFrame:
    """Derived ratings of ``judges`` on every item any of them rated.

    ``ratings``: long format with at least ``item_id, rater_id, label, status``. Returns long rows
    ``item_id, rater_id, rater_kind, label, value, trial, status, rationale``.
    """
    import numpy as np
    import pandas as pd

    check_method(method, rubric)
    need = default_min_votes(len(judges)) if min_votes is None else min_votes
    df = ratings[ratings["rater_id"].isin(judges)]
    values = rubric.values
    out: list[tuple[str, str | None, float | None, str, str]] = []
    for item_id, grp in df.groupby("item_id", sort=False):
        ok = grp[(grp["status"] == "ok") & grp["label"].notna()]
        votes_by_judge: dict[str, list[str]] = defaultdict(list)
        for rater, label in zip(ok["rater_id"], ok["label"], strict=True):
            votes_by_judge[str(rater)].append(str(label))
        n = len(votes_by_judge)
        if n < need:
            out.append((str(item_id), None, None, "abstain",
                        f"only {n} of {len(judges)} judges gave a label (need {need})"))
            continue
        if method == "majority":
            out.append((str(item_id), *majority_vote(votes_by_judge, values, tie)))
        else:
            reduce = np.mean if method == "mean" else np.median
            per_judge = [float(reduce([values[c] for c in cs])) for cs in votes_by_judge.values()]
            out.append((str(item_id), *_nearest(float(reduce(per_judge)), rubric, tie, method)))
    res = pd.DataFrame(out, columns=["item_id", "label", "value", "status", "rationale"])
    res.insert(1, "rater_id", f"panel:{method}")
    res.insert(2, "rater_kind", "judge")
    res["trial"] = 0
    return res


def majority_vote(
    votes: dict[str, list[str]], values: dict[str, float], tie: str
) -> tuple[str | None, float | None, str, str]:
    """``(label, value, status, rationale)`` of one item from each judge's ``ok`` labels (a
    judge's vote split over its trials' labels; ties as ``tie`` says)."""
    totals: dict[str, float] = defaultdict(float)
    for labels in votes.values():
        for lab in labels:
            totals[lab] += 1.0 / len(labels)
    best = max(totals.values())
    top = sorted(c for c, v in totals.items() if math.isclose(v, best, abs_tol=1e-9))
    summary = ", ".join(f"{c}={totals[c]:.3g}" for c in sorted(totals, key=lambda c: -totals[c]))
    if len(top) == 1:
        return top[0], values[top[0]], "ok", f"majority of {len(votes)} judges: {summary}"
    if tie == "abstain":
        return None, None, "abstain", f"tie between {', '.join(top)} ({summary})"
    pick = (max if tie == "highest" else min)(top, key=lambda c: values[c])
    return pick, values[pick], "ok", f"tie between {', '.join(top)} broken to the {tie}: {summary}"


def _nearest(
    x: float, rubric: Rubric, tie: str, method: str
) -> tuple[str | None, float | None, str, str]:
    dist = {c: abs(v - x) for c, v in rubric.values.items()}
    best = min(dist.values())
    top = [c for c, d in dist.items() if math.isclose(d, best, abs_tol=1e-9)]
    if len(top) == 1:
        return top[0], x, "ok", f"{method} value {x:.4g}, nearest code {top[0]}"
    if tie == "abstain":
        return None, None, "abstain", f"{method} value {x:.4g} is halfway between {', '.join(top)}"
    pick = (max if tie == "highest" else min)(top, key=lambda c: rubric.values[c])
    return pick, x, "ok", f"{method} value {x:.4g} halfway between {', '.join(top)}, broken to the {tie}"
