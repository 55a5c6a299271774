"""Refusal as a distribution: Wilson intervals, per-prompt rates, stability, forms, the one-draw
warning."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgekit.analysis.distribution.estimate import (
    FormRatings,
    refusal_definition,
    refusal_distribution,
)
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.stats.intervals import wilson_interval

pytest_plugins = ["tests.analysis_fixtures"]

REFUSAL = load_rubric("refusal")
FORM = load_rubric("refusal_form")
RESTR = load_rubric("restrictiveness")


# --------------------------------------------------------------------------- Wilson
@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        # Newcombe (1998), Stat. Med. 17:857, Table I, method 3 (Wilson score, no correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (29, 29, 0.8830, 1.0),
    ],
)
def test_wilson_matches_newcombe(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert float(got[0]) == pytest.approx(lo, abs=5e-5)
    assert float(got[1]) == pytest.approx(hi, abs=5e-5)


def test_wilson_by_hand_for_two_of_three():
    # z = 1.959964, z² = 3.841459, n = 3, p = 2/3
    # denom  = 1 + z²/n = 2.280486
    # centre = (p + z²/(2n)) / denom = (0.666667 + 0.640243) / 2.280486 = 0.573084
    # half   = z/denom * sqrt(p(1-p)/n + z²/(4n²)) = 0.859449 * sqrt(0.074074 + 0.106707)
    #        = 0.859449 * 0.425183 = 0.365423
    lo, hi = wilson_interval(2, 3)
    assert float(lo) == pytest.approx(0.573084 - 0.365423, abs=1e-5)
    assert float(hi) == pytest.approx(0.573084 + 0.365423, abs=1e-5)


def test_wilson_is_vectorised_and_nan_for_no_data():
    lo, hi = wilson_interval(np.array([0, 5, 0]), np.array([10, 10, 0]))
    assert lo[0] == 0.0 and hi[1] == pytest.approx(0.7634, abs=1e-4)
    assert np.isnan(lo[2]) and np.isnan(hi[2])


# --------------------------------------------------------------------------- definitions
def test_refusal_definition_from_the_refusal_rubric_and_from_a_threshold():
    text, f = refusal_definition(REFUSAL)
    assert "full_refusal" in text and "partial_refusal" in text
    labels = pd.Series(["full_refusal", "partial_refusal", "full_compliance"])
    assert f(labels).tolist() == [1.0, 1.0, 0.0]
    text, f = refusal_definition(RESTR, threshold=0.75)
    assert ">= 0.75" in text and "r3_deflection" in text
    assert f(pd.Series(["r2_partial", "r3_deflection", "r4_hard_refusal"])).tolist() == [0, 1, 1]
    _, f = refusal_definition(RESTR, threshold=0.5)
    assert f(pd.Series(["r1_light_caveats", "r2_partial"])).tolist() == [0, 1]
    _, f = refusal_definition(REFUSAL, refusal_codes=["full_refusal"])
    assert f(labels).tolist() == [1.0, 0.0, 0.0]


def test_refusal_definition_rejects_impossible_choices():
    from judgekit.rubric.model import Label, Rubric

    low = Rubric(name="low", version=1, title="t", level="ordinal", instructions="i",
                 labels=[Label(code="a", value=0.0, description="a"),
                         Label(code="b", value=0.5, description="b")])
    with pytest.raises(JudgekitError, match="nothing would count as a refusal"):
        refusal_definition(low, threshold=0.75)
    with pytest.raises(JudgekitError, match="between 0 and 1"):
        refusal_definition(RESTR, threshold=1.5)
    with pytest.raises(JudgekitError, match="not labels of refusal@1"):
        refusal_definition(REFUSAL, refusal_codes=["hard_no"])


# --------------------------------------------------------------------------- distribution
def _data():
    from tests.analysis_fixtures import ratings_frame

    spec: list[tuple[str, str, str, int, list[str | None], str | None]] = [
        # item, model, prompt, sample, refusal label(s) (several = judge trials), form
        ("m1-p1-0", "m1", "p1", 0, ["full_refusal"], "direct_refusal"),
        ("m1-p1-1", "m1", "p1", 1, ["full_refusal"], "direct_refusal"),
        ("m1-p1-2", "m1", "p1", 2, ["full_compliance"], "full_compliance"),
        ("m1-p2-0", "m1", "p2", 0, ["full_compliance"], "full_compliance"),
        ("m1-p2-1", "m1", "p2", 1, ["full_compliance"], "full_compliance"),
        ("m1-p2-2", "m1", "p2", 2, ["full_compliance"], "caveated_compliance"),
        ("m1-p3-0", "m1", "p3", 0, ["partial_refusal"], "refusal_with_alternative"),
        ("m2-p1-0", "m2", "p1", 0, ["full_refusal", "full_compliance"], "direct_refusal"),
        ("m2-p1-1", "m2", "p1", 1, ["full_refusal"], "direct_refusal"),
        ("m2-p1-2", "m2", "p1", 2, [None], None),  # the judge abstained
    ]
    items = pd.DataFrame([{"item_id": s[0], "model": s[1], "prompt_id": s[2], "sample": s[3],
                           "category": "x" if s[2] != "p3" else "y"} for s in spec])
    rows = [(s[0], lab, t) for s in spec for t, lab in enumerate(s[4])]
    ratings = ratings_frame(rows, REFUSAL, rater="ann", kind="human")
    forms = ratings_frame([(s[0], s[5]) for s in spec if s[5]], FORM, rater="ann", kind="human")
    return ratings, items, forms


def test_per_prompt_rates_and_wilson_intervals():
    ratings, items, forms = _data()
    res = refusal_distribution(ratings, items, rubric=REFUSAL, forms=FormRatings(forms, FORM),
                               resampling=Resampling(n_resamples=200))
    pp = res.table("per_prompt").set_index(["model", "prompt_id"])
    # m1/p1: 2 refusals of 3 samples; Wilson(2, 3) = [0.2077, 0.9385]
    assert pp.loc[("m1", "p1"), "rate"] == pytest.approx(2 / 3)
    assert pp.loc[("m1", "p1"), "ci_low"] == pytest.approx(0.2077, abs=1e-4)
    assert pp.loc[("m1", "p1"), "ci_high"] == pytest.approx(0.9385, abs=1e-4)
    assert not pp.loc[("m1", "p1"), "constant"]
    assert pp.loc[("m1", "p2"), "rate"] == 0.0 and pp.loc[("m1", "p2"), "constant"]
    # a single sample: rate 1 (partial refusal counts), stability undefined
    assert pp.loc[("m1", "p3"), "rate"] == 1.0 and pp.loc[("m1", "p3"), "constant"] is pd.NA
    # m2/p1: sample 0 judged twice (refusal, compliance): a tie between the judge's trials, so it
    # abstains; sample 1 = 1; sample 2 abstained -> k = 1 of n = 1 rated sample; two unrated
    assert pp.loc[("m2", "p1"), "refusals"] == 1
    assert pp.loc[("m2", "p1"), "n_rated"] == 1 and pp.loc[("m2", "p1"), "n_unrated"] == 2
    assert pp.loc[("m2", "p1"), "rate"] == 1.0
    # forms across the samples of m1/p1
    assert pp.loc[("m1", "p1"), "forms"] == "direct_refusal: 2; full_compliance: 1"
    assert pp.loc[("m1", "p1"), "modal_form"] == "direct_refusal"
    assert pp.loc[("m1", "p1"), "form_varies"]


def test_model_summary_hand_computed():
    ratings, items, forms = _data()
    res = refusal_distribution(ratings, items, rubric=REFUSAL,
                               resampling=Resampling(n_resamples=200))
    s = res.table("by_model").set_index("model")
    # m1: prompt rates 2/3, 0, 1 -> mean 5/9; pooled 3 refusals / 7 samples
    assert s.loc["m1", "mean_rate"] == pytest.approx(5 / 9)
    assert s.loc["m1", "pooled_rate"] == pytest.approx(3 / 7)
    # prompts with >= 2 samples: p1 (varies), p2 (constant) -> share not constant 1/2
    assert s.loc["m1", "share_not_constant"] == pytest.approx(0.5)
    assert s.loc["m1", "single_sample_prompts"] == 1
    assert s.loc["m1", "always_refused"] == pytest.approx(1 / 3)
    lo, mean, hi = s.loc["m1", ["ci_low", "mean_rate", "ci_high"]].to_numpy(float)
    assert lo <= mean <= hi
    # m2: its one prompt has one rated sample (the other two tie or abstain): no prompt to be
    # constant or not
    assert math.isnan(s.loc["m2", "share_not_constant"])
    # the one-draw warning names how many prompts have one sample
    assert any("2 of 4 prompts have one rated sample" in n and "one draw" in n for n in res.notes)
    assert any("2 samples have no usable rating" in n for n in res.notes)


def test_forms_table_shares_hand_computed():
    ratings, items, forms = _data()
    res = refusal_distribution(ratings, items, rubric=REFUSAL, forms=FormRatings(forms, FORM),
                               resampling=Resampling(n_resamples=0))
    f = res.table("forms").set_index("model")
    # m1: 7 samples: direct 2, full_compliance 3, caveated 1, alternative 1
    assert f.loc["m1", "n_samples"] == 7
    assert f.loc["m1", "direct_refusal"] == pytest.approx(2 / 7)
    assert f.loc["m1", "full_compliance"] == pytest.approx(3 / 7)
    assert f.loc["m1", "in_fiction_deflection"] == 0.0


def test_slices_and_charts():
    ratings, items, _ = _data()
    res = refusal_distribution(ratings, items, rubric=REFUSAL, columns=ItemColumns(by=["category"]),
                               resampling=Resampling(n_resamples=0))
    bc = res.table("by_category").set_index(["model", "category"])
    assert bc.loc[("m1", "y"), "mean_rate"] == 1.0  # p3 only
    assert bc.loc[("m1", "x"), "mean_rate"] == pytest.approx(1 / 3)  # p1 2/3, p2 0
    cdf = {p[0]: p for p in res.chart("rate_cdf").series["m1"]}
    # share of m1's prompts with rate <= 0 is 1/3 (p2), <= 0.65 still 1/3, <= 1 is 1
    assert cdf[0.0][1] == pytest.approx(1 / 3)
    assert cdf[1.0][1] == 1.0
    # points now carry their 95% band (DKW: eps = sqrt(ln(2/0.05) / (2 * 3)) = 0.7841 for m1's
    # 3 prompts, clipped to [0, 1]) and n = 3 prompts
    eps = (math.log(40) / 6) ** 0.5
    assert eps == pytest.approx(0.78410, abs=1e-5)  # ln 40 = 3.68888; 3.68888 / 6 = 0.61481
    assert 1 / 3 + eps > 1 and cdf[0.0][2:5] == (0.0, 1.0, 3)  # 1/3 ± 0.784, clipped both sides
    assert cdf[1.0][2:5] == (pytest.approx(1 - eps), 1.0, 3)


def test_every_prompt_single_sample_says_one_draw():
    from tests.analysis_fixtures import ratings_frame

    items = pd.DataFrame({"item_id": ["a", "b"], "model": ["m", "m"], "prompt_id": ["p", "q"]})
    ratings = ratings_frame([("a", "full_refusal"), ("b", "full_compliance")], REFUSAL,
                            rater="h", kind="human")
    res = refusal_distribution(ratings, items, rubric=REFUSAL, resampling=Resampling(n_resamples=0))
    assert any(n.startswith("Every prompt has one rated sample") and "one draw, not a property"
               in n for n in res.notes)
    assert res.table("by_model").iloc[0]["single_sample_prompts"] == 2


def test_items_missing_for_ratings_is_an_error():
    ratings, items, _ = _data()
    with pytest.raises(JudgekitError, match="not in the items table"):
        refusal_distribution(ratings, items.iloc[:3], rubric=REFUSAL,
                             resampling=Resampling(n_resamples=0))
    with pytest.raises(JudgekitError, match="no column 'persona'"):
        refusal_distribution(ratings, items, rubric=REFUSAL, columns=ItemColumns(by=["persona"]),
                             resampling=Resampling(n_resamples=0))


def test_items_without_a_conversation_id_are_prompts_of_their_own():
    from tests.analysis_fixtures import ratings_frame

    items = pd.DataFrame({
        "item_id": ["c1/0", "c1/1", "p2/0", "p2/1", "x"], "model": "m",
        "conversation_id": ["c1", "c1", None, None, None],
        "prompt_id": ["p1", "p1", "p2", "p2", None]})
    ratings = ratings_frame([("c1/0", "full_refusal"), ("c1/1", "full_compliance"),
                             ("p2/0", "full_refusal"), ("p2/1", "full_refusal"),
                             ("x", "full_compliance")], REFUSAL, rater="h", kind="human")
    res = refusal_distribution(ratings, items, rubric=REFUSAL,
                               resampling=Resampling(n_resamples=50))
    pp = res.table("per_prompt").set_index("conversation_id")
    # p2 (by its prompt_id) and x (by its item id) are prompts of their own
    assert pp["rate"].to_dict() == {"c1": 0.5, "p2": 1.0, "x": 0.0}
    s = res.table("by_model").iloc[0]
    assert s["n_prompts"] == 3 and s["n_clusters"] == 3
    assert s["mean_rate"] == pytest.approx(0.5)  # (0.5 + 1 + 0) / 3


def test_a_model_column_that_does_not_exist_is_an_error_not_one_pooled_model():
    ratings, items, _ = _data()
    with pytest.raises(JudgekitError, match="no column 'modle'.*--model-column"):
        refusal_distribution(ratings, items, rubric=REFUSAL, columns=ItemColumns(model="modle"),
                             resampling=Resampling(n_resamples=0))
    # without any model column (and the default name) the items are one model, "all"
    res = refusal_distribution(ratings, items.drop(columns=["model"]), rubric=REFUSAL,
                               resampling=Resampling(n_resamples=0))
    assert res.table("by_model")["model"].tolist() == ["all"]


def test_a_share_at_the_boundary_in_every_prompt_gets_a_wilson_not_a_zero_width_interval():
    # three prompts, each refused in both of its samples: the bootstrap over prompts can only
    # draw 1.0, so [1, 1] would claim certainty; the interval is Wilson's for 3 of 3 prompts,
    # and the share not constant (0 of 3) Wilson's for 0 of 3
    from tests.analysis_fixtures import ratings_frame

    items = pd.DataFrame([{"item_id": f"p{p}-{s}", "model": "m", "prompt_id": f"p{p}", "sample": s}
                          for p in range(3) for s in range(2)])
    ratings = ratings_frame([(i, "full_refusal") for i in items["item_id"]], REFUSAL, rater="ann",
                            kind="human")
    res = refusal_distribution(ratings, items, rubric=REFUSAL,
                               resampling=Resampling(n_resamples=200))
    row = res.table("by_model").set_index("model").loc["m"]
    z = 1.959963984540054
    n = 3
    # Wilson at p = 1: centre (1 + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) · sqrt(z²/4n²)
    centre = (1 + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(z * z / (4 * n * n))
    assert row["mean_rate"] == 1.0
    assert row["ci_low"] == pytest.approx(centre - half, abs=1e-9)
    assert row["ci_high"] == pytest.approx(1.0)
    # at p = 0 the interval mirrors: [0, 1 - (centre - half)]
    assert row["share_not_constant"] == 0.0
    assert row["not_constant_ci_low"] == pytest.approx(0.0)
    assert row["not_constant_ci_high"] == pytest.approx(1 - (centre - half), abs=1e-9)
