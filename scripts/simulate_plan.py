"""Is the plan's budget enough? (issue 22 acceptance: "a fair judge is certified in ≥ 80% at the
plan's budget"). For each of ``--pilots`` synthetic studies (:func:`judgekit.testing.study.make_study`,
each its own seed): a pilot of ``--pilot`` random conversations labelled by the reference, the
judges on every item, ``judgekit plan`` for the fair judge (the library's
:func:`judgekit.gate.plan.make_plan`, no budget cap), and then ``--studies`` FRESH studies with the
plan's number of conversations labelled at random, gated by the fidelity rule
(:func:`scripts.simulate_certify.one`): the share in which the fair judge is certified for the
primary figures C, RCE_t and Drift(t) together.

    PYTHONPATH=. python scripts/simulate_plan.py --pilots 16 --studies 60 [--assured]

Prints per pilot the plan's n and the certified share at it, and their summary: the mean share over
pilots (the probability that a study labelled at the plan of a random pilot certifies the fair
judge) and the share of pilots whose plan reaches 80%.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulate_certify import FIGURES, one  # noqa: E402

from judgekit.gate.plan import make_plan  # noqa: E402
from judgekit.io.ratings import import_ratings  # noqa: E402
from judgekit.rubric.model import load_rubric  # noqa: E402
from judgekit.store.database import Store  # noqa: E402
from judgekit.testing.study import write_study  # noqa: E402
from judgekit.verdict.fidelity_policy import AnalysisFidelity  # noqa: E402

TOGETHER = f"figures {', '.join(FIGURES)} together"


def plan_n(seed: int, pilot: int, per_tier: int, folder: Path, assured: bool = False) -> int | None:
    """The plan's conversations for the fair judge's primary figures from one pilot (``assured``: at
    the upper 80% confidence limit of the pilot's spread, ``judgekit plan --assured``)."""
    import pandas as pd

    paths = write_study(folder, figures=(*FIGURES, "drift_tier"), n_resamples=200, human_share=1.0,
                        conversations_per_tier=per_tier, seed=seed)
    paths["policy"].write_text(paths["policy"].read_text() + "secondary: [drift_tier]\n")
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    conv = items.set_index("item_id")["conversation_id"]
    chosen = set(np.random.default_rng(50_000 + seed).choice(sorted(conv.unique()), size=pilot, replace=False))
    keep = (ratings["rater_kind"] == "judge") | ratings["item_id"].map(conv).isin(chosen)
    ratings[keep].to_csv(folder / "pilot.csv", index=False)
    rubric = load_rubric("restrictiveness")
    with Store(folder / "s.db") as store:
        import_ratings(store, folder / "pilot.csv", rubric, items_path=paths["items"])
        plan = make_plan(store, paths["policy"], judge="judge-fair")
    row = next((r for r in plan["rows"] if r["check"] == TOGETHER), None)
    return None if row is None else row["need_assured" if assured else "need"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pilots", type=int, default=12)
    ap.add_argument("--pilot", type=int, default=60, help="conversations in each pilot")
    ap.add_argument("--studies", type=int, default=60, help="fresh studies at each plan's n")
    ap.add_argument("--conversations-per-tier", type=int, default=30)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--assured", action="store_true", help="the plan of `judgekit plan --assured`")
    a = ap.parse_args()
    spec = AnalysisFidelity(analysis="calibration", figures=list(FIGURES), max_abs_diff=0.05, min_units=10,
                            harm_column="severity")
    total = 3 * (5 * a.conversations_per_tier + 10)
    rows = []
    for k in range(a.pilots):
        with tempfile.TemporaryDirectory() as tmp:
            n = plan_n(1000 + k, a.pilot, a.conversations_per_tier, Path(tmp), a.assured)
        if n is None:
            rows.append({"pilot": k, "plan": None, "certified": None})
            continue
        m = min(n, total)
        share = float(np.mean([one(2000 + 100 * k + s, 0.0, m, a.boot, spec, a.conversations_per_tier)
                               ["judge-fair"]["together"] for s in range(a.studies)]))
        rows.append({"pilot": k, "plan": n, "labelled": m, "certified": share})
        print(json.dumps(rows[-1]), flush=True)
    done = [r["certified"] for r in rows if r["certified"] is not None]
    print(json.dumps({"pilots": a.pilots, "assured": a.assured, "pilot_conversations": a.pilot,
                      "study_conversations": total,
                      "studies_per_plan": a.studies, "plans": [r["plan"] for r in rows],
                      "mean_certified": float(np.mean(done)) if done else None,
                      "pilots_reaching_80": float(np.mean([s >= 0.8 for s in done])) if done else None}, indent=1))


if __name__ == "__main__":
    main()
