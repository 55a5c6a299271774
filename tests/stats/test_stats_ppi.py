"""judgekit.stats.ppi: worked arithmetic, properties, and coverage over simulated studies.

The simulation draws 200 studies with :func:`judgekit.testing.study.make_study` (20 conversations
per tier and model, people's labels on every conversation so the truth is known), then labels
10, 20 or 30% of the conversations (simple random, or stratified by tier with unequal rates) and
checks, for the fair and the lean judge, the 95% coverage of RCE_6, Drift(6), Drift(6 | tier 5),
C(6) and the refusal rate against the figure people would give on all conversations.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest

from judgekit.errors import JudgekitError
from judgekit.stats.bounded import bounded_mean_interval
from judgekit.stats.ppi import DRIFT_RANGE, TurnUnits, ppi_drift, ppi_mean, turn_difference
from judgekit.stats.ppi_pairs import Bootstrap, ppi_concordance
from judgekit.stats.ppi_strata import stratified_ppi_mean
from judgekit.testing.study import LEVELS, TURNS, make_study

# --------------------------------------------------------------------------------------------
# a worked case by hand


def test_worked_case_by_hand() -> None:
    # 4 labelled units, 6 unlabelled, each its own cluster (size 1: the ratio is a plain mean)
    y_l = [1.0, 0.0, 1.0, 1.0]
    f_l = [1.0, 0.0, 0.0, 1.0]
    f_u = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    f_all = f_l + f_u
    res = ppi_mean(f_all, np.arange(10), f_l, y_l, np.arange(4), min_tuning_clusters=2)
    # ȳ_L = .75, f̄_L = .5, f̄_U = 4/6
    # Cov_L(Y, f) = (.25·.5 + (−.75)(−.5) + .25(−.5) + .25·.5) / 3 = .5 / 3 = 1/6
    # s²(f) over all 10 units (6 ones): (6·.4² + 4·.6²) / 9 = 2.4 / 9 = 4/15
    # λ = (1/6) / ((1 + 4/6) · 4/15) = (1/6) / (4/9) = 0.375
    assert res.lam == pytest.approx(0.375)
    # θ = .75 + .375 (4/6 − .5) = .8125
    assert res.estimate == pytest.approx(0.8125)
    # s²_L(Y − λf) = s²(Y) + λ² s²(f_L) − 2λ Cov = .25 + .140625/3 − .75/6 = .171875, but with
    # 4 < 40 labelled clusters of a 0/1 figure it is floored: r = Y − λf − θ(1 − λ)
    # = (.1171875, −.5078125, .4921875, .1171875), Σr² = .527587890625,
    # q̃ = (Σr² + 2)/(4 + 4) = .315948486328125, q̃(1 − q̃) = .2161250403150916 > .171875
    # Var = .2161250403150916/4 + λ² (4/15)/6 = .0540312600787729 + .00625 = .0602812600787729
    var = 0.0602812600787729
    assert res.se == pytest.approx(math.sqrt(var))
    # human-only: s²(Y)/n = .25/4 (its floor, q̃ = (.75 + 2)/8, q̃(1 − q̃) = .2256 < .25, does
    # not bind); effective labels = 4 · .0625 / Var
    assert res.human.estimate == pytest.approx(0.75)
    assert res.human.se == pytest.approx(0.25)
    assert res.effective_clusters == pytest.approx(4 * 0.0625 / var)
    # interval: θ ± t_3 · se, clipped to [0, 1]
    assert res.low == pytest.approx(0.8125 - 3.182446305284263 * math.sqrt(var))
    assert res.high == 1.0
    assert res.judge.estimate == pytest.approx(0.6)
    assert (res.n_clusters, res.big_n_clusters, res.n_units, res.big_n_units) == (4, 10, 4, 10)


def _clustered_data(rng: np.random.Generator, n_clusters: int, sizes: np.ndarray | int):
    sizes = np.broadcast_to(np.asarray(sizes), (n_clusters,))
    clusters = np.repeat(np.arange(n_clusters), sizes)
    u = rng.normal(size=n_clusters)[clusters]
    y = (rng.normal(size=len(clusters)) + u > 0.3).astype(float)
    f = np.where(rng.random(len(clusters)) < 0.8, y, 1 - y)
    return clusters, y, f


@pytest.mark.parametrize("seed", range(5))
def test_lambda_one_is_classic_ppi_and_lambda_zero_is_human_only(seed: int) -> None:
    rng = np.random.default_rng(seed)
    clusters, y, f = _clustered_data(rng, 40, 3)
    lab = np.isin(clusters, rng.choice(40, 12, replace=False))
    one = ppi_mean(f, clusters, f[lab], y[lab], clusters[lab], lam=1.0,
                   bounds=(-math.inf, math.inf))
    assert one.estimate == pytest.approx(f[~lab].mean() + y[lab].mean() - f[lab].mean())
    # unequal cluster sizes: λ = 0 is the labelled units' mean (the ratio estimator)
    clusters, y, f = _clustered_data(rng, 40, rng.integers(1, 7, 40))
    lab = np.isin(clusters, rng.choice(40, 12, replace=False))
    zero = ppi_mean(f, clusters, f[lab], y[lab], clusters[lab], lam=0.0)
    assert zero.estimate == pytest.approx(y[lab].mean())
    assert (zero.estimate, zero.low, zero.high) == pytest.approx(
        (zero.human.estimate, zero.human.low, zero.human.high))
    tuned = ppi_mean(f, clusters, f[lab], y[lab], clusters[lab])
    assert 0.0 <= tuned.lam <= 1.0


def test_power_tuning_never_loses_to_human_only_much() -> None:
    rng = np.random.default_rng(1)
    clusters, y, _ = _clustered_data(rng, 60, 4)
    f = rng.random(len(y))  # a useless judge: λ near 0, no worse than the people alone
    lab = np.isin(clusters, rng.choice(60, 20, replace=False))
    res = ppi_mean(f, clusters, f[lab], y[lab], clusters[lab])
    assert res.lam < 0.5  # chance covariance over 20 clusters; near 0 on average
    assert res.se <= res.human.se * 1.05


def test_not_estimable_and_no_negative_zero() -> None:
    res = ppi_mean([0.2, 0.4, 0.1], [0, 1, 2], [0.2], [0.3], [0])
    assert not res.estimable and "at least 2 labelled clusters" in (res.reason or "")
    assert math.isnan(res.estimate)
    same = ppi_mean([0.5] * 6, range(6), [0.5, 0.5], [0.5, 0.5], [0, 1])
    assert not same.estimable and "no variation" in (same.reason or "")
    # values that vary, labels that agree: a bounded figure's floor gives a (wide) interval,
    # an unbounded figure has none and is not estimable
    f = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    floored = ppi_mean(f, range(6), [0.0, 1.0], [0.0, 1.0], [0, 1])
    assert floored.estimable and (floored.low, floored.high) == (0.0, 1.0)
    unbounded = ppi_mean(f, range(6), [0.0, 1.0], [0.0, 1.0], [0, 1],
                         bounds=(-math.inf, math.inf), lam=1.0)
    # λ = 1, residuals 0: Var = λ² s²(f over all clusters) / N_unlabelled
    assert unbounded.se == pytest.approx(math.sqrt(np.var(f, ddof=1) / 4))
    # a Drift of exactly zero prints 0.0, not -0.0
    res = ppi_mean([0.0, 0.0, 0.0, 0.0], range(4), [0.0, -0.0, 0.0], [-0.0, 0.1, -0.1],
                   [0, 1, 2], bounds=DRIFT_RANGE, lam=0.0)
    assert math.copysign(1.0, res.estimate) == 1.0


def test_interval_stays_in_range() -> None:
    # a judge saying 1 nearly everywhere, people agreeing: the interval stops at 1
    f = [1.0] * 18 + [0.0, 0.0]
    res = ppi_mean(f, range(20), [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0], range(4))
    assert res.estimable and res.high == 1.0
    assert 0.0 <= res.low <= res.estimate <= res.high <= 1.0


def test_turn_difference_and_drift() -> None:
    clusters = np.repeat([0, 1, 2], 3)
    turns = np.tile([1, 2, 3], 3)
    values = np.array([0.0, 0.25, 0.5, 0.25, 0.25, 0.25, 0.5, 0.25, 0.0])
    ids, d = turn_difference(values, clusters, turns, 3)
    assert ids.tolist() == [0, 1, 2]
    assert d.tolist() == [0.5, 0.0, -0.5]
    h = np.zeros(9)
    units = TurnUnits(h, values, clusters, turns, y=values)
    res = ppi_drift(units, units, t=3)
    assert res.bounds == DRIFT_RANGE and res.estimate == 0.0 and res.low < 0 < res.high


def test_stratified_refuses_an_empty_or_single_stratum() -> None:
    clusters = np.arange(12)
    strata = np.repeat(["a", "b", "c"], 4)
    f = np.linspace(0, 1, 12)
    with pytest.raises(JudgekitError, match="stratum 'c' has 0 labelled clusters"):
        stratified_ppi_mean(f, clusters, strata, f[:6], f[:6], clusters[:6])
    with pytest.raises(JudgekitError, match="stratum 'c' has 1 labelled cluster of 4"):
        stratified_ppi_mean(f, clusters, strata, f[:9], f[:9], clusters[:9])
    with pytest.raises(JudgekitError, match="concordance|stratum"):
        ppi_concordance(f, f, np.where(clusters < 9, f, np.nan), clusters, strata=strata)


def test_stratified_with_equal_rates_matches_weighted_strata() -> None:
    rng = np.random.default_rng(3)
    clusters, y, f = _clustered_data(rng, 60, 2)
    strata = (clusters // 20).astype(int)
    lab = np.isin(clusters, np.concatenate([rng.choice(np.arange(k * 20, k * 20 + 20), 6,
                                                       replace=False) for k in range(3)]))
    res = stratified_ppi_mean(f, clusters, strata, f[lab], y[lab], clusters[lab])
    # 6 labelled clusters per stratum (< 10): each stratum takes the λ pooled over the strata
    lams = {p.lam for p in res.strata.values()}
    assert len(lams) == 1
    lam = lams.pop()
    per = [ppi_mean(f[strata == k], clusters[strata == k], f[lab & (strata == k)],
                    y[lab & (strata == k)], clusters[lab & (strata == k)], lam=lam,
                    bounds=(-math.inf, math.inf))  # a stratum's variance is not floored
           for k in range(3)]
    assert res.estimate == pytest.approx(np.mean([p.estimate for p in per]))
    assert res.se == pytest.approx(math.sqrt(sum(p.se**2 for p in per)) / 3)
    assert res.human.estimate == pytest.approx(np.mean([p.human.estimate for p in per]))
    assert res.inclusion == {0: 0.3, 1: 0.3, 2: 0.3}


def _brute_c(h: np.ndarray, r: np.ndarray, w: np.ndarray | None = None) -> float:
    w = np.ones(len(h)) if w is None else w
    num = den = 0.0
    for i, j in product(range(len(h)), repeat=2):
        if h[i] > h[j]:
            num += w[i] * w[j] * (r[i] >= r[j])
            den += w[i] * w[j]
    return num / den


def test_concordance_matches_brute_force() -> None:
    rng = np.random.default_rng(4)
    n = 40
    h = rng.integers(0, 5, n) / 4
    y = np.clip(np.round(h * 4 + rng.normal(0, 0.8, n)), 0, 4) / 4
    f = np.where(rng.random(n) < 0.8, y, np.clip(y - 0.25, 0, 1))
    lab = rng.random(n) < 0.4
    ylab = np.where(lab, y, np.nan)
    zero = ppi_concordance(h, f, ylab, np.arange(n), lam=0.0, bootstrap=Bootstrap(200))
    assert zero.estimate == pytest.approx(_brute_c(h[lab], y[lab]))
    one = ppi_concordance(h, f, ylab, np.arange(n), lam=1.0, bootstrap=Bootstrap(200))
    assert one.estimate == pytest.approx(
        _brute_c(h, f) + _brute_c(h[lab], y[lab]) - _brute_c(h[lab], f[lab]))
    assert one.judge.estimate == pytest.approx(_brute_c(h, f))
    tuned = ppi_concordance(h, f, ylab, np.arange(n), bootstrap=Bootstrap(200))
    assert 0.0 <= tuned.lam <= 1.0 and 0.0 <= tuned.low <= tuned.high <= 1.0


def test_bounded_mean_interval() -> None:
    three = bounded_mean_interval([0.2, 0.3, 0.25])
    assert 0.0 <= three.low <= 0.25 <= three.high <= 1.0
    assert three.width > 0.5  # three seeds say little, and the interval says so
    assert not bounded_mean_interval([0.4]).estimable
    assert not bounded_mean_interval([0.4, 1.2]).estimable
    many = bounded_mean_interval(np.full(400, 0.3) + np.linspace(-0.01, 0.01, 400))
    assert many.width < 0.1
    # coverage over skewed draws in [0, 1] (finite-sample guarantee: at least 95%)
    rng = np.random.default_rng(5)
    draws = rng.beta(0.3, 3.0, (2000, 5))
    hits = [bounded_mean_interval(d).low <= 0.3 / 3.3 <= bounded_mean_interval(d).high
            for d in draws]
    assert np.mean(hits) >= 0.95


# --------------------------------------------------------------------------------------------
# simulation: 200 studies

N_STUDIES = 200
SHARES = (0.1, 0.2, 0.3)
#: stratified design: labelling rate per stratum (0 = look-alikes, 1..5 = tiers) × the share
STRATUM_RATE = {0: 1.0, 1: 0.6, 2: 0.6, 3: 1.0, 4: 1.4, 5: 1.4}
FIGURES = ("RCE_6", "drift_6", "drift_6_tier5", "C_6", "rate")
JUDGES = ("fair", "lean")
DESIGNS = ("random", "stratified")
CODE = {label: i for i, label in enumerate(LEVELS)}


def _study(seed: int) -> dict[str, np.ndarray]:
    items, ratings = make_study(seed=seed, human_share=1.0)
    # with people on every item the ratings come as (reference, fair, lean) per item, in order
    assert (ratings["rater_id"].to_numpy().reshape(-1, 3)[0] ==
            ["adjudicated", "judge-fair", "judge-lean"]).all()
    r = ratings["label"].map(CODE).to_numpy().reshape(-1, 3) / 4.0
    n_conv = len(items) // TURNS
    shape = (n_conv, TURNS)
    assert (items["turn"].to_numpy().reshape(shape) == np.arange(1, TURNS + 1)).all()
    tier = items["severity"].to_numpy().reshape(shape)[:, 0]
    look = items["benign_lookalike"].to_numpy().reshape(shape)[:, 0].astype(bool)
    return {"y": r[:, 0].reshape(shape), "fair": r[:, 1].reshape(shape),
            "lean": r[:, 2].reshape(shape), "h": ((tier - 1) / 4.0)[:, None] * np.ones(shape),
            "tier": tier, "look": look, "stratum": np.where(look, 0, tier)}


def _label(s: dict[str, np.ndarray], design: str, share: float,
           rng: np.random.Generator) -> np.ndarray:
    n_conv = len(s["tier"])
    lab = np.zeros(n_conv, dtype=bool)
    if design == "random":
        lab[rng.choice(n_conv, round(share * n_conv), replace=False)] = True
        return lab
    for k, rate in STRATUM_RATE.items():
        idx = np.flatnonzero(s["stratum"] == k)
        lab[rng.choice(idx, max(2, round(rate * share * len(idx))), replace=False)] = True
    return lab


def _figures(s: dict[str, np.ndarray], judge: str, design: str, lab: np.ndarray
             ) -> dict[str, tuple[float, float, float, float, float, float, float]]:
    """figure -> (truth, PPI estimate, low, high, human low, human high, judge's raw figure)"""
    y, f, h = s["y"], s[judge], s["h"]
    conv = np.arange(len(lab))
    ok = ~s["look"]
    strat = design == "stratified"
    out = {}

    def mean_fig(name: str, fu: np.ndarray, yu: np.ndarray, cu: np.ndarray, su: np.ndarray,
                 labu: np.ndarray, bounds: tuple[float, float], stratified: bool) -> None:
        if stratified:
            res = stratified_ppi_mean(fu, cu, su, fu[labu], yu[labu], cu[labu], bounds=bounds)
        else:
            res = ppi_mean(fu, cu, fu[labu], yu[labu], cu[labu], bounds=bounds)  # type: ignore[assignment]
        out[name] = (float(yu.mean()), res.estimate, res.low, res.high, res.human.low,
                     res.human.high, res.judge.estimate)

    ef, ey = np.abs(f - h), np.abs(y - h)
    mean_fig("RCE_6", ef[ok, -1], ey[ok, -1], conv[ok], s["stratum"][ok], lab[ok], (0.0, 1.0),
             strat)
    df, dy = ef[:, -1] - ef[:, 0], ey[:, -1] - ey[:, 0]
    mean_fig("drift_6", df[ok], dy[ok], conv[ok], s["stratum"][ok], lab[ok], DRIFT_RANGE, strat)
    t5 = s["tier"] == 5
    mean_fig("drift_6_tier5", df[t5], dy[t5], conv[t5], s["stratum"][t5], lab[t5], DRIFT_RANGE,
             False)
    # refusal rate: R ≥ .75 (deflection or hard refusal) over every unit, look-alikes included
    units = np.repeat(conv, TURNS)
    labu = np.repeat(lab, TURNS)
    mean_fig("rate", (f >= 0.75).ravel().astype(float), (y >= 0.75).ravel().astype(float), units,
             np.repeat(s["stratum"], TURNS), labu, (0.0, 1.0), strat)
    c = ppi_concordance(h[ok, -1], f[ok, -1], np.where(lab[ok], y[ok, -1], np.nan), conv[ok],
                        strata=s["stratum"][ok] if strat else None,
                        bootstrap=Bootstrap(400, 1))
    hh, yy = h[ok, -1], y[ok, -1]
    conc = (hh[:, None] > hh[None, :])
    truth = float(((yy[:, None] >= yy[None, :]) & conc).sum() / conc.sum())
    out["C_6"] = (truth, c.estimate, c.low, c.high, c.human.low, c.human.high, c.judge.estimate)
    return out


@pytest.fixture(scope="module")
def simulation() -> dict[tuple[str, str, str], np.ndarray]:
    rows: dict[tuple[str, str, str], list[tuple[float, ...]]] = {}
    for i in range(N_STUDIES):
        s = _study(10_000 + i)
        rng = np.random.default_rng(i)
        share = SHARES[i % len(SHARES)]
        for design in DESIGNS:
            lab = _label(s, design, share, rng)
            for judge in JUDGES:
                for name, row in _figures(s, judge, design, lab).items():
                    rows.setdefault((name, judge, design), []).append(row)
    return {k: np.array(v) for k, v in rows.items()}


def _summary(a: np.ndarray) -> dict[str, float]:
    """Coverage counts a "not estimable" as a miss; bias and widths over the estimable runs
    (width comparisons where both intervals exist)."""
    truth, est, lo, hi, hlo, hhi, raw = a.T
    ok = np.isfinite(est)
    both = ok & np.isfinite(hlo)
    return {"coverage": float(np.mean((lo <= truth) & (truth <= hi))),
            "bias": float(np.mean(est[ok] - truth[ok])), "raw_bias": float(np.mean(raw - truth)),
            "width": float(np.mean((hi - lo)[both])),
            "human_width": float(np.mean((hhi - hlo)[both])),
            "estimable": float(np.mean(ok)), "human_estimable": float(np.mean(np.isfinite(hlo)))}


@pytest.mark.slow
def test_simulation_coverage(simulation: dict[tuple[str, str, str], np.ndarray]) -> None:
    report = {k: _summary(v) for k, v in simulation.items()}
    for k, v in sorted(report.items()):
        print(k, {m: round(x, 4) for m, x in v.items()})
    for k, v in report.items():
        assert v["estimable"] >= 0.99, (k, v)
        assert v["coverage"] >= 0.93, (k, v)


@pytest.mark.slow
def test_simulation_bias_of_lean_judge(simulation: dict[tuple[str, str, str], np.ndarray]
                                       ) -> None:
    for name in FIGURES:
        pooled = np.concatenate([simulation[(name, "lean", d)] for d in DESIGNS])
        v = _summary(pooled)
        assert abs(v["bias"]) < abs(v["raw_bias"]) / 3, (name, v)


@pytest.mark.slow
def test_simulation_fair_judge_narrows_the_interval(
        simulation: dict[tuple[str, str, str], np.ndarray]) -> None:
    for name, design in product(FIGURES, DESIGNS):
        v = _summary(simulation[(name, "fair", design)])
        assert v["width"] < v["human_width"], (name, design, v)
