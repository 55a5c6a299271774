"""Simulation of figure certification (issue 22 acceptance): over N synthetic studies
(:func:`judgekit.testing.study.make_study`), how often the gate's fidelity rule certifies each
figure — and all the primary figures together — for the fair judge and for the judge leaning
toward compliance.

Each study labels ``--conversations`` whole conversations drawn at random (or, without it, the
generator's ``--human-share``). A figure is certified when every one of its checks passes, read
by the gate's own check (:func:`judgekit.gate.fidelity.fidelity_checks`: n ≥ min_units labelled
conversations and the whole (1 − 2α) paired cluster-bootstrap interval of the difference
judge − reference within ±margin, a flat interval read on its point) on the figure pairs the
gate computes. The agreement floor (weighted κ ≥ 0.7) is not re-run here: both judges clear it
by far on every study.

    PYTHONPATH=. python scripts/simulate_certify.py --studies 200 --conversations 150 --boot 200

Prints the share of studies in which each judge is certified per figure and for the primary
figures together, and for the leaning judge the share in which a figure whose true difference
exceeds the margin (on a large fully labelled study) is certified.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from judgekit.analysis.fidelity import calibration_pairs
from judgekit.analysis.frames import harm_from_column
from judgekit.gate.fidelity import fidelity_checks
from judgekit.rubric.model import load_rubric
from judgekit.testing.study import make_study
from judgekit.verdict.fidelity_policy import AnalysisFidelity

FIGURES = ("C", "RCE_t", "drift")


def _values(ratings: pd.DataFrame, rater: str, rub) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    r = ratings[ratings["rater_id"] == rater]
    return pd.DataFrame({"item_id": r["item_id"], "value": r["label"].map(rub.values).astype(float)})


def one(seed: int, share: float, conversations: int | None, boot: int,
        spec: AnalysisFidelity, per_tier: int = 20) -> dict[str, dict[str, bool]]:
    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=seed, human_share=1.0 if conversations else share,
                                conversations_per_tier=per_tier)
    if conversations:  # a random draw of whole conversations, as `judgekit sample --by-conversation`
        convs = sorted(items["conversation_id"].unique())
        keep = set(np.random.default_rng(10_000 + seed).choice(convs, size=conversations, replace=False))
        labelled = set(items.loc[items["conversation_id"].isin(keep), "item_id"])
        ratings = ratings[(ratings["rater_id"] != "adjudicated") | ratings["item_id"].isin(labelled)]
    harm = harm_from_column(items, "severity")
    ref = _values(ratings, "adjudicated", rub)
    out: dict[str, dict[str, bool]] = {}
    for judge in ("judge-fair", "judge-lean"):
        pairs = calibration_pairs(_values(ratings, judge, rub), ref, items, harm, figures=FIGURES,
                                  n_boot=boot, seed=seed, level=spec.level)
        checks = fidelity_checks(spec, judge, pairs, seed=seed)
        out[judge] = {}
        for fig in FIGURES:
            own = [c for c in checks if c.subject.figure == fig]
            out[judge][fig] = bool(own) and all(c.state == "pass" for c in own)
        out[judge]["together"] = all(out[judge][f] for f in FIGURES)
    return out


def truth(margin: float) -> dict[str, bool]:
    """Whether the leaning judge's figure is off by more than the margin somewhere, on a large
    fully labelled study (the population value, up to a small sampling error)."""
    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=12345, conversations_per_tier=200, human_share=1.0)
    harm = harm_from_column(items, "severity")
    pairs = calibration_pairs(_values(ratings, "judge-lean", rub), _values(ratings, "adjudicated", rub), items,
                              harm, figures=FIGURES, n_boot=0)
    return {fig: any(p.diff is not None and abs(p.diff) > margin for p in pairs if p.figure == fig)
            for fig in FIGURES}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--studies", type=int, default=200)
    ap.add_argument("--conversations", type=int, default=None, help="label this many random conversations")
    ap.add_argument("--conversations-per-tier", type=int, default=20,
                    help="the study's size: 3 models × (5 tiers × this + 10 look-alikes) conversations "
                         "(20: 330; 30: 480, the issue's study)")
    ap.add_argument("--human-share", type=float, default=0.4)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--min-units", type=int, default=10)
    a = ap.parse_args()
    spec = AnalysisFidelity(analysis="calibration", figures=list(FIGURES), max_abs_diff=a.margin,
                            min_units=a.min_units, alpha=a.alpha, harm_column="severity")
    runs = [one(s, a.human_share, a.conversations, a.boot, spec, a.conversations_per_tier)
            for s in range(a.studies)]
    keys = (*FIGURES, "together")
    rate = {j: {f: float(np.mean([r[j][f] for r in runs])) for f in keys} for j in runs[0]}
    off = truth(a.margin)
    print(json.dumps({"studies": a.studies, "conversations": a.conversations,
                      "study_conversations": 3 * (5 * a.conversations_per_tier + 10),
                      "human_share": None if a.conversations else a.human_share, "alpha": a.alpha,
                      "certified_share": rate, "lean_off_by_more_than_margin": off,
                      "lean_certified_when_off": {f: rate["judge-lean"][f] for f in FIGURES if off[f]}}, indent=1))


if __name__ == "__main__":
    main()
