"""A check's decision follows its own interval: a floor check whose interval lies wholly below
the floor fails (whatever n), an undefined figure is never a fail, and a check that cannot apply
to a rater is not applied and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.check import derive_state

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes


def _gate(tmp_path: Path, ratings: list[str], policy: str, items: list[str] | None = None):
    (tmp_path / "r.csv").write_text("\n".join(["item_id,rater_id,rater_kind,label,status", *ratings]) + "\n")
    extra = {}
    if items is not None:
        (tmp_path / "items.csv").write_text("\n".join(items) + "\n")
        extra = {"items_path": tmp_path / "items.csv"}
    db = tmp_path / "s.db"
    with Store(db) as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL, **extra)
    (tmp_path / "p.yaml").write_text(policy)
    res = CliRunner().invoke(main, ["gate", str(tmp_path / "p.yaml"), "--store", str(db), "--out", str(tmp_path / "o")])
    v = json.loads((tmp_path / "o" / "verdict.json").read_text())
    return res, v


def test_a_kappa_interval_wholly_below_the_floor_fails_even_below_min_items(tmp_path):
    # 24 items, the judge says the next code on 18 of them: kappa far below 0.6, its interval too
    ratings = []
    for k in range(24):
        ref = CODES[k % 3]
        ratings += [f"i{k},ref,reference,{ref},ok", f"i{k},j,judge,{CODES[(k + 1) % 3] if k % 4 else ref},ok"]
    res, v = _gate(tmp_path, ratings, "rubric: refusal\njudges: [j]\nn_resamples: 300\nchecks:\n"
                   "  min_items: 30\n  metric: kappa\n  min_lower_bound: 0.6\n  min_value: 0.6\n")
    checks = {c["name"]: c for c in v["judges"][0]["checks"]}
    for name in ("min_kappa_lower_bound", "min_kappa"):
        c = checks[name]
        assert c["n"] == 24 and c["ci"][1] < 0.6, c
        assert c["state"] == "fail" and c["budget"] is None, c
    assert checks["min_items"]["state"] == "inconclusive"
    assert v["judges"][0]["state"] == "fail" and res.exit_code not in (0, 3)


def test_small_n_with_an_interval_on_the_passing_side_stays_inconclusive():
    assert derive_state("min_lower_bound", 0.7, 0.6, (0.7, 0.9), 20, 30) == "inconclusive"
    assert derive_state("min_lower_bound", 0.1, 0.6, (0.1, 0.5), 20, 30) == "fail"
    assert derive_state("max_error_rate", 0.2, 0.05, (0.1, 0.4), 20, 30) == "fail"
    assert derive_state("max_error_rate", 0.0, 0.05, (0.0, 0.16), 20, 30) == "inconclusive"


def test_an_undefined_kappa_on_a_one_class_slice_is_undefined_not_a_fail(tmp_path):
    # slice grp=b holds only 'refusal' items and the judge gets all 40 of them right: kappa is undefined
    ratings, items = [], ["item_id,grp,prompt,response"]
    for k in range(140):
        ref = CODES[k % 3] if k < 100 else CODES[0]
        ratings += [f"i{k},ref,reference,{ref},ok", f"i{k},j,judge,{ref},ok"]
        items.append(f"i{k},{'a' if k < 100 else 'b'},p{k},r{k}")
    res, v = _gate(tmp_path, ratings, "rubric: refusal\njudges: [j]\nby: [grp]\nn_resamples: 200\nchecks:\n"
                   "  min_items: 100\n  min_value: 0.8\n  per_slice: {min_items: 30, min_value: 0.5}\n", items)
    checks = {c["name"]: c for c in v["judges"][0]["checks"]}
    b = checks["per_slice[grp=b]"]
    assert b["figure"] is None and b["undefined"], b
    assert b["state"] != "fail", b
    assert "undefined" in b["detail"]
    assert v["judges"][0]["state"] != "fail"


def test_call_rates_are_not_applied_to_a_derived_panel_rater_and_the_verdict_says_so(tmp_path):
    ratings = []
    for k in range(60):
        ref = CODES[k % 3]
        ratings += [f"i{k},ref,reference,{ref},ok", f"i{k},panel:majority,judge,{ref},ok", f"i{k},j,judge,{ref},ok"]
    res, v = _gate(tmp_path, ratings, "rubric: refusal\njudges: [panel:majority, j]\nn_resamples: 200\nchecks:\n"
                   "  min_items: 50\n  min_value: 0.6\n  max_error_rate: 0.1\n  max_abstention_rate: 0.1\n")
    panel, j = v["judges"]
    names = {c["name"] for c in panel["checks"]}
    assert names == {"min_items", "min_kappa"}, names
    assert [n.split(":")[0] for n in panel["not_applied"]] == ["max_abstention_rate", "max_error_rate"]
    assert "derived rater" in panel["not_applied"][0] and "makes no calls" in panel["not_applied"][0]
    assert panel["state"] == "pass" and "not_applied" not in j
    assert {"max_error_rate", "max_abstention_rate"} <= {c["name"] for c in j["checks"]}
    assert res.exit_code == 0, res.output
    assert "not applied" in res.output
    # the verdict the gate wrote reads back, and its not_applied list is held to the policy
    from judgekit.errors import JudgekitError
    from judgekit.verdict.read import read_verdict

    path = tmp_path / "o" / "verdict.json"
    assert read_verdict(path)["judges"][0]["judge"] == "panel:majority"
    v["judges"][0]["not_applied"] = v["judges"][0]["not_applied"][:1]
    path.write_text(json.dumps(v))
    with pytest.raises(JudgekitError, match="not_applied"):
        read_verdict(path)


def test_a_coverage_budget_counts_the_judges_calls_not_human_labels(tmp_path):
    ratings = []
    for k in range(60):
        ref = CODES[k % 3]
        ratings.append(f"i{k},ref,reference,{ref},ok")
        ratings.append(f"i{k},j,judge,,abstain" if k % 15 == 0 else f"i{k},j,judge,{ref},ok")
    _, v = _gate(tmp_path, ratings, "rubric: refusal\njudges: [j]\nn_resamples: 200\nchecks:\n"
                 "  min_items: 30\n  min_value: 0.5\n  min_coverage: 0.9\n")
    cov = next(c for c in v["judges"][0]["checks"] if c["name"] == "min_coverage")
    assert cov["state"] == "inconclusive" and cov["budget"] is not None, cov
    assert cov["unit"] == "in-scope items judged by j (no human label needed)", cov
    assert "human-rated" not in cov["budget"]["sentence"] and "judged by j" in cov["budget"]["sentence"], cov
