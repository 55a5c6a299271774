"""Does the plan come true? (issue 29 acceptance; the slow test tests/gate/test_plan_comes_true.py
runs it at 2 pilots × 25 studies). For each of ``--pilots`` synthetic studies of 480 conversations
(:func:`judgekit.testing.study.make_study`, each its own seed): a pilot of ``--pilot`` random
conversations labelled by the reference, the judges on every item, ``judgekit plan`` for the fair
judge (the library's :func:`judgekit.gate.plan.make_plan`, no budget cap), then ``--studies``
FRESH studies with the plan's number of conversations labelled at random, gated by the gate's
fixed rule, and — every conversation labelled in a random arrival order — by its sequential rule
in rounds of ``--round-size`` (:mod:`judgekit.gate.plan_sim`).

    PYTHONPATH=. python scripts/simulate_plan.py --pilots 4 --studies 25

Prints per pilot the plan's n, and in all: the realised power (the fair judge certified for C,
RCE_t and Drift(t) together) against the plan's stated 80%; the false-certification rate of a
figure just beyond the margin (the edge judge: RCE_6 and Drift(6) of one model moved by 0.06,
margin 0.05), fixed and sequential; the leaning judge UNTRUSTED per model it moves by ≥ 2×
the margin; and the labelled conversations the sequential rule needed to decide the leaning judge
against the fixed plan's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from judgekit.gate.plan_sim import EDGE, FIGURES, MARGIN, moved_models, simulate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pilots", type=int, default=2)
    ap.add_argument("--pilot", type=int, default=60, help="conversations in each pilot")
    ap.add_argument("--studies", type=int, default=25, help="fresh studies at each plan's n")
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--round-size", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulate(a.pilots, a.studies, Path(tmp), pilot=a.pilot, n_boot=a.boot, round_size=a.round_size,
                       first_seed=a.first_seed)
    moved = moved_models(2.0)
    models = sorted(moved["drift"] | moved["drift_tier"])
    print(json.dumps({
        "pilots": a.pilots, "studies": len(sim.studies), "pilot_conversations": a.pilot,
        "plans": [p.n for p in sim.plans], "plans_assured": [p.assured for p in sim.plans],
        "stated_power": min(p.power for p in sim.plans),
        "realised_power_fair_C_RCE_t_drift": sim.rate("judge-fair", FIGURES),
        "false_certification_just_beyond_margin": {
            "difference": EDGE, "margin": MARGIN,
            "fixed": {f: sim.rate("judge-edge", (f,)) for f in ("RCE_t", "drift")},
            "sequential": {f: sim.rate("judge-edge", (f,), sequential=True) for f in ("RCE_t", "drift")}},
        "lean_untrusted_per_model_moved_2x": {m: sim.untrusted_for(m, ("drift", "drift_tier")) for m in models},
        "sequential_mean_conversations_lean": float(np.mean([o.sequential_n["judge-lean"] for _, o in sim.studies])),
        "fixed_plan_mean_conversations": float(np.mean([n for n, _ in sim.studies])),
    }, indent=1))


if __name__ == "__main__":
    main()
