"""Several judges of a panel in one active-design estimate (MultiPPI): its formula on a small
case, the weight it gives an informative judge, and its coverage."""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.stats.active import ActiveDesign, active_ppi_clusters, inclusion_probabilities
from judgekit.stats.active_multi import active_multi_ppi


def test_two_judges_with_fixed_weights_follow_the_formula() -> None:
    # θ = Σ[Σλ f + (y − Σλ f) ξ/π] / Σ m (Σλ = 1): c0 .5 + (0 − .5)·2, c1 0 + .25·4, c2 1, c3 .5
    d = ActiveDesign.one_round([0.5, 0.25, 0.5, 0.75], [True, True, False, False])
    res = active_multi_ppi([0.0, 0.25, np.nan, np.nan], [[1.0, 0.0, 1.0, 0.0],
                                                         [0.0, 0.0, 1.0, 1.0]],
                           np.ones(4), d, lams=[0.5, 0.5])
    assert res.estimate == pytest.approx((-0.5 + 1.0 + 1.0 + 0.5) / 4)


def _study(rng: np.random.Generator, n_all: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = (rng.random(n_all) < 0.35).astype(float)
    # judge 1 leans to refusal on 25% of the compliant items; judge 2 misses 15% of refusals
    f1 = np.where((y == 0) & (rng.random(n_all) < 0.25), 1.0, y)
    f2 = np.where((y == 1) & (rng.random(n_all) < 0.15), 0.0, y)
    return y, f1, f2


def test_an_exact_judge_takes_the_weight_and_narrows_the_interval() -> None:
    rng = np.random.default_rng(3)
    y, f1, _ = _study(rng, 2000)
    pi = inclusion_probabilities(np.where(f1 == 1, 0.3, 0.05), 200.0)
    lab = rng.random(2000) < pi
    d = ActiveDesign.one_round(pi, lab)
    sy = np.where(lab, y, np.nan)
    both = active_multi_ppi(sy, [f1, y], np.ones(2000), d)
    alone = active_ppi_clusters(sy, f1, np.ones(2000), d)
    assert both.lams[1] == pytest.approx(1.0, abs=0.05) and abs(both.lams[0]) < 0.05
    assert both.width < alone.width
    assert both.estimate == pytest.approx(y.mean(), abs=0.005)


@pytest.mark.slow
def test_two_judge_intervals_cover_over_300_studies_one_round_and_two() -> None:
    hits: dict[int, list[bool]] = {1: [], 2: []}
    for s in range(300):
        rng = np.random.default_rng(10_000 + s)
        y, f1, f2 = _study(rng, 600)
        err = np.where(f1 != f2, 1.0, 0.1)  # the panel's disagreement: the predicted error
        for rounds in (1, 2):
            probs = np.ones((rounds, 600))
            rnd = np.full(600, -1)
            for r in range(rounds):
                free = rnd < 0
                p = inclusion_probabilities(err[free], 60.0 / rounds)
                probs[r, free] = p
                rnd[np.flatnonzero(free)[rng.random(free.sum()) < p]] = r
            d = ActiveDesign(probs, rnd, np.full(rounds, 60.0 / rounds))
            res = active_multi_ppi(np.where(rnd >= 0, y, np.nan), [f1, f2], np.ones(600), d)
            # the figure of a new study from the same generator: 0.35
            hits[rounds].append(bool(res.low <= 0.35 <= res.high))
    cover = {k: float(np.mean(v)) for k, v in hits.items()}
    assert min(cover.values()) >= 0.93, cover
