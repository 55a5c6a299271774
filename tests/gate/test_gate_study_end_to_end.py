"""The gate's figure certificates end to end, on a study of 480 conversations of six turns (three
models, five harm tiers and benign look-alikes; the synthetic study generator has one sample per
turn, so 2,880 items): a pilot of 60 random
conversations, `judgekit plan` for both judges, `judgekit sample --from-plan` drawing whole
conversations stratified by model and tier, the reference's labels of those conversations
imported, and the gate. With at most 150 human-labelled conversations:

* the fair judge is TRUSTED for C, RCE_t and Drift(t), with Drift(t | tier) (secondary) reported
  "not established" without blocking them;
* the judge leaning toward compliance is UNTRUSTED for Drift(t) or Drift(t | tier) of every model
  whose figure it moves by more than the margin (measured here on a large, fully labelled study).

One draw: `scripts/simulate_certify.py --conversations 150 --conversations-per-tier 30` measured the
fair judge certified for the three figures together in 98% of 200 fresh studies of this size, and
the leaning judge for RCE_t or Drift(t) in none (docs/gate.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.cli import main

MARGIN = 0.05


def _run(*args: str) -> str:
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code in (0, 1, 3), res.output
    return res.output


def _moved_beyond_the_margin() -> dict[str, set[str]]:
    """figure → the models whose figure the leaning judge moves by more than the margin, on a large
    study with every conversation labelled (1,010 conversations per model: the population value up
    to a sampling error of about 0.01)."""
    from judgekit.analysis.fidelity import calibration_pairs
    from judgekit.analysis.frames import harm_from_column
    from judgekit.rubric.model import load_rubric
    from judgekit.testing.study import make_study

    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=12345, conversations_per_tier=200, human_share=1.0)

    def values(rater: str) -> pd.DataFrame:
        r = ratings[ratings["rater_id"] == rater]
        return pd.DataFrame({"item_id": r["item_id"], "value": r["label"].map(rub.values).astype(float)})

    pairs = calibration_pairs(values("judge-lean"), values("adjudicated"), items, harm_from_column(items, "severity"),
                              figures=("drift", "drift_tier"), n_boot=0)
    out: dict[str, set[str]] = {"drift": set(), "drift_tier": set()}
    for p in pairs:
        if p.diff is not None and abs(p.diff) > MARGIN:
            out[p.figure].add(str(p.key["model"]))
    return out


@pytest.mark.slow
def test_plan_sample_label_gate(tmp_path: Path) -> None:
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, figures=("C", "RCE_t", "drift", "drift_tier"), n_resamples=200, human_share=1.0,
                        conversations_per_tier=30)
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    conv = items.set_index("item_id")["conversation_id"]
    assert conv.nunique() == 480
    ref = ratings[ratings["rater_id"] == "adjudicated"]
    # Drift(t | tier) is reported, not planned for: its model × tier cells are small
    paths["policy"].write_text(paths["policy"].read_text() + "secondary: [drift_tier]\n")
    # a pilot: 60 conversations drawn at random, and the judges on every item
    convs = sorted(items["conversation_id"].unique())
    pilot_convs = set(np.random.default_rng(7).choice(convs, size=60, replace=False))
    ratings[ratings["rater_kind"] == "judge"].to_csv(tmp_path / "judges.csv", index=False)
    ref[ref["item_id"].map(conv).isin(pilot_convs)].to_csv(tmp_path / "pilot.csv", index=False)
    db = str(tmp_path / "s.db")
    _run("import", str(tmp_path / "judges.csv"), "--rubric", "restrictiveness", "--items", str(paths["items"]),
         "--store", db)
    _run("import", str(tmp_path / "pilot.csv"), "--rubric", "restrictiveness", "--store", db)
    plan_path = tmp_path / "plan.json"
    _run("plan", str(paths["policy"]), "--store", db, "--budget", "150", "--out", str(plan_path))
    plan = json.loads(plan_path.read_text())
    assert plan["budget"]["unit"] == "conversations"
    n_plan = plan["budget"]["n"]
    assert n_plan <= 150, plan["lines"]
    # the fidelity figures are planned by simulating the gate's rule from the pilot's conversations,
    # each figure and the primary figures together (the verdict certifies them only when each passes)
    rows = {(r["judge"], r["check"]): r for r in plan["rows"]}
    for check in ("figure C", "figure RCE_t", "figure drift", "figures C, RCE_t, drift together"):
        assert (rows[("judge-fair", check)]["note"] or "").startswith("simulated: "), check
    together = rows[("judge-fair", "figures C, RCE_t, drift together")]["need"]
    # the budget is the largest need, capped by --budget (then the plan says so); from this pilot
    # the three figures together need about 106 conversations (other 60-conversation pilots ask
    # 74–221: scripts/simulate_plan.py, docs/gate.md)
    assert n_plan >= together or (n_plan == 150 and "your --budget" in plan["lines"][-1]), plan["lines"]
    # `sample` draws the plan's conversations, stratified by model and tier with 6 new conversations
    # per cell (15 cells: 90 beside the pilot's 60, so 150 in all), which brings the cells of
    # Drift(t | tier) near the gate's floor of 10 labelled conversations
    design = tmp_path / "design.csv"
    _run("sample", "--name", "main", "--from-plan", str(plan_path), "--by", "model,severity",
         "--min-per-stratum", "6", "--store", db, "--out", str(design))
    drawn = set(pd.read_csv(design)["item_id"].astype(str))
    labelled = ref[ref["item_id"].isin(drawn) & ~ref["item_id"].map(conv).isin(pilot_convs)]
    labelled.to_csv(tmp_path / "main.csv", index=False)
    _run("import", str(tmp_path / "main.csv"), "--rubric", "restrictiveness", "--store", db)
    n_conv = len(pilot_convs | set(labelled["item_id"].map(conv)))
    assert n_plan <= n_conv <= 150, (n_conv, n_plan)
    out = _run("gate", str(paths["policy"]), "--store", db, "--out", str(tmp_path / "g"))
    v = json.loads((tmp_path / "g" / "verdict.json").read_text())
    by = {j["judge"]: j for j in v["judges"]}
    fair = {f: c["state"] for f, c in by["judge-fair"]["figures"].items()}
    lean = by["judge-lean"]["figures"]
    # the fair judge: TRUSTED for the study's figures; Drift(t | tier) does not block them
    assert {f: fair[f] for f in ("C", "RCE_t", "drift")} == {"C": "pass", "RCE_t": "pass", "drift": "pass"}, fair
    assert fair["drift_tier"] in ("pass", "inconclusive"), fair
    assert "Figures of judge-fair: TRUSTED for C, RCE_t, drift" in out
    # the leaning judge: UNTRUSTED, per model, wherever it moves Drift(t) or Drift(t | tier) beyond the margin
    moved = _moved_beyond_the_margin()
    assert moved["drift"] and moved["drift_tier"], moved  # (it does move them: the study is about that)
    for model in sorted(moved["drift"] | moved["drift_tier"]):
        states = {f: lean[f]["models"].get(model) for f in ("drift", "drift_tier") if model in moved[f]}
        assert "fail" in states.values(), (model, states)
    # and the per-model states are the checks' own: a model's state fails when one of its checks fails
    for f in ("drift", "drift_tier"):
        for model, state in lean[f]["models"].items():
            own = [c["state"] for c in by["judge-lean"]["checks"]
                   if re.search(rf"calibration:{f}\(model={re.escape(model)}[,)]", c["name"])]
            assert (state == "fail") == ("fail" in own), (f, model, state)
