"""The hedged-capital betting confidence sequence (Waudby-Smith & Ramdas 2024) and sequential
decisions: worked arithmetic, agreement with the authors' reference code, and simulations of
anytime coverage and of the error/power of stopping at the first decided round."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from judgekit.errors import JudgekitError
from judgekit.stats.power import n_for_power
from judgekit.stats.sequential import (
    confidence_sequence,
    decide,
    hedged_capital,
    paired_difference_cs,
    predictable_bets,
    sequential_decision,
)

#: a coarser grid for the simulations (endpoints widened by one step, so still conservative)
SIM_BREAKS = 200


def mc_floor(p: float, runs: int, k: float = 2.0) -> float:
    """p minus k binomial standard errors of a Monte Carlo proportion over ``runs`` runs."""
    return p - k * math.sqrt(p * (1 - p) / runs)


# --- worked cases ---------------------------------------------------------------------------

def test_bets_and_capital_worked_case():
    # x = (1, 1), m = 0.5, α = 0.05.
    # λ̃_1 = √(2 log 40 / (σ̂²_0 · 1 · log 2)) = √(2 · 3.68888 / (0.25 · 0.693147)) = √42.5667
    #     = 6.52425…; after x_1 = 1: μ̂_1 = (0.5 + 1)/2 = 0.75, σ̂²_1 = (0.25 + 0.25²)/2 = 0.15625,
    # λ̃_2 = √(7.37776 / (0.15625 · 2 · log 3)) = √(7.37776 / 0.343316) = √21.4897 = 4.63570.
    lam = predictable_bets(np.array([1.0, 1.0]), 0.05)
    assert lam[0] == pytest.approx(math.sqrt(2 * math.log(40) / (0.25 * math.log(2))))
    assert lam[1] == pytest.approx(math.sqrt(2 * math.log(40) / (0.15625 * 2 * math.log(3))))
    assert lam[1] == pytest.approx(4.63570, abs=1e-5)
    # both bets are truncated at c/m = c/(1 − m) = 0.5/0.5 = 1, so
    # K⁺ = (1 + 1·0.5)(1 + 1·0.5) = 2.25, K⁻ = (1 − 0.5)(1 − 0.5) = 0.25,
    # K_1 = max(½·1.5, ½·0.5) = 0.75, K_2 = max(½·2.25, ½·0.25) = 1.125.
    assert hedged_capital([1.0, 1.0], 0.5) == pytest.approx([0.75, 1.125])


def test_cs_is_the_set_where_capital_stays_below_one_over_alpha():
    # Ten 1s: the lower end is the grid point (widened by one step of 0.001) where the hedged
    # capital crosses 1/α = 20.
    cs = confidence_sequence(np.ones(10))
    lo = cs.lower[-1]
    assert hedged_capital(np.ones(10), lo + 0.001)[-1] < 20 <= hedged_capital(np.ones(10), lo - 0.001)[-1]
    assert cs.upper[-1] == 1.0
    # and the intervals never widen (running intersection) and shrink towards 1
    assert np.all(np.diff(confidence_sequence(np.ones(30)).lower) >= 0)


def test_first_observation_decides_nothing():
    # λ̃_1 = 6.52 and λ ≤ 0.5/m cap the capital after one point at 1 + 6.52 · 1 = 7.52 < 2/α = 40
    # (the ½ of the hedge), so no m is excluded: the interval is the whole range.
    assert confidence_sequence([1.0]).final == (0.0, 1.0)
    assert confidence_sequence([0.0]).final == (0.0, 1.0)


def test_matches_authors_reference_code():
    # Values produced by confseq.betting.hedged_cs(x, alpha=0.05, breaks=1000,
    # running_intersection=True) from github.com/gostevehoward/confseq at commit 70b1ef3
    # (Waudby-Smith & Ramdas's code), for these two fixed sequences (their code is not copied).
    x = np.array([((i * 7) % 10) / 10 for i in range(200)])
    cs = confidence_sequence(x)
    expected = {1: (0.0, 1.0), 10: (0.186, 0.74), 50: (0.329, 0.563), 200: (0.384, 0.509)}
    for t, (lo, hi) in expected.items():
        assert (cs.lower[t - 1], cs.upper[t - 1]) == pytest.approx((lo, hi), abs=1e-9)
    b = np.array([1.0 if (i * 37) % 100 < 30 else 0.0 for i in range(300)])
    cs = confidence_sequence(b)
    expected = {1: (0.0, 1.0), 20: (0.102, 0.631), 100: (0.176, 0.453), 300: (0.216, 0.397)}
    for t, (lo, hi) in expected.items():
        assert (cs.lower[t - 1], cs.upper[t - 1]) == pytest.approx((lo, hi), abs=1e-9)


def test_rounds_give_the_same_sequence_read_at_round_ends():
    rng = np.random.default_rng(3)
    x = rng.binomial(1, 0.3, 120).astype(float)
    flat = confidence_sequence(x)
    rounds = confidence_sequence([x[:50], x[50:50], x[50:90], x[90:]])
    np.testing.assert_array_equal(flat.lower, rounds.lower)
    np.testing.assert_array_equal(rounds.round_ends, [50, 50, 90, 120])
    np.testing.assert_array_equal(rounds.round_lower, flat.lower[[49, 49, 89, 119]])
    assert rounds.final == flat.final


def test_paired_difference_is_the_rescaled_sequence():
    # d = judge − human in [−1, 1]; y = (d + 1)/2 in [0, 1]; CS(d) = 2·CS(y) − 1.
    rng = np.random.default_rng(4)
    judge = rng.binomial(1, 0.4, 200).astype(float)
    human = rng.binomial(1, 0.3, 200).astype(float)
    cs_d = paired_difference_cs(judge, human)
    cs_y = confidence_sequence((judge - human + 1) / 2)
    np.testing.assert_allclose(cs_d.lower, 2 * cs_y.lower - 1)
    np.testing.assert_allclose(cs_d.upper, 2 * cs_y.upper - 1)
    assert cs_d.lower[-1] <= (judge - human).mean() <= cs_d.upper[-1]


def test_decide_reads_the_interval_as_the_gate_does():
    assert decide(0.71, 0.9, 0.7, ">=") == "pass"
    assert decide(0.5, 0.69, 0.7, ">=") == "fail"
    assert decide(0.6, 0.8, 0.7, ">=") == "inconclusive"
    assert decide(0.01, 0.05, 0.05, "<=") == "pass"
    assert decide(0.06, 0.2, 0.05, "<=") == "fail"
    assert decide(-0.08, 0.09, 0.1, "within") == "pass"
    assert decide(0.11, 0.3, 0.1, "within") == "fail"
    assert decide(0.05, 0.15, 0.1, "within") == "inconclusive"


def test_sequential_decision_reports_the_first_decided_round():
    # Twenty rounds of 50 all-zero error flags: the upper end falls to 0.03 or below at some
    # round r > 1, the first round whose interval decides "rate ≤ 0.03".
    rounds = [np.zeros(50)] * 20
    dec = sequential_decision(rounds, 0.03, "<=")
    assert dec.outcome == "pass" and dec.round is not None and dec.round > 1
    cs = confidence_sequence(rounds)
    ups = cs.round_upper
    assert ups[dec.round - 1] <= 0.03 < ups[dec.round - 2]
    assert dec.interval == (cs.round_lower[dec.round - 1], ups[dec.round - 1])
    assert dec.n_used == 50 * dec.round
    # never decided: a rate of one half tested against one half
    half = [np.tile([0.0, 1.0], 25)] * 4
    assert sequential_decision(half, 0.5, ">=").outcome == "inconclusive"


def test_bad_input_is_refused():
    with pytest.raises(JudgekitError, match="outside the range"):
        confidence_sequence([0.2, 1.5])
    with pytest.raises(JudgekitError, match="alpha"):
        confidence_sequence([0.2], alpha=1.5)
    with pytest.raises(JudgekitError, match="direction"):
        sequential_decision([0.2], 0.1, "gt")
    with pytest.raises(JudgekitError, match="not paired"):
        paired_difference_cs([1.0, 0.0], [1.0])


# --- simulations ----------------------------------------------------------------------------

RUNS = 250


@pytest.mark.parametrize("draw, mean", [
    (lambda rng, n: rng.binomial(1, 0.3, n).astype(float), 0.3),  # a refusal rate
    (lambda rng, n: rng.beta(2.0, 5.0, n), 2.0 / 7.0),            # a bounded score
])
def test_cs_covers_the_mean_at_all_times(draw, mean):
    # Anytime coverage: in ≥ 95% of runs (minus 2 binomial SEs: 0.95 − 2√(0.95·0.05/250) =
    # 0.922) the mean is inside the interval at every one of 400 times. Measured over 1,000
    # runs: 96.9% (Bernoulli 0.3), 99.5% (Beta(2, 5)), 99.4% (Bernoulli 0.03).
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(RUNS):
        cs = confidence_sequence(draw(rng, 400), breaks=SIM_BREAKS)
        covered += bool(np.all((cs.lower <= mean) & (mean <= cs.upper)))
    assert covered / RUNS >= mc_floor(0.95, RUNS)


def paired_differences(rng: np.random.Generator, up: float, down: float, shape) -> np.ndarray:
    """judge − human per unit: +1 with probability ``up`` (judge says refusal, human not), −1
    with probability ``down``, 0 otherwise; mean up − down, SD √(up + down − (up − down)²)."""
    u = rng.random(shape)
    return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))


def test_an_off_judge_is_rarely_passed_even_stopping_at_the_first_decision():
    # Drift difference 0.155 − 0.045 = 0.11 > margin 0.10: "|Drift_j − Drift_h| ≤ 0.10" is
    # false. Twenty rounds of 50 units, stop at the first decided round. Pass in ≤ 5% of runs
    # (the CS is anytime-valid; each one-sided error is ≤ α/2); measured: 0.3% over 1,000 runs.
    rng = np.random.default_rng(12)
    passed = 0
    for _ in range(RUNS):
        d = paired_differences(rng, 0.155, 0.045, 1000)
        dec = sequential_decision(np.split(d, 20), 0.10, "within", bounds=(-1.0, 1.0),
                                  breaks=SIM_BREAKS)
        passed += dec.outcome == "pass"
    assert passed / RUNS <= 0.05


@pytest.mark.slow
def test_a_bad_error_rate_is_rarely_passed_with_peeking():
    # True error rate 0.06 against "rate ≤ 0.05", read after each of 40 rounds of 50 units.
    rng = np.random.default_rng(13)
    passed = 0
    for _ in range(RUNS):
        x = rng.binomial(1, 0.06, 2000).astype(float)
        passed += sequential_decision(np.split(x, 40), 0.05, "<=", breaks=SIM_BREAKS).outcome == "pass"
    assert passed / RUNS <= 0.05


def test_a_fair_judge_passes_at_the_planned_budget():
    # A fair judge: drift difference 0.1 − 0.1 = 0, SD √0.2 = 0.447; check |δ| ≤ 0.10.
    # n_for_power plans the fixed-n t interval: 2Φ(0.1√n/0.447 − 1.96) − 1 ≥ 0.8 at n = 211
    # (0.1√211/0.447 = 3.250; Φ(3.250 − 1.971) = Φ(1.279) = 0.8996 → 0.799…, t quantiles).
    sd = math.sqrt(0.2)
    n = n_for_power(0.10, 0.0, kind="difference", direction="within", sd=sd)
    assert isinstance(n, int) and 200 <= n <= 225
    rng = np.random.default_rng(14)
    runs = 4000
    d = paired_differences(rng, 0.1, 0.1, (runs, n))
    m, s = d.mean(axis=1), d.std(axis=1, ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
    fixed_power = float(np.mean((m - half >= -0.10) & (m + half <= 0.10)))
    # ≥ 80% minus 3 Monte Carlo SEs (3·√(0.8·0.2/4000) = 0.019); measured 0.80 (0.7999 at
    # 40,000 runs).
    assert fixed_power >= mc_floor(0.8, runs, 3.0)

    # The same budget read sequentially (rounds of 50, stop at the first decision): the CS is
    # wider, so the power is lower — measured over 1,000 runs: 16% at n = 211, 71% at 2n, 90%
    # at 3n (median units used with the 3n budget: 343, about 1.6n).
    seq_runs = 200
    d = paired_differences(rng, 0.1, 0.1, (seq_runs, 3 * n))
    at_n = at_3n = 0
    for row in d:
        at_n += sequential_decision(np.array_split(row[:n], math.ceil(n / 50)), 0.10, "within",
                                    bounds=(-1.0, 1.0), breaks=SIM_BREAKS).outcome == "pass"
        at_3n += sequential_decision(np.array_split(row, math.ceil(3 * n / 50)), 0.10, "within",
                                     bounds=(-1.0, 1.0), breaks=SIM_BREAKS).outcome == "pass"
    seq_power, seq_power_3n = at_n / seq_runs, at_3n / seq_runs
    print(f"fixed-n power {fixed_power:.3f} at n={n}; sequential {seq_power:.3f} at n, "
          f"{seq_power_3n:.3f} at 3n")
    assert 0.05 <= seq_power < fixed_power
    assert seq_power_3n >= mc_floor(0.8, seq_runs)
