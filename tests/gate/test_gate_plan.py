"""`judgekit plan` before labelling, and `judgekit sample --from-plan`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from scipy import stats

from judgekit.cli import main
from judgekit.gate.plan import _check_row
from judgekit.verdict.check import Check, Interval


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("plan")
    paths = write_study(root, figures=("C", "drift", "drift_tier"), n_resamples=200, human_share=0.3)
    with Store(root / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
    return {**paths, "store": root / "s.db", "root": root}


def test_the_units_for_80_percent_power_from_a_pilot_interval() -> None:
    # a pilot κ of 0.7 with 95% CI [0.6, 0.8] on 100 items: σ per item = 0.2 / (2·1.96) · √100 = 0.5102;
    # the t-test sample size for δ = 0.1 at one-sided α = 0.025, power 0.8 is about
    # ((1.96 + 0.8416) · 0.5102 / 0.1)² = 204.4, a little more with t quantiles
    ch = Check("min_lower_bound", "j", 0.6, 0.6, 100, "", interval=Interval(0.6, 0.8, "bootstrap", 0.95),
               metric="kappa")
    row = _check_row("j", ch, 100, None, {}, None, 2)
    assert row is not None and row.need is not None
    sigma = 0.2 / (2 * 1.959964) * 10
    approx = ((1.959964 + 0.841621) * sigma / 0.1) ** 2
    assert approx == pytest.approx(204.4, abs=0.2)
    assert math.ceil(approx) <= row.need <= math.ceil(approx) + 4
    # checked by the non-central t: the power at row.need reaches 0.8, at row.need − 1 it does not
    def power(n: int) -> float:
        df, nc = n - 1, 0.1 * math.sqrt(n) / sigma
        return float(1 - stats.nct.cdf(stats.t.ppf(0.975, df), df, nc))
    assert power(row.need) >= 0.8 > power(row.need - 1)


def test_a_rate_is_planned_in_judge_calls_and_one_human_cannot_decide_within_noise() -> None:
    rate = Check("max_error_rate", "j", 0.0, 0.01, 50, "", interval=Interval(0.0, 0.07, "wilson", 0.95))
    row = _check_row("j", rate, 50, None, {}, None, 1)
    assert row is not None and row.unit == "calls of j (no human label)"
    # score-test size for p₁ = 0 against p₀ = 0.01: (1.96·√(0.01·0.99) / 0.01)² = 380.3, then exact
    assert 381 <= (row.need or 0) <= 400
    noise = Check("within_human_noise", "j", None, -0.1, 0, "x")
    row = _check_row("j", noise, 50, None, {}, None, 1)
    assert row is not None and row.need is None and "only a second annotator" in (row.why or "")


@pytest.mark.slow
@pytest.mark.timeout(900)  # plans by simulation: 318 s wall seen at load 8 on 2 cores
def test_plan_prints_per_check_budgets_and_the_undecidable_ones(pilot: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    res = CliRunner().invoke(main, ["plan", str(pilot["policy"]), "--store", str(pilot["store"]),
                                    "--budget", "150", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "judge-fair figure C (pilot" in res.output and "for 80% power" in res.output
    assert "the budget resolves a margin of ±" in res.output
    plan = json.loads(out.read_text())
    rows = {(r["judge"], r["check"]): r for r in plan["rows"]}
    study = 330  # 3 models × (5 tiers × 20 + 10 look-alikes) conversations
    for r in plan["rows"]:  # every budget fits the study, or says why not
        if r["unit"] == "conversations":
            assert (r["need"] is not None and r["need"] <= study) or r["why"], r
    assert rows[("judge-fair", "figure C")]["need"] is not None
    b = plan["budget"]
    assert b["unit"] == "conversations" and 1 <= b["n"] <= study and b["items"] == b["n"] * 6
    if b["more"] == 0:  # the pilot already holds what the plan needs: it says so, never "label 0 more"
        assert plan["lines"][-1].startswith(f"Plan: the pilot's {b['labelled']:,} conversations already reach "
                                            f"the {b['n']:,} conversations"), plan["lines"][-1]
    else:
        assert plan["lines"][-1].startswith(f"Plan: label {b['n']:,} conversations"), plan["lines"][-1]


def test_sample_takes_the_plans_budget(pilot: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "s.db"
    shutil.copy(pilot["store"], db)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"budget": {"unit": "conversations", "n": 40, "items": 240, "rubric": "restrictiveness"}}))
    res = CliRunner().invoke(main, ["sample", "--name", "main", "--from-plan", str(plan), "--store", str(db)])
    assert res.exit_code == 0, res.output
    # the plan counts the pilot's labels: the rest is drawn among unrated items, whole conversations
    assert "Sample 'main': 240 of " in res.output and "whole conversations: 40 of " in res.output
    assert "a human already rated are left out" in res.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"budget": {"unit": "conversations", "items": "many"}}))
    res = CliRunner().invoke(main, ["sample", "--name", "x", "--from-plan", str(bad), "--store", str(db)])
    one_sentence_error(res, f"Plan file {bad}: 'budget' needs 'items'")


def test_gate_sequential_records_its_rounds_and_reads_back(pilot: dict[str, Path], tmp_path: Path) -> None:
    from judgekit.verdict.read import load_verdict

    res = CliRunner().invoke(main, ["gate", str(pilot["policy"]), "--store", str(pilot["store"]), "--sequential",
                                    "--round-size", "25", "--out", str(tmp_path / "g")])
    assert res.exit_code in (0, 1, 3), res.output
    v = load_verdict(tmp_path / "g" / "verdict.json")  # the reader re-derives every state
    seq = v["sequential"]
    assert seq["round_size"] == 25 and seq["figures"] == ["drift"]
    # the pilot's labels came in one import: one round (a file's rows are never cut into rounds)
    assert seq["rounds"] == 1 and len(seq["round_writes"]) == 1
    drift = [c for j in v["judges"] for c in j["checks"]
             if c["name"].startswith("analysis_fidelity[calibration:drift(")]
    assert drift and all("anytime-valid 90% confidence sequence" in c["detail"] for c in drift)
    # the CS is wider than the fixed-n bootstrap interval on the same data
    res2 = CliRunner().invoke(main, ["gate", str(pilot["policy"]), "--store", str(pilot["store"]),
                                     "--out", str(tmp_path / "f")])
    fixed = {c["name"]: c for j in load_verdict(tmp_path / "f" / "verdict.json")["judges"] for c in j["checks"]}
    assert res2.exit_code in (0, 1, 3)
    for c in drift:
        f = fixed[c["name"]]
        if c["n"] == f["n"] and c["ci"] and f["ci"]:
            assert c["ci"][1] - c["ci"][0] >= f["ci"][1] - f["ci"][0] - 1e-9


def test_sequential_refuses_a_policy_without_a_mean_figure(pilot: dict[str, Path], tmp_path: Path) -> None:
    pol = tmp_path / "p.yaml"
    pol.write_text(pilot["policy"].read_text().replace("figures: [C, drift, drift_tier]", "figures: [C]"))
    res = CliRunner().invoke(main, ["gate", str(pol), "--store", str(pilot["store"]), "--sequential",
                                    "--out", str(tmp_path / "g")])
    one_sentence_error(res, "--sequential decides the calibration figures RCE_t and drift")


def test_gate_sequential_refuses_samples_recorded_after_their_labels(pilot: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "s.db"
    shutil.copy(pilot["store"], db)
    for name, seed in (("b1", "1"), ("b2", "2")):
        res = CliRunner().invoke(main, ["sample", "--name", name, "--size", "120", "--by-conversation",
                                        "--seed", seed, "--store", str(db)])
        assert res.exit_code == 0, res.output
    # drawn after the labels were stored: no round (tests/gate/test_sequential_arrival_order.py has valid ones)
    res = CliRunner().invoke(main, ["gate", str(pilot["policy"]), "--store", str(db), "--sequential",
                                    "--rounds", "b1,b2", "--out", str(tmp_path / "g")])
    one_sentence_error(res, "--rounds names the sample 'b1', recorded after labels of")
    res = CliRunner().invoke(main, ["gate", str(pilot["policy"]), "--store", str(db), "--sequential",
                                    "--rounds", "nope,b1", "--out", str(tmp_path / "h")])
    one_sentence_error(res, "--rounds names the sample 'nope', which the store does not hold")


def test_plan_without_a_pilot_from_assumed_quality(tmp_path: Path) -> None:
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, figures=("C", "drift"), n_resamples=200, human_share=0.0)
    db = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["import", str(paths["ratings"]), "--rubric", "restrictiveness", "--items",
                                    str(paths["items"]), "--store", db])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["plan", str(paths["policy"]), "--store", db])
    one_sentence_error(res, "holds no human label", "--assume-kappa")
    # an assured plan needs a pilot's spread: without one it is refused, not silently ignored
    res = CliRunner().invoke(main, ["plan", str(paths["policy"]), "--store", db, "--assume-kappa", "0.9",
                                    "--assume-sd", "0.11", "--assured"])
    one_sentence_error(res, "has no human labels under restrictiveness@1 yet")
    out = tmp_path / "plan.json"
    res = CliRunner().invoke(main, ["plan", str(paths["policy"]), "--store", db, "--judge", "judge-fair",
                                    "--assume-kappa", "0.9", "--assume-sd", "0.11", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = {r["check"]: r for r in json.loads(out.read_text())["rows"]}
    # weighted κ has no planning formula without a pilot: undecidable with that reason
    assert rows["min_weighted_kappa"]["need"] is None and "pilot" in rows["min_weighted_kappa"]["why"]
    # |d| <= 0.05 at d = 0, σ = 0.11, two one-sided tests at α = 0.05 (the 90% interval): the normal theory
    # gives about ((1.645 + 1.2816) · 0.11 / 0.05)² = 41.4 per instance; the plan simulates the gate's rule
    # on differences 0 or ±0.11/√0.2 (a judge that slips now and then, 20% of conversations) for all 15
    # instances at once (3 models × Drift at turns 2…6,
    # independent): the figure is certified only when all 15 checks pass, which needs more
    need = rows["figure drift"]["need"]
    assert 3 * 45 <= need <= 3 * 110, need
    assert rows["figure drift"]["note"].startswith("simulated: all 15 instances certified")
    # FRESH studies, the gate's rule written out here: each model gets need/3 conversations
    a = 0.11 / math.sqrt(0.2)
    n = -(-need // 3)
    ok = np.ones(200, dtype=bool)
    for k in range(15):
        rng = np.random.default_rng(100 + k)
        x = rng.choice([-a, 0.0, a], size=(200, n), p=[0.1, 0.8, 0.1])
        means = x[:, rng.integers(0, n, size=(400, n))].mean(axis=2)
        lo, hi = np.quantile(means, [0.05, 0.95], axis=1)
        ok &= (lo >= -0.05) & (hi <= 0.05)
    assert ok.mean() >= 0.80, (ok.mean(), need)


def _pair(model: str, diff: float, ci: tuple[float, float] | None, per_unit: np.ndarray) -> Any:
    from judgekit.analysis.fidelity import FigurePair

    lo, hi = ci if ci is not None else (None, None)
    return FigurePair("calibration", "drift", {"model": model, "turn": 2}, 0.5, 0.5 - diff, diff, lo, hi,
                      len(per_unit), "conversations", None, {"per_unit": per_unit})


def _certified_share(values: np.ndarray, probs: np.ndarray, n: int, seed: int, studies: int = 200) -> float:
    """The gate's rule written out here: the 90% percentile bootstrap interval (400 resamples) of
    the mean difference within ±0.05 (two one-sided tests at α = 0.05, the policy's default)."""
    rng = np.random.default_rng(seed)
    x = rng.choice(values, size=(studies, n), p=probs)
    means = x[:, rng.integers(0, n, size=(400, n))].mean(axis=2)
    lo, hi = np.quantile(means, [0.05, 0.95], axis=1)
    return float(((lo >= -0.05) & (hi <= 0.05)).mean())


def test_a_fidelity_figure_is_planned_by_simulating_the_gates_rule() -> None:
    from judgekit.gate.plan import _figure_rows
    from judgekit.verdict.fidelity_policy import AnalysisFidelity

    spec = AnalysisFidelity(analysis="calibration", figures=["drift"], max_abs_diff=0.05, min_units=10)
    # a pilot of 200 conversations of one model: per-conversation differences 0 (160), ±0.25 (20 each),
    # SD √(0.2 · 0.0625) = 0.1118; its 90% bootstrap interval about ±1.645 · 0.1118/√200 = ±0.013
    u = np.repeat([-0.25, 0.0, 0.25], [20, 160, 20])
    row = _figure_rows("j", [_pair("m", 0.0, (-0.013, 0.013), u)], spec, None, n_boot=400, seed=0)[0]
    assert row.need is not None and row.note is not None and row.note.startswith("simulated: ")
    # the normal-theory n, ((1.645 + 1.2816) · 0.1118 / 0.05)² ≈ 42.8, is a little optimistic for this
    # discrete difference; the simulated one is at least it and certifies ≥ 80% of 200 fresh studies
    assert 43 <= row.need <= 60, row
    rate = _certified_share(np.array([-0.25, 0.0, 0.25]), np.array([0.1, 0.8, 0.1]), row.need, seed=11)
    assert rate >= 0.80, (rate, row.need)
    # two models, the second labelled as often (and certified almost surely): the need counts both
    # models' conversations, each getting ⌈N/2⌉ — about twice the first's alone
    two = _figure_rows("j", [_pair("m", 0.0, (-0.0155, 0.0155), u), _pair("n", 0.0, (-0.001, 0.001), u * 0.1)],
                       spec, None, n_boot=400, seed=0)[0]
    assert two.need is not None and 2 * row.need - 6 <= two.need <= 2 * row.need + 6, (two.need, row.need)
    assert two.note is not None and "all 2 instances certified" in two.note


def test_a_pilot_without_disagreement_is_planned_at_the_floor_not_undecidable() -> None:
    # the judge agrees with the reference on every pilot conversation: the bootstrap interval is flat
    # (no interval), which the gate reads as the point 0 — certified; the plan needs min_units
    # (this was "undecidable — ... undefined in the pilot (no interval)" before)
    from judgekit.gate.plan import _figure_rows
    from judgekit.verdict.fidelity_policy import AnalysisFidelity

    spec = AnalysisFidelity(analysis="calibration", figures=["drift"], max_abs_diff=0.05, min_units=10)
    row = _figure_rows("j", [_pair("m", 0.0, None, np.zeros(21))], spec, None)[0]
    assert row.need == 10 and row.why is None, row


def test_the_pilots_per_conversation_values_of_every_analysis() -> None:
    # what the plan resamples: per cluster, the jackknife pseudo-values of the difference
    import pandas as pd

    from judgekit.analysis.fidelity import criteria_pairs, distribution_pairs

    # criteria on a, b, c (clusters p1 = {a, b}, p2 = {c}): d = judge 2/3 − reference 1/3 = 1/3;
    # without p1: 0 − 0 = 0; without p2: 1 − 1/2 = 1/2; u = 2·(1/3) − 1·(0, 1/2) = (2/3, 1/6)
    items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "prompt_id": ["p1", "p1", "p2", "p3"]})
    js = pd.Series([1.0, 1.0, 0.0, 0.5], index=["a", "b", "c", "d"])
    rs = pd.Series([1.0, 0.0, 0.0], index=["a", "b", "c"])
    (p,) = criteria_pairs([("leak", js, rs)], items, n_boot=0, per_unit=True)
    assert p.extra["per_unit"] == pytest.approx([2 / 3, 1 / 6])
    assert "per_unit" not in criteria_pairs([("leak", js, rs)], items, n_boot=0)[0].extra
    # distribution: refusal_rate is the mean over prompts of the per-prompt rate, so its pseudo-values
    # are the per-prompt differences: p1 2/3 − 1/3 = 1/3, p2 0 − 1/2 = −1/2
    items = pd.DataFrame({"item_id": ["a0", "a1", "a2", "b0", "b1"], "model": "m",
                          "prompt_id": ["p1", "p1", "p1", "p2", "p2"], "sample": [0, 1, 2, 0, 1]})
    judge = pd.Series([1, 1, 0, 0, 0], index=items["item_id"], dtype=float)
    ref = pd.Series([1, 0, 0, 0, 1], index=items["item_id"], dtype=float)
    (rate,) = distribution_pairs(judge, ref, items, n_boot=0, figures=["refusal_rate"], per_unit=True)
    assert rate.extra["per_unit"] == pytest.approx([1 / 3, -1 / 2])


def test_pilot_upper_raises_the_spread_to_its_upper_confidence_limit() -> None:
    from judgekit.gate.plan import pilot_upper

    # 19 conversations (df 18): the 20% quantile of χ²(18) is 12.857 (tables), so the 80% upper
    # limit of the variance is 18/12.857 = 1.400 times the estimate, k = √1.400 = 1.1832
    rng = np.random.default_rng(0)
    block = rng.normal(0.1, 0.2, size=(19, 3))
    up = pilot_upper(block)
    k = math.sqrt(18 / 12.857)
    assert up.mean(axis=0) == pytest.approx(block.mean(axis=0))  # the mean is kept
    assert up.std(axis=0) == pytest.approx(k * block.std(axis=0), rel=1e-4)
    assert np.array_equal(pilot_upper(block[:2]), block[:2])  # two conversations: no limit to take
    # the spread behind a 90% interval (a fidelity check at α = 0.05): h = 1.6449 · 0.11 / √100
    from judgekit.gate.plan import _sigma

    h = 1.644854 * 0.11 / 10
    assert _sigma([-h, h], 100, 0.90) == pytest.approx(0.11, rel=1e-5)
    assert _sigma([-h, h], 100) == pytest.approx(0.11 * 1.644854 / 1.959964, rel=1e-5)  # read as 95%


@pytest.mark.slow
def test_an_assured_plan_budgets_at_the_upper_limit_of_the_pilot_spread(pilot: dict[str, Path], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"  # Drift(t | tier) secondary: C and Drift(t) are the study's figures
    policy.write_text(pilot["policy"].read_text() + "secondary: [drift_tier]\n")

    def plan(*flags: str) -> dict[str, Any]:
        out = tmp_path / f"plan{len(flags)}.json"
        res = CliRunner().invoke(main, ["plan", str(policy), "--store", str(pilot["store"]),
                                        "--judge", "judge-fair", "--out", str(out), *flags])
        assert res.exit_code == 0, res.output
        return json.loads(out.read_text())

    plain, assured = plan(), plan("--assured")
    together = next(r for r in plain["rows"] if r["check"].endswith(" together"))
    # the row says both: the need at the pilot's spread and at its upper 80% limit (more)
    assert together["need_assured"] > together["need"]
    assert "at the upper 80% confidence limit of the pilot's spread" in "\n".join(plain["lines"])
    assert plain["budget"]["n"] == together["need"] and not plain["budget"]["assured"]
    assert assured["budget"]["n"] == together["need_assured"] and assured["budget"]["assured"]
