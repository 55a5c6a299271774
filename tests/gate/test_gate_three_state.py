"""Every check and judge is pass, fail or inconclusive; an inconclusive one
carries a label budget; `judgekit gate` exits 3 when none fails but some is inconclusive; a
verdict forged from inconclusive to pass is refused."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.errors import UntrustedJudgeError
from judgekit.gate.run import explain, run_gate
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.check import derive_state
from judgekit.verdict.read import load_verdict
from judgekit.verdict.trust import require_trusted

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes


def _store(tmp_path: Path, n: int, wrong: set[int]) -> Path:
    """``n`` items with an adjudicated label (codes cycling); judge ``j`` agrees except on
    ``wrong`` (there it says the next code)."""
    lines = ["item_id,rater_id,rater_kind,label,status"]
    for k in range(n):
        ref = CODES[k % 3]
        lines.append(f"i{k},ref,reference,{ref},ok")
        lines.append(f"i{k},j,judge,{CODES[(k + 1) % 3] if k in wrong else ref},ok")
    csv = tmp_path / "r.csv"
    csv.write_text("\n".join(lines) + "\n")
    db = tmp_path / "s.db"
    with Store(db) as s:
        import_ratings(s, csv, REFUSAL)
    return db


def _policy(tmp_path: Path, checks: str, name: str = "p.yaml") -> Path:
    p = tmp_path / name
    p.write_text(f"rubric: refusal\njudges: [j]\nn_resamples: 400\nchecks:\n{checks}")
    return p


SMALL = "  min_items: 30\n  metric: kappa\n  min_lower_bound: 0.6\n  max_abstention_rate: 0.05\n"


def _gate(db: Path, policy: Path, out: Path):
    return CliRunner().invoke(main, ["gate", str(policy), "--store", str(db), "--out", str(out)])


def test_a_20_item_gate_is_inconclusive_with_a_label_budget_and_exit_3(tmp_path):
    db = _store(tmp_path, 20, wrong={0})
    res = _gate(db, _policy(tmp_path, SMALL), tmp_path / "o")
    assert res.exit_code == 3, res.output
    v = json.loads((tmp_path / "o" / "verdict.json").read_text())
    assert v["schema_version"] == 4 and v["state"] == "inconclusive" and v["passed"] is False
    j = v["judges"][0]
    assert j["state"] == "inconclusive" and j["passed"] is False
    checks = {c["name"]: c for c in j["checks"]}
    # below min_items every overall check is inconclusive, whatever its figure, and says so
    for name in ("min_items", "min_kappa_lower_bound", "max_abstention_rate"):
        c = checks[name]
        assert c["state"] == "inconclusive" and c["n"] == 20, c
        assert c["detail"].startswith("SMALL SAMPLE: n=20 is below min_items 30")
    # the store holds 20 items, all labelled and judged: no budget larger than the data
    assert checks["min_items"]["budget"] == {"items": None, "slices": {}, "need": None, "unit": None, "sentence": (
        "min_items: cannot be decided with this study: needs about 10 more human-rated items, the study holds no "
        "more: every item it holds already has a human label (because 20 human-rated items is below the policy's "
        "floor of 30).")}
    ab = checks["max_abstention_rate"]["budget"]
    assert ab["items"] is None and "j has judged every item of the study; 0 of 20 abstentions: shows ≤ 0.161" \
        in ab["sentence"]  # the check's own Wilson 95% interval: z²/(20 + z²) = 0.1611
    budget = j["budget"]
    assert budget["items"] is None and budget["slices"] == {}
    assert "more human-rated items are unlikely to decide it" in budget["sentence"]
    assert "Label budget" in res.output
    lines = explain(v)
    assert lines[0].startswith("INCONCLUSIVE j for refusal@1: 3 of 3 checks inconclusive")
    assert any(line.strip() == f"Label budget: {budget['sentence']}" for line in lines)
    md = (tmp_path / "o" / "verdict.md").read_text()
    assert "SMALL SAMPLE" in md and "Label budget" in md


def test_an_interval_straddling_the_threshold_is_inconclusive_and_the_budget_follows_one_over_root_n(tmp_path):
    # 200 items, 18 wrong (kappa about 0.86): its CI straddles a lower-bound threshold of 0.84
    db = _store(tmp_path, 200, wrong=set(range(0, 200, 13)) | {1, 2})
    checks = "  min_items: 100\n  metric: kappa\n  min_lower_bound: 0.84\n"
    verdict, report = run_gate(Store(db), _policy(tmp_path, checks))
    k = report.judge("j")["vs_reference"]["kappa"]
    assert k["low"] < 0.84 < k["value"]
    c = next(c for c in verdict["judges"][0]["checks"] if c["name"] == "min_kappa_lower_bound")
    assert c["state"] == "inconclusive" and c["ci"] == [k["low"], k["high"]]
    # analytic: the lower half-width h = value - low shrinks like 1/sqrt(n); it clears the
    # distance d = value - 0.8 at n' = n (h/d)^2; the simulation may only add to it
    h, d = k["value"] - k["low"], k["value"] - 0.84
    analytic = math.ceil(k["n"] * (h / d) ** 2) - k["n"]
    assert analytic > 0
    # every item is labelled already: the budget says what it would take and that the data lacks it
    assert c["budget"]["items"] is None
    m = re.fullmatch(r"min_kappa_lower_bound: cannot be decided with this study: needs about ([\d,]+) more "
                     r"human-rated items, the study holds no more: every item it holds already has a human label "
                     r"\(because .*\)\.", c["budget"]["sentence"])
    assert m is not None, c["budget"]["sentence"]
    assert analytic <= int(m.group(1).replace(",", "")) <= math.ceil((analytic + k["n"]) * 1.25 ** 20)
    # the min_items check passes at 200 >= 100
    assert next(c for c in verdict["judges"][0]["checks"] if c["name"] == "min_items")["state"] == "pass"


def test_exit_codes_0_pass_1_fail(tmp_path):
    db = _store(tmp_path, 120, wrong=set())
    ok = _gate(db, _policy(tmp_path, "  min_items: 100\n  min_lower_bound: 0.8\n"), tmp_path / "a")
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "a" / "verdict.json").read_text())["state"] == "pass"
    (tmp_path / "b").mkdir()
    bad = _store(tmp_path / "b", 120, wrong=set(range(0, 120, 2)))
    res = _gate(bad, _policy(tmp_path, "  min_items: 100\n  min_lower_bound: 0.8\n"), tmp_path / "c")
    assert res.exit_code == 1, res.output
    v = json.loads((tmp_path / "c" / "verdict.json").read_text())
    assert v["state"] == "fail" and v["judges"][0]["budget"] is None


def test_gate_help_documents_exit_3():
    res = CliRunner().invoke(main, ["gate", "--help"])
    assert res.exit_code == 0 and "3 inconclusive" in res.output


@pytest.fixture()
def inconclusive(tmp_path):
    db = _store(tmp_path, 20, wrong={0})
    verdict, _ = run_gate(Store(db), _policy(tmp_path, SMALL))
    return db, verdict


def test_an_inconclusive_verdict_is_not_trusted(inconclusive):
    db, verdict = inconclusive
    with Store(db) as s, pytest.raises(UntrustedJudgeError,
                                       match=r"did not pass the gate .*inconclusive: min_items, min_kappa_lower_bound"):
        require_trusted(verdict, judge="j", rubric="refusal", store=s)


def test_a_check_forged_from_inconclusive_to_pass_is_refused(inconclusive, tmp_path):
    _, verdict = inconclusive
    forged = json.loads(json.dumps(verdict))
    for c in forged["judges"][0]["checks"]:
        c.update(state="pass", passed=True, budget=None)
    forged["judges"][0].update(state="pass", passed=True, budget=None)
    forged.update(state="pass", passed=True)
    p = tmp_path / "forged.json"
    p.write_text(json.dumps(forged))
    with pytest.raises(UntrustedJudgeError) as exc:
        load_verdict(p)
    msg = str(exc.value)
    assert str(p) in msg and "checks[0] (min_items) has state 'pass'" in msg
    assert "its n 20 is below the policy's min_items 30" in msg and "'inconclusive'" in msg
    # only the judge's state forged: refused too
    forged = json.loads(json.dumps(verdict))
    forged["judges"][0].update(state="pass", passed=True, budget=None)
    forged.update(state="pass", passed=True)
    with pytest.raises(UntrustedJudgeError, match=r"says passed true, but .* are inconclusive"):
        load_verdict(forged)
    # an inconclusive check without its budget: refused
    forged = json.loads(json.dumps(verdict))
    forged["judges"][0]["checks"][0]["budget"] = None
    with pytest.raises(UntrustedJudgeError, match=r"checks\[0\] \(min_items\) is 'inconclusive' but has no label budget"):
        load_verdict(forged)


@pytest.mark.parametrize(
    ("kind", "figure", "threshold", "ci", "n", "min_n", "state"),
    [
        ("min_lower_bound", 0.7, 0.6, [0.7, 0.9], 200, 100, "pass"),
        ("min_lower_bound", 0.5, 0.6, [0.5, 0.7], 200, 100, "inconclusive"),
        ("min_lower_bound", 0.3, 0.6, [0.3, 0.59], 200, 100, "fail"),
        ("min_lower_bound", 0.7, 0.6, [0.7, 0.9], 99, 100, "inconclusive"),
        ("max_abstention_rate", 0.01, 0.02, [0.005, 0.019], 500, None, "pass"),
        ("max_abstention_rate", 0.01, 0.02, [0.005, 0.03], 500, None, "inconclusive"),
        ("max_abstention_rate", 0.05, 0.02, [0.021, 0.08], 500, None, "fail"),
        ("min_value", 0.61, 0.6, [0.4, 0.8], 200, 100, "pass"),  # min_value: the point estimate
        ("min_value", 0.59, 0.6, [0.4, 0.8], 200, 100, "fail"),
        ("min_items", 99, 100, None, 99, 100, "inconclusive"),  # never "fail": more labels decide
        ("alt_test", None, 0.5, None, 0, None, "inconclusive"),
        ("min_value", None, 0.6, None, 200, 100, "inconclusive"),  # undefined, never a fail
    ],
)
def test_derive_state(kind, figure, threshold, ci, n, min_n, state):
    assert derive_state(kind, figure, threshold, ci, n, min_n) == state


def test_a_small_slice_is_inconclusive_and_the_budget_names_the_slice(tmp_path):
    # slice grp=a has 100 items, grp=b only 20 (< per_slice.min_items 30); the judge is perfect
    lines = ["item_id,rater_id,rater_kind,label,status"]
    items = ["item_id,grp,prompt,response"]
    for k in range(120):
        ref = CODES[k % 3]
        lines += [f"i{k},ref,reference,{ref},ok", f"i{k},j,judge,{ref},ok"]
        items.append(f"i{k},{'a' if k < 100 else 'b'},p{k},r{k}")
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "items.csv").write_text("\n".join(items) + "\n")
    db = tmp_path / "s.db"
    with Store(db) as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL, items_path=tmp_path / "items.csv")
    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: refusal\njudges: [j]\nby: [grp]\nn_resamples: 200\nchecks:\n"
                      "  min_items: 100\n  min_value: 0.8\n  per_slice: {min_items: 30, min_value: 0.5}\n")
    res = _gate(db, policy, tmp_path / "o")
    assert res.exit_code == 3, res.output
    v = json.loads((tmp_path / "o" / "verdict.json").read_text())
    checks = {c["name"]: c for c in v["judges"][0]["checks"]}
    assert checks["per_slice[grp=a]"]["state"] == "pass"
    b = checks["per_slice[grp=b]"]
    assert b["state"] == "inconclusive" and b["n"] == 20 and b["figure"] == 1.0
    assert b["detail"].startswith("SMALL SAMPLE: n=20 is below min_items 30")
    assert b["budget"] == {"items": 10, "slices": {"grp=b": 10}, "sentence": b["budget"]["sentence"], "need": 10,
                           "unit": "human-rated items"}
    assert "about 10 more human-rated items in slice grp=b" in b["budget"]["sentence"]
    jb = v["judges"][0]["budget"]
    assert jb["slices"] == {"grp=b": 10} and "in slices grp=b: 10" in jb["sentence"]
