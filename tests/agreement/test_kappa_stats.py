"""Cohen's kappa against scikit-learn, Fleiss' kappa against the published Wikipedia table."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement import cohen_kappa, fleiss_kappa, undefined_reason
from judgekit.errors import JudgekitError

SCALE = ["none", "low", "mid", "high", "extreme"]  # "extreme" is never drawn below


@st.composite
def paired_labels(draw):
    n = draw(st.integers(1, 40))
    pool = st.sampled_from(SCALE[:4])
    y1 = draw(st.lists(pool, min_size=n, max_size=n))
    y2 = draw(st.lists(pool, min_size=n, max_size=n))
    return y1, y2


def sklearn_kappa(y1, y2, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(y1, y2, **kwargs)


@settings(max_examples=150, deadline=None)
@given(pair=paired_labels(), weights=st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_equals_sklearn_with_full_scale(pair, weights):
    # `labels` fixes the order and includes "extreme", which nobody used: weighted kappa then
    # counts 4 steps between none and extreme on the full 5-point scale, exactly like sklearn.
    y1, y2 = pair
    expected = sklearn_kappa(y1, y2, labels=SCALE, weights=weights)
    assert cohen_kappa(y1, y2, labels=SCALE, weights=weights) == pytest.approx(
        expected, abs=1e-12, nan_ok=True
    )


@settings(max_examples=100, deadline=None)
@given(pair=paired_labels(), weights=st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_equals_sklearn_with_observed_labels(pair, weights):
    y1, y2 = pair
    expected = sklearn_kappa(y1, y2, weights=weights)
    assert cohen_kappa(y1, y2, weights=weights) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_cohen_kappa_on_random_integer_arrays():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(5, 200))
        y1 = rng.integers(0, 6, n)
        y2 = np.where(rng.random(n) < 0.6, y1, rng.integers(0, 6, n))
        for weights in (None, "linear", "quadratic"):
            expected = cohen_kappa_score(y1, y2, labels=list(range(7)), weights=weights)
            ours = cohen_kappa(y1, y2, labels=list(range(7)), weights=weights)
            assert ours == pytest.approx(expected, abs=1e-12)


def test_weighted_kappa_depends_on_the_full_scale():
    # Observed ratings 1, 2, 4. On the observed labels [1, 2, 4] a 1-vs-4 disagreement is 2
    # steps; on the rubric scale [1, 2, 3, 4] it is 3 steps, so linear kappa changes.
    y1, y2 = [1, 2, 4, 1, 2], [2, 2, 4, 4, 1]
    observed_only = cohen_kappa(y1, y2, weights="linear")
    full_scale = cohen_kappa(y1, y2, labels=[1, 2, 3, 4], weights="linear")
    assert observed_only == pytest.approx(cohen_kappa_score(y1, y2, weights="linear"))
    assert full_scale == pytest.approx(
        cohen_kappa_score(y1, y2, labels=[1, 2, 3, 4], weights="linear")
    )
    assert full_scale != pytest.approx(observed_only)


def test_unweighted_kappa_by_hand():
    # O = [[2, 1], [0, 2]] on labels [1, 3]; rows (3, 2), cols (2, 3), n = 5.
    # p_o = 4/5, p_e = (3*2 + 2*3)/25 = 12/25, kappa = (20/25 - 12/25)/(13/25) = 8/13.
    assert cohen_kappa([1, 1, 3, 3, 1], [1, 3, 3, 3, 1]) == pytest.approx(8 / 13)


def test_missing_pairs_are_dropped():
    y1 = ["a", "b", None, "a", float("nan"), "b"]
    y2 = ["a", "b", "a", None, "b", "a"]
    # Kept pairs: (a, a), (b, b), (b, a). O = [[1, 0], [1, 1]], n = 3.
    # p_o = 2/3; rows (1, 2), cols (2, 1): p_e = (1*2 + 2*1)/9 = 4/9.
    # kappa = (2/3 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4
    assert cohen_kappa(y1, y2) == pytest.approx(0.4)
    assert cohen_kappa(y1, y2) == pytest.approx(cohen_kappa_score(["a", "b", "b"], ["a", "b", "a"]))


def test_cohen_kappa_undefined_cases():
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"], labels=["x", "y"]))
    assert undefined_reason([["x", "x"], ["x", "x"]], statistic="cohen_kappa") == (
        "every rating is 'x'"
    )
    assert math.isnan(cohen_kappa([None, "x"], ["y", None]))
    # Constant but different raters: defined, and no better than chance.
    assert cohen_kappa(["x", "x"], ["y", "y"]) == pytest.approx(0.0)


def test_cohen_kappa_errors():
    with pytest.raises(JudgekitError, match=r"cohen_kappa: unknown weights 'cubic'"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(JudgekitError, match=r"cohen_kappa: rating 'c' is not in categories"):
        cohen_kappa(["a", "c"], ["a", "b"], labels=["a", "b"])
    with pytest.raises(JudgekitError, match=r"have 2 and 3 items"):
        cohen_kappa([1, 2], [1, 2, 3])


# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; n_ij is the
# number of raters who put subject i in category j.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def counts_to_raters_by_units(counts):
    """Expand a subjects x categories count table into a 14 raters x 10 units matrix.

    Unit i's column is ``np.repeat([1..5], counts[i])``: rater r gets the r-th rating of that
    sorted list. Fleiss' kappa ignores which rater gave which rating, so any such assignment
    is equivalent.
    """
    columns = [np.repeat(np.arange(1, 6), row) for row in counts]
    return np.column_stack(columns)


def test_fleiss_wikipedia_example():
    data = counts_to_raters_by_units(FLEISS_COUNTS)
    assert data.shape == (14, 10)
    # p_j = (20, 28, 39, 21, 32) / 140 -> P_e = (400 + 784 + 1521 + 441 + 1024) / 19600 = 0.21276
    # P_i = sum_j n_ij (n_ij - 1) / (14 * 13): numerators 182, 46, 56, 80, 60, 84, 44, 32, 52, 52
    # P_bar = 688 / 1820 = 0.37802; kappa = (0.37802 - 0.21276) / (1 - 0.21276) = 0.20993
    p_e = 4170 / 19600
    p_bar = 688 / 1820
    assert fleiss_kappa(data) == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-12)
    assert round(fleiss_kappa(data), 3) == 0.210
    assert round(fleiss_kappa(data, categories=[1, 2, 3, 4, 5, 6]), 3) == 0.210


def test_fleiss_with_two_raters_is_scotts_pi():
    # Scott's pi for (a,a), (a,b), (b,b), (b,b): p_o = 3/4, pooled p = (3/8, 5/8),
    # p_e = 9/64 + 25/64 = 34/64, pi = (48/64 - 34/64) / (30/64) = 14/30.
    assert fleiss_kappa([["a", "a", "b", "b"], ["a", "b", "b", "b"]]) == pytest.approx(14 / 30)


def test_fleiss_counts_units_rated_once_in_chance_and_is_nan_when_undefined():
    # Gwet's irrCAC (fleiss.kappa.raw): units rated once add nothing to P_bar but enter
    # p_j = (1/n) sum_i n_ij / m_i over the n = 13 units rated at least once. (Before irrCAC's
    # convention was adopted such units were left out and kappa stayed 0.20993.)
    # p_j = ((20 + 14), (28 + 14), 39, 21, (32 + 14)) / (14 * 13) = (34, 42, 39, 21, 46) / 182
    # P_e = (1156 + 1764 + 1521 + 441 + 2116) / 182^2 = 6998 / 33124; P_bar = 688 / 1820
    data = counts_to_raters_by_units(FLEISS_COUNTS).astype(float)
    extra = np.full((14, 3), np.nan)
    extra[0] = [1, 5, 2]
    p_e, p_bar = 6998 / 33124, 688 / 1820
    assert fleiss_kappa(np.hstack([data, extra])) == pytest.approx(
        (p_bar - p_e) / (1 - p_e), abs=1e-12
    )
    assert round(fleiss_kappa(np.hstack([data, extra])), 5) == 0.21142
    assert math.isnan(fleiss_kappa([["x", "x"], ["x", "x"]]))
    assert math.isnan(fleiss_kappa([["x", None], [None, "y"]]))
