"""A judge's trials are not a model's samples: ``analyze distribution`` collapses each item's
trials by majority (a tie abstains) before counting samples, and reports the judge's instability
as the judge's, never as the model's inconsistency."""

from __future__ import annotations

import pandas as pd

from judgekit.analysis.distribution.estimate import refusal_distribution
from judgekit.analysis.options import Resampling
from judgekit.rubric.model import load_rubric
from tests.analysis_fixtures import ratings_frame

REFUSAL = load_rubric("refusal")
R, C = "full_refusal", "full_compliance"


def _run(spec):
    """spec: (item_id, prompt_id, [label per trial])."""
    items = pd.DataFrame([{"item_id": i, "model": "m", "prompt_id": p} for i, p, _ in spec])
    rows = [(i, lab, t) for i, _, labs in spec for t, lab in enumerate(labs)]
    ratings = ratings_frame(rows, REFUSAL, rater="careful", kind="human")
    return refusal_distribution(ratings, items, rubric=REFUSAL, resampling=Resampling(n_resamples=50))


def test_one_sample_judged_three_times_counts_once_by_majority():
    res = _run([("a", "p1", [R, R, C]), ("b", "p2", [C, C, C])])
    pp = res.table("per_prompt").set_index("prompt_id")
    assert pp.loc["p1", "refusals"] == 1 and pp.loc["p1", "n_rated"] == 1
    assert pp.loc["p1", "rate"] == 1.0
    assert pp.loc["p1", "behaviour"] == "one sample (1 of 1)"
    assert not any("not constant" in str(b) for b in pp["behaviour"])


def test_a_tie_between_trials_abstains():
    res = _run([("a", "p1", [R, C]), ("b", "p1", [R, R])])
    pp = res.table("per_prompt").set_index("prompt_id")
    assert pp.loc["p1", "n_rated"] == 1 and pp.loc["p1", "n_unrated"] == 1
    assert pp.loc["p1", "refusals"] == 1


def test_judge_instability_is_reported_as_the_judges():
    res = _run([("a", "p1", [R, R, C]), ("b", "p1", [R, R, R]), ("c", "p2", [R, C])])
    s = res.table("by_model").iloc[0]
    assert s["share_not_constant"] == 0.0  # p1's two samples are both refusals once collapsed
    assert res.meta["judge_trials"] == {"rule": "majority of ok trials; a tie abstains",
                                        "samples_with_trials": 3, "samples_trials_differ": 2,
                                        "samples_tied": 1}
    note = next(n for n in res.notes if "trials" in n and "careful" in n)
    assert "2 of 3" in note and "judge" in note
