"""Min_coverage, max_abs_bias (per slice), alt_test, and a
like-for-like within_human_noise (judge vs leave-one-out consensus against each human vs the
same consensus), also with a human as the reference (XSTest, reference: annotation_1)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO, copy_store, one_sentence_error

from judgekit.cli import main
from judgekit.gate.run import run_gate
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.check import derive_state

REFUSAL = load_rubric("refusal")
RESTRICT = load_rubric("restrictiveness")


def _import(tmp_path: Path, rows: list[tuple], rubric, items: list[tuple] | None = None) -> Path:
    """rows: (item, rater, kind, label[, status]); items: (item_id, turn)."""
    lines = ["item_id,rater_id,rater_kind,label,status"]
    for r in rows:
        item, rater, kind, label, *status = r
        lines.append(f"{item},{rater},{kind},{label or ''},{status[0] if status else 'ok'}")
    csv = tmp_path / "r.csv"
    csv.write_text("\n".join(lines) + "\n")
    kw = {}
    if items is not None:
        ip = tmp_path / "items.csv"
        ip.write_text("item_id,turn,prompt,response\n" + "".join(f"{i},{t},p {i},r {i}\n" for i, t in items))
        kw["items_path"] = ip
    db = tmp_path / "s.db"
    with Store(db) as s:
        import_ratings(s, csv, rubric, **kw)
    return db


def _policy(tmp_path: Path, text: str) -> Path:
    """A policy testing one check. Every policy needs min_items and an agreement check (see
    judgekit.verdict.policy_rules): where the test names none, a floor of one item and an agreement
    check every judge passes (min_value: -1) are added, so the check under test decides."""
    if "checks:\n" in text:
        head, body = text.split("checks:\n", 1)
        if "min_items" not in body:
            body = "  min_items: 5\n" + body
        if not any(k in body for k in ("min_value", "min_lower_bound", "alt_test", "within_human_noise")):
            body = "  min_value: -0.99\n" + body
        text = head + "checks:\n" + body
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    return p


def _checks(verdict, judge="j"):
    return {c["name"]: c for j in verdict["judges"] if j["judge"] == judge for c in j["checks"]}


# --------------------------------------------------------------------------- signed bias by turn
def _drifting_judge(tmp_path: Path) -> Path:
    # 6 turns x 100 items, reference r0..r3; the judge copies it, except that from turn 4 on a
    # growing share of items (10%, 25%, 40%) is rated one level (0.25) higher: the bias grows
    # with the turn (0, 0, 0, 0.025, 0.0625, 0.1) while the weighted kappa stays high
    codes = RESTRICT.codes
    rows, items = [], []
    shift = {4: 10, 5: 25, 6: 40}
    for t in range(1, 7):
        for k in range(100):
            item = f"t{t}-{k}"
            ref = codes[k % 4]
            up = k < shift.get(t, 0)
            rows.append((item, "ref", "reference", ref))
            rows.append((item, "j", "judge", codes[codes.index(ref) + 1] if up else ref))
            items.append((item, t))
    return _import(tmp_path, rows, RESTRICT, items)


def test_a_judge_whose_bias_grows_with_the_turn_fails_max_abs_bias_per_slice_while_its_kappa_passes(tmp_path):
    db = _drifting_judge(tmp_path)
    policy = _policy(tmp_path, """rubric: restrictiveness
judges: [j]
by: [turn]
n_resamples: 400
checks:
  min_items: 300
  metric: weighted_kappa
  min_lower_bound: 0.8
  max_abs_bias: {max: 0.05, per_slice: true}
""")
    with Store(db) as s:
        verdict, report = run_gate(s, policy)
    c = _checks(verdict)
    assert c["min_weighted_kappa_lower_bound"]["state"] == "pass"
    assert c["max_abs_bias"]["state"] == "pass"  # overall 0.03125: the drift is hidden in the mean
    assert c["max_abs_bias"]["figure"] == pytest.approx(0.03125, abs=1e-6)
    t6 = c["max_abs_bias[turn=6]"]
    assert t6["state"] == "fail" and t6["figure"] == pytest.approx(0.1, abs=1e-6) and t6["n"] == 100
    assert t6["ci"][0] > 0.05 and t6["threshold"] == 0.05
    assert "mean signed difference judge − reference on the rubric's values +0.100" in t6["detail"]
    for t in (1, 2, 3):
        assert c[f"max_abs_bias[turn={t}]"]["state"] == "pass" and c[f"max_abs_bias[turn={t}]"]["figure"] == 0
    assert verdict["judges"][0]["state"] == "fail" and verdict["state"] == "fail"
    # the CLI says so and exits 1
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "max_abs_bias[turn=6]" in res.output


def test_nominal_bias_is_the_largest_share_difference(tmp_path):
    # reference cycles the three codes over 300 items; the judge calls 60 full refusals
    # "partial": share of full_refusal -0.2, of partial_refusal +0.2
    codes = REFUSAL.codes
    rows = []
    for k in range(300):
        ref = codes[k % 3]
        jl = "partial_refusal" if ref == "full_refusal" and k < 180 else ref
        rows += [(f"i{k}", "ref", "reference", ref), (f"i{k}", "j", "judge", jl)]
    db = _import(tmp_path, rows, REFUSAL)
    policy = _policy(tmp_path, "rubric: refusal\njudges: [j]\nn_resamples: 400\nchecks:\n"
                               "  max_abs_bias: {max: 0.05}\n")
    with Store(db) as s:
        verdict, _ = run_gate(s, policy)
    c = _checks(verdict)["max_abs_bias"]
    assert c["state"] == "fail" and c["figure"] == pytest.approx(0.2, abs=1e-6) and c["ci"][0] > 0.05
    assert "largest difference of a label's share" in c["detail"]


# --------------------------------------------------------------------------- coverage
def test_a_judge_that_skips_a_fifth_of_the_items_fails_min_coverage(tmp_path):
    codes = REFUSAL.codes
    rows = [(f"i{k}", "ref", "reference", codes[k % 3]) for k in range(300)]
    rows += [(f"i{k}", "j", "judge", codes[k % 3]) for k in range(240)]  # 60 never attempted
    db = _import(tmp_path, rows, REFUSAL)
    policy = _policy(tmp_path, "rubric: refusal\njudges: [j]\nn_resamples: 400\nchecks:\n"
                               "  min_items: 200\n  min_lower_bound: 0.8\n  max_abstention_rate: 0.02\n"
                               "  min_coverage: 0.95\n")
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output
    v = json.loads((tmp_path / "o" / "verdict.json").read_text())
    c = _checks(v)
    assert c["min_kappa_lower_bound"]["state"] == "pass" and c["max_abstention_rate"]["state"] == "pass"
    cov = c["min_coverage"]
    assert cov["state"] == "fail" and cov["figure"] == 0.8 and cov["n"] == 300
    assert cov["ci"] == [pytest.approx(0.75107, abs=1e-5), pytest.approx(0.84134, abs=1e-5)]
    assert cov["detail"].startswith("rated 240 of 300 in-scope items") and "not attempted 60" in cov["detail"]
    assert "min_coverage" in res.output


# --------------------------------------------------------------------------- within_human_noise
def test_xstest_with_a_human_reference_still_computes_the_like_for_like_ceiling(tmp_path, xstest_store):
    db = tmp_path / "x.db"
    copy_store(xstest_store, db)
    policy = _policy(tmp_path, """rubric: refusal
judges: [gpt4, string_match]
reference: annotation_1
n_resamples: 200
checks:
  metric: kappa
  within_human_noise: {margin: 0.15}
""")
    with Store(db) as s:
        verdict, report = run_gate(s, policy)
    loo = report.slice()["human_ceiling"]["loo"]
    assert loo["undefined"] is None and set(loo["raters"]) == {"annotation_1", "annotation_2"}
    for judge in ("gpt4", "string_match"):
        c = _checks(verdict, judge)["within_human_noise"]
        mean = report.judge(judge)["vs_loo"]["mean"]
        assert c["figure"] is not None and c["threshold"] == -0.15 and c["n"] > 2000
        assert c["figure"] == mean["difference"]["kappa"]["value"]
        assert c["ci"] == [mean["difference"]["kappa"]["low"], mean["difference"]["kappa"]["high"]]
        assert "Cohen κ of the judge vs the leave-one-out consensus" in c["detail"]
        assert "against each human vs the same consensus" in c["detail"]
        assert c["state"] == derive_state("within_human_noise", c["figure"], -0.15, c["ci"], c["n"])


def test_within_human_noise_with_one_human_says_why_it_cannot_compare(tmp_path):
    codes = REFUSAL.codes
    rows = [(f"i{k}", "h1", "human", codes[k % 3]) for k in range(50)]
    rows += [(f"i{k}", "j", "judge", codes[k % 3]) for k in range(50)]
    db = _import(tmp_path, rows, REFUSAL)
    policy = _policy(tmp_path, "rubric: refusal\njudges: [j]\nn_resamples: 200\nchecks:\n"
                               "  within_human_noise: {margin: 0.1}\n")
    with Store(db) as s:
        verdict, _ = run_gate(s, policy)
    c = _checks(verdict)["within_human_noise"]
    # n 0 is below min_items 5: inconclusive, as load_verdict re-derives it
    assert c["state"] == "inconclusive" and c["figure"] is None and c["threshold"] == -0.1 and c["n"] == 0
    assert c["detail"].startswith("SMALL SAMPLE: n=0 is below min_items 5; no like-for-like human comparison:")
    from judgekit.verdict.read import load_verdict

    load_verdict(verdict)


# --------------------------------------------------------------------------- alt-test
def _panel(tmp_path: Path, judge_noise: float, n_humans: int = 4, n_units: int = 100) -> Path:
    rng = random.Random(7)
    codes = REFUSAL.codes
    rows = []
    for k in range(n_units):
        truth = codes[k % 3]
        for h in range(n_humans):
            # each human errs on a different tenth of the units
            lab = codes[(k + 1) % 3] if (k // 10) % n_humans == h and k % 10 < 4 else truth
            rows.append((f"u{k}", f"h{h}", "human", lab))
        jl = rng.choice([c for c in codes if c != truth]) if rng.random() < judge_noise else truth
        rows.append((f"u{k}", "j", "judge", jl))
    return _import(tmp_path, rows, REFUSAL)


ALT = "rubric: refusal\njudges: [j]\nn_resamples: 200\nchecks:\n  alt_test: {epsilon: 0.2, q: 0.05, min_winning_rate: 0.5}\n"


def test_alt_test_passes_a_judge_that_agrees_like_a_human(tmp_path):
    db = _panel(tmp_path, judge_noise=0.05)
    with Store(db) as s:
        verdict, _ = run_gate(s, _policy(tmp_path, ALT))
    c = _checks(verdict)["alt_test"]
    assert c["state"] == "pass" and c["figure"] == 1.0 and c["threshold"] == 0.5 and c["n"] == 100
    assert c["ci"] is None and "wins against 4 of 4 humans" in c["detail"] and "ρ=" in c["detail"]


def test_alt_test_fails_a_noisy_judge(tmp_path):
    db = _panel(tmp_path, judge_noise=0.5)
    res = CliRunner().invoke(main, ["gate", str(_policy(tmp_path, ALT)), "--store", str(db),
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output
    c = _checks(json.loads((tmp_path / "o" / "verdict.json").read_text()))["alt_test"]
    assert c["state"] == "fail" and c["figure"] == 0.0 and "wins against 0 of 4 humans" in c["detail"]


def test_alt_test_with_too_few_units_per_human_is_inconclusive(tmp_path):
    db = _panel(tmp_path, judge_noise=0.0, n_units=20)
    res = CliRunner().invoke(main, ["gate", str(_policy(tmp_path, ALT)), "--store", str(db),
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 3, res.output
    c = _checks(json.loads((tmp_path / "o" / "verdict.json").read_text()))["alt_test"]
    assert c["state"] == "inconclusive" and c["figure"] is None
    assert "no human rated at least 30 of the 20 kept units" in c["detail"]
    assert c["budget"]["items"] == 10 and "30 units the test needs per human" in c["budget"]["sentence"]


def test_alt_test_on_an_ordinal_rubric_scores_values(tmp_path):
    codes = RESTRICT.codes
    rows = []
    for k in range(60):
        truth = codes[k % 5]
        for h in range(3):
            lab = codes[min(4, k % 5 + 1)] if k % 3 == h and k % 2 == 0 else truth
            rows.append((f"u{k}", f"h{h}", "human", lab))
        rows.append((f"u{k}", "j", "judge", truth))
    db = _import(tmp_path, rows, RESTRICT)
    text = ALT.replace("rubric: refusal", "rubric: restrictiveness")
    with Store(db) as s:
        verdict, _ = run_gate(s, _policy(tmp_path, text))
    c = _checks(verdict)["alt_test"]
    assert c["state"] == "pass" and c["n"] == 60


# --------------------------------------------------------------------------- strict policy keys
@pytest.mark.parametrize(
    ("checks", "key"),
    [
        ("  max_abs_bias: {max: 0.05, per_slic: true}\n", "per_slic"),
        ("  max_abs_bias: {per_slice: true}\n", "missing required key 'checks.max_abs_bias.max'"),
        ("  min_coverage: 1.5\n", "checks.min_coverage: Input should be less than or equal to 1"),
        ("  alt_test: {epsilon: 1.2}\n", "epsilon"),
        ("  alt_test: {min_winning_rate: '0.5'}\n", "checks.alt_test.min_winning_rate: Input should be a valid number"),
    ],
)
def test_new_policy_keys_are_strict(tmp_path, checks, key):
    db = _panel(tmp_path, judge_noise=0.0, n_units=10)
    p = _policy(tmp_path, "rubric: refusal\njudges: [j]\nchecks:\n" + checks)
    res = CliRunner().invoke(main, ["gate", str(p), "--store", str(db), "--out", str(tmp_path / "o")])
    one_sentence_error(res, str(p), key)
    assert not (tmp_path / "o" / "verdict.json").exists()


def test_shipped_policies_still_load():
    from judgekit.verdict.policy import load_policy

    for p in (REPO / "annotations").glob("**/policy*.yaml"):
        load_policy(p)
