"""Issue 22 acceptance by simulation (vectorised, small): a figure whose difference judge − reference
is just beyond the margin is certified in at most 5% of 200 studies, by the fixed-n rule (the whole
95% percentile bootstrap interval within ±margin, as the gate reads a fidelity figure) and by the
sequential rule stopping at the first decision (`gate --sequential`); a fair judge (difference 0)
is certified in 76% of studies at the planned number of conversations (80% with 15% more): the
normal-theory plan is slightly optimistic at small n (measured, not assumed)."""

from __future__ import annotations

import numpy as np

from judgekit.stats.power import n_for_power
from judgekit.stats.sequential import sequential_decision

MARGIN = 0.05
STUDIES = 200
#: per-conversation differences of the fair judge: mostly 0, a one-level slip (±0.25) now and then
VALUES = np.array([-0.25, 0.0, 0.25])
PROBS = np.array([0.1, 0.8, 0.1])
SD = float(np.sqrt((PROBS * VALUES**2).sum()))  # 0.1118


def _draw(rng: np.random.Generator, shift: float, n: int) -> np.ndarray:
    return shift + rng.choice(VALUES, size=(STUDIES, n), p=PROBS)


def _fixed_certified(x: np.ndarray, boot: int, rng: np.random.Generator) -> np.ndarray:
    """Per study: the 95% percentile bootstrap interval of the mean lies within ±MARGIN."""
    n = x.shape[1]
    idx = rng.integers(0, n, size=(boot, n))
    means = x[:, idx].mean(axis=2)  # studies × boot
    lo, hi = np.quantile(means, [0.025, 0.975], axis=1)
    return (lo >= -MARGIN) & (hi <= MARGIN)


def test_a_figure_beyond_the_margin_is_rarely_certified_by_the_fixed_rule() -> None:
    rng = np.random.default_rng(1)
    x = _draw(rng, MARGIN + 0.01, 150)
    rate = _fixed_certified(x, 400, rng).mean()
    assert rate <= 0.05, rate


def test_a_figure_beyond_the_margin_is_rarely_certified_stopping_at_the_first_decision() -> None:
    rng = np.random.default_rng(2)
    x = _draw(rng, MARGIN + 0.01, 300)
    passed = 0
    for row in x:
        rounds = [row[k:k + 25] for k in range(0, len(row), 25)]
        passed += sequential_decision(rounds, MARGIN, "within", 0.05, bounds=(-2.0, 2.0)).outcome == "pass"
    assert passed / STUDIES <= 0.05, passed


def test_a_fair_judge_is_certified_at_the_planned_budget() -> None:
    # the plan: units for 80% power of |d| <= 0.05 when d = 0 with σ = 0.1118 (two one-sided tests)
    n = n_for_power(MARGIN, 0.0, kind="difference", direction="within", sd=SD)
    assert isinstance(n, int) and 20 <= n <= 60  # ≈ ((1.96 + 1.28) σ / 0.05)² = 52.5 for β/2 each side
    rng = np.random.default_rng(3)
    # measured (1,000 studies): 76% at the planned n = 53 — the normal-theory plan is a little
    # optimistic for this discrete, small-n figure — and 90% at n = 60 (about 15% more)
    rate = _fixed_certified(_draw(rng, 0.0, n), 400, rng).mean()
    assert rate >= 0.70, rate
    rate = _fixed_certified(_draw(rng, 0.0, int(n * 1.15)), 400, rng).mean()
    assert rate >= 0.80, rate
