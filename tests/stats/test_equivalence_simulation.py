"""Certifying a figure, by simulation (vectorised, small): a figure whose difference judge − reference
is beyond the margin is certified in at most 5% of studies, by the fixed-n rule (two one-sided tests
at α = 0.05, the policy's default: the whole 90% percentile bootstrap interval within ±margin, as
the gate reads a fidelity figure) and by the sequential rule stopping at the first decision
(`gate --sequential`, a 1 − 2α confidence sequence); a fair judge (difference 0) is certified in
≥ 80% of 200 fresh studies at the number of conversations the plan gives by simulating that rule
(:func:`judgekit.stats.power_sim.n_for_certification`, seeded apart from the studies here)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgekit.stats.power import n_for_power
from judgekit.stats.power_sim import (
    SimPlan,
    certification_rate,
    jackknife_pseudo,
    n_for_certification,
    n_for_joint_certification,
    slip_distribution,
)
from judgekit.stats.sequential import sequential_decision

MARGIN = 0.05
STUDIES = 200
#: the interval the gate reads at the policy's default alpha 0.05 (two one-sided tests)
LEVEL = 0.90
#: per-conversation differences of the fair judge: mostly 0, a one-level slip (±0.25) now and then
VALUES = np.array([-0.25, 0.0, 0.25])
PROBS = np.array([0.1, 0.8, 0.1])
SD = float(np.sqrt((PROBS * VALUES**2).sum()))  # 0.1118


def _draw(rng: np.random.Generator, shift: float, n: int) -> np.ndarray:
    return shift + rng.choice(VALUES, size=(STUDIES, n), p=PROBS)


def _fixed_certified(x: np.ndarray, boot: int, rng: np.random.Generator) -> np.ndarray:
    """Per study: the 90% percentile bootstrap interval of the mean lies within ±MARGIN."""
    n = x.shape[1]
    idx = rng.integers(0, n, size=(boot, n))
    means = x[:, idx].mean(axis=2)  # studies × boot
    lo, hi = np.quantile(means, [0.05, 0.95], axis=1)
    return (lo >= -MARGIN) & (hi <= MARGIN)


def test_a_figure_beyond_the_margin_is_rarely_certified_by_the_fixed_rule() -> None:
    rng = np.random.default_rng(1)
    x = _draw(rng, MARGIN + 0.01, 150)
    rate = _fixed_certified(x, 400, rng).mean()
    assert rate <= 0.05, rate


def test_at_the_margin_itself_the_error_is_about_alpha() -> None:
    # the boundary of the equivalence test: a difference of exactly the margin is certified in about
    # α = 5% of studies (one one-sided test at 5% must reject), not 2.5% (the 95% interval) and not 10%;
    # 2,000 studies of 150 conversations: Monte-Carlo SE √(0.05 · 0.95 / 2000) = 0.0049
    rng = np.random.default_rng(3)
    x = MARGIN + rng.choice(VALUES, size=(2000, 150), p=PROBS)
    rate = float(np.concatenate([_fixed_certified(x[k:k + 200], 400, rng) for k in range(0, 2000, 200)]).mean())
    assert 0.03 <= rate <= 0.065, rate


@pytest.mark.slow
def test_a_figure_beyond_the_margin_is_rarely_certified_stopping_at_the_first_decision() -> None:
    rng = np.random.default_rng(2)
    x = _draw(rng, MARGIN + 0.01, 300)
    passed = 0
    for row in x:
        rounds = [row[k:k + 25] for k in range(0, len(row), 25)]
        passed += sequential_decision(rounds, MARGIN, "within", 2 * 0.05, bounds=(-2.0, 2.0)).outcome == "pass"
    assert passed / STUDIES <= 0.05, passed


def test_a_fair_judge_is_certified_at_the_planned_budget() -> None:
    # the plan simulates the gate's rule on the per-conversation differences (seed 0, 500 studies)
    plan = n_for_certification(VALUES, MARGIN, probs=PROBS, seed=0, level=LEVEL)
    assert isinstance(plan, SimPlan)
    # its Monte-Carlo error: SE = √(0.8 · 0.2 / 500) = 0.0179, and it asks for 0.8 + SE
    assert plan.se == pytest.approx(math.sqrt(0.8 * 0.2 / 500)) and plan.target == pytest.approx(0.8179, abs=1e-4)
    # the normal-theory n (≈ ((1.645 + 1.28) σ / 0.05)² = 42.8, two one-sided tests at 5%) is a little
    # optimistic for this discrete difference; the simulated plan is a little larger, not wildly so
    normal = n_for_power(MARGIN, 0.0, kind="difference", direction="within", sd=SD, level=LEVEL)
    assert isinstance(normal, int) and 41 <= normal <= 46
    assert normal <= plan.n <= int(normal * 1.3), (normal, plan)
    # FRESH studies (another seed, the test's own bootstrap): ≥ 80% of 200 certified at the plan's n
    rng = np.random.default_rng(2024)
    rate = _fixed_certified(_draw(rng, 0.0, plan.n), 400, rng).mean()
    assert rate >= 0.80, (rate, plan)


def test_the_plan_is_the_smallest_n_the_simulation_certifies() -> None:
    plan = n_for_certification(VALUES, MARGIN, probs=PROBS, seed=5, level=LEVEL)
    assert isinstance(plan, SimPlan)
    at = certification_rate(VALUES, plan.n, MARGIN, probs=PROBS, seed=5, level=LEVEL)
    before = certification_rate(VALUES, plan.n - 1, MARGIN, probs=PROBS, seed=5, level=LEVEL)
    assert at == plan.rate >= plan.target > before
    # and the next sizes too (the rate is not monotone in n for a discrete difference)
    assert all(certification_rate(VALUES, plan.n + k, MARGIN, probs=PROBS, seed=5, level=LEVEL) >= plan.target
               for k in (1, 2, 3))
    # far fewer conversations certify a fair judge far less often; a figure beyond the margin almost never
    assert certification_rate(VALUES, 15, MARGIN, probs=PROBS, seed=5, level=LEVEL) < min(0.4, plan.rate - 0.4)
    assert certification_rate(VALUES + MARGIN + 0.01, plan.n, MARGIN, probs=PROBS, seed=5, centre=False, level=LEVEL) <= 0.05


def test_the_assumed_slip_distribution_has_the_assumed_sd() -> None:
    # 0 in 80% of conversations, ±a in 10% each: SD = a·√0.2, so a = 0.11/√0.2 = 0.24597
    v, p = slip_distribution(0.11)
    assert v[2] == pytest.approx(0.245967, abs=1e-6) and list(p) == pytest.approx([0.1, 0.8, 0.1])
    assert math.sqrt(float(p @ v**2)) == pytest.approx(0.11)


def test_jackknife_pseudo_values() -> None:
    # of a mean the pseudo-values are the observations: K·x̄ − (K−1)·x̄₍₋ᵢ₎ = x_i
    x = np.array([0.0, 0.25, -0.25, 0.5])

    def mean(w: np.ndarray) -> np.ndarray:
        return (w @ x) / w.sum(axis=1)

    assert jackknife_pseudo(mean, np.arange(4)) == pytest.approx(x)
    # a ratio Σa/Σb over 3 clusters (two units in cluster 0): a = (1, 1, 2, 4), b = (2, 2, 2, 2);
    # θ̂ = 8/8 = 1; without cluster 0: 6/4 = 1.5; without 1: 6/6 = 1; without 2: 4/6 = 2/3;
    # u = 3·1 − 2·θ̂₍₋ᵢ₎ = (0, 1, 5/3)
    a, b = np.array([1.0, 1.0, 2.0, 4.0]), np.full(4, 2.0)

    def ratio(w: np.ndarray) -> np.ndarray:
        return (w @ a) / (w @ b)

    assert jackknife_pseudo(ratio, np.array([0, 0, 1, 2])) == pytest.approx([0.0, 1.0, 5 / 3])


def test_a_figure_with_several_instances_is_certified_whole_at_the_planned_budget() -> None:
    # Drift(t) at turns 2…6: the gate certifies the figure when all five checks pass. Planning for
    # the worst instance alone (80% each) certifies the whole figure far less often; the plan
    # simulates all five at once, from a pilot of 400 conversations (their five differences each)
    pilot = np.random.default_rng(40).choice(VALUES, size=(400, 5), p=PROBS)
    single = n_for_certification(VALUES, MARGIN, probs=PROBS, seed=0, level=LEVEL)
    plan = n_for_joint_certification([pilot], [1.0], MARGIN, seed=0, level=LEVEL)
    assert isinstance(single, SimPlan) and isinstance(plan, SimPlan)
    assert plan.n > single.n * 1.2, (single, plan)

    def whole(n: int, seed: int) -> float:  # the test's own bootstrap, each instance, all must pass
        rng = np.random.default_rng(seed)
        x = rng.choice(VALUES, size=(STUDIES, n, 5), p=PROBS)
        ok = np.ones(STUDIES, dtype=bool)
        for i in range(5):
            ok &= _fixed_certified(x[:, :, i], 400, rng)
        return float(ok.mean())

    assert whole(single.n, 77) < 0.6  # the per-instance plan: about half the studies certify the figure
    assert whole(plan.n, 78) >= 0.80, plan  # FRESH studies at the plan's n
