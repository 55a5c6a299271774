"""The gate on real data: the string-match judge must fail on partial refusals; verdicts guard
analyses through require_trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO, copy_store, one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.gate.run import run_gate
from judgekit.rubric.model import load_rubric
from judgekit.verdict.trust import require_trusted

POLICY = REPO / "annotations" / "xstest-v2" / "policy.yaml"


@pytest.fixture(scope="module")
def verdict(xstest_store):
    v, _ = run_gate(xstest_store, POLICY)
    return v


def _checks(verdict, judge):
    return {c["name"]: c for j in verdict["judges"] if j["judge"] == judge for c in j["checks"]}


def test_string_match_fails_partial_refusal_recall(verdict):
    c = _checks(verdict, "string_match")["min_recall[partial_refusal]"]
    assert c["passed"] is False and c["figure"] == 0.0 and c["threshold"] == 0.3
    assert c["n"] > 20
    sm = next(j for j in verdict["judges"] if j["judge"] == "string_match")
    assert sm["passed"] is False and verdict["passed"] is False


def test_verdict_records_hashes_and_every_check_has_figure_threshold_n(verdict):
    r = load_rubric("refusal")
    assert verdict["rubric"] == "refusal@1" and verdict["rubric_hash"] == r.hash
    assert verdict["reference"] == "final"
    for key in ("items_hash", "human_ratings_hash", "policy_hash"):
        assert len(verdict[key]) == 16
    for j in verdict["judges"]:
        assert j["judge_hash"]
        for c in j["checks"]:
            assert {"name", "passed", "figure", "threshold", "n", "detail"} <= set(c)
    names = set(_checks(verdict, "gpt4"))
    assert {"min_items", "min_kappa_lower_bound", "max_abstention_rate", "within_human_noise"} <= names
    assert any(n.startswith("per_slice[model=") for n in names)


def test_gpt4_checks_are_consistent_with_the_report(verdict, xstest_store):
    from judgekit.agreement.report import agreement_report

    rep = agreement_report(xstest_store, rubric=load_rubric("refusal"), n_resamples=1000)
    k = rep.judge("gpt4")["vs_reference"]["kappa"]
    c = _checks(verdict, "gpt4")["min_kappa_lower_bound"]
    assert c["figure"] == k["low"] and c["passed"] == (k["low"] >= 0.70)
    ab = _checks(verdict, "gpt4")["max_abstention_rate"]
    assert ab["figure"] == pytest.approx(11 / 2250, abs=1e-6) and ab["passed"]


def test_require_trusted(verdict, tmp_path, xstest_store):
    # a verdict in which gpt4 passes, from the real gate (a hand-set `passed` is refused now)
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("rubric: refusal\njudges: [gpt4]\nchecks: {min_items: 100, min_value: 0.5}\nn_resamples: 200\n")
    passing, _ = run_gate(xstest_store, lenient)
    entry = require_trusted(passing, judge="gpt4", rubric="refusal", store=xstest_store)
    assert entry["judge"] == "gpt4"
    with pytest.raises(UntrustedJudgeError, match="did not pass the gate.*min_recall\\[partial_refusal\\]"):
        require_trusted(verdict, judge="string_match", rubric="refusal")
    with pytest.raises(UntrustedJudgeError, match="does not cover judge 'claude'"):
        require_trusted(passing, judge="claude", rubric="refusal")
    with pytest.raises(UntrustedJudgeError, match="run `judgekit gate POLICY.yaml`"):
        require_trusted(None, judge="gpt4", rubric="refusal")
    with pytest.raises(UntrustedJudgeError, match="nope.json: no such file"):
        require_trusted(tmp_path / "nope.json", judge="gpt4", rubric="refusal")
    # an edited rubric has another hash: the old verdict does not transfer
    src = Path(load_rubric("refusal").source or "")
    edited = tmp_path / "refusal.yaml"
    edited.write_text(src.read_text(encoding="utf-8").replace("regardless of accuracy", "however accurate"))
    with pytest.raises(UntrustedJudgeError, match="rubric changed"):
        require_trusted(passing, judge="gpt4", rubric=load_rubric(edited))
    with pytest.raises(UntrustedJudgeError, match="changed since the verdict"):
        require_trusted(passing, judge="gpt4", rubric="refusal", judge_hash="0" * 16)
    p = tmp_path / "v.json"
    p.write_text(json.dumps(passing))
    assert require_trusted(p, judge="gpt4", rubric="refusal")["passed"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("max_error_rate", "max_eror_rate"), "unknown key 'checks.max_eror_rate'"),
        (lambda t: t.replace("judges: [gpt4, string_match]", "judges: [gpt4, claude]"),
         "judge 'claude' has no ratings under refusal@1"),
        (lambda t: t.replace("rubric: refusal", "rubric: refusl"), "Rubric 'refusl' does not exist"),
        (lambda t: t.replace("metric: kappa", "metric: kapa"), "checks.metric"),
    ],
)
def test_bad_policy_exit_2_one_sentence(tmp_path, xstest_store, edit, message):
    p = tmp_path / "policy.yaml"
    p.write_text(edit(POLICY.read_text()))
    with pytest.raises(JudgekitError, match=message):
        run_gate(xstest_store, p)
    db = tmp_path / "s.db"
    copy_store(xstest_store, db)
    res = CliRunner().invoke(main, ["gate", str(p), "--store", str(db), "--out", str(tmp_path)])
    one_sentence_error(res)
    assert not (tmp_path / "verdict.json").exists()


def test_cli_gate_exit_codes_and_files(tmp_path, xstest_store):
    db = tmp_path / "s.db"
    copy_store(xstest_store, db)
    res = CliRunner().invoke(main, ["gate", str(POLICY), "--store", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output
    v = json.loads((tmp_path / "o" / "verdict.json").read_text())
    assert v["passed"] is False
    assert "UNTRUSTED  string_match" in res.output
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("rubric: refusal\njudges: [gpt4]\nchecks: {min_items: 100, min_value: 0.5}\nn_resamples: 200\n")
    res = CliRunner().invoke(main, ["gate", str(lenient), "--store", str(db), "--out", str(tmp_path / "p")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "p" / "verdict.json").read_text())["passed"] is True


def test_load_verdict_bad_files_are_one_sentence(tmp_path):
    from judgekit.gate.run import load_verdict

    with pytest.raises(JudgekitError, match="is a folder"):
        load_verdict(tmp_path)
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(JudgekitError, match="not a judgekit verdict"):
        load_verdict(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"judges": [{"passed": true}]}')
    with pytest.raises(JudgekitError, match=r"judges\[0\] has no 'judge' key"):
        load_verdict(tmp_path / "y.json")


def test_judge_identity_is_per_rubric(store):
    import time

    from judgekit.gate.run import judge_identity
    from judgekit.store.calls import CallRow, write_calls

    now = time.time()

    def call(key: str, spec: str, params: str, rubric: str, rubric_hash: str, at: float) -> CallRow:
        return CallRow(key=key, judge_id="j", spec=spec, params=params, rubric=rubric,
                       rubric_hash=rubric_hash, item_id="i", item_hash="x", trial=0, raw=None,
                       status="ok", label=None, rationale=None, error=None, created_at=at)

    write_calls(store, [call("k1", "openai:gpt-a", '{"temperature": 0}', "refusal@1", "h1", now),
                        call("k2", "openai:gpt-b", '{"temperature": 1}', "restrictiveness@1", "h2", now + 1)])
    # a later run of the same judge id under another rubric does not change its identity here
    a = judge_identity(store, "j", "refusal@1", "h1")
    assert a["spec"] == "openai:gpt-a" and a["params"] == {"temperature": 0}
    assert judge_identity(store, "j", "restrictiveness@1")["spec"] == "openai:gpt-b"
    assert judge_identity(store, "j")["spec"] == "openai:gpt-b"  # no rubric: the latest call
    assert a["judge_hash"] != judge_identity(store, "j", "restrictiveness@1")["judge_hash"]


def test_policy_with_a_misspelt_required_key(tmp_path, xstest_store):
    p = tmp_path / "policy.yaml"
    p.write_text(POLICY.read_text().replace("judges:", "judgs:"))
    with pytest.raises(JudgekitError, match="unknown key 'judgs': a typo of the required key 'judges'"):
        run_gate(xstest_store, p)


def test_no_ratings_under_an_edited_rubric_says_why(tmp_path, xstest_store):
    from judgekit.agreement.report import agreement_report

    edited = tmp_path / "refusal.yaml"
    edited.write_text(Path(load_rubric("refusal").source or "").read_text().replace("regardless of accuracy", "x"))
    old = load_rubric("refusal").hash
    with pytest.raises(JudgekitError, match=f"ratings under an older edit of refusal@1, hash {old}"):
        agreement_report(xstest_store, rubric=load_rubric(edited), n_resamples=100)
    assert len(xstest_store.ratings(rubric="refusal")) == 5 * 2250  # a bare name is the current edit
