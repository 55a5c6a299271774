"""Issue 22 acceptance end to end: a pilot, `judgekit plan` for the judge to certify, `judgekit
sample --from-plan` drawing whole conversations, the reference's labels of those conversations
imported, and the gate: with at most 150 human-labelled conversations the fair judge is TRUSTED
for C (RCE_t and Drift(t) certified or not established — one draw of an ~80%-powered plan) and the
judge leaning toward compliance UNTRUSTED for Drift(t)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from judgekit.cli import main


def _run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code in (0, 1, 3), res.output
    return res.output


def test_plan_sample_label_gate(tmp_path: Path) -> None:
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, figures=("C", "RCE_t", "drift", "drift_tier"), n_resamples=200, human_share=1.0)
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    conv = items.set_index("item_id")["conversation_id"]
    ref = ratings[ratings["rater_id"] == "adjudicated"]
    # Drift(t | tier) is reported, not planned for: its tier cells are small
    paths["policy"].write_text(paths["policy"].read_text() + "secondary: [drift_tier]\n")
    # a pilot: 60 conversations drawn at random, and the judges on every item
    convs = sorted(items["conversation_id"].unique())
    rng = __import__("numpy").random.default_rng(7)
    pilot_convs = set(rng.choice(convs, size=60, replace=False))
    ratings[ratings["rater_kind"] == "judge"].to_csv(tmp_path / "judges.csv", index=False)
    ref[ref["item_id"].map(conv).isin(pilot_convs)].to_csv(tmp_path / "pilot.csv", index=False)
    db = str(tmp_path / "s.db")
    _run("import", str(tmp_path / "judges.csv"), "--rubric", "restrictiveness", "--items", str(paths["items"]),
         "--store", db)
    _run("import", str(tmp_path / "pilot.csv"), "--rubric", "restrictiveness", "--store", db)
    plan_path = tmp_path / "plan.json"
    _run("plan", str(paths["policy"]), "--store", db, "--judge", "judge-fair", "--budget", "150",
         "--out", str(plan_path))
    plan = json.loads(plan_path.read_text())
    assert plan["budget"]["unit"] == "conversations"
    n_plan = plan["budget"]["n"]
    assert n_plan <= 150, plan["lines"]
    # the fidelity figures are planned by simulating the gate's rule from the pilot's conversations
    rows = {r["check"]: r for r in plan["rows"]}
    assert all((rows[f"figure {f}"]["note"] or "").startswith("simulated: ") for f in ("C", "RCE_t", "drift"))
    design = tmp_path / "design.csv"
    _run("sample", "--name", "main", "--from-plan", str(plan_path), "--store", db, "--out", str(design))
    drawn = set(pd.read_csv(design)["item_id"].astype(str))
    labelled = ref[ref["item_id"].isin(drawn) & ~ref["item_id"].map(conv).isin(pilot_convs)]
    labelled.to_csv(tmp_path / "main.csv", index=False)
    _run("import", str(tmp_path / "main.csv"), "--rubric", "restrictiveness", "--store", db)
    n_conv = len(pilot_convs | set(labelled["item_id"].map(conv)))
    assert n_conv <= 150 and abs(n_conv - n_plan) <= 2, (n_conv, n_plan)
    _run("gate", str(paths["policy"]), "--store", db, "--out", str(tmp_path / "g"))
    v = json.loads((tmp_path / "g" / "verdict.json").read_text())
    by = {j["judge"]: j for j in v["judges"]}
    fair = {f: c["state"] for f, c in by["judge-fair"]["figures"].items()}
    lean = {f: c["state"] for f, c in by["judge-lean"]["figures"].items()}
    # C is certified; RCE_t and Drift(t) are certified or "not established", never UNTRUSTED. (In
    # this draw one cell, m-steady at turn 5, ends 0.054–0.060 above the margin 0.05, so they are not
    # established at 150: from this 60-conversation pilot the plan asks 185 for Drift(t), capped by
    # --budget 150; scripts/simulate_certify.py measures 82.5–86.5% over 200 studies at about 132
    # random conversations; tests/test_gate_certify22.py certifies all three on another study at <= 150.)
    assert fair["C"] == "pass", fair
    assert fair["RCE_t"] in ("pass", "inconclusive") and fair["drift"] in ("pass", "inconclusive"), fair
    for f in ("RCE_t", "drift"):
        if fair[f] == "inconclusive":
            assert by["judge-fair"]["figures"][f]["sentence"].startswith(f"{f}: not established (")
    assert "fail" in (lean["drift"], lean["drift_tier"]), lean
