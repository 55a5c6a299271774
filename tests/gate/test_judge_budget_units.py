"""A judge's label budget compares needs only in like units: conversations with conversations,
judge calls with judge calls. A need for more judge calls is never printed as human-rated items,
and never outranks a need for human labels counted in another unit."""

from __future__ import annotations

from judgekit.gate.budget import judge_budget
from judgekit.verdict.check import Budget, Check, Interval, Subject

CALLS = "in-scope items judged by j (no human label needed)"


def _drift(budget: Budget) -> Check:
    return Check("analysis_fidelity", "j", 0.03, 0.05, 40, "", interval=Interval(0.0, 0.08, "bootstrap", 0.9),
                 subject=Subject(analysis="calibration", figure="drift", cell="drift(model=a)", model="a"),
                 unit="conversations", min_n=10, budget=budget)


def _coverage(budget: Budget) -> Check:
    return Check("min_coverage", "j", 0.93, 0.95, 500, "", interval=Interval(0.91, 0.96, "wilson", 0.95),
                 unit=CALLS, budget=budget)


def test_a_judge_budget_reports_each_unit_and_counts_human_labels_only() -> None:
    fid = _drift(Budget(78, "drift(model=a): about 13 more conversations", {}, 13, "conversations"))
    cov = _coverage(Budget(300, f"min_coverage: about 300 more {CALLS}", {}, 300, CALLS))
    b = judge_budget("j", [fid, cov])
    assert "about 13 more conversations" in b.sentence, b.sentence
    assert f"about 300 more {CALLS}" in b.sentence, b.sentence
    # the judge's human-label budget is the conversations' items, never the judge's calls
    assert b.items == 78, b


def test_a_judge_needing_only_calls_asks_for_no_human_label() -> None:
    cov = _coverage(Budget(300, f"min_coverage: about 300 more {CALLS}", {}, 300, CALLS))
    b = judge_budget("j", [cov])
    assert b.items is None and f"about 300 more {CALLS}" in b.sentence, b
    assert "human-rated" not in b.sentence, b.sentence
