"""Decisions that can be reached. Rates decided on the judge's own calls, what a
small count can show, budgets that name their unit, never exceed the data, and say "undecidable"
with the reason."""

from __future__ import annotations

from pathlib import Path

from judgekit.gate.budget import label_budget
from judgekit.gate.run import run_gate
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.check import Check, Interval

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes


def _store(tmp_path: Path, n_judged: int, n_labelled: int, *, abstain: set[int] = frozenset(),
           one_label: bool = False, groups: int = 1) -> Path:
    """``n_judged`` items judged by ``j`` (right on every labelled item, abstaining on
    ``abstain``), the first ``n_labelled`` also labelled by the reference ``ref``; metadata
    ``grp`` (``groups`` values); ``one_label``: group g0 has a single reference label."""
    lines = ["item_id,rater_id,rater_kind,label,status,grp"]
    for k in range(n_judged):
        grp = f"g{k % groups}"
        ref = CODES[0] if one_label and grp == "g0" else CODES[k % 3]
        if k < n_labelled:
            lines.append(f"i{k},ref,reference,{ref},ok,{grp}")
        lines.append(f"i{k},j,judge,{'' if k in abstain else ref},{'abstain' if k in abstain else 'ok'},{grp}")
    csv = tmp_path / "r.csv"
    csv.write_text("\n".join(lines) + "\n")
    db = tmp_path / "s.db"
    with Store(db) as s:
        import_ratings(s, csv, REFUSAL)
    return db


def _gate(tmp_path: Path, db: Path, checks: str, by: str = "") -> dict:
    p = tmp_path / "p.yaml"
    p.write_text(f"rubric: refusal\njudges: [j]\nreference: ref\n{by}n_resamples: 300\nchecks:\n{checks}")
    with Store(db) as s:
        v, _ = run_gate(s, p)
    return {c["name"]: c for c in v["judges"][0]["checks"]}


def test_error_and_abstention_rates_are_decided_on_the_judges_own_calls(tmp_path: Path) -> None:
    # 600 items judged, 0 abstentions; only 40 of them labelled by people
    db = _store(tmp_path, 600, 40)
    checks = _gate(tmp_path, db, "  min_items: 30\n  min_value: 0.5\n  max_abstention_rate: 0.01\n"
                                 "  max_error_rate: 0.01\n")
    for name in ("max_abstention_rate", "max_error_rate"):
        c = checks[name]
        # Wilson upper bound of 0/600: z²/(n + z²) = 3.8415/603.84 = 0.00636 <= 0.01: decided
        assert c["n"] == 600 and c["state"] == "pass", c
        assert abs(c["ci"][1] - 3.841459 / (600 + 3.841459)) < 1e-4
        assert "all items it rated, human-labelled or not" in c["detail"]


def test_a_rate_the_whole_study_cannot_decide_says_what_it_shows(tmp_path: Path) -> None:
    # the five-sample essay study: 18 items, all judged and labelled, 0 abstentions
    db = _store(tmp_path, 18, 18)
    checks = _gate(tmp_path, db, "  min_items: 10\n  min_value: 0.5\n  max_abstention_rate: 0.05\n")
    c = checks["max_abstention_rate"]
    assert c["state"] == "inconclusive" and c["budget"]["items"] is None
    # the upper end of the check's own Wilson 95% interval of 0 of 18: z²/(18 + z²) = 0.1759
    assert abs(c["ci"][1] - 3.841459 / (18 + 3.841459)) < 1e-4
    assert "0 of 18 abstentions: shows ≤ 0.176 (95% CI), not ≤ 0.05" in c["budget"]["sentence"]
    assert "undecidable" in c["budget"]["sentence"] and "human" not in c["budget"]["sentence"]


def test_a_rate_with_unjudged_items_asks_for_judge_calls_not_human_labels(tmp_path: Path) -> None:
    db = _store(tmp_path, 100, 40)
    with Store(db) as s:  # 900 more items the judge has not rated yet
        import pandas as pd
        s.put_items(pd.DataFrame({"item_id": [f"x{k}" for k in range(900)], "prompt": "p", "response": "r"}))
    checks = _gate(tmp_path, db, "  min_items: 30\n  min_value: 0.5\n  max_error_rate: 0.01\n")
    c = checks["max_error_rate"]
    assert c["state"] == "inconclusive" and c["n"] == 100
    s = c["budget"]["sentence"]
    assert "more items judged by j (no human label needed)" in s and "human-rated" not in s
    # Wilson: 0 of n decides <= 0.01 once 3.8415/(n + 3.8415) <= 0.01, n >= 381: about 281 more
    assert 281 <= c["budget"]["items"] <= 400


def _lower_bound(n: int, low: float, high: float) -> Check:
    return Check("min_lower_bound", "j", low, 0.6, n, "", interval=Interval(low, high, "bootstrap", 0.95),
                 metric="kappa")


def test_a_budget_never_exceeds_the_data_and_uses_thousands_separators() -> None:
    check = _lower_bound(1000, 0.58, 0.66)
    # d = 0.02, h = 0.04: n' = 1000 (0.04/0.02)^2 = 4000, i.e. about 3,000 more
    b = label_budget(check, point=0.62, available=10_000)
    assert b.items is not None and b.items >= 3000
    assert f"about {b.items:,} more human-rated items" in b.sentence and "," in b.sentence
    capped = label_budget(check, point=0.62, available=500)
    assert capped.items is None
    assert "cannot be decided with this study: needs about" in capped.sentence
    assert "the study holds 500 more (because" in capped.sentence


def test_an_estimate_on_the_threshold_is_undecidable_with_the_reason() -> None:
    check = _lower_bound(100, 0.5, 0.7)
    b = label_budget(check, point=0.6)
    assert b.items is None
    assert b.sentence == ("min_kappa_lower_bound: undecidable: the estimate sits on the threshold 0.6, so no "
                             "number of more human-rated items is likely to decide it.")


def test_an_undefined_agreement_slice_is_undecidable(tmp_path: Path) -> None:
    # slice g0 has one reference label only: κ is undefined there, more such items cannot define it
    db = _store(tmp_path, 120, 120, one_label=True, groups=2)
    checks = _gate(tmp_path, db, "  min_items: 30\n  min_value: 0.5\n  per_slice: {min_items: 100, min_value: 0.5}\n",
                   by="by: [grp]\n")
    c = checks["per_slice[grp=g0]"]
    assert c["figure"] is None and c["state"] == "inconclusive"
    assert c["budget"]["items"] is None and "undecidable: the figure is undefined" in c["budget"]["sentence"]
