"""Gwet's AC1/AC2 and percent agreement: Gwet's published example, hand arithmetic, formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.agreement import gwet_ac1, gwet_ac2, percent_agreement, undefined_reason
from judgekit.errors import JudgekitError

nan = float("nan")

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120 (irrCAC's cac.raw4raters):
# Krippendorff's 4 raters x 12 units. Unit 12 was rated by one rater only (rater 2: 3).
GWET_4_RATERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
SCALE = [1, 2, 3, 4, 5]


def test_ac1_gwet_example():
    # p_a over the 11 pairable units: 8 units in full agreement (1 each), units 2 and 8 have
    # 3 of 4 raters agreeing (3*2 / (4*3) = 0.5), unit 6 none -> p_a = 9 / 11 (published 0.818).
    # Gwet's irrCAC (gwet.ac1.raw) takes pi_k over all 12 rated units, unit 12 (rated once, a 3)
    # included: pi_k = (1/12) sum_i r_ik / r_i = (3, 3.25, 3.5, 1.25, 1) / 12
    # sum pi_k (1 - pi_k) = 1 - (9 + 10.5625 + 12.25 + 1.5625 + 1) / 144 = 109.625 / 144
    # p_e = (1/4) * 109.625 / 144 = 109.625 / 576 = 0.190321 (published pe 0.1903212)
    # AC1 = (9/11 - p_e) / (1 - p_e) = 0.775444 (published 0.77544). Before irrCAC's convention
    # was adopted, unit 12 was left out of pi_k (p_e = 23.15625 / 121) and AC1 was 0.775152.
    p_e = 109.625 / 576
    expected = (9 / 11 - p_e) / (1 - p_e)
    assert gwet_ac1(GWET_4_RATERS) == pytest.approx(expected, abs=1e-12)
    assert round(gwet_ac1(GWET_4_RATERS), 5) == 0.77544
    assert gwet_ac1(GWET_4_RATERS, categories=SCALE) == pytest.approx(expected, abs=1e-12)


def test_ac2_gwet_example_linear_and_quadratic():
    # Linear weights w_kl = 1 - |k - l| / 4. Per-unit credit sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)):
    # unit 2 (2,2,3,2): 3 * (2 + 0.75) + 1 * (3 * 0.75) = 10.5 -> 10.5 / 12 = 0.875 (unit 8 too)
    # unit 6 (1,2,3,4): (1.5 + 2 + 2 + 1.5) / 12 = 7 / 12
    # p_a = (8 + 2 * 0.875 + 7/12) / 11 = 31 / 33 (published 0.939)
    # T_w = 25 - sum |k - l| / 4 = 25 - 40/4 = 15; irrCAC's pi_k over all 12 rated units (see
    # above): p_e = 15 / 20 * 109.625 / 144 = 0.570964 (handbook 0.571; AC2 0.859). Before
    # irrCAC's convention (pi over the 11 pairable units) p_e was 0.574122 and AC2 0.8577.
    p_e = 15 / 20 * 109.625 / 144
    assert gwet_ac2(GWET_4_RATERS, weights="linear", categories=SCALE) == pytest.approx(
        (31 / 33 - p_e) / (1 - p_e), abs=1e-12
    )
    assert round(gwet_ac2(GWET_4_RATERS, weights="linear", categories=SCALE), 3) == 0.859
    # Quadratic w_kl = 1 - (k - l)^2 / 16: unit 2: 3 * (2 + 15/16) + 3 * 15/16 = 11.625 -> /12;
    # unit 6: (34 + 42 + 42 + 34) / 16 / 12 = 9.5 / 12; p_a = (8 + 2 * 11.625/12 + 9.5/12) / 11
    # T_w = 25 - 100/16 = 18.75; p_e = 18.75 / 20 * 109.625 / 144 = 0.713704 (handbook 0.714;
    # AC2 0.914; before irrCAC's convention p_e was 0.717652 and AC2 0.9128)
    p_a = (8 + 2 * 11.625 / 12 + 9.5 / 12) / 11
    p_e = 18.75 / 20 * 109.625 / 144
    assert gwet_ac2(GWET_4_RATERS, weights="quadratic", categories=SCALE) == pytest.approx(
        (p_a - p_e) / (1 - p_e), abs=1e-12
    )
    assert round(gwet_ac2(GWET_4_RATERS, weights="quadratic", categories=SCALE), 3) == 0.914


def test_ac2_with_identity_weights_is_ac1():
    assert gwet_ac2(GWET_4_RATERS, weights="identity") == pytest.approx(gwet_ac1(GWET_4_RATERS))
    custom = np.eye(5)
    assert gwet_ac2(GWET_4_RATERS, weights=custom, categories=SCALE) == pytest.approx(
        gwet_ac1(GWET_4_RATERS, categories=SCALE)
    )


@st.composite
def two_complete_raters(draw):
    q = draw(st.integers(2, 5))
    n = draw(st.integers(1, 30))
    codes = st.integers(0, q - 1)
    return q, draw(st.lists(st.tuples(codes, codes), min_size=n, max_size=n))


@settings(max_examples=150, deadline=None)
@given(case=two_complete_raters())
def test_ac1_two_raters_complete_data_formula(case):
    # For 2 raters and complete data: p_a = share of agreeing units, pi_k = mean of the two
    # raters' shares of category k, p_e = (1/(q-1)) sum_k pi_k (1 - pi_k).
    q, pairs = case
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    p_a = np.mean(a == b)
    pi = np.array([(np.mean(a == k) + np.mean(b == k)) / 2 for k in range(q)])
    p_e = (pi * (1 - pi)).sum() / (q - 1)
    expected = (p_a - p_e) / (1 - p_e)
    assert gwet_ac1([a, b], categories=list(range(q))) == pytest.approx(expected, abs=1e-12)
    assert gwet_ac2([a, b], weights="identity", categories=list(range(q))) == pytest.approx(
        expected, abs=1e-12
    )
    assert percent_agreement([a, b]) == pytest.approx(p_a, abs=1e-12)


def test_ac1_small_table_by_hand():
    # Raters agree on 3 of 4 units: (a,a), (a,b), (b,b), (b,b). q = 2.
    # pi_a = (2/4 + 1/4)/2 = 3/8, pi_b = 5/8; p_e = 3/8 * 5/8 * 2 = 30/64
    # AC1 = (3/4 - 30/64) / (1 - 30/64) = (48 - 30) / (64 - 30) = 18/34 = 0.5294
    assert gwet_ac1([["a", "a", "b", "b"], ["a", "b", "b", "b"]]) == pytest.approx(18 / 34)
    # With a third, unused category q = 3: p_e = (1/2)(15/64 + 15/64) = 15/64,
    # AC1 = (48 - 15) / (64 - 15) = 33/49: q matters, so pass the rubric's categories.
    assert gwet_ac1(
        [["a", "a", "b", "b"], ["a", "b", "b", "b"]], categories=["a", "b", "c"]
    ) == pytest.approx(33 / 49)


def test_percent_agreement_by_hand():
    # Unit 1 (a, a, a): 6 of 6 ordered pairs agree -> 1; unit 2 (a, a, b): 2 of 6 -> 1/3;
    # unit 3 (a, b, -): 0 of 2 -> 0; unit 4 (b, -, -): cannot be paired, left out.
    # mean = (1 + 1/3 + 0) / 3 = 4/9
    data = [["a", "a", "a", "b"], ["a", "a", "b", None], ["a", "b", None, None]]
    assert percent_agreement(data) == pytest.approx(4 / 9)
    assert percent_agreement([["a", "b", "a", None], ["a", "a", "a", "b"]]) == pytest.approx(2 / 3)


def test_undefined_gwet_and_percent():
    one_category = [["x", "x", "x"], ["x", "x", "x"]]
    assert math.isnan(gwet_ac1(one_category))  # q = 1: p_e has 1/(q - 1)
    assert "no category list was given" in undefined_reason(one_category, statistic=gwet_ac1)
    # On a two-category scale the same data is perfect agreement for AC1 (p_e = 0), by design.
    assert gwet_ac1(one_category, categories=["x", "y"]) == 1.0
    assert undefined_reason(one_category, categories=["x", "y"], statistic="gwet_ac1") is None
    assert percent_agreement(one_category) == 1.0
    assert undefined_reason(one_category, statistic="percent_agreement") is None
    unpaired = [["x", None], [None, "y"]]
    for statistic in (gwet_ac1, gwet_ac2, percent_agreement):
        assert math.isnan(statistic(unpaired))
        assert undefined_reason(unpaired, statistic=statistic) == "no unit was rated by two raters"


def test_gwet_errors():
    with pytest.raises(JudgekitError, match=r"gwet_ac2: unknown weights 'cubic'"):
        gwet_ac2(GWET_4_RATERS, weights="cubic")
    with pytest.raises(JudgekitError, match=r"gwet_ac2: a weight matrix must be 5 x 5"):
        gwet_ac2(GWET_4_RATERS, weights=np.eye(3))
    with pytest.raises(JudgekitError, match=r"gwet_ac1: rating 6 is not in categories"):
        gwet_ac1([[1, 6], [1, 2]], categories=SCALE)
    with pytest.raises(JudgekitError, match=r"undefined_reason: unknown statistic 'kappa'"):
        undefined_reason([[1, 2], [1, 2]], statistic="kappa")
