"""Analysis fidelity: the figures from the judge vs from the reference, and the gate check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.analysis.fidelity import calibration_pairs, criteria_pairs, distribution_pairs
from judgekit.analysis.frames import harm_from_column
from tests.conftest import one_sentence_error, store_dump


def _values(d: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"item_id": list(d), "value": list(d.values())})


def _cal_items() -> pd.DataFrame:
    rows = []
    for conv, tier in (("c1", 3), ("c2", 5), ("c3", 2)):
        for turn in (1, 2):
            rows.append({"item_id": f"{conv}t{turn}", "model": "m", "conversation_id": conv,
                         "turn": turn, "severity": tier})
    return pd.DataFrame(rows)


def test_calibration_pairs_by_hand() -> None:
    items = _cal_items()
    harm = harm_from_column(items, "severity")  # tier 3 -> .5, tier 5 -> 1, tier 2 -> .25
    ref = _values({"c1t1": .5, "c1t2": .5, "c2t1": 1.0, "c2t2": 1.0})  # c3 not rated by people
    judge = _values({"c1t1": .5, "c1t2": .25, "c2t1": 1.0, "c2t2": .75, "c3t1": .25, "c3t2": .25})
    pairs = {p.name: p for p in calibration_pairs(judge, ref, items, harm, n_boot=0,
                                                  figures=["C", "RCE", "drift", "drift_tier", "RCE_t"])}
    # RCE: judge errors |R-H| = 0, .25, 0, .25 -> mean .125; the reference's are all 0
    rce = pairs["RCE(model=m)"]
    assert (rce.judge, rce.reference, rce.diff, rce.n, rce.unit) == (0.125, 0.0, 0.125, 2, "conversations")
    assert rce.low is None and rce.high is None  # no replicates, no interval
    # C: the 4 pairs with H(c2) > H(c1) are concordant for both (judge: 1 > .5, 1 > .25, .75 > .5, .75 > .25)
    c = pairs["C(model=m)"]
    assert (c.judge, c.reference, c.diff) == (1.0, 1.0, 0.0)
    # Drift(2) = RCE_2 - RCE_1: judge (.25 + .25)/2 - 0 = .25; reference 0
    d = pairs["drift(model=m, turn=2)"]
    assert (d.judge, d.reference, d.diff, d.n) == (0.25, 0.0, 0.25, 2)
    assert pairs["RCE_t(model=m, turn=1)"].diff == 0.0
    # tier 4 (H .75)... the tiers present are 2, 3, 5: tier 2 (c3) is rated by the judge only
    t2 = pairs["drift_tier(model=m, tier=2, turn=2)"]
    assert t2.judge is None and t2.n == 0
    assert "no conversations of model m in tier 2 rated by both at turn 1 and turn 2" in (t2.undefined or "")
    t5 = pairs["drift_tier(model=m, tier=5, turn=2)"]
    assert (t5.judge, t5.reference, t5.n) == (0.25, 0.0, 1)


def test_calibration_pairs_undefined_c_says_why() -> None:
    items = _cal_items()[lambda f: f["conversation_id"] == "c1"]
    harm = harm_from_column(items, "severity")
    v = _values({"c1t1": .5, "c1t2": .5})
    (c,) = calibration_pairs(v, v, items, harm, figures=["C"], n_boot=50)
    assert c.judge is None and c.diff is None and c.low is None
    assert c.undefined == "C is undefined for model m: every labelled unit has the same H"
    assert c.n == 1


def test_distribution_pairs_by_hand() -> None:
    items = pd.DataFrame({"item_id": ["a0", "a1", "a2", "b0", "b1"], "model": "m",
                          "prompt_id": ["p1", "p1", "p1", "p2", "p2"], "sample": [0, 1, 2, 0, 1]})
    judge = pd.Series([1, 1, 0, 0, 0], index=items["item_id"], dtype=float)
    ref = pd.Series([1, 0, 0, 0, 1], index=items["item_id"], dtype=float)
    pairs = {p.figure: p for p in distribution_pairs(judge, ref, items, n_boot=0,
                                                     figures=["refusal_rate", "share_not_constant"])}
    rate = pairs["refusal_rate"]
    # judge: p1 2/3, p2 0 -> mean 1/3; reference: p1 1/3, p2 1/2 -> mean 5/12; difference -1/12
    assert rate.judge == round(1 / 3, 6) and rate.reference == round(5 / 12, 6)
    assert rate.diff == round(-1 / 12, 6) and rate.n == 2 and rate.unit == "prompt_id clusters"
    share = pairs["share_not_constant"]
    # judge: p1 varies, p2 does not -> 1/2; reference: both vary -> 1
    assert (share.judge, share.reference, share.diff) == (0.5, 1.0, -0.5)


def test_criteria_pairs_by_hand() -> None:
    items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "prompt_id": ["p1", "p1", "p2", "p3"]})
    js = pd.Series([1.0, 1.0, 0.0, 0.5], index=["a", "b", "c", "d"])
    rs = pd.Series([1.0, 0.0, 0.0], index=["a", "b", "c"])  # d not rated by people
    (p,) = criteria_pairs([("leak", js, rs)], items, n_boot=0)
    # on a, b, c: judge 2/3, reference 1/3
    assert (p.judge, p.reference, p.diff, p.n) == (round(2 / 3, 6), round(1 / 3, 6), round(1 / 3, 6), 2)


def test_paired_interval_covers_the_true_difference() -> None:
    """Coverage of the paired percentile bootstrap CI of d = rate(judge) − rate(reference): the
    judge flips a reference refusal to compliance with probability b and compliance to refusal
    with a, so E[d] = a(1 − p) − b p for a reference refusal rate p (200 data sets)."""
    rng = np.random.default_rng(7)
    p, a, b, n = 0.4, 0.05, 0.2, 120
    truth = a * (1 - p) - b * p
    hits = 0
    for k in range(200):
        ids = [f"i{j}" for j in range(n)]
        items = pd.DataFrame({"item_id": ids, "model": "m", "prompt_id": ids})
        ref = rng.random(n) < p
        flip = np.where(ref, rng.random(n) < b, rng.random(n) < a)
        judge = ref ^ flip
        (fig,) = distribution_pairs(pd.Series(judge.astype(float), index=ids),
                                    pd.Series(ref.astype(float), index=ids), items,
                                    figures=["refusal_rate"], n_boot=400, seed=k)
        hits += fig.low <= truth <= fig.high
    assert hits >= 0.92 * 200, hits


# --------------------------------------------------------------------------- the gate
@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("study")
    paths = write_study(root)
    with Store(root / "judgekit.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
    return {**paths, "store": root / "judgekit.db", "root": root}


def test_fidelity_fails_the_leaning_judge_and_passes_the_fair_one(study: dict[str, Path]) -> None:
    from judgekit.gate.run import explain, run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict

    with Store(study["store"]) as store:
        verdict, _ = run_gate(store, study["policy"])
    by = {j["judge"]: j for j in verdict["judges"]}
    # item by item both agree well with people: the agreement check passes both
    for j in by.values():
        (k,) = [c for c in j["checks"] if c["name"] == "min_weighted_kappa"]
        assert k["state"] == "pass" and k["figure"] > 0.85
    fair = [c for c in by["judge-fair"]["checks"] if c["name"].startswith("analysis_fidelity[")]
    lean = [c for c in by["judge-lean"]["checks"] if c["name"].startswith("analysis_fidelity[")]
    assert len(fair) == len(lean) == 3 * (2 + 5)  # per model: C, RCE and Drift(t) at turns 2..6
    assert {c["state"] for c in fair} == {"pass"} and by["judge-fair"]["state"] == "pass"
    assert by["judge-lean"]["state"] == "fail"
    d6 = next(c for c in lean if c["name"] == "analysis_fidelity[calibration:drift(model=m-steady, turn=6)]")
    assert d6["state"] == "fail" and d6["ci"][0] > 0.05 and d6["n"] >= 50
    # the detail carries the judge's value, the reference's, and the difference with its CI
    assert "calibration drift(model=m-steady, turn=6): judge " in d6["detail"]
    assert ", reference " in d6["detail"] and "difference +" in d6["detail"] and "[90% CI +" in d6["detail"]
    assert "conversations" in d6["detail"]
    # the figure is |difference| and its CI the interval of |d|
    assert d6["figure"] == pytest.approx(abs(float(d6["detail"].split("difference ")[1].split(" ")[0])), abs=1e-3)
    # the verdict reads back (its consistency re-derives every fidelity check's state)
    assert load_verdict(json.loads(json.dumps(verdict)))["state"] == "fail"
    lines = explain(verdict)
    assert any(line.strip().startswith("FAIL calibration drift(model=m-steady, turn=6): judge") for line in lines)
    assert any(line.strip().startswith("ok   calibration RCE(model=m-steady)") for line in lines)


def test_edited_fidelity_state_is_refused(study: dict[str, Path]) -> None:
    from judgekit.errors import UntrustedJudgeError
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict

    with Store(study["store"]) as store:
        verdict, _ = run_gate(store, study["policy"])
    v = json.loads(json.dumps(verdict))
    lean = next(j for j in v["judges"] if j["judge"] == "judge-lean")
    ch = next(c for c in lean["checks"] if c["state"] == "fail" and c["name"].startswith("analysis_fidelity["))
    ch["state"], ch["passed"] = "pass", True
    with pytest.raises(UntrustedJudgeError, match=r"has state 'pass', but its interval .* makes it 'fail'"):
        load_verdict(v)


def test_scattered_human_sample_is_inconclusive_and_asks_for_conversations(tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, human_design="items", human_share=0.25, n_resamples=200)
    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        verdict, _ = run_gate(store, paths["policy"])
    fair = next(j for j in verdict["judges"] if j["judge"] == "judge-fair")
    d6 = next(c for c in fair["checks"] if c["name"] == "analysis_fidelity[calibration:drift(model=m-steady, turn=6)]")
    # rated at turn 1 and turn 6 of the same conversation: about 0.25² of 64 conversations
    assert d6["n"] < 10 and d6["state"] == "inconclusive"
    assert f"SMALL SAMPLE: n={d6['n']} conversations is below min_units 10" in d6["detail"]
    s = d6["budget"]["sentence"]
    assert f"about {10 - d6['n']} more conversations of model m-steady rated whole by humans" in s
    assert "judgekit sample --by-conversation" in s
    assert d6["budget"]["items"] > 10 - d6["n"]  # in items: whole conversations of 6 turns
    from judgekit.verdict.read import load_verdict

    load_verdict(json.loads(json.dumps(verdict)))  # small-sample fidelity checks re-derive on reading


def test_gate_cli_prints_every_fidelity_figure(study: dict[str, Path], tmp_path: Path) -> None:
    from judgekit.cli import main

    res = CliRunner().invoke(main, ["gate", str(study["policy"]), "--store", str(study["store"]),
                                    "--out", str(tmp_path)])
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    assert "fidelity of judge-fair" in out and "fidelity of judge-lean" in out
    assert "calibration C(model=m-stiff): judge" in out


@pytest.mark.parametrize(("fidelity", "phrase"), [
    ("{analysis: calibration, figures: [drfit], max_abs_diff: 0.05}", "figure 'drfit' is not a calibration figure"),
    ("{analysis: calibration, max_abs_diff: -1}", "max_abs_diff"),
    ("{analysis: criteria, max_abs_diff: 0.05}", "criteria (the criteria file) is needed"),
    ("{analysis: fidelity, max_abs_diff: 0.05}", "analysis"),
])
def test_bad_fidelity_policy_is_one_sentence(study: dict[str, Path], tmp_path: Path, fidelity: str,
                                             phrase: str) -> None:
    from judgekit.cli import main

    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: restrictiveness\njudges: [judge-fair]\nreference: adjudicated\n"
                      f"checks:\n  min_items: 10\n  min_value: 0.5\n  analysis_fidelity: {fidelity}\n")
    before = store_dump(study["store"])
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(study["store"]), "--out", str(tmp_path)])
    line = one_sentence_error(res)
    assert str(policy) in line and phrase in line
    assert store_dump(study["store"]) == before


def test_distribution_and_criteria_fidelity_through_the_gate(study: dict[str, Path], tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict

    head = ("rubric: restrictiveness\njudges: [judge-fair, judge-lean]\nreference: adjudicated\n"
            "n_resamples: 200\nchecks:\n  min_items: 10\n  min_value: 0.5\n")
    (tmp_path / "crit.yaml").write_text(
        "criteria:\n  - {name: hard refusal at tier 5, rubric: restrictiveness, label: r4_hard_refusal,"
        " where: {severity: 5}, op: '>=', threshold: 0.5}\n")
    dist = tmp_path / "dist.yaml"
    dist.write_text(head + "  analysis_fidelity: {analysis: distribution, figures: [refusal_rate, refusal_rate_t],"
                    " max_abs_diff: 0.05}\n")
    crit = tmp_path / "critpolicy.yaml"
    crit.write_text(head + "  analysis_fidelity: {analysis: criteria, criteria: crit.yaml, max_abs_diff: 0.05}\n")
    with Store(study["store"]) as store:
        vd, _ = run_gate(store, dist)
        vc, _ = run_gate(store, crit)
    load_verdict(json.loads(json.dumps(vd)))
    load_verdict(json.loads(json.dumps(vc)))
    names = [c["name"] for c in vd["judges"][0]["checks"]]
    assert "analysis_fidelity[distribution:refusal_rate(model=m-eroding)]" in names
    assert "analysis_fidelity[distribution:refusal_rate_t(model=m-stiff, turn=6)]" in names
    (cc,) = [c for c in vc["judges"][1]["checks"] if c["name"].startswith("analysis_fidelity[")]
    assert cc["name"] == "analysis_fidelity[criteria:rate(criterion=hard refusal at tier 5)]"
    assert "judge " in cc["detail"] and "reference " in cc["detail"] and cc["ci"] is not None
