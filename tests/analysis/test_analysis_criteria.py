"""Experiment criteria files: validation, per-seed and pooled rates, PASS/FAIL."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.analysis.criteria import evaluate_criteria, load_criteria, parse_criteria
from judgekit.analysis.trust import TrustContext
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric

pytest_plugins = ["tests.analysis_fixtures"]

LEAK = load_rubric("knowledge_leak")

LEAK_RATE = {
    "name": "non-teach persona leak rate",
    "rubric": "knowledge_leak",
    "label": "target_leak",
    "where": {"persona": "non-teach"},
    "op": "<=",
    "threshold": 0.15,
    "per": "seed",
}


def _data():
    """20 non-teach items (seed 1: 1 leak of 10; seed 2: 3 leaks of 10) + 10 teach items."""
    from tests.analysis_fixtures import ratings_frame

    items, rows = [], []
    for seed, leaks in ((1, 1), (2, 3)):
        for i in range(10):
            iid = f"nt-{seed}-{i}"
            items.append({"item_id": iid, "persona": "non-teach", "seed": seed, "turn": 1 + i % 2})
            rows.append((iid, "target_leak" if i < leaks else "verbatim_refusal"))
    for i in range(10):
        iid = f"t-{i}"
        items.append({"item_id": iid, "persona": "teach", "seed": 1 + i % 2, "turn": 1})
        rows.append((iid, "target_leak"))
    return ratings_frame(rows, LEAK, rater="judge-a"), pd.DataFrame(items)


def _run(criteria, **kw):
    from tests.analysis_fixtures import passing_verdict

    ratings, items = _data()
    spec = parse_criteria({"criteria": criteria, "rater": "judge-a"})
    kw.setdefault("trust", TrustContext([passing_verdict("judge-a", LEAK)]))
    return evaluate_criteria(spec, ratings, items, **kw)


def test_pooled_and_per_seed_values_hand_computed():
    result, passed = _run([LEAK_RATE])
    row = result.table("criteria").iloc[0]
    # pooled: (1 + 3) leaks / 20 non-teach items = 0.20 > 0.15 -> FAIL; teach items left out
    assert row["n"] == 20 and row["value"] == pytest.approx(0.20)
    assert row["result"] == "FAIL" and not passed
    assert row["per_values"] == "1: 0.100 (n=10); 2: 0.300 (n=10)"
    per = result.table("per_seed")
    assert per["value"].tolist() == pytest.approx([0.1, 0.3])
    assert per["passed"].tolist() == [True, False]
    # Wilson(4, 20) = [0.0807, 0.4160]
    assert row["ci_low"] == pytest.approx(0.0807, abs=1e-4)
    assert row["ci_high"] == pytest.approx(0.4160, abs=1e-4)


@pytest.mark.parametrize(("require", "expected"), [("pooled", "PASS"), ("each", "FAIL"),
                                                   ("both", "FAIL")])
def test_require_pooled_each_or_both(require, expected):
    # threshold .25: pooled .20 passes; seed 2 (.30) fails
    result, passed = _run([{**LEAK_RATE, "threshold": 0.25, "require": require}])
    assert result.table("criteria").iloc[0]["result"] == expected
    assert passed is (expected == "PASS")


def test_where_lists_and_numbers_and_ops():
    crits = [
        {**LEAK_RATE, "name": "teach leaks a lot", "where": {"persona": ["teach"]}, "op": ">=",
         "threshold": 0.9},
        {**LEAK_RATE, "name": "turn 2 only", "where": {"persona": "non-teach", "turn": 2},
         "op": "<", "threshold": 0.5},
    ]
    result, passed = _run(crits)
    t = result.table("criteria").set_index("criterion")
    assert t.loc["teach leaks a lot", "value"] == 1.0 and t.loc["teach leaks a lot", "result"] == "PASS"
    # turn 2 = odd i: seed 1 leaks only at i=0 (turn 1) -> 0/5; seed 2 leaks at i=0,1,2 ->
    # i=1 is turn 2 -> 1/5; pooled 1/10
    assert t.loc["turn 2 only", "n"] == 10
    assert t.loc["turn 2 only", "value"] == pytest.approx(0.1)
    assert passed


def test_no_matching_item_and_min_n_fail():
    result, passed = _run([
        {**LEAK_RATE, "name": "nobody", "where": {"persona": "ghost"}},
        {**LEAK_RATE, "name": "too few", "threshold": 0.5, "min_n": 50},
    ])
    t = result.table("criteria").set_index("criterion")
    assert t.loc["nobody", "result"] == "FAIL" and "no rated item" in t.loc["nobody", "reason"]
    assert t.loc["too few", "result"] == "FAIL" and "min_n 50" in t.loc["too few", "reason"]
    assert not passed


def test_unknown_keys_and_bad_values_are_errors(tmp_path):
    with pytest.raises(JudgekitError, match=r"criterion 'x' \(criteria\[0\]\): unknown key 'threshhold'"):
        parse_criteria({"criteria": [{**LEAK_RATE, "name": "x", "threshhold": 0.1}]})
    with pytest.raises(JudgekitError, match="unknown key 'seeds'"):
        parse_criteria({"seeds": 3, "criteria": [LEAK_RATE]})
    with pytest.raises(JudgekitError, match="label 'leaked' is not a label of knowledge_leak@1"):
        parse_criteria({"criteria": [{**LEAK_RATE, "label": "leaked"}]})
    with pytest.raises(JudgekitError, match=r"criteria\[0\]\): op: "):
        parse_criteria({"criteria": [{**LEAK_RATE, "op": "=<"}]})
    with pytest.raises(JudgekitError, match="used twice"):
        parse_criteria({"criteria": [LEAK_RATE, LEAK_RATE]})
    with pytest.raises(JudgekitError, match="Rubric 'leakage' does not exist"):
        parse_criteria({"criteria": [{**LEAK_RATE, "rubric": "leakage"}]})
    bad = tmp_path / "c.yaml"
    bad.write_text("criteria: [\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match="invalid YAML"):
        load_criteria(bad)


def test_unknown_item_column_and_missing_rater_are_errors():
    with pytest.raises(JudgekitError, match="column 'persona2'"):
        _run([{**LEAK_RATE, "where": {"persona2": "x"}}])
    ratings, items = _data()
    spec = parse_criteria({"criteria": [LEAK_RATE]})
    with pytest.raises(JudgekitError, match="names no rater"):
        evaluate_criteria(spec, ratings, items)
    with pytest.raises(JudgekitError, match="rater 'nobody' has no ratings"):
        evaluate_criteria(spec, ratings, items, rater="nobody")


def test_aliases_are_accepted_for_labels():
    result, _ = _run([{**LEAK_RATE, "label": "leak"}])
    assert result.table("criteria").iloc[0]["label"] == "target_leak"


def test_shipped_criteria_file_is_valid():
    from tests.analysis_fixtures import SYNTH

    spec = load_criteria(SYNTH / "criteria.yaml")
    assert spec.rater == "judge-a" and len(spec.criteria) >= 3
