"""Each agreement figure of the report and the gate comes from one function over the item
patterns (judgekit.agreement.pattern_figures, called by judgekit.agreement.slice_figures for both).
Each of those functions is checked here against the public reference implementation, to 1e-12:
Cohen's kappa (plain and quadratic-weighted) against scikit-learn's ``cohen_kappa_score``,
Krippendorff's alpha (nominal, ordinal over the rubric's full category list) against the
``krippendorff`` package, and percent agreement, Gwet's AC1 and Fleiss' kappa against irrCAC's
printed values on its ``cac.raw4raters`` table (data and values as in test_irrcac_reference.py)
and against their formulas written out here on random tables."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement import pattern_figures as pf

CI = {"n_resamples": 50, "confidence": 0.95, "seed": 0}
nan = float("nan")


def _patterns(items: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, freq, items_row, units)`` of an (N, m) code matrix (-1 missing), as
    slice_figures hands them to the figure functions."""
    rows, inverse = pf.patterns_of(items)
    freq = np.bincount(inverse, minlength=rows.shape[0])
    units = np.where(items >= 0, items, np.nan).T.astype(float)
    return rows, freq, inverse, units


def _random(seed: int, n: int, m: int, v: int, gaps: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, v, n)
    out = np.where(rng.random((n, m)) < 0.7, truth[:, None], rng.integers(0, v, (n, m)))
    out[rng.random((n, m)) < gaps] = -1
    return out.astype(np.int64)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_cohen_kappa_is_sklearns(seed, weights):
    v = 3 + seed % 3
    items = _random(seed, 40 + 17 * seed, 2, v, gaps=0.0)
    codes, freq, _, units = _patterns(items)
    value, ci = pf.cohen_kappa(pf.confusion(codes[:, 0], codes[:, 1], freq, v), weights, units, CI)
    want = cohen_kappa_score(items[:, 0], items[:, 1], labels=list(range(v)), weights=weights)
    assert value == pytest.approx(want, abs=1e-12)
    low, high = ci()
    assert low <= value <= high


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_alpha_is_the_krippendorff_package(seed, level):
    v = 3 + seed % 3
    items = _random(100 + seed, 30 + 11 * seed, 2 + seed % 4, v, gaps=0.25)
    codes, freq, inverse, units = _patterns(items)
    pair = (codes >= 0).sum(axis=1) >= 2
    assert pf.n_pairable(codes, freq) == int(((items >= 0).sum(axis=1) >= 2).sum())
    value, _ = pf.krippendorff_alpha(codes, freq, units, level, v, CI, items=inverse)
    want = krippendorff.alpha(reliability_data=units, level_of_measurement=level,
                              value_domain=list(range(v)))
    assert pair.any() and value == pytest.approx(want, abs=1e-12)
    # without the item rows (the public statistic on the items) the same value
    again, _ = pf.krippendorff_alpha(codes, freq, units, level, v, CI)
    assert again == pytest.approx(want, abs=1e-12)


# irrCAC cac.raw4raters (Gwet 2014, p. 120), as test_irrcac_reference.py: units x raters here,
# categories 1..5 as codes 0..4, NaN as -1
RAW4RATERS = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]).T
PI = np.array([3, 3.25, 3.5, 1.25, 1]) / 12  # irrCAC's pi_k over the 12 rated units


def _raw4() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return _patterns(np.where(np.isnan(RAW4RATERS), -1, RAW4RATERS - 1).astype(np.int64))


def test_percent_ac1_fleiss_reproduce_irrcacs_printed_values():
    codes, freq, inverse, units = _raw4()
    pa, _ = pf.percent_agreement(codes, freq, units, CI, items=inverse)
    assert pa == pytest.approx(9 / 11, abs=1e-12) and round(pa, 7) == 0.8181818  # printed pa
    ac1, _ = pf.gwet_ac1(codes, freq, units, 5, CI, items=inverse)
    p_e = (PI * (1 - PI)).sum() / 4  # printed pe 0.1903212
    assert ac1 == pytest.approx((9 / 11 - p_e) / (1 - p_e), abs=1e-12) and round(ac1, 5) == 0.77544
    fk, _ = pf.fleiss_kappa(codes, freq, units, 5, CI, items=inverse)
    p_e = (PI * PI).sum()  # printed pe 0.2387153
    assert fk == pytest.approx((9 / 11 - p_e) / (1 - p_e), abs=1e-12) and round(fk, 5) == 0.76117


@pytest.mark.parametrize("seed", range(10))
def test_percent_and_ac1_of_two_raters_are_their_formulas(seed):
    """Two raters on the items both rated (a judge against the reference): p_a the share of
    equal labels, Gwet's p_e = sum_k pi_k (1 - pi_k) / (q - 1) with pi_k the share of the 2n
    ratings in category k and q the rubric's categories."""
    v = 3 + seed % 3
    items = _random(200 + seed, 25 + 13 * seed, 2, v, gaps=0.0)
    codes, freq, inverse, units = _patterns(items)
    p_a = float(np.mean(items[:, 0] == items[:, 1]))
    pi = np.bincount(items.ravel(), minlength=v) / items.size
    p_e = float((pi * (1 - pi)).sum() / (v - 1))
    pa, _ = pf.percent_agreement(codes, freq, units, CI, items=inverse)
    ac1, _ = pf.gwet_ac1(codes, freq, units, v, CI, items=inverse)
    assert pa == pytest.approx(p_a, abs=1e-12)
    if not math.isclose(p_e, 1.0):
        assert ac1 == pytest.approx((p_a - p_e) / (1 - p_e), abs=1e-12)
