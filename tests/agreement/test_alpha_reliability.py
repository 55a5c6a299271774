"""Krippendorff's alpha: the published worked example, the reference package, edge cases."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.agreement import krippendorff_alpha, undefined_reason
from judgekit.agreement._matrix import encode, rating_matrix
from judgekit.agreement.alpha import _CodesAlpha, prepare_alpha
from judgekit.errors import JudgekitError

nan = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers
# (rows) x 12 units (columns), missing values as NaN. Same matrix as the krippendorff package's
# docstring example.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def test_worked_example_nominal_arithmetic():
    # Unit 12 has one value and cannot be paired: n = 40 pairable values.
    # Coincidence matrix diagonal: o_11 = 7, o_22 = 10, o_33 = 8, o_44 = 4, o_55 = 3 -> 32.
    # Marginals n_c = 9, 13, 10, 5, 3 -> sum n_c^2 = 81 + 169 + 100 + 25 + 9 = 384.
    # alpha = 1 - (n - 1)(n - sum o_cc) / (n^2 - sum n_c^2) = 1 - 39 * 8 / (1600 - 384)
    #       = 1 - 312 / 1216 = 0.74342...
    assert krippendorff_alpha(KRIPPENDORFF_2011) == pytest.approx(1 - 312 / 1216, abs=1e-12)
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level="nominal"), 3) == 0.743


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_worked_example_published_values(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level=level), 3) == published
    reference = krippendorff.alpha(np.array(KRIPPENDORFF_2011), level_of_measurement=level)
    assert krippendorff_alpha(KRIPPENDORFF_2011, level=level) == pytest.approx(reference, abs=1e-12)


def test_worked_example_as_string_labels_with_ordered_categories():
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[None if math.isnan(v) else names[v] for v in row] for row in KRIPPENDORFF_2011]
    scale = ["very low", "low", "mid", "high", "very high"]
    assert round(krippendorff_alpha(data, level="ordinal", categories=scale), 3) == 0.815
    assert round(krippendorff_alpha(data, level="nominal"), 3) == 0.743
    # Ordinal distances follow the order of `categories`, not the alphabet: a reversed scale
    # gives the same alpha (distances are symmetric), a shuffled one a different alpha.
    assert krippendorff_alpha(data, level="ordinal", categories=scale[::-1]) == pytest.approx(
        krippendorff_alpha(data, level="ordinal", categories=scale)
    )
    shuffled = ["mid", "very low", "very high", "low", "high"]
    assert krippendorff_alpha(data, level="ordinal", categories=shuffled) != pytest.approx(
        0.815, abs=1e-3
    )


def test_dataframe_rows_are_raters():
    frame = pd.DataFrame(KRIPPENDORFF_2011, index=["A", "B", "C", "D"])
    assert round(krippendorff_alpha(frame, level="interval"), 3) == 0.849
    labels = frame.map(lambda v: None if pd.isna(v) else f"c{int(v)}")
    assert round(krippendorff_alpha(labels), 3) == 0.743


def test_unobserved_ordinal_category_counts_zero():
    # Adding an unused category in the middle of the scale: its marginal frequency is 0, so the
    # mid-rank distances between observed categories are unchanged (Krippendorff 2011, ordinal
    # metric sums n_g over g between c and k). Same as the package with a fuller value_domain.
    full = [1, 2, 3, 3.5, 4, 5]
    ours = krippendorff_alpha(KRIPPENDORFF_2011, level="ordinal", categories=full)
    package = krippendorff.alpha(
        np.array(KRIPPENDORFF_2011), value_domain=full, level_of_measurement="ordinal"
    )
    assert ours == pytest.approx(package, abs=1e-12)
    assert ours == pytest.approx(krippendorff_alpha(KRIPPENDORFF_2011, level="ordinal"))


def test_small_hand_computed_example():
    # 2 raters, 4 units: (a, a), (a, b), (b, b), (b, b). n = 8 values, n_a = 3, n_b = 5.
    # o_ab = o_ba = 1 (unit 2, m = 2 so weight 1/(2-1)); n - sum o_cc = 2.
    # alpha = 1 - 7 * 2 / (64 - 9 - 25) = 1 - 14 / 30 = 0.5333...
    data = [["a", "a", "b", "b"], ["a", "b", "b", "b"]]
    assert krippendorff_alpha(data) == pytest.approx(1 - 14 / 30)


@st.composite
def rating_matrices(draw, max_raters=5, max_units=25, max_value=5):
    m = draw(st.integers(2, max_raters))
    n = draw(st.integers(1, max_units))
    cells = st.one_of(st.none(), st.integers(1, max_value))
    rows = draw(st.lists(st.lists(cells, min_size=n, max_size=n), min_size=m, max_size=m))
    return np.array([[nan if v is None else float(v) for v in row] for row in rows])


@settings(max_examples=150, deadline=None)
@given(data=rating_matrices(), level=st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_matches_krippendorff_package(data, level):
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            reference = krippendorff.alpha(data, level_of_measurement=level)
    except ValueError:  # the package refuses: one value in the domain, or no pairable unit
        reference = nan
    ours = krippendorff_alpha(data, level=level)
    if math.isnan(ours):
        # Undefined for us: no pairable unit or a single pairable value (package: 0/0 or error).
        assert math.isnan(reference) or undefined_reason(data) is not None
    else:
        assert ours == pytest.approx(reference, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(data=rating_matrices(), level=st.sampled_from(["nominal", "ordinal", "ratio"]))
def test_unit_by_unit_path_equals_dense_path(data, level):
    # The path for very many distinct values must give the same numbers as the dense one.
    arr = rating_matrix(data, func="t")
    codes, cats = encode(arr, None, func="t", ordered=True)
    codes = codes[:, (codes >= 0).sum(axis=0) >= 2]
    domain = np.asarray(cats, float) if level == "ratio" else np.arange(len(cats), dtype=float)
    slow = _CodesAlpha(codes, np.ones(codes.shape[1]), level, domain)
    got = slow.evaluate(np.ones((1, codes.shape[1])))[0]
    expected = krippendorff_alpha(data, level=level)
    assert got == pytest.approx(expected, abs=1e-9, nan_ok=True)


def test_continuous_interval_and_many_value_ordinal():
    rng = np.random.default_rng(7)
    truth = rng.normal(size=60)
    data = truth + rng.normal(scale=0.5, size=(3, 60))
    data[rng.random(data.shape) < 0.1] = nan
    for level in ("interval", "ordinal", "ratio"):
        x = np.abs(data) if level == "ratio" else data
        reference = krippendorff.alpha(x, level_of_measurement=level)
        assert krippendorff_alpha(x, level=level) == pytest.approx(reference, abs=1e-9)


def test_many_distinct_values_use_the_unit_by_unit_path():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 3000, size=(3, 8000)).astype(float)
    data[:, ::2] = data[0, ::2]  # half the units in perfect agreement
    prepared = prepare_alpha(data, level="ordinal")
    assert isinstance(prepared, _CodesAlpha)  # 8000 units x ~3000 values is too big to be dense
    # Ordinal alpha equals interval alpha on mid-ranks, which the moments path computes directly.
    value = krippendorff_alpha(data, level="ordinal")
    assert 0.3 < value < 0.7


def test_units_rated_once_do_not_change_alpha():
    extra = [
        row + [v, nan, nan] for row, v in zip(KRIPPENDORFF_2011, [5, nan, nan, nan], strict=True)
    ]
    extra[1][-1] = 1
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha(extra, level=level) == pytest.approx(
            krippendorff_alpha(KRIPPENDORFF_2011, level=level), abs=1e-12
        )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([["x", "x", "x"], ["x", "x", None]], "every rating is 'x'"),
        ([["x", "y", None], [None, None, "x"]], "no unit was rated by two raters"),
        ([[None, None], [None, None]], "no rating at all"),
        ([["x", "x", "y"], ["x", "x", None]], "every rating on units rated by two or more"),
    ],
)
def test_undefined_alpha_is_nan_with_a_reason(data, reason):
    for level in ("nominal", "ordinal"):
        assert math.isnan(krippendorff_alpha(data, level=level, categories=["x", "y"]))
    assert reason in undefined_reason(data)


def test_undefined_numeric_levels():
    same = [[3.0, 3.0, 3.0], [3.0, 3.0, nan]]
    for level in ("interval", "ratio", "nominal", "ordinal"):
        assert math.isnan(krippendorff_alpha(same, level=level))
    assert undefined_reason(same) == "every rating is 3"


def test_perfect_agreement_is_one():
    data = [[1, 2, 3, 1, nan], [1, 2, 3, 1, 2], [nan, 2, 3, 1, 2]]
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha(data, level=level) == pytest.approx(1.0)
    assert undefined_reason(data) is None


def test_errors_name_function_value_and_fix():
    with pytest.raises(JudgekitError, match=r"krippendorff_alpha\(level='interval'\).*'high'"):
        krippendorff_alpha([[1, "high"], [1, 2]], level="interval")
    with pytest.raises(JudgekitError, match=r"unknown level 'nominl'.*nominal, ordinal"):
        krippendorff_alpha([[1, 2], [1, 2]], level="nominl")
    with pytest.raises(JudgekitError, match=r"rating 'maybe' is not in categories"):
        krippendorff_alpha([["yes", "maybe"], ["yes", "no"]], categories=["yes", "no"])
    with pytest.raises(JudgekitError, match=r"rating 7 is not in categories \[1, 2, 3\]"):
        krippendorff_alpha([[1, 7], [1, 2]], level="ordinal", categories=[1, 2, 3])
    with pytest.raises(JudgekitError, match=r"negative rating -1.*level='interval'"):
        krippendorff_alpha([[1, -1], [1, 2]], level="ratio")
    with pytest.raises(JudgekitError, match=r"no natural order; pass categories"):
        krippendorff_alpha([["a", 1], ["a", 2]], level="ordinal")
    with pytest.raises(JudgekitError, match=r"raters x units matrix \(2-D\)"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(JudgekitError, match=r"duplicates"):
        krippendorff_alpha([["a", "b"], ["a", "b"]], categories=["a", "b", "a"])
