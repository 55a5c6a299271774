"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025) against worked cases.

The procedure is checked three ways: a small case whose arithmetic (indicators, t statistics,
p-values from the closed-form t CDF, Benjamini-Yekutieli thresholds) is written out below;
the edge cases of the authors' reference code; and, when a checkout of the authors' repository
is available, every winning rate and advantage probability their notebook prints.
"""

from __future__ import annotations

import doctest
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgekit.agreement import AltTestResult, alt_test
from judgekit.agreement.alternative_annotator import benjamini_yekutieli
from judgekit.errors import JudgekitError

nan = float("nan")


def t_cdf_5(t):
    """P(T_5 <= t) in closed form (Abramowitz & Stegun 26.7.3, odd degrees of freedom):
    ``1/2 + (theta + sin(theta) cos(theta) (1 + 2/3 cos^2(theta))) / pi``,
    ``theta = atan(t / sqrt(5))``."""
    theta = math.atan(t / math.sqrt(5))
    c = math.cos(theta)
    return 0.5 + (theta + math.sin(theta) * c * (1 + 2 / 3 * c * c)) / math.pi


# Four humans and a judge on eight units. Units 1-5 are of the kind "the humans all disagree and
# the judge sides with C"; on unit 6 A and C say 'a', B 'b', the judge 'c'. Unit 7 has one human
# and unit 8 no judge rating: both are dropped (min_raters_per_unit=2, judge must rate), which
# leaves D, who rated only unit 8, with 0 units: skipped, and not counted in the winning rate.
WORKED = pd.DataFrame(
    [
        ["a", "b", "c", "a", "b", "a", "a", "a"],
        ["b", "c", "a", "c", "a", "b", None, "a"],
        ["c", "a", "b", "b", "c", "a", None, "a"],
        [None, None, None, None, None, None, None, "a"],
    ],
    index=["A", "B", "C", "D"],
    columns=[f"u{i}" for i in range(1, 9)],
)
WORKED_JUDGE = ["c", "a", "b", "b", "c", "c", "a", None]

# Accuracy scores against the remaining humans, per unit (judge J vs left-out human):
#   units 1-5, A left out: B, C remain; J matches C (1/2), A matches nobody (0): J wins, d = -1
#              B left out: A, C remain; J 1/2, B 0: J wins, d = -1
#              C left out: A, B remain; J 0, C 0: tie (both indicators 1), d = 0
#   unit 6,    A left out: B='b', C='a' remain; J 0, A 1/2: A wins, d = +1
#              B left out: A, C ='a'; J 0, B 0: tie, d = 0
#              C left out: A='a', B='b'; J 0, C 1/2: C wins, d = +1
# d = V - W (V = human >= judge, W = judge >= human):
#   A: (-1, -1, -1, -1, -1, +1): mean -2/3, sample var (5 (1/3)^2 + (5/3)^2) / 5 = 2/3,
#      se = sqrt(2/3) / sqrt(6) = 1/3, t = (-2/3 - 0.2) / (1/3) = -2.6
#   B: (-1, -1, -1, -1, -1, 0): mean -5/6, var (5 (1/6)^2 + (5/6)^2) / 5 = 1/6, se = 1/6,
#      t = (-5/6 - 0.2) / (1/6) = -6.2
#   C: (0, 0, 0, 0, 0, +1): mean 1/6, var 1/6, se 1/6, t = (1/6 - 0.2) / (1/6) = -0.2
# p = P(T_5 <= t): A 0.024125, B 0.000797, C 0.424680.
# Benjamini-Yekutieli over the m = 3 tested humans at q = 0.05: H_3 = 1 + 1/2 + 1/3 = 11/6,
# thresholds i/3 * 0.05 / H_3 = 0.009091, 0.018182, 0.027273. Sorted: B 0.000797 <= 0.009091,
# A 0.024125 > 0.018182, C 0.424680 > 0.027273: only B is rejected, omega = 1/3. (Plain
# Benjamini-Hochberg, thresholds 0.0167, 0.0333, 0.05, would also reject A: omega = 2/3.)
# Advantage probabilities (share of units with W = 1): A 5/6, B 6/6, C 5/6; rho = 8/9.


def test_worked_case_accuracy():
    result = alt_test(WORKED, WORKED_JUDGE, min_units_per_human=5)
    assert isinstance(result, AltTestResult)
    assert result.n_units == 6
    assert result.skipped == (("D", 0),)
    assert [h.rater for h in result.per_human] == ["A", "B", "C"]
    assert [h.n for h in result.per_human] == [6, 6, 6]
    expected_t = {"A": -2.6, "B": -6.2, "C": -0.2}
    for h in result.per_human:
        assert h.t_statistic == pytest.approx(expected_t[h.rater], abs=1e-12)
        assert h.p_value == pytest.approx(t_cdf_5(expected_t[h.rater]), abs=1e-12)
    assert [round(h.p_value, 6) for h in result.per_human] == [0.024125, 0.000797, 0.42468]
    assert [h.rejected for h in result.per_human] == [False, True, False]
    assert result.winning_rate == pytest.approx(1 / 3)
    assert [h.advantage_probability for h in result.per_human] == pytest.approx([5 / 6, 1, 5 / 6])
    assert [h.human_advantage_probability for h in result.per_human] == pytest.approx(
        [1 / 6, 1 / 6, 1]
    )
    assert result.advantage_probability == pytest.approx(8 / 9)
    assert result.n_humans == 3
    assert (result.epsilon, result.q, result.scoring) == (0.2, 0.05, "accuracy")
    assert result.undefined_reason is None


def test_worked_case_thresholds_and_defaults():
    # With the default min_units_per_human=30 nobody has enough units: undefined, with why.
    result = alt_test(WORKED, WORKED_JUDGE)
    assert math.isnan(result.winning_rate) and math.isnan(result.advantage_probability)
    assert result.per_human == ()
    assert result.skipped == (("A", 6), ("B", 6), ("C", 6), ("D", 0))
    assert result.undefined_reason == "no human rated at least 30 of the 6 kept units"
    # A larger allowance: epsilon = 0.5 makes every t more negative (t_A = (-2/3 - 0.5) * 3 =
    # -3.5, p = 0.0086 <= 0.0182 at rank 2), so A is rejected too: omega = 2/3.
    loose = alt_test(WORKED, WORKED_JUDGE, epsilon=0.5, min_units_per_human=5)
    assert loose.per_human[0].t_statistic == pytest.approx(-3.5)
    assert [h.rejected for h in loose.per_human] == [True, True, False]
    assert loose.winning_rate == pytest.approx(2 / 3)
    # The same data as lists (rater ids are then row numbers) and as a Series judge.
    as_lists = alt_test(WORKED.values.tolist(), WORKED_JUDGE, min_units_per_human=5)
    assert [h.rater for h in as_lists.per_human] == [0, 1, 2]
    assert as_lists.skipped == ((3, 0),)
    assert as_lists.winning_rate == pytest.approx(1 / 3)
    series = pd.Series(WORKED_JUDGE, index=WORKED.columns)
    assert alt_test(WORKED, series, min_units_per_human=5) == alt_test(
        WORKED, WORKED_JUDGE, min_units_per_human=5
    )


def test_benjamini_yekutieli_by_hand():
    # m = 3, q = 0.05: thresholds 0.009091, 0.018182, 0.027273 (step-up: the largest passing
    # rank decides, so 0.018 at rank 2 carries rank 1 with it even if rank 1 alone would pass).
    assert benjamini_yekutieli([0.0241, 0.0008, 0.4247], 0.05).tolist() == [False, True, False]
    assert benjamini_yekutieli([0.0150, 0.0100, 0.9], 0.05).tolist() == [True, True, False]
    assert benjamini_yekutieli([0.02, 0.027, 0.027], 0.05).tolist() == [True, True, True]
    assert benjamini_yekutieli([nan, 0.0, 0.5], 0.05).tolist() == [False, True, False]
    assert benjamini_yekutieli([], 0.05).tolist() == []


def test_neg_rmse_worked_case():
    # Scores are -sqrt(mean over remaining humans of (x - x_g)^2):
    #   u1 (A 1, B 2, C 3; J 2): A out: J sqrt((0 + 1)/2) = .71 < A sqrt((1 + 4)/2) = 1.58: J wins;
    #       B out: J = B = 2, tie; C out: J .71 < C 1.58: J wins
    #   u2 (4, 4, 4; J 5): every human scores 0, J 1: the human wins
    #   u3 (A 5, B 3, C 4; J 4): A out: J .71 < A 1.58: J wins; B out: J .71 < B 1.58: J wins;
    #       C out: J = C = 4, tie
    #   u4 (A 2, B 2, C -; J 1): A and B each score 0 against the other, J 1: the human wins
    # W (judge >= human): A (1, 0, 1, 0), B (1, 0, 1, 0), C (1, 0, 1)
    # V (human >= judge): A (0, 1, 0, 1), B (1, 1, 0, 1), C (0, 1, 1)
    humans = [[1, 4, 5, 2], [2, 4, 3, 2], [3, 4, 4, None]]
    judge = [2, 5, 4, 1]
    result = alt_test(humans, judge, scoring="neg_rmse", min_units_per_human=3)
    assert [h.n for h in result.per_human] == [4, 4, 3]
    assert [h.advantage_probability for h in result.per_human] == pytest.approx(
        [1 / 2, 1 / 2, 2 / 3]
    )
    assert [h.human_advantage_probability for h in result.per_human] == pytest.approx(
        [1 / 2, 3 / 4, 2 / 3]
    )
    assert result.advantage_probability == pytest.approx(5 / 9)
    # A: d = (-1, 1, -1, 1): mean 0, sd = sqrt(4/3), t = (0 - 0.2) / (sqrt(4/3) / 2) = -0.3464
    assert result.per_human[0].t_statistic == pytest.approx(-0.2 / (math.sqrt(4 / 3) / 2))
    assert result.winning_rate == 0.0
    # Accuracy scoring compares exact values instead (u1, A left out: J = 2 matches B, A = 1
    # matches nobody); on these units it gives the same indicators.
    assert alt_test(humans, judge, min_units_per_human=3).advantage_probability == pytest.approx(
        5 / 9
    )


def test_authors_edge_cases_constant_differences():
    # Judge and humans always agree: every unit is a tie, d = 0 everywhere (zero variance).
    # With epsilon = 0.2 the t statistic is -inf and p = 0: the judge wins against everyone
    # (the authors' code, scipy's ttest_1samp, does the same). With epsilon = 0 the mean equals
    # epsilon, t is NaN and so is p: never rejected, but the human still counts in omega.
    humans = [["x", "y"] * 3] * 3
    judge = ["x", "y"] * 3
    strict = alt_test(humans, judge, min_units_per_human=6)
    assert [h.p_value for h in strict.per_human] == [0.0, 0.0, 0.0]
    assert strict.winning_rate == 1.0 and strict.advantage_probability == 1.0
    zero = alt_test(humans, judge, epsilon=0.0, min_units_per_human=6)
    assert all(math.isnan(h.p_value) for h in zero.per_human)
    assert zero.winning_rate == 0.0 and zero.n_humans == 3
    assert zero.to_dict()["per_human"][0]["p_value"] is None


def test_units_need_enough_humans_and_the_judge():
    humans = [["a", "a", "b"], ["a", None, "b"], [None, None, "a"]]
    result = alt_test(humans, ["a", "a", None], min_units_per_human=2)
    # Unit 2 has one human, unit 3 no judge rating: one unit left, nobody has 2 of them.
    assert result.n_units == 1
    assert result.undefined_reason == "no human rated at least 2 of the 1 kept units"
    none_kept = alt_test(humans, [None, None, None], min_units_per_human=2)
    assert none_kept.n_units == 0
    assert none_kept.undefined_reason == ("no unit was rated by the judge and at least 2 humans")
    assert none_kept.to_dict()["winning_rate"] is None
    # min_raters_per_unit=3 keeps only units rated by three humans.
    assert alt_test(humans, ["a", "a", "b"], min_raters_per_unit=3).n_units == 1


def test_labels_are_compared_exactly_as_written():
    # 'Yes' and 'yes' are different labels; numbers and their text are different too.
    humans = [["yes"] * 4, ["yes"] * 4]
    assert alt_test(humans, ["Yes"] * 4, min_units_per_human=4).advantage_probability == 0.0
    assert (
        alt_test([[1] * 4, [1] * 4], ["1"] * 4, min_units_per_human=4)
        .per_human[0]
        .advantage_probability
        == 0.0
    )
    assert (
        alt_test([[1] * 4, [1] * 4], [1.0] * 4, min_units_per_human=4)
        .per_human[0]
        .advantage_probability
        == 1.0
    )


def test_bad_input_is_one_sentence():
    humans = [["a", "b"], ["a", "a"]]
    cases = [
        ({"epsilon": 1.5}, r"alt_test: epsilon=1.5 must be a number from 0 up to"),
        ({"epsilon": True}, r"alt_test: epsilon=True must be a number"),
        ({"q": 0}, r"alt_test: q=0 must be between 0 and 1"),
        ({"scoring": "f1"}, r"alt_test: unknown scoring 'f1'; use 'accuracy'"),
        ({"min_raters_per_unit": 1}, r"min_raters_per_unit=1 must be an integer of at least 2"),
        ({"min_units_per_human": 2.5}, r"min_units_per_human=2.5 must be an integer"),
    ]
    for kwargs, message in cases:
        with pytest.raises(JudgekitError, match=message):
            alt_test(humans, ["a", "b"], **kwargs)
    with pytest.raises(JudgekitError, match=r"the judge has 3 ratings but humans cover 2 units"):
        alt_test(humans, ["a", "b", "a"])
    with pytest.raises(
        JudgekitError,
        match=r"scoring='neg_rmse' needs numeric scores, but "
        r"humans has 'a' \(row 0, unit 0\)",
    ):
        alt_test(humans, [1, 2], scoring="neg_rmse", min_units_per_human=2)
    with pytest.raises(JudgekitError, match=r"but the judge has 'x' \(unit 1\)"):
        alt_test([[1, 2], [1, 2]], [1, "x"], scoring="neg_rmse", min_units_per_human=2)
    twice = pd.DataFrame(humans, index=["ann", "ann"])
    with pytest.raises(JudgekitError, match=r"rater 'ann' appears twice in the index"):
        alt_test(twice, ["a", "b"])
    frame = pd.DataFrame(humans, columns=["q1", "q2"])
    with pytest.raises(JudgekitError, match=r"pass judge.reindex\(humans.columns\)"):
        alt_test(frame, pd.Series(["b", "a"], index=["q2", "q1"]))
    with pytest.raises(JudgekitError, match=r"alt_test: expected a raters x units matrix"):
        alt_test(["a", "b"], ["a", "b"])


def test_docstring_examples():
    from judgekit.agreement import alternative_annotator as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


# --- the authors' published results ------------------------------------------------------------
# Printed by alt_test_example.ipynb in https://github.com/nitaytech/AltTest (commit 18428b1),
# cell "Example (paper's data)": (winning rate, advantage probability) to two decimals, with the
# scoring and epsilon the notebook uses for each data set. That repository has no licence file.
# Three of its data sets are shipped in tests/data/alttest/ (see PROVENANCE.md there): their human
# annotations come from sources under CC BY 4.0 (CEBaB; MT-Bench human judgments), the LLM
# annotations are the authors' published outputs, copied only to reproduce their printed results.
# The other data sets run when JUDGEKIT_ALTTEST_REPO points at a checkout of the repository.
SHIPPED = Path(__file__).resolve().parents[1] / "data" / "alttest"
NOTEBOOK = {
    "wax": ("accuracy", 0.1),
    "lgbteen": ("accuracy", 0.2),
    "mtbench": ("accuracy", 0.2),
    "framing": ("accuracy", 0.15),
    "cebab_aspects": ("accuracy", 0.1),
    "summeval": ("neg_rmse", 0.2),
    "10k_prompts": ("neg_rmse", 0.15),
    "cebab_stars": ("neg_rmse", 0.1),
    "lesion": ("neg_rmse", 0.15),
}
PRINTED = {
    "wax": {"gemini_flash": (0.38, 0.69), "gemini_pro": (0.50, 0.74), "gpt-4o": (0.50, 0.73),
            "llama-31": (0.00, 0.57), "gpt-4o-mini": (0.00, 0.59), "mistral-v03": (0.00, 0.50)},
    "lgbteen": {"gemini_flash": (0.25, 0.71), "gemini_pro": (0.00, 0.67), "gpt-4o": (0.75, 0.77),
                "llama-31": (0.00, 0.72), "gpt-4o-mini": (0.75, 0.76),
                "mistral-v03": (0.25, 0.75)},
    "mtbench": {"gemini_flash": (0.00, 0.72), "gemini_pro": (0.00, 0.76), "gpt-4o": (0.00, 0.77),
                "llama-31": (0.00, 0.69), "gpt-4o-mini": (0.00, 0.74),
                "mistral-v03": (0.00, 0.68)},
    "framing": {"gemini_flash": (1.00, 0.83), "gemini_pro": (1.00, 0.91), "gpt-4o": (1.00, 0.92),
                "llama-31": (0.50, 0.80), "gpt-4o-mini": (1.00, 0.87),
                "mistral-v03": (0.25, 0.80)},
    "cebab_aspects": {"gemini_flash": (0.70, 0.91), "gemini_pro": (0.90, 0.94),
                      "gpt-4o": (0.90, 0.93), "llama-31": (0.60, 0.89),
                      "gpt-4o-mini": (0.50, 0.90), "mistral-v03": (0.10, 0.81)},
    "summeval": {"gemini_flash": (0.00, 0.46), "gemini_pro": (0.00, 0.44),
                 "gpt-4o": (0.00, 0.48), "llama-31": (0.00, 0.58), "gpt-4o-mini": (0.00, 0.54),
                 "mistral-v03": (0.00, 0.62)},
    "10k_prompts": {"gemini_flash": (0.31, 0.67), "gemini_pro": (0.08, 0.63),
                    "gpt-4o": (0.69, 0.76), "llama-31": (0.15, 0.67),
                    "gpt-4o-mini": (0.92, 0.80), "mistral-v03": (0.15, 0.67)},
    "cebab_stars": {"gemini_flash": (0.60, 0.82), "gemini_pro": (0.80, 0.87),
                    "gpt-4o": (0.90, 0.90), "llama-31": (0.60, 0.85),
                    "gpt-4o-mini": (0.90, 0.89), "mistral-v03": (0.50, 0.83)},
    "lesion": {"gemini_flash": (0.17, 0.71), "gemini_pro": (1.00, 0.81), "gpt-4o": (0.00, 0.62),
               "gpt-4o-mini": (0.67, 0.73)},
}  # fmt: skip


def _authors_data() -> Path | None:
    root = os.environ.get("JUDGEKIT_ALTTEST_REPO")
    if not root:
        return None
    data = Path(root) / "data"
    return data if data.is_dir() else None


def _folder_of(dataset: str) -> Path | None:
    if (SHIPPED / dataset).is_dir():
        return SHIPPED
    return _authors_data()


def test_three_of_the_authors_data_sets_are_shipped():
    assert sorted(p.name for p in SHIPPED.iterdir() if p.is_dir()) == [
        "cebab_aspects", "cebab_stars", "mtbench"]


@pytest.mark.parametrize("dataset", sorted(PRINTED))
def test_reproduces_the_authors_printed_results(dataset):
    folder = _folder_of(dataset)
    if folder is None:
        pytest.skip("set JUDGEKIT_ALTTEST_REPO to a checkout of github.com/nitaytech/AltTest")
    humans = json.loads((folder / dataset / "human_annotations.json").read_text())
    judges = json.loads((folder / dataset / "llm_annotations.json").read_text())
    units = sorted({unit for ratings in humans.values() for unit in ratings})
    matrix = pd.DataFrame(
        [[ratings.get(u) for u in units] for ratings in humans.values()],
        index=list(humans),
        columns=units,
        dtype=object,
    )
    scoring, epsilon = NOTEBOOK[dataset]
    assert set(judges) == set(PRINTED[dataset])
    for judge_name, (omega, rho) in PRINTED[dataset].items():
        judge = [judges[judge_name].get(u) for u in units]
        result = alt_test(matrix, judge, epsilon=epsilon, scoring=scoring)
        assert round(result.winning_rate, 2) == omega, judge_name
        assert round(result.advantage_probability, 2) == rho, judge_name
        assert np.isfinite([h.p_value for h in result.per_human]).all()
