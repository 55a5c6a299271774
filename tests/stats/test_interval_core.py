"""The interval core (judgekit.stats.intervals) against independent references: scipy's binomial
test intervals for Wilson and Clopper-Pearson, scipy.stats.t for t, numpy.percentile for the
percentile interval and statistics.NormalDist for the normal quantile."""

from __future__ import annotations

import doctest
import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from judgekit.stats import intervals
from judgekit.stats.intervals import (
    Z95,
    clopper_pearson_bound,
    clopper_pearson_interval,
    normal_quantile,
    percentile_ci,
    percentile_interval,
    t_interval,
    t_quantile,
    wilson_interval,
    z_two_sided,
)

COUNTS = [(0, 1), (0, 18), (1, 18), (3, 10), (9, 10), (10, 10), (81, 263), (2, 359), (0, 300)]
LEVELS = [0.8, 0.9, 0.95, 0.99]


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(intervals).failed == 0


@pytest.mark.parametrize("level", LEVELS)
def test_normal_quantiles_match_the_inverse_normal(level: float) -> None:
    assert z_two_sided(level) == pytest.approx(NormalDist().inv_cdf(0.5 + level / 2), abs=1e-14)
    assert z_two_sided(level) == pytest.approx(float(stats.norm.ppf(0.5 + level / 2)), abs=1e-12)
    assert normal_quantile(1 - (1 - level) / 2) == pytest.approx(z_two_sided(level), abs=1e-14)
    assert z_two_sided(0.95) == pytest.approx(Z95, abs=1e-15)


@pytest.mark.parametrize("df", [1, 2, 5, 30, 1000])
@pytest.mark.parametrize("level", LEVELS)
def test_t_quantile_and_interval_match_scipy(level: float, df: int) -> None:
    assert t_quantile(level, df) == pytest.approx(float(stats.t.ppf(0.5 + level / 2, df)), rel=1e-12)
    lo, hi = t_interval(0.3, 0.05, df, level)
    ref = stats.t.interval(level, df, loc=0.3, scale=0.05)
    assert (lo, hi) == pytest.approx(ref, rel=1e-12)


def test_t_quantile_with_infinite_df_is_the_normal_one() -> None:
    assert t_quantile(0.95, math.inf) == z_two_sided(0.95)


@pytest.mark.parametrize(("k", "n"), COUNTS)
@pytest.mark.parametrize("level", LEVELS)
def test_wilson_matches_scipys_score_interval(k: int, n: int, level: float) -> None:
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    lo, hi = wilson_interval(k, n, z=z_two_sided(level))
    assert float(lo) == pytest.approx(ref.low, abs=1e-12)
    assert float(hi) == pytest.approx(ref.high, abs=1e-12)


def test_wilson_is_vectorised_and_nan_without_units() -> None:
    lo, hi = wilson_interval(np.array([0, 5, 0]), np.array([10, 10, 0]))
    assert math.isnan(lo[2]) and math.isnan(hi[2])
    ref = stats.binomtest(5, 10).proportion_ci(method="wilson")
    assert (lo[1], hi[1]) == pytest.approx((ref.low, ref.high), abs=1e-12)


@pytest.mark.parametrize(("k", "n"), COUNTS)
@pytest.mark.parametrize("level", LEVELS)
def test_clopper_pearson_matches_scipys_exact_interval(k: int, n: int, level: float) -> None:
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    lo, hi = clopper_pearson_interval(k, n, level)
    assert lo == pytest.approx(ref.low, abs=1e-10)
    assert hi == pytest.approx(ref.high, abs=1e-10)


@pytest.mark.parametrize(("k", "n"), COUNTS)
def test_one_sided_clopper_pearson_is_the_two_sided_end_at_twice_the_tail(k: int, n: int) -> None:
    # a one-sided 95% bound is the end of the two-sided 90% exact interval
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.90, method="exact")
    assert clopper_pearson_bound(k, n, 0.95) == pytest.approx(ref.high, abs=1e-10)
    assert clopper_pearson_bound(k, n, 0.95, side="lower") == pytest.approx(ref.low, abs=1e-10)


def test_clopper_pearson_edges() -> None:
    assert clopper_pearson_bound(0, 18, 0.95) == pytest.approx(1 - 0.05 ** (1 / 18), abs=1e-12)
    assert clopper_pearson_bound(7, 7, 0.95) == 1.0
    assert clopper_pearson_bound(0, 0, 0.95) == 1.0
    assert clopper_pearson_bound(0, 7, 0.95, side="lower") == 0.0
    ups = clopper_pearson_bound(np.arange(4), 20, 0.9)
    assert ups.shape == (4,) and np.all(np.diff(ups) > 0)


@pytest.mark.parametrize("level", LEVELS)
def test_percentile_interval_is_numpys_linear_percentile(level: float) -> None:
    reps = np.random.default_rng(5).normal(size=(999, 3))
    lo, hi = percentile_ci(reps, level=level)
    tail = 100 * (1 - level) / 2
    assert lo == pytest.approx(np.percentile(reps, tail, axis=0), abs=1e-12)
    assert hi == pytest.approx(np.percentile(reps, 100 - tail, axis=0), abs=1e-12)


def test_percentile_nan_rule_leaves_out_undefined_replicates() -> None:
    reps = np.array([[0.1, np.nan, np.nan], [0.2, np.nan, 1.0], [0.3, np.nan, np.inf],
                     [np.nan, np.nan, np.nan]])
    lo, hi = percentile_ci(reps, level=0.5)
    finite = np.array([0.1, 0.2, 0.3])
    assert (lo[0], hi[0]) == pytest.approx(tuple(np.percentile(finite, [25, 75])))
    assert math.isnan(lo[1]) and math.isnan(hi[1])  # no finite replicate
    assert (lo[2], hi[2]) == (1.0, 1.0)  # one of four is enough by default
    lo, hi = percentile_ci(reps, level=0.5, min_defined=0.5)
    assert not math.isnan(lo[0])  # three of four defined
    assert math.isnan(lo[2]) and math.isnan(hi[2])  # one of four is a minority


def test_percentile_majority_rule_counts_half_as_enough() -> None:
    two_of_four = np.array([0.1, 0.2, np.nan, np.nan])
    assert percentile_interval(two_of_four, 0.5, min_defined=0.5) == pytest.approx((0.125, 0.175))
    assert all(math.isnan(b) for b in percentile_interval(two_of_four[1:], 0.5, min_defined=0.5))


def test_percentile_without_replicates_is_nan() -> None:
    lo, hi = percentile_ci(np.empty(0))
    assert lo.shape == () and math.isnan(lo) and math.isnan(hi)
    lo, hi = percentile_ci(np.empty((0, 3)))
    assert lo.shape == (3,) and np.isnan(hi).all()
    assert all(math.isnan(b) for b in percentile_interval([]))
