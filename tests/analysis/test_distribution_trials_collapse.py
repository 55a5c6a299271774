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


FORM = load_rubric("refusal_form")
D, A, F = "direct_refusal", "refusal_with_alternative", "full_compliance"


def _run_forms(spec):
    """spec: (item_id, refusal label, [form label per trial]), all of model m, prompt p1."""
    from judgekit.analysis.distribution.estimate import FormRatings
    items = pd.DataFrame([{"item_id": i, "model": "m", "prompt_id": "p1"} for i, _, _ in spec])
    ratings = ratings_frame([(i, lab) for i, lab, _ in spec], REFUSAL, rater="careful", kind="human")
    forms = ratings_frame([(i, f, t) for i, _, fs in spec for t, f in enumerate(fs)], FORM,
                          rater="careful", kind="human")
    return refusal_distribution(ratings, items, rubric=REFUSAL, forms=FormRatings(forms, FORM),
                                resampling=Resampling(n_resamples=0))


def test_form_shares_count_each_sample_once_by_the_plurality_of_its_trials():
    # a: [D, D, A] -> wholly D; b: [D, A, F] -> a three-way tie abstains; c: F; d: A
    res = _run_forms([("a", R, [D, D, A]), ("b", R, [D, A, F]), ("c", C, [F, F, F]),
                      ("d", R, [A])])
    f = res.table("forms").set_index("model")
    assert f.loc["m", "n_samples"] == 3  # b is unrated for the form
    assert f.loc["m", D] == 1 / 3 and f.loc["m", A] == 1 / 3 and f.loc["m", F] == 1 / 3
    pp = res.table("per_prompt").set_index("prompt_id")
    assert pp.loc["p1", "forms"] == f"{D}: 1; {A}: 1; {F}: 1"
    note = next(t.description for t in res.tables if t.key == "forms")
    assert "plurality label of ok trials" in note and "tie" in note


def test_corrected_form_shares_count_each_sample_once_by_the_plurality_of_its_trials():
    from judgekit.analysis.distribution.corrected import corrected_distribution
    spec = [("a", [D, D, A]), ("b", [D, A, F]), ("c", [F, F, F]), ("d", [A])]
    items = pd.DataFrame([{"item_id": i, "model": "m"} for i, _ in spec])
    judge = ratings_frame([(i, f, t) for i, fs in spec for t, f in enumerate(fs)], FORM,
                          rater="judge-x")
    reference = ratings_frame([(i, fs[0]) for i, fs in spec], FORM, rater="ref", kind="human")
    tables = corrected_distribution(judge, reference, items, indicator=lambda s: s.eq(D),
                                    codes=FORM.codes)
    shares = next(t for t in tables if t.key == "ppi_shares")
    raw = shares.frame.set_index("label")["raw"]
    # b abstains: the judge's figure is over a (D), c (F), d (A)
    assert raw[D] == 1 / 3 and raw[A] == 1 / 3 and raw[F] == 1 / 3
    assert "plurality label of ok trials" in shares.description
