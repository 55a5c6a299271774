"""Properties every agreement statistic must have, checked on generated rating matrices."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgekit.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    percent_agreement,
    undefined_reason,
)

LABELS = ["a", "b", "c", "d"]


def all_statistics(data):
    """Every many-rater statistic of ``data``, on the rubric scale LABELS."""
    return {
        "alpha_nominal": krippendorff_alpha(data, categories=LABELS),
        "alpha_ordinal": krippendorff_alpha(data, level="ordinal", categories=LABELS),
        "ac1": gwet_ac1(data, categories=LABELS),
        "ac2": gwet_ac2(data, weights="quadratic", categories=LABELS),
        "fleiss": fleiss_kappa(data, categories=LABELS),
        "percent": percent_agreement(data),
    }


def assert_same(first, second):
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == pytest.approx(second[name], abs=1e-9, nan_ok=True), name


@st.composite
def label_matrices(draw, min_raters=2, max_raters=5, max_units=20):
    m = draw(st.integers(min_raters, max_raters))
    n = draw(st.integers(1, max_units))
    cell = st.one_of(st.none(), st.sampled_from(LABELS))
    return draw(st.lists(st.lists(cell, min_size=n, max_size=n), min_size=m, max_size=m))


@settings(max_examples=80, deadline=None)
@given(data=label_matrices(), seed=st.integers(0, 2**16))
def test_permuting_raters_changes_nothing(data, seed):
    order = np.random.default_rng(seed).permutation(len(data))
    assert_same(all_statistics(data), all_statistics([data[i] for i in order]))


@settings(max_examples=80, deadline=None)
@given(data=label_matrices(), seed=st.integers(0, 2**16))
def test_permuting_units_changes_nothing(data, seed):
    order = np.random.default_rng(seed).permutation(len(data[0]))
    assert_same(all_statistics(data), all_statistics([[row[j] for j in order] for row in data]))


@settings(max_examples=80, deadline=None)
@given(data=label_matrices(), extra=st.lists(st.sampled_from(LABELS), min_size=1, max_size=5))
def test_units_rated_by_one_rater_change_nothing(data, extra):
    # Append units that only the first rater rated (with any label, even one unseen so far).
    # Alpha (Krippendorff's pairable-units rule) and percent agreement never see such units.
    # AC1/AC2 and Fleiss' kappa are left out here: they follow Gwet's irrCAC
    # (gwet.ac1.raw, fleiss.kappa.raw), where a unit rated once enters the chance term
    # (tests/agreement/test_irrcac_reference.py).
    padded = [row + (list(extra) if i == 0 else [None] * len(extra)) for i, row in enumerate(data)]
    pairable_only = ("alpha_nominal", "alpha_ordinal", "percent")
    before, after = all_statistics(data), all_statistics(padded)
    assert_same({k: before[k] for k in pairable_only}, {k: after[k] for k in pairable_only})
    # Also without a category list: a label seen only on such units must not count.
    for statistic in (krippendorff_alpha, percent_agreement):
        assert statistic(padded) == pytest.approx(statistic(data), abs=1e-9, nan_ok=True)


@settings(max_examples=80, deadline=None)
@given(
    y1=st.lists(st.sampled_from(LABELS), min_size=1, max_size=30),
    seed=st.integers(0, 2**16),
    weights=st.sampled_from([None, "linear", "quadratic"]),
)
def test_cohen_kappa_symmetric_and_self_agreement(y1, seed, weights):
    rng = np.random.default_rng(seed)
    y2 = [y if rng.random() < 0.5 else LABELS[rng.integers(4)] for y in y1]
    k12 = cohen_kappa(y1, y2, labels=LABELS, weights=weights)
    k21 = cohen_kappa(y2, y1, labels=LABELS, weights=weights)
    assert k12 == pytest.approx(k21, abs=1e-12, nan_ok=True)
    self_kappa = cohen_kappa(y1, y1, labels=LABELS, weights=weights)
    if len(set(y1)) > 1:
        assert self_kappa == pytest.approx(1.0)
    else:  # one label only: expected disagreement is 0, kappa undefined
        assert math.isnan(self_kappa)
        assert undefined_reason([y1, y1], statistic="cohen_kappa") == f"every rating is {y1[0]!r}"


@settings(max_examples=80, deadline=None)
@given(y=st.lists(st.one_of(st.none(), st.sampled_from(LABELS)), min_size=1, max_size=30))
def test_a_rater_agreeing_with_itself_scores_one(y):
    data = [y, list(y)]
    stats = all_statistics(data)
    rated = [v for v in y if v is not None]
    if not rated:
        assert all(math.isnan(v) for v in stats.values())
        assert undefined_reason(data) == "no rating at all"
        return
    assert stats["percent"] == 1.0
    assert stats["ac1"] == pytest.approx(1.0)
    assert stats["ac2"] == pytest.approx(1.0)
    if len(set(rated)) > 1:
        for name in ("alpha_nominal", "alpha_ordinal", "fleiss"):
            assert stats[name] == pytest.approx(1.0), name
        assert undefined_reason(data) is None
    else:
        for name in ("alpha_nominal", "alpha_ordinal", "fleiss"):
            assert math.isnan(stats[name]), name
        assert undefined_reason(data) == f"every rating is {rated[0]!r}"


@settings(max_examples=50, deadline=None)
@given(
    label=st.sampled_from(LABELS),
    shape=st.tuples(st.integers(2, 5), st.integers(1, 15)),
    seed=st.integers(0, 2**16),
)
def test_one_category_everywhere_is_nan_with_a_reason(label, shape, seed):
    rng = np.random.default_rng(seed)
    data = [
        [label if rng.random() < 0.8 else None for _ in range(shape[1])] for _ in range(shape[0])
    ]
    data[0][0] = data[1][0] = label  # at least one pairable unit
    assert math.isnan(krippendorff_alpha(data, categories=LABELS))
    assert math.isnan(krippendorff_alpha(data, level="ordinal", categories=LABELS))
    assert math.isnan(fleiss_kappa(data, categories=LABELS))
    assert math.isnan(cohen_kappa(data[0], data[1], labels=LABELS))
    assert undefined_reason(data, categories=LABELS) == f"every rating is {label!r}"
    assert math.isnan(gwet_ac1(data))  # q = 1 without the scale


def test_input_layouts_agree():
    data = [["a", "b", None, "c"], ["a", "b", "b", None], ["b", "b", "b", "c"]]
    frame = pd.DataFrame(data, index=["r1", "r2", "judge"])
    array = np.array(data, dtype=object)
    numeric = [[1, 2, None, 3], [1, 2, 2, None], [2, 2, 2, 3]]
    as_float = np.array([[np.nan if v is None else v for v in row] for row in numeric], float)
    expected = all_statistics(data)
    assert_same(expected, all_statistics(frame))
    assert_same(expected, all_statistics(array))
    # The same ratings coded 1, 2, 3 as None-holding lists, float arrays with NaN, DataFrames.
    for layout in (numeric, as_float, pd.DataFrame(as_float)):
        assert krippendorff_alpha(layout) == pytest.approx(expected["alpha_nominal"])
        assert fleiss_kappa(layout) == pytest.approx(expected["fleiss"])
        assert percent_agreement(layout) == pytest.approx(expected["percent"])
