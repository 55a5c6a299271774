"""Bootstrap intervals: the fast pattern-multinomial paths against naive unit resampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgekit.agreement import (
    ac1_ci,
    ac2_ci,
    alpha_ci,
    bootstrap_ci,
    cohen_kappa,
    fleiss_ci,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    kappa_ci,
    krippendorff_alpha,
    percent_agreement,
    percent_agreement_ci,
)
from judgekit.agreement.alpha import prepare_alpha
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval

nan = float("nan")


def noisy_ratings(n_units, n_raters=4, n_categories=4, accuracy=0.7, missing=0.15, seed=0):
    """Raters x units: each unit has a true category, raters hit it with prob. `accuracy`."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, n_categories + 1, n_units)
    noise = rng.integers(1, n_categories + 1, (n_raters, n_units))
    data = np.where(rng.random((n_raters, n_units)) < accuracy, truth, noise).astype(float)
    data[rng.random(data.shape) < missing] = nan
    return data


def naive_interval(statistic, data, n_resamples, seed, **kwargs):
    """Textbook bootstrap: resample pairable unit columns with replacement, recompute."""
    data = np.asarray(data, dtype=float)
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    rng = np.random.default_rng(seed)
    n = data.shape[1]
    values = np.array(
        [statistic(data[:, rng.integers(0, n, n)], **kwargs) for _ in range(n_resamples)]
    )
    return percentile_interval(values, 0.95)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_resample_weights_are_exactly_repeated_units(level):
    # The fast path evaluates alpha for pattern multiplicities w. That must be *exactly* alpha of
    # the data in which each distinct unit column appears w times.
    data = noisy_ratings(40, seed=1)
    data = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    prepared = prepare_alpha(data, level=level)
    rng = np.random.default_rng(2)
    weights = rng.integers(0, 4, size=(5, data.shape[1])).astype(float)
    weights[:, 0] += 1  # never an empty resample
    fast = prepared.evaluate(weights)
    for w, value in zip(weights, fast, strict=True):
        repeated = np.repeat(data, w.astype(int), axis=1)
        assert value == pytest.approx(krippendorff_alpha(repeated, level=level), abs=1e-10)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_fast_alpha_ci_matches_naive_loop(level):
    data = noisy_ratings(300, seed=3)
    fast = alpha_ci(data, level=level, n_resamples=2000, seed=11)
    slow = naive_interval(krippendorff_alpha, data, 1000, seed=12, level=level)
    # Different random streams: agreement up to Monte-Carlo noise (quantile SE ~ 0.003 here).
    assert fast[0] == pytest.approx(slow[0], abs=0.01)
    assert fast[1] == pytest.approx(slow[1], abs=0.01)


def test_fast_alpha_ci_on_continuous_scores_matches_naive_loop():
    rng = np.random.default_rng(5)
    data = rng.normal(size=250) + rng.normal(scale=0.7, size=(3, 250))
    data[rng.random(data.shape) < 0.1] = nan
    fast = alpha_ci(data, level="interval", n_resamples=1000, seed=1)
    slow = naive_interval(krippendorff_alpha, data, 1000, seed=2, level="interval")
    assert fast[0] == pytest.approx(slow[0], abs=0.01)
    assert fast[1] == pytest.approx(slow[1], abs=0.01)


def test_fast_kappa_ci_matches_naive_loop():
    rng = np.random.default_rng(4)
    y1 = rng.integers(0, 4, 400)
    y2 = np.where(rng.random(400) < 0.65, y1, rng.integers(0, 4, 400))
    for weights in (None, "quadratic"):
        fast = kappa_ci(y1, y2, labels=[0, 1, 2, 3, 4], weights=weights, n_resamples=2000, seed=1)
        slow = naive_interval(
            lambda d, w=weights: cohen_kappa(d[0], d[1], labels=[0, 1, 2, 3, 4], weights=w),
            np.vstack([y1, y2]),
            1000,
            seed=2,
        )
        assert fast[0] == pytest.approx(slow[0], abs=0.01)
        assert fast[1] == pytest.approx(slow[1], abs=0.01)


@pytest.mark.parametrize(
    ("fast", "statistic", "kwargs"),
    [
        (ac1_ci, gwet_ac1, {"categories": [1, 2, 3, 4]}),
        (ac2_ci, gwet_ac2, {"categories": [1, 2, 3, 4], "weights": "quadratic"}),
        (fleiss_ci, fleiss_kappa, {}),
        (percent_agreement_ci, percent_agreement, {}),
    ],
)
def test_fast_table_cis_match_naive_loop(fast, statistic, kwargs):
    data = noisy_ratings(300, seed=6)
    interval = fast(data, n_resamples=2000, seed=1, **kwargs)
    slow = naive_interval(statistic, data, 1000, seed=2, **kwargs)
    assert interval[0] == pytest.approx(slow[0], abs=0.01)
    assert interval[1] == pytest.approx(slow[1], abs=0.01)


def test_interval_contains_the_point_estimate():
    data = noisy_ratings(200, seed=7)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        low, high = alpha_ci(data, level=level, n_resamples=500)
        assert low < krippendorff_alpha(data, level=level) < high
    for ci, statistic in (
        (ac1_ci, gwet_ac1),
        (ac2_ci, gwet_ac2),
        (fleiss_ci, fleiss_kappa),
        (percent_agreement_ci, percent_agreement),
    ):
        low, high = ci(data, n_resamples=500)
        assert low < statistic(data) < high
    low, high = kappa_ci(data[0], data[1], n_resamples=500)
    assert low < cohen_kappa(data[0], data[1]) < high


def test_seed_reproduces_and_changes_the_interval():
    data = noisy_ratings(100, seed=8)
    assert alpha_ci(data, seed=3) == alpha_ci(data, seed=3)
    assert alpha_ci(data, seed=3) != alpha_ci(data, seed=4)
    assert kappa_ci(data[0], data[1], seed=5) == kappa_ci(data[0], data[1], seed=5)
    assert bootstrap_ci(fleiss_kappa, data, seed=2) == bootstrap_ci(fleiss_kappa, data, seed=2)


def test_units_rated_once_do_not_change_the_interval():
    # Only for the statistics that use pairable units alone. AC1/AC2 and Fleiss' kappa follow
    # Gwet's irrCAC, where units rated once enter the chance term, so their resamples include
    # them (tests/agreement/test_irrcac_reference.py).
    data = noisy_ratings(80, seed=9)
    singles = np.full((data.shape[0], 30), nan)
    singles[0] = np.arange(30) % 4 + 1
    padded = np.hstack([singles[:, :15], data, singles[:, 15:]])
    for level in ("nominal", "interval"):
        assert alpha_ci(padded, level=level) == alpha_ci(data, level=level)
    assert percent_agreement_ci(padded) == percent_agreement_ci(data)


def test_bootstrap_ci_dispatches_to_the_fast_paths():
    data = noisy_ratings(60, seed=10)
    assert bootstrap_ci(krippendorff_alpha, data, level="ordinal") == alpha_ci(
        data, level="ordinal"
    )
    assert bootstrap_ci(gwet_ac1, data, categories=[1, 2, 3, 4]) == ac1_ci(
        data, categories=[1, 2, 3, 4]
    )
    pair = data[:2]
    assert bootstrap_ci(cohen_kappa, pair, weights="linear", n_resamples=300) == kappa_ci(
        pair[0], pair[1], weights="linear", n_resamples=300
    )
    with pytest.raises(JudgekitError, match=r"bootstrap_ci\(cohen_kappa\): data has 4 rows"):
        bootstrap_ci(cohen_kappa, data)


def test_bootstrap_ci_generic_statistic():
    data = noisy_ratings(300, seed=11)

    def share_of_full_agreement(d):
        rated = ~np.isnan(d)
        first = np.nanmax(d, axis=0)
        return float(np.mean(np.all(~rated | (d == first), axis=0)))

    low, high = bootstrap_ci(share_of_full_agreement, data, n_resamples=500, seed=0)
    assert low < share_of_full_agreement(data[:, (~np.isnan(data)).sum(axis=0) >= 2]) < high
    assert (low, high) == bootstrap_ci(share_of_full_agreement, data, n_resamples=500, seed=0)


def test_undefined_resamples_are_dropped_and_most_undefined_gives_nan():
    # Everyone agrees on one category: alpha is undefined on every resample.
    assert all(math.isnan(b) for b in alpha_ci([["x"] * 10, ["x"] * 10]))
    assert all(math.isnan(b) for b in kappa_ci([None, "x"], ["x", None]))
    # 10 of 11 units say "a", one (a, b): about (10/11)^11 = 35% of resamples are undefined and
    # dropped; the rest still make an interval.
    data = [["a"] * 10 + ["a"], ["a"] * 10 + ["b"]]
    low, high = alpha_ci(data, n_resamples=400)
    assert not math.isnan(low) and not math.isnan(high)
    values = np.array([0.1, 0.2, nan, nan, nan])
    assert all(math.isnan(b) for b in percentile_interval(values, 0.95, min_defined=0.5))
    assert percentile_interval(np.array([0.1, 0.2, 0.3, nan]), 0.5, min_defined=0.5) == pytest.approx((0.15, 0.25))


def test_bad_options_are_errors():
    data = noisy_ratings(10)
    with pytest.raises(JudgekitError, match=r"alpha_ci: n_resamples=0 must be a positive"):
        alpha_ci(data, n_resamples=0)
    with pytest.raises(JudgekitError, match=r"kappa_ci: confidence=1.5 must be between 0 and 1"):
        kappa_ci(data[0], data[1], confidence=1.5)


def test_unit_by_unit_alpha_path_bootstraps_like_the_dense_path(monkeypatch):
    # Data with very many distinct values go through a path that evaluates one resample at a
    # time. Force it on small data and compare with the vectorised path.
    from judgekit.agreement import alpha as alpha_module

    data = noisy_ratings(300, seed=13)
    dense = {level: alpha_ci(data, level=level, seed=1) for level in ("nominal", "ordinal")}
    monkeypatch.setattr(alpha_module, "_DENSE_CELLS", 0)
    assert type(prepare_alpha(data, level="ordinal")).__name__ == "_CodesAlpha"
    for level, expected in dense.items():
        got = alpha_ci(data, level=level, seed=2)
        assert got[0] == pytest.approx(expected[0], abs=0.01)
        assert got[1] == pytest.approx(expected[1], abs=0.01)
