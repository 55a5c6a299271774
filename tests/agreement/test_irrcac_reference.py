"""Gwet's irrCAC (the R reference implementation) reproduced to its printed precision.

Data copied from irrCAC (https://github.com/kgwet/irrCAC, commit 7fb7509; licence "GPL (>=2)"
as stated in its DESCRIPTION): only the small tables of ratings below, as data. Published
values are those printed in irrCAC's README.md / vignettes/overview.Rmd. irrCAC lays data out as
units x raters; judgekit as raters x units, so each table here is irrCAC's transposed.

Convention (irrCAC's agree.coeff3.raw.r): the observed agreement p_a averages over the units at
least two raters rated; the chance term of AC1/AC2, Brennan-Prediger, Fleiss' and Conger's kappa
uses every unit rated at least once; Krippendorff's alpha keeps its pairable-units rule.
"""

from __future__ import annotations

import doctest
import math
from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from judgekit.agreement import (
    ac1_ci,
    ac2_ci,
    bootstrap_ci,
    bp_ci,
    brennan_prediger,
    cohen_kappa,
    conger_ci,
    conger_kappa,
    fleiss_ci,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    percent_agreement,
    scott_ci,
    scott_pi,
    undefined_reason,
)
from judgekit.agreement._rated import rated_table
from judgekit.agreement.chance import agreement_weights, bp_from_table, gwet_from_table
from judgekit.agreement.conger import conger_from_patterns, rater_patterns
from judgekit.agreement.kappa import fleiss_from_table
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval

nan = float("nan")

# irrCAC data/cac.raw4raters (= inst/extdata/cac.raw4raters.csv; Gwet 2014, Handbook of
# Inter-Rater Reliability, 4th ed., p. 120): 4 raters, 12 units, 5 categories. Rows are irrCAC's
# columns Rater1..Rater4. Unit 12 was rated once (by Rater3), units 1, 10, 11 by 3, 3, 2 raters.
RAW4RATERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]

# irrCAC data/cac.ben.gerry (= inst/extdata/cac.ben.gerry.csv): Ben and Gerry rate 12 units on
# a..e; Gerry did not rate unit 10 (an empty factor level in the .RData, NA for irrCAC).
BEN = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
GERRY = ["b", "a", "b", "b", "b", "c", "c", "c", "e", None, "d", "d"]

# irrCAC data/cont3x3abstractors: 100 pregnancies, abstractor 1 (rows) x abstractor 2 (columns).
CONT3X3 = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]

# irrCAC data/distrib.6raters: 15 patients, number of the 6 psychiatrists choosing each of 5
# diagnoses (Depression, Personality Disorder, Schizophrenia, Neurosis, Other).
DISTRIB6 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
]  # fmt: skip


def table_to_pairs(table):
    y1, y2 = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            y1 += [i] * count
            y2 += [j] * count
    return y1, y2


def distribution_to_raters(counts):
    """Raters x units from a units x categories count table (rater identity is arbitrary)."""
    return np.column_stack([np.repeat(np.arange(1, len(row) + 1), row) for row in counts])


# --- cac.raw4raters -----------------------------------------------------------------------------
# p_a (all coefficients): 11 units rated twice or more; 8 in full agreement, units 2 and 8 have
# 3 of 4 agreeing (6 of 12 ordered pairs = 1/2), unit 6 none: p_a = 9/11 = 0.8181818 (published).
# pi_k over the 12 rated units, (1/12) sum_i r_ik / r_i: category 1: 1 + 1/4 (unit 6) + 1/4
# (unit 8)... = (3, 3.25, 3.5, 1.25, 1) / 12; unit 12 (one rating, a 3) adds 1 to category 3.
PI = np.array([3, 3.25, 3.5, 1.25, 1]) / 12


def test_raw4raters_percent_agreement():
    assert percent_agreement(RAW4RATERS) == pytest.approx(9 / 11, abs=1e-15)
    assert round(percent_agreement(RAW4RATERS), 7) == 0.8181818


def test_raw4raters_gwet_ac1_published():
    # p_e = (1/(q-1)) sum pi_k (1 - pi_k) = (1/4)(1 - 34.375/144) = 0.1903212 (published pe)
    p_e = (PI * (1 - PI)).sum() / 4
    assert round(p_e, 7) == 0.1903212
    assert gwet_ac1(RAW4RATERS) == pytest.approx((9 / 11 - p_e) / (1 - p_e), abs=1e-12)
    assert round(gwet_ac1(RAW4RATERS), 5) == 0.77544
    assert round(gwet_ac1(RAW4RATERS, categories=[1, 2, 3, 4, 5]), 5) == 0.77544


def test_raw4raters_gwet_ac2_linear_and_quadratic_published():
    # Linear: p_a = 31/33 (see test_gwet_percent.py), T_w = 15, p_e = 15/20 * 109.625/144
    p_e = 15 / 20 * (PI * (1 - PI)).sum()
    assert gwet_ac2(RAW4RATERS, weights="linear") == pytest.approx(
        (31 / 33 - p_e) / (1 - p_e), abs=1e-12
    )
    assert round(gwet_ac2(RAW4RATERS, weights="linear"), 3) == 0.859
    assert round(gwet_ac2(RAW4RATERS, weights="quadratic"), 3) == 0.914


def test_raw4raters_fleiss_published():
    # P_e = sum_k pi_k^2 = 34.375 / 144 = 0.2387153 (published pe); kappa = 0.76117
    p_e = (PI * PI).sum()
    assert round(p_e, 7) == 0.2387153
    assert fleiss_kappa(RAW4RATERS) == pytest.approx((9 / 11 - p_e) / (1 - p_e), abs=1e-12)
    assert round(fleiss_kappa(RAW4RATERS), 5) == 0.76117


def test_raw4raters_brennan_prediger_published():
    # p_e = 1/q = 1/5; BP = (9/11 - 1/5) / (4/5) = 17/22 = 0.77273 (published)
    assert brennan_prediger(RAW4RATERS) == pytest.approx(17 / 22, abs=1e-15)
    assert round(brennan_prediger(RAW4RATERS), 5) == 0.77273
    # A sixth, unused category changes the uniform chance term: p_e = 1/6.
    assert brennan_prediger(RAW4RATERS, categories=[1, 2, 3, 4, 5, 6]) == pytest.approx(
        (9 / 11 - 1 / 6) / (5 / 6)
    )


def test_raw4raters_conger_published_in_irrcacs_rater_layout():
    # Each rater's category shares over the units that rater rated:
    #   Rater1 (9 units):  (3, 3, 2, 1, 0) / 9      Rater2 (10): (2, 4, 2, 1, 1) / 10
    #   Rater3 (11 units): (1, 3, 5, 1, 1) / 11     Rater4 (11): (3, 3, 2, 2, 1) / 11
    # p_e = mean over the 6 rater pairs g < h of sum_k p_gk p_hk = 0.2334252 (published pe).
    shares = [
        [Fraction(c, 9) for c in (3, 3, 2, 1, 0)],
        [Fraction(c, 10) for c in (2, 4, 2, 1, 1)],
        [Fraction(c, 11) for c in (1, 3, 5, 1, 1)],
        [Fraction(c, 11) for c in (3, 3, 2, 2, 1)],
    ]
    pairs = [(g, h) for g in range(4) for h in range(g + 1, 4)]
    agree = [sum(a * b for a, b in zip(shares[g], shares[h], strict=True)) for g, h in pairs]
    p_e = sum(agree) / len(pairs)
    assert round(float(p_e), 7) == 0.2334252
    expected = (Fraction(9, 11) - p_e) / (1 - p_e)
    assert conger_kappa(RAW4RATERS) == pytest.approx(float(expected), abs=1e-12)
    assert round(conger_kappa(RAW4RATERS), 5) == 0.76282
    # Rater identity matters to Conger (not to Fleiss): reordering rows changes nothing, moving
    # unit 12's single rating from Rater3 to Rater2 changes each rater's shares.
    for order in permutations(range(4)):
        assert conger_kappa([RAW4RATERS[i] for i in order]) == pytest.approx(
            conger_kappa(RAW4RATERS), abs=1e-12
        )
    moved = [list(row) for row in RAW4RATERS]
    moved[1][11], moved[2][11] = 3, nan
    assert round(conger_kappa(moved), 5) != 0.76282
    assert fleiss_kappa(moved) == pytest.approx(fleiss_kappa(RAW4RATERS), abs=1e-12)


def test_raw4raters_alpha_keeps_krippendorffs_rule():
    # irrCAC's krippen.alpha.raw prints 0.74342; units rated once never enter alpha, so
    # dropping unit 12 changes nothing (it does change Fleiss' kappa, see above).
    assert round(krippendorff_alpha(RAW4RATERS), 5) == 0.74342
    without_unit_12 = [row[:11] for row in RAW4RATERS]
    assert krippendorff_alpha(without_unit_12) == pytest.approx(krippendorff_alpha(RAW4RATERS))
    assert fleiss_kappa(without_unit_12) != pytest.approx(fleiss_kappa(RAW4RATERS), abs=1e-6)


# --- cac.ben.gerry ------------------------------------------------------------------------------
# irrCAC prints no coefficient for this data set; the values below are its raw-data formulas
# (agree.coeff3.raw.r) worked by hand. Pairs: the 11 units both rated (all but unit 10); they
# agree on units 2, 3, 4, 6, 7, 8, 9, 11: p_a = 8/11. pi_k over the 12 rated units, unit 10
# (Ben: d) counting fully: a: (1/2 + 1 + 1/2), b: (1/2 + 1 + 1 + 1/2), c: 3, d: (1/2 + 1 + 1 +
# 1/2), e: 1  ->  pi = (2, 3, 3, 3, 1) / 12, sum pi^2 = 32/144 = 2/9.


def test_ben_gerry_fleiss_ac1_bp_conger_by_hand():
    pair = [BEN, GERRY]
    assert percent_agreement(pair) == pytest.approx(8 / 11)
    # Fleiss: p_e = 2/9; kappa = (8/11 - 2/9) / (7/9) = 50/77 = 0.64935
    assert fleiss_kappa(pair) == pytest.approx(50 / 77, abs=1e-12)
    # AC1: p_e = (1/4)(1 - 2/9) = 7/36; AC1 = (8/11 - 7/36) / (29/36) = 211/319 = 0.66144
    assert gwet_ac1(pair) == pytest.approx(211 / 319, abs=1e-12)
    # BP: p_e = 1/5; (8/11 - 1/5) / (4/5) = 29/44 = 0.65909
    assert brennan_prediger(pair) == pytest.approx(29 / 44, abs=1e-12)
    # Conger: Ben's shares over his 12 units (3, 2, 3, 3, 1)/12, Gerry's over his 11
    # (1, 4, 3, 2, 1)/11; with two raters p_e = sum_k p_Bk p_Gk = 27/132 = 9/44,
    # kappa = (8/11 - 9/44) / (35/44) = 23/35 = 0.65714
    assert conger_kappa(pair) == pytest.approx(23 / 35, abs=1e-12)


def test_ben_gerry_two_rater_coefficients_use_pairs_only():
    # Cohen (irrCAC kappa2.table on the 11 pairs): Ben (3, 2, 3, 2, 1)/11, Gerry (1, 4, 3, 2,
    # 1)/11, p_e = 25/121, kappa = (88 - 25) / (121 - 25) = 63/96 = 21/32
    assert cohen_kappa(BEN, GERRY) == pytest.approx(21 / 32, abs=1e-12)
    # Scott (scott2.table): pooled (4, 6, 6, 4, 2)/22, p_e = 108/484 = 27/121,
    # pi = (88 - 27) / (121 - 27) = 61/94
    assert scott_pi(BEN, GERRY) == pytest.approx(61 / 94, abs=1e-12)
    # With complete data Fleiss is Scott's pi and Conger is Cohen's kappa; unit 10 is what makes
    # them differ here.
    complete = [BEN[:9] + BEN[10:], GERRY[:9] + GERRY[10:]]
    assert fleiss_kappa(complete) == pytest.approx(61 / 94, abs=1e-12)
    assert conger_kappa(complete) == pytest.approx(21 / 32, abs=1e-12)


# --- complete data: cont3x3abstractors and distrib.6raters (printed in irrCAC's README) --------


def test_cont3x3abstractors_published():
    y1, y2 = table_to_pairs(CONT3X3)
    assert round(cohen_kappa(y1, y2), 7) == 0.7964094
    assert round(scott_pi(y1, y2), 7) == 0.7962397
    assert round(gwet_ac1([y1, y2]), 7) == 0.8493305
    assert round(brennan_prediger([y1, y2]), 7) == 0.835
    assert round(krippendorff_alpha([y1, y2]), 7) == 0.7972585
    assert percent_agreement([y1, y2]) == pytest.approx(0.89)
    assert conger_kappa([y1, y2]) == pytest.approx(cohen_kappa(y1, y2), abs=1e-12)
    assert fleiss_kappa([y1, y2]) == pytest.approx(scott_pi(y1, y2), abs=1e-12)


def test_distrib_6raters_published():
    data = distribution_to_raters(DISTRIB6)
    assert round(gwet_ac1(data), 7) == 0.4448007
    assert round(fleiss_kappa(data), 7) == 0.4139265
    assert round(brennan_prediger(data), 7) == 0.4388889
    assert round(krippendorff_alpha(data), 7) == 0.4204384


# --- random data against a line-by-line transcription of irrCAC's R code ------------------------


def irrcac_raw(ratings, categories, weights, coefficient):
    """agree.coeff3.raw.r transcribed loop by loop: ``ratings`` units x raters (None missing)."""
    n, r, q = len(ratings), len(ratings[0]), len(categories)
    agree = [[sum(1 for x in row if x == c) for c in categories] for row in ratings]
    r_i = [sum(a) for a in agree]
    two = [i for i in range(n) if r_i[i] >= 2]
    sum_q = [
        sum(
            agree[i][k] * (sum(weights[k][j] * agree[i][j] for j in range(q)) - 1) for k in range(q)
        )
        for i in range(n)
    ]
    p_a = sum(sum_q[i] / (r_i[i] * (r_i[i] - 1)) for i in two) / len(two)
    pi = [sum(agree[i][k] / r_i[i] for i in range(n)) / n for k in range(q)]
    t_w = sum(map(sum, weights))
    if coefficient == "ac":
        p_e = t_w * sum(p * (1 - p) for p in pi) / (q * (q - 1))
    elif coefficient == "fleiss":
        p_e = sum(weights[k][j] * pi[k] * pi[j] for k in range(q) for j in range(q))
    elif coefficient == "bp":
        p_e = t_w / q**2
    else:  # conger
        classif = [
            [sum(1 for i in range(n) if ratings[i][g] == c) for c in categories] for g in range(r)
        ]
        p_gk = [[x / sum(row) for x in row] for row in classif]
        mean = [sum(p_gk[g][k] for g in range(r)) / r for k in range(q)]
        s2 = [
            [
                (sum(p_gk[g][k] * p_gk[g][j] for g in range(r)) - r * mean[k] * mean[j]) / (r - 1)
                for j in range(q)
            ]
            for k in range(q)
        ]
        p_e = sum(
            weights[k][j] * (mean[k] * mean[j] - s2[k][j] / r) for k in range(q) for j in range(q)
        )
    return (p_a - p_e) / (1 - p_e)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_data_match_the_transcribed_irrcac_formulas(data):
    cats = [1, 2, 3, 4]
    m = data.draw(st.integers(2, 5))
    n = data.draw(st.integers(2, 15))
    cell = st.one_of(st.none(), st.sampled_from(cats))
    matrix = data.draw(st.lists(st.lists(cell, min_size=n, max_size=n), min_size=m, max_size=m))
    rated_units = [j for j in range(n) if any(row[j] is not None for row in matrix)]
    units = [[row[j] for row in matrix] for j in rated_units]  # irrCAC: units x raters
    assume(sum(1 for u in units if sum(x is not None for x in u) >= 2) > 0)
    assume(all(any(x is not None for x in row) for row in matrix))  # every rater rated something
    identity = np.eye(4).tolist()
    quadratic = agreement_weights("quadratic", 4, func="test").tolist()
    expected = {
        "ac1": irrcac_raw(units, cats, identity, "ac"),
        "ac2": irrcac_raw(units, cats, quadratic, "ac"),
        "bp": irrcac_raw(units, cats, identity, "bp"),
    }
    got = {
        "ac1": gwet_ac1(matrix, categories=cats),
        "ac2": gwet_ac2(matrix, weights="quadratic", categories=cats),
        "bp": brennan_prediger(matrix, categories=cats),
    }
    used = {x for u in units for x in u if x is not None}
    if len(used) > 1:  # otherwise p_e = 1 and kappa is undefined (NaN here, 0/0 in R)
        expected["fleiss"] = irrcac_raw(units, cats, identity, "fleiss")
        expected["conger"] = irrcac_raw(units, cats, identity, "conger")
        got["fleiss"] = fleiss_kappa(matrix, categories=cats)
        got["conger"] = conger_kappa(matrix, categories=cats)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-9), name


# --- undefined values, errors ------------------------------------------------------------------


def test_undefined_new_coefficients_have_reasons():
    one = [["x", "x", "x"], ["x", "x", None]]
    for statistic in (fleiss_kappa, conger_kappa):
        assert math.isnan(statistic(one))
        assert undefined_reason(one, statistic=statistic) == "every rating is 'x'"
    assert math.isnan(scott_pi(one[0], one[1]))
    assert undefined_reason(one, statistic="scott_pi") == "every rating is 'x'"
    assert math.isnan(brennan_prediger(one))
    assert "no category list was given" in undefined_reason(one, statistic=brennan_prediger)
    assert brennan_prediger(one, categories=["x", "y"]) == 1.0
    # Paired units all 'x' but a unit rated once says 'y': under irrCAC's convention the chance
    # term sees 'y', so Fleiss is defined (= 1: pi = (5/6, 1/6), p_a = 1); Scott is not.
    mixed = [["x", "x", "y"], ["x", "x", None]]
    assert fleiss_kappa(mixed) == pytest.approx(1.0)
    assert undefined_reason(mixed, statistic="fleiss_kappa") is None
    assert math.isnan(scott_pi(mixed[0], mixed[1]))
    assert undefined_reason(mixed, statistic="scott_pi") == (
        "every rating on units rated by two or more raters is 'x'"
    )
    unpaired = [["x", None], [None, "y"]]
    for statistic in (fleiss_kappa, conger_kappa, gwet_ac1, brennan_prediger):
        assert math.isnan(statistic(unpaired))
        assert undefined_reason(unpaired, statistic=statistic) == "no unit was rated by two raters"
    # Conger needs two raters who rated something; an empty rater row is left out.
    assert math.isnan(conger_kappa([["a", "b"], [None, None]]))
    assert conger_kappa([BEN, GERRY, [None] * 12]) == pytest.approx(23 / 35, abs=1e-12)


def test_new_coefficient_errors():
    with pytest.raises(JudgekitError, match=r"brennan_prediger: unknown weights 'cubic'"):
        brennan_prediger(RAW4RATERS, weights="cubic")
    with pytest.raises(JudgekitError, match=r"conger_kappa: rating 5 is not in categories"):
        conger_kappa(RAW4RATERS, categories=[1, 2, 3, 4])
    with pytest.raises(JudgekitError, match=r"scott_pi: the two rating sequences have 2 and 3"):
        scott_pi(["a", "b"], ["a", "b", "a"])
    with pytest.raises(JudgekitError, match=r"bootstrap_ci\(scott_pi\): data has 4 rows"):
        bootstrap_ci(scott_pi, RAW4RATERS)


# --- bootstrap: same convention as the point estimate -------------------------------------------


def noisy_with_singletons(n_units=300, n_raters=4, seed=0):
    """Ratings 1..4 with many units rated once (every rater but the first misses 60%)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 5, n_units)
    data = np.where(rng.random((n_raters, n_units)) < 0.7, truth, rng.integers(1, 5, n_units))
    data = data.astype(float)
    data[1:][rng.random((n_raters - 1, n_units)) < 0.6] = nan
    return data


CASES = [
    (ac1_ci, gwet_ac1, {"categories": [1, 2, 3, 4]}),
    (ac2_ci, gwet_ac2, {"categories": [1, 2, 3, 4], "weights": "quadratic"}),
    (fleiss_ci, fleiss_kappa, {}),
    (bp_ci, brennan_prediger, {"categories": [1, 2, 3, 4]}),
    (conger_ci, conger_kappa, {}),
]


def test_point_estimate_of_the_resampled_statistic_is_the_function_value():
    # The bootstrap evaluates the same *_from_table formula on resampled unit multiplicities;
    # with the observed multiplicities it must give the function's value exactly.
    data = noisy_with_singletons(seed=1)
    assert ((~np.isnan(data)).sum(axis=0) == 1).sum() > 40  # many units rated once
    table = rated_table(data, [1, 2, 3, 4], func="test").grouped()
    freq = table.freq[None, :].astype(float)
    identity = agreement_weights("identity", 4, func="test")
    quadratic = agreement_weights("quadratic", 4, func="test")
    cats = [1, 2, 3, 4]
    assert fleiss_from_table(table, freq)[0] == pytest.approx(fleiss_kappa(data), abs=1e-12)
    assert gwet_from_table(table, freq, identity)[0] == pytest.approx(
        gwet_ac1(data, categories=cats), abs=1e-12
    )
    assert gwet_from_table(table, freq, quadratic)[0] == pytest.approx(
        gwet_ac2(data, weights="quadratic", categories=cats), abs=1e-12
    )
    assert bp_from_table(table, freq, identity)[0] == pytest.approx(
        brennan_prediger(data, categories=cats), abs=1e-12
    )
    patterns = rater_patterns(data, None, func="test")
    assert patterns.freq.sum() == table.n_units  # every unit rated at least once
    assert conger_from_patterns(patterns, patterns.freq[None, :].astype(float))[0] == pytest.approx(
        conger_kappa(data), abs=1e-12
    )


def naive_rated_interval(statistic, data, n_resamples, seed, **kwargs):
    """Textbook bootstrap over the units rated at least once (irrCAC's n)."""
    data = np.asarray(data, dtype=float)
    data = data[:, (~np.isnan(data)).any(axis=0)]
    rng = np.random.default_rng(seed)
    n = data.shape[1]
    values = np.array(
        [statistic(data[:, rng.integers(0, n, n)], **kwargs) for _ in range(n_resamples)]
    )
    return percentile_interval(values, 0.95)


@pytest.mark.parametrize(("fast", "statistic", "kwargs"), CASES)
def test_fast_intervals_resample_units_rated_once_too(fast, statistic, kwargs):
    data = noisy_with_singletons(seed=2)
    low, high = fast(data, n_resamples=2000, seed=1, **kwargs)
    assert low < statistic(data, **kwargs) < high
    slow = naive_rated_interval(statistic, data, 1000, seed=2, **kwargs)
    # Different random streams: agreement up to Monte-Carlo noise.
    assert low == pytest.approx(slow[0], abs=0.015)
    assert high == pytest.approx(slow[1], abs=0.015)
    assert bootstrap_ci(statistic, data, n_resamples=300, **kwargs) == fast(
        data, n_resamples=300, **kwargs
    )


def test_units_rated_once_are_resampled_for_irrcac_statistics():
    # Units rated once move the Fleiss interval: they are resampled and enter p_j.
    data = noisy_with_singletons(seed=3)
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    assert fleiss_ci(data) != fleiss_ci(pairable)


def test_scott_interval_resamples_pairs():
    y1, y2 = table_to_pairs(CONT3X3)
    low, high = scott_ci(y1, y2, n_resamples=2000, seed=1)
    assert low < scott_pi(y1, y2) < high
    rng = np.random.default_rng(2)
    pairs = np.array([y1, y2])
    values = np.array([scott_pi(*pairs[:, rng.integers(0, 100, 100)]) for _ in range(1000)])
    slow = percentile_interval(values, 0.95)
    assert low == pytest.approx(slow[0], abs=0.015)
    assert high == pytest.approx(slow[1], abs=0.015)


def test_conger_docstring_examples():
    from judgekit.agreement import conger

    result = doctest.testmod(conger, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
