"""The active-design PPI++ estimator: its probabilities, its formula on small cases, and its
coverage over simulated studies with fair and biased judges, one round and two."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgekit.errors import JudgekitError
from judgekit.stats.active import (
    ActiveDesign,
    active_ppi_clusters,
    active_ppi_mean,
    inclusion_probabilities,
)


def test_probabilities_meet_the_budget_the_floor_and_one() -> None:
    e = np.array([0.0, 0.01, 0.04, 0.25, 1.0, 1.0, 1.0, 1.0])
    pi = inclusion_probabilities(e, 4.0, floor=0.5)
    assert pi.sum() == pytest.approx(4.0)
    assert pi.min() == pytest.approx(0.5 * 4 / 8) and pi.max() <= 1.0
    assert np.all(np.diff(pi) >= -1e-12)  # more predicted error, never a lower probability
    # sqrt rule: between two unclipped units the ratio is sqrt of the errors' ratio
    mid = (pi > pi.min() + 1e-9) & (pi < 1.0 - 1e-9)
    if mid.sum() >= 2:
        a, b = np.flatnonzero(mid)[:2]
        assert pi[b] / pi[a] == pytest.approx(math.sqrt(e[b] / e[a]))
    assert np.allclose(inclusion_probabilities(e, 2.0, floor=1.0), 0.25)
    with pytest.raises(JudgekitError, match="at most the 8 units"):
        inclusion_probabilities(e, 9.0)


def test_probabilities_meet_the_budget_when_most_predicted_errors_are_zero() -> None:
    # one unit with an error, nine without: the floor (0.2 · 5/10 = 0.1) would leave the sum at
    # 1 + 9 · 0.1 = 1.9; the nine error-free units share the rest of the budget equally instead
    e = np.array([0.0] * 9 + [0.3])
    pi = inclusion_probabilities(e, 5.0)
    assert pi.sum() == pytest.approx(5.0)
    assert pi[9] == pytest.approx(1.0)
    assert np.allclose(pi[:9], 4.0 / 9.0)
    # the linear rule, and a unit of error between: the zero-error units still fill the budget
    e2 = np.array([0.0, 0.0, 0.0, 0.0, 1e-6, 1.0])
    for rule in ("sqrt", "linear"):
        p2 = inclusion_probabilities(e2, 4.0, rule=rule, floor=0.1)
        assert p2.sum() == pytest.approx(4.0)
        assert np.all(p2 <= 1.0) and np.all(p2 >= 0.1 * 4.0 / 6.0 - 1e-12)
        assert p2[5] == pytest.approx(1.0) and p2[4] >= p2[0] - 1e-12


def test_one_round_estimate_is_the_weighted_formula() -> None:
    # 4 clusters of one unit; c0 (π = .5) and c1 (π = .25) labelled; λ = 1 (fewer than 10 labelled)
    sy = np.array([0.0, 0.25, np.nan, np.nan])
    sf = np.array([1.0, 0.0, 1.0, 0.0])
    d = ActiveDesign.one_round([0.5, 0.25, 0.5, 0.75], [True, True, False, False])
    r = active_ppi_clusters(sy, sf, np.ones(4), d)
    assert r.lam == 1.0 and r.n_clusters == 2
    assert r.estimate == pytest.approx((1 - 1 * 2 + 0 + 0.25 * 4 + 1 + 0) / 4)
    # λ = 0: the Hájek ratio of the labelled clusters, Σ y/π / Σ 1/π
    h = active_ppi_clusters(sy, sf, np.ones(4), d, lam=0.0)
    assert h.estimate == pytest.approx((0 * 2 + 0.25 * 4) / (2 + 4))


def test_units_are_summed_into_their_clusters() -> None:
    # 3 clusters of 2, 1 and 2 units; cluster "b" and "c" labelled
    f = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    y = np.array([np.nan, np.nan, 0.0, 1.0, 1.0])
    cl = np.array(["a", "a", "b", "c", "c"])
    d = ActiveDesign.one_round([0.5, 0.4, 0.8], [False, True, True])
    by_unit = active_ppi_mean(f, y, cl, ["a", "b", "c"], d, lam=0.5)
    by_cluster = active_ppi_clusters([np.nan, 0.0, 2.0], [1.0, 1.0, 1.0], [2.0, 1.0, 2.0], d,
                                     lam=0.5)
    assert by_unit.estimate == pytest.approx(by_cluster.estimate)
    assert by_unit.n_units == 3 and by_unit.n_clusters == 2
    with pytest.raises(JudgekitError, match="not among the design's clusters"):
        active_ppi_mean(f, y, np.array(["a", "a", "b", "c", "z"]), ["a", "b", "c"], d)


def test_one_labelled_cluster_is_not_estimable() -> None:
    d = ActiveDesign.one_round([0.5] * 3, [True, False, False])
    r = active_ppi_clusters([1.0, 0, 0], [1.0, 0, 1], np.ones(3), d)
    assert not r.estimable and "at least 2" in str(r.reason)


def _study(rng: np.random.Generator, n_clusters: int = 300) -> dict[str, np.ndarray]:
    """Per cluster (2–4 units): the people's sums of a rate (level ≥ 3) and of R (level / 4),
    those of a fair and of a biased judge, the sizes and the judges' confidence. Both judges
    err more where they are less confident; the biased one also calls responses less
    restrictive than they are."""
    m = rng.integers(2, 5, n_clusters).astype(float)
    units = int(m.sum())
    cl = np.repeat(np.arange(n_clusters), m.astype(int))
    conf_c = rng.beta(5, 1.5, n_clusters)  # per conversation
    level = np.clip(np.round(rng.normal(rng.uniform(0, 4, n_clusters)[cl], 0.8)), 0, 4)
    p_err = 0.45 * (1 - conf_c[cl]) ** 1.5 + 0.01

    def sums(x: np.ndarray) -> np.ndarray:
        return np.bincount(cl, weights=x, minlength=n_clusters)

    out = {"m": m, "conf": conf_c, "y_rate": sums(level >= 3), "y_R": sums(level / 4)}
    for judge in ("fair", "biased"):
        slip = rng.random(units) < p_err
        judged = np.clip(level + np.where(slip, rng.choice([-1, 1], units), 0), 0, 4)
        if judge == "biased":
            judged = np.clip(judged - (rng.random(units) < 0.25 * (1 - conf_c[cl])), 0, 4)
        out[f"{judge}_rate"], out[f"{judge}_R"] = sums(judged >= 3), sums(judged / 4)
    return out


def _learned_error(conf: np.ndarray, labelled: np.ndarray, err: np.ndarray, w: np.ndarray
                   ) -> np.ndarray:
    """Round 2's predicted error: the weighted error of the labelled clusters in quartiles of
    confidence, shrunk toward the overall rate (what :func:`judgekit.annotation.active.
    learned_error` does, on arrays)."""
    bins = np.searchsorted(np.quantile(conf, [0.25, 0.5, 0.75]), conf)
    overall = float((err * w)[labelled].sum() / w[labelled].sum())
    out = np.empty_like(conf)
    for b in range(4):
        sel = labelled & (bins == b)
        rate = (err * w)[sel].sum() / w[sel].sum() if sel.any() else overall
        out[bins == b] = (rate * sel.sum() + 5 * overall) / (sel.sum() + 5)
    return np.maximum(out, 0.02)


def _draw(rng: np.random.Generator, conf: np.ndarray, sy: np.ndarray, sf: np.ndarray,
          m: np.ndarray, rounds: int, budget: float) -> ActiveDesign:
    n = len(conf)
    probs = np.ones((rounds, n))
    round_of = np.full(n, -1)
    err = np.maximum(1 - conf, 0.02)
    for r in range(rounds):
        free = round_of < 0
        if r > 0:  # predicted error from what the earlier rounds revealed
            lab = round_of >= 0
            w = np.where(lab, 1 / probs[np.maximum(round_of, 0), np.arange(n)], 0.0)
            err = _learned_error(conf, lab, np.abs(sy - sf) / m, w)
        p = inclusion_probabilities(err[free], budget / rounds)
        probs[r, free] = p
        hit = np.zeros(n, dtype=bool)
        hit[np.flatnonzero(free)[rng.random(free.sum()) < p]] = True
        round_of[hit] = r
    return ActiveDesign(probs, round_of, np.full(rounds, budget / rounds))


@pytest.mark.slow
def test_active_intervals_cover_over_200_studies_fair_and_biased_one_round_and_two() -> None:
    """200 studies of 300 conversations, each rated by a fair and a biased judge; 45 expected
    labels (15%), drawn in one round by confidence or in two (the second from the first's
    labels). The interval is for the superpopulation figure, here the mean of 400,000
    conversations from the same generator; it is conservative for the 300 at hand."""
    big = _study(np.random.default_rng(0), n_clusters=400_000)
    truth = {fig: float(big[f"y_{fig}"].sum() / big["m"].sum()) for fig in ("rate", "R")}
    rng = np.random.default_rng(20_261_207)
    hits: dict[tuple[str, str, int, str], list[bool]] = {}
    for _ in range(200):
        s = _study(rng)
        for judge in ("fair", "biased"):
            for rounds in (1, 2):
                design = _draw(rng, s["conf"], s["y_R"], s[f"{judge}_R"], s["m"], rounds, 45.0)
                for fig in ("rate", "R"):
                    sy = np.where(design.round_of >= 0, s[f"y_{fig}"], np.nan)
                    res = active_ppi_clusters(sy, s[f"{judge}_{fig}"], s["m"], design)
                    hits.setdefault((fig, judge, rounds, "superpopulation"), []).append(
                        bool(res.estimable and res.low <= truth[fig] <= res.high))
                    finite = float(s[f"y_{fig}"].sum() / s["m"].sum())
                    hits.setdefault((fig, judge, rounds, "these clusters"), []).append(
                        bool(res.estimable and res.low <= finite <= res.high))
    coverage = {k: float(np.mean(v)) for k, v in hits.items()}
    assert all(len(v) == 200 for v in hits.values())
    assert min(coverage.values()) >= 0.93, coverage


def test_labels_for_a_variance_match_the_closed_forms() -> None:
    from judgekit.stats.active import labels_for_variance

    # uniform, e the same everywhere: (v + e (N/n − 1)) / N ≤ T  ⇔  n ≥ e N / (T N − v + e)
    n_all, v, e, target = 1000, 0.25, 0.1, 0.25 / 1000 + 0.1 / 150
    want = e * n_all / (target * n_all - v + e)
    got = labels_for_variance(np.full(n_all, e), v, target, active=False)
    assert got == math.ceil(want - 1e-9) or got == math.ceil(want - 1e-9) + 1
    # active, π = n √e_i / Σ√e_j unclipped (half the units e = .04, half .16: π ratio 1:2):
    # mean e (1/π − 1) = (Σ√e)² / (n N) − mean e, so n = (Σ√e)² / N / (T N − v + mean e)
    ee = np.repeat([0.04, 0.16], n_all // 2)
    want = np.sqrt(ee).sum() ** 2 / n_all / (target * n_all - v + ee.mean())
    got = labels_for_variance(ee, v, target, active=True)
    assert got is not None and abs(got - want) <= 1.5
    uni = labels_for_variance(ee, v, target, active=False)
    assert uni is not None and got < uni
    # a variance below labelling every unit's is not reachable
    assert labels_for_variance(ee, v, v / n_all / 2, active=True) is None


def test_uniform_labels_at_the_same_width_are_the_labels_under_a_uniform_design() -> None:
    rng = np.random.default_rng(5)
    n_all = 4000
    hard = rng.random(n_all) < 0.2  # the judge errs on 30% of the hard items, 2% of the rest
    y = (rng.random(n_all) < 0.4).astype(float)
    f = np.where(rng.random(n_all) < np.where(hard, 0.3, 0.02), 1.0 - y, y)
    m = np.ones(n_all)
    ratios, active_gain = [], []
    for rep in range(20):
        r = np.random.default_rng(100 + rep)
        pi = np.full(n_all, 400 / n_all)
        lab = r.random(n_all) < pi
        res = active_ppi_clusters(np.where(lab, y, np.nan), f, m, ActiveDesign.one_round(pi, lab))
        ratios.append(res.uniform_labels / lab.sum())
        pa = inclusion_probabilities(np.where(hard, 0.3, 0.02), 400.0)
        la = r.random(n_all) < pa
        ra = active_ppi_clusters(np.where(la, y, np.nan), f, m, ActiveDesign.one_round(pa, la))
        active_gain.append(ra.uniform_labels / la.sum())
    # uniform: the labels it used, up to the noise of the variance estimates
    assert 0.9 < float(np.mean(ratios)) < 1.1
    # π ∝ √error on the hard items: uniform sampling would need more labels for that width
    assert float(np.median(active_gain)) > 1.2


def test_uniform_labels_give_the_uniform_design_its_own_best_lambda() -> None:
    # the judge is sure and right on most items, unsure and often wrong on a fifth: the active
    # design's tuned λ is near 1, a uniform design's best λ lower. The uniform labels at the same
    # width are those of uniform PPI++ tuned for itself: at most the fewest over a grid of λ of
    # (E r²) / (Var − (E z² − E r²)/N), r = z − λw (the superpopulation variance of uniform PPI)
    rng = np.random.default_rng(11)
    n_all = 2000
    unsure = rng.random(n_all) < 0.2
    f = (rng.random(n_all) < 0.4).astype(float)
    y = np.where(rng.random(n_all) < np.where(unsure, 0.45, 0.01), 1.0 - f, f)
    pi = inclusion_probabilities(np.where(unsure, 0.5, 0.01), 150.0)
    lab = rng.random(n_all) < pi
    res = active_ppi_clusters(np.where(lab, y, np.nan), f, np.ones(n_all),
                              ActiveDesign.one_round(pi, lab))
    z, w, h = (y - res.estimate)[lab], (f - res.estimate)[lab], 1.0 / pi[lab]
    s2z = float((h * z * z).sum() / h.sum())
    # the width's variance in the estimating equation's scale: se² D², D = mean(λ + (1 − λ)ξ/π)
    var = res.se ** 2 * float(np.mean(res.lam + (1.0 - res.lam) * lab / pi)) ** 2
    best = min(float((h * (z - g * w) ** 2).sum() / h.sum())
               / (var - (s2z - float((h * (z - g * w) ** 2).sum() / h.sum())) / n_all)
               for g in np.linspace(0.0, 1.0, 1001))
    assert res.uniform_labels <= best * 1.001
