"""Judge-error-corrected estimates (judgekit.analysis.correction.rate / corrected_multiclass).

Exact figures are worked out by hand in the tests; the intervals are checked by simulation over
synthetic data sets with a known prevalence and a known judge error (fixed seeds).
"""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.analysis.correction.multiclass import corrected_shares
from judgekit.analysis.correction.rate import Floors, UnreliableCorrection, corrected_rate

# 100 items; the judge says 1 on 30. 40 labelled: judge 1 on 15 (reference 1 on 10 of them),
# judge 0 on 25 (reference 1 on 2 of them).
ALL = [1] * 30 + [0] * 70
JL = [1] * 15 + [0] * 25
RL = [1] * 10 + [0] * 5 + [1] * 2 + [0] * 23


def test_rogan_gladen_exact_figures() -> None:
    r = corrected_rate(ALL, judge_labelled=JL, reference_labelled=RL, positive=1)
    se, sp = 10 / 12, 23 / 28
    assert r.sensitivity == pytest.approx(se)
    assert r.specificity == pytest.approx(sp)
    assert r.raw == pytest.approx(0.30)
    assert r.corrected == pytest.approx((0.30 + sp - 1) / (se + sp - 1))  # 0.18545...
    assert r.corrected == pytest.approx(0.185454545, abs=1e-8)
    assert (r.n_labelled, r.n_total, r.n_labelled_positive) == (40, 100, 12)
    assert r.method == "rogan_gladen" and r.level == 0.95
    assert r.ci_low <= r.corrected <= r.ci_high and r.ci_high - r.ci_low > 0.05
    # the raw interval is Wilson's on 30 / 100 (Newcombe 1998 method 3 gives 0.2189-0.3958)
    assert (round(r.raw_ci_low, 4), round(r.raw_ci_high, 4)) == (0.2189, 0.3958)
    # deterministic for a seed
    assert r == corrected_rate(ALL, judge_labelled=JL, reference_labelled=RL, positive=1)


def test_rogan_gladen_is_clipped_to_the_unit_interval() -> None:
    # the judge says 1 on 15 of 100, below its false-positive rate 1 − Sp = 5/28: RG < 0 → 0
    all_ = [1] * 15 + [0] * 85
    r = corrected_rate(all_, judge_labelled=JL, reference_labelled=RL, positive=1)
    assert (0.15 + 23 / 28 - 1) < 0 and r.corrected == 0.0


def test_ppi_exact_figures() -> None:
    r = corrected_rate(ALL, judge_labelled=JL, reference_labelled=RL, positive=1, method="ppi")
    n, n_u = 40, 60
    ybar, fbar_l = 12 / 40, 15 / 40
    fbar_u = (30 - 15) / 60
    cov = 10 / 40 - fbar_l * ybar
    var_f = 0.30 - 0.30**2  # over all 100 items
    lam = cov / ((1 + n / n_u) * var_f)
    assert r.lam == pytest.approx(lam)
    assert r.corrected == pytest.approx(ybar + lam * (fbar_u - fbar_l))
    assert r.sensitivity == pytest.approx(10 / 12)
    assert r.ci_low <= r.corrected <= r.ci_high


def test_ppi_with_a_useless_judge_is_the_labelled_rate() -> None:
    rng = np.random.default_rng(3)
    f = rng.integers(0, 2, 400)
    y_l = np.r_[np.ones(30), np.zeros(70)]
    f_l = np.r_[f[:15], f[15:30], f[30:65], f[65:100]]  # independent of y
    r = corrected_rate(f.tolist(), judge_labelled=f_l.tolist(), reference_labelled=y_l.tolist(),
                       positive=1, method="ppi", floors=Floors(min_labelled_class=10))
    assert r.lam is not None and r.lam < 0.15
    assert abs(r.corrected - 0.30) < 0.02


def test_ppi_mean_of_values() -> None:
    f_all = [0.0, 0.25, 0.5, 0.75, 1.0] * 20
    f_l = [0.0, 0.25, 0.5, 0.75, 1.0] * 4
    y_l = [0.0, 0.5, 0.5, 1.0, 1.0] * 4  # the judge reads R lower than the reference
    r = corrected_rate(f_all, judge_labelled=f_l, reference_labelled=y_l, positive=None,
                       method="ppi")
    # f̄_U = f̄_L = 0.5, so the estimate is Ȳ_L = 0.6 whatever λ is
    assert r.raw == pytest.approx(0.5)
    assert r.corrected == pytest.approx(0.6)
    assert r.positive is None and r.sensitivity is None
    with pytest.raises(Exception, match="only be corrected with method='ppi'"):
        corrected_rate(f_all, judge_labelled=f_l, reference_labelled=y_l, positive=None)


def test_refusals_are_one_sentence() -> None:
    # Se = Sp = 0.55: J = 0.1
    jl = [1] * 11 + [0] * 9 + [1] * 9 + [0] * 11
    rl = [1] * 20 + [0] * 20
    with pytest.raises(UnreliableCorrection, match=r"sensitivity \+ specificity − 1 for 1 is 0\.100"):
        corrected_rate([*jl, 1, 0], judge_labelled=jl, reference_labelled=rl, positive=1)
    # PPI stays valid with a weak judge
    corrected_rate([*jl, 1, 0], judge_labelled=jl, reference_labelled=rl, positive=1, method="ppi")
    with pytest.raises(UnreliableCorrection, match="Only 3 of the 40 labelled items are 1 by the "
                                                   "reference"):
        corrected_rate([1] * 50, judge_labelled=[1] * 40, reference_labelled=[1] * 3 + [0] * 37,
                       positive=1, method="ppi")
    with pytest.raises(UnreliableCorrection, match="No item has both"):
        corrected_rate([1, 0], judge_labelled=[], reference_labelled=[], positive=1)
    with pytest.raises(Exception, match="judge_all must hold the judge's labels on all items"):
        corrected_rate([0] * 50, judge_labelled=JL, reference_labelled=RL, positive=1)
    for e in (UnreliableCorrection,):
        try:
            corrected_rate([1] * 50, judge_labelled=[1] * 40,
                           reference_labelled=[1] * 3 + [0] * 37, positive=1)
        except e as exc:
            assert str(exc).count(". ") == 0 and str(exc).endswith(".")


# --------------------------------------------------------------------------- simulation
#: (prevalence, sensitivity, specificity): a judge that over-calls, one that under-calls, a rare
#: class; raw biases +0.10, −0.04 and +0.07
SCENARIOS = ((0.2, 0.90, 0.85), (0.3, 0.75, 0.95), (0.1, 0.80, 0.90))
N_TOTAL, N_LABELLED, SETS_PER_SCENARIO = 1500, 300, 70  # 210 data sets per method


def _simulate(method: str) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    covered, raw_err, cor_err, direction = [], [], [], []
    rng = np.random.default_rng(20261201)
    for p, se, sp in SCENARIOS:
        d = np.sign(p * (se - 1) + (1 - p) * (1 - sp))  # direction of the judge's own error
        for _ in range(SETS_PER_SCENARIO):
            y = rng.random(N_TOTAL) < p
            f = np.where(y, rng.random(N_TOTAL) < se, rng.random(N_TOTAL) >= sp).astype(int)
            lab = rng.choice(N_TOTAL, N_LABELLED, replace=False)
            truth = y.mean()
            r = corrected_rate(f.tolist(), judge_labelled=f[lab].tolist(),
                               reference_labelled=y[lab].astype(int).tolist(), positive=1,
                               method=method, seed=int(rng.integers(1 << 30)))
            covered.append(r.ci_low <= truth <= r.ci_high)
            raw_err.append(r.raw - truth)
            cor_err.append(r.corrected - truth)
            direction.append(d)
    return float(np.mean(covered)), np.array(raw_err), np.array(cor_err), np.array(direction)


@pytest.mark.parametrize("method", ["rogan_gladen", "ppi"])
def test_simulation_coverage_and_bias(method: str) -> None:
    coverage, raw_err, cor_err, d = _simulate(method)
    assert len(raw_err) >= 200
    assert coverage >= 0.93
    # mean error in the direction of the judge's own error: corrected < 1/3 of raw
    raw_dir, cor_dir = float(np.mean(d * raw_err)), float(np.mean(d * cor_err))
    assert raw_dir > 0.05  # the judge's error is real
    assert abs(cor_dir) < raw_dir / 3
    assert np.mean(np.abs(cor_err)) < np.mean(np.abs(raw_err)) / 2


# --------------------------------------------------------------------------- multi-class
CODES = ["comply", "partial", "refuse"]


def test_matrix_method_with_two_classes_is_rogan_gladen() -> None:
    to = {1: "refuse", 0: "comply"}
    out = corrected_shares([to[v] for v in ALL], judge_labelled=[to[v] for v in JL],
                           reference_labelled=[to[v] for v in RL], codes=["comply", "refuse"])
    rg = corrected_rate(ALL, judge_labelled=JL, reference_labelled=RL, positive=1)
    assert out["refuse"].corrected == pytest.approx(rg.corrected)
    assert out["comply"].corrected == pytest.approx(1 - rg.corrected)
    assert out["refuse"].sensitivity == pytest.approx(rg.sensitivity)
    assert out["refuse"].specificity == pytest.approx(rg.specificity)


def test_matrix_method_three_classes_exact() -> None:
    # labelled: 20 per reference class; the judge reads 4 partials as refusals, 2 comply as partial
    ref = ["comply"] * 20 + ["partial"] * 20 + ["refuse"] * 20
    jl = (["comply"] * 18 + ["partial"] * 2 + ["partial"] * 16 + ["refuse"] * 4
          + ["refuse"] * 20)
    m = np.array([[18, 0, 0], [2, 16, 0], [0, 4, 20]]) / 20.0
    q_counts = np.array([100, 80, 120])
    judge_all = ["comply"] * 100 + ["partial"] * 80 + ["refuse"] * 120
    out = corrected_shares(judge_all, judge_labelled=jl, reference_labelled=ref, codes=CODES)
    pi = np.linalg.solve(m, q_counts / 300)
    pi = np.clip(pi, 0, None) / np.clip(pi, 0, None).sum()
    for c, v in zip(CODES, pi, strict=True):
        assert out[c].corrected == pytest.approx(v)
        assert out[c].ci_low <= out[c].corrected <= out[c].ci_high
    assert sum(r.corrected for r in out.values()) == pytest.approx(1.0)
    assert out["refuse"].raw == pytest.approx(120 / 300)


def test_matrix_method_refuses_a_singular_matrix() -> None:
    ref = ["comply"] * 20 + ["partial"] * 20 + ["refuse"] * 20
    jl = ["comply"] * 20 + ["refuse"] * 20 + ["refuse"] * 20  # partial and refuse not told apart
    with pytest.raises(UnreliableCorrection, match="confusion matrix .* nearly singular"):
        corrected_shares(jl * 3, judge_labelled=jl, reference_labelled=ref, codes=CODES)
    with pytest.raises(UnreliableCorrection, match="Only 5 of the 45 labelled items are 'refuse'"):
        corrected_shares(jl[:45], judge_labelled=jl[:45], reference_labelled=ref[:45], codes=CODES)
    with pytest.raises(Exception, match="not one of the codes"):
        corrected_shares(["x"], judge_labelled=[], reference_labelled=[], codes=CODES)


def test_matrix_method_simulation_coverage() -> None:
    rng = np.random.default_rng(11)
    truth_p = np.array([0.5, 0.2, 0.3])
    # P(judge | truth): the judge reads a third of the partial refusals as full refusals
    m = np.array([[0.95, 0.05, 0.02], [0.03, 0.60, 0.03], [0.02, 0.35, 0.95]])
    covered = {c: 0 for c in CODES}
    raw_abs, cor_abs = 0.0, 0.0
    n_sets = 100
    for _ in range(n_sets):
        t = rng.choice(3, 1200, p=truth_p)
        u = rng.random(1200)
        j = (u[:, None] > np.cumsum(m[:, t].T, axis=1)).sum(axis=1)
        lab = rng.choice(1200, 300, replace=False)
        names = np.array(CODES)
        out = corrected_shares(names[j].tolist(), judge_labelled=names[j[lab]].tolist(),
                               reference_labelled=names[t[lab]].tolist(), codes=CODES,
                               n_resamples=1000, seed=int(rng.integers(1 << 30)))
        for i, c in enumerate(CODES):
            share = float((t == i).mean())
            covered[c] += out[c].ci_low <= share <= out[c].ci_high
            raw_abs += abs(out[c].raw - share)
            cor_abs += abs(out[c].corrected - share)
    assert min(covered.values()) / n_sets >= 0.90
    assert sum(covered.values()) / (3 * n_sets) >= 0.93
    assert cor_abs < raw_abs / 2


def test_weighted_share_and_mean_through_the_matrix() -> None:
    from judgekit.analysis.correction.multiclass import corrected_weighted

    ref = ["comply"] * 20 + ["partial"] * 20 + ["refuse"] * 20
    jl = ["comply"] * 18 + ["partial"] * 2 + ["partial"] * 16 + ["refuse"] * 4 + ["refuse"] * 20
    judge_all = ["comply"] * 100 + ["partial"] * 80 + ["refuse"] * 120
    shares = corrected_shares(judge_all, judge_labelled=jl, reference_labelled=ref, codes=CODES)
    union = corrected_weighted(judge_all, judge_labelled=jl, reference_labelled=ref,
                               weights={"comply": 0, "partial": 1, "refuse": 1}, name="refusal")
    assert union.corrected == pytest.approx(shares["partial"].corrected
                                            + shares["refuse"].corrected)
    assert union.raw == pytest.approx(200 / 300) and union.positive == "refusal"
    assert union.n_labelled_positive == 40
    assert union.ci_low <= union.corrected <= union.ci_high
    values = {"comply": 0.0, "partial": 0.5, "refuse": 1.0}
    mean = corrected_weighted(judge_all, judge_labelled=jl, reference_labelled=ref, weights=values)
    assert mean.corrected == pytest.approx(sum(values[c] * shares[c].corrected for c in CODES))
    assert mean.raw == pytest.approx((80 * 0.5 + 120) / 300)
    ppi = corrected_weighted(judge_all, judge_labelled=jl, reference_labelled=ref, weights=values,
                             method="ppi")
    direct = corrected_rate([values[v] for v in judge_all],
                            judge_labelled=[values[v] for v in jl],
                            reference_labelled=[values[v] for v in ref], positive=None,
                            method="ppi")
    assert ppi.corrected == pytest.approx(direct.corrected)
    assert (ppi.ci_low, ppi.ci_high) == pytest.approx((direct.ci_low, direct.ci_high))


def test_cluster_bootstrap_covers_where_items_are_correlated() -> None:
    """Conversations of 8 turns sharing their true label: resampling items is too narrow,
    resampling conversations covers the prevalence."""
    from judgekit.analysis.correction.clusters import corrected_weighted_clustered

    rng = np.random.default_rng(5)
    weights = {"refuse": 1.0, "comply": 0.0}
    cover = {"cluster": 0, "items": 0}
    n_sets = 120
    for _ in range(n_sets):
        conv = np.repeat(np.arange(80), 8)
        y = np.repeat(rng.random(80) < 0.3, 8)
        f = np.where(y, rng.random(640) < 0.85, rng.random(640) >= 0.9)
        lab = rng.random(640) < 0.3
        judge = np.where(f, "refuse", "comply").tolist()
        ref = [("refuse" if t else "comply") if m else None for t, m in zip(y, lab, strict=True)]
        s = int(rng.integers(1 << 30))
        r = corrected_weighted_clustered(judge, ref, conv.tolist(), weights=weights,
                                         n_resamples=500, seed=s, method="ppi")
        cover["cluster"] += r.ci_low <= 0.3 <= r.ci_high
        from judgekit.analysis.correction.multiclass import corrected_weighted

        flat = corrected_weighted(judge, judge_labelled=[j for j, m in zip(judge, lab, strict=True)
                                                         if m],
                                  reference_labelled=[x for x in ref if x is not None],
                                  weights=weights, method="ppi", n_resamples=500, seed=s)
        assert flat.corrected == pytest.approx(r.corrected)  # same estimate, other interval
        cover["items"] += flat.ci_low <= 0.3 <= flat.ci_high
    assert cover["cluster"] / n_sets >= 0.90
    assert cover["items"] / n_sets < 0.85  # the item bootstrap ignores the correlation


def test_cluster_bootstrap_with_singleton_clusters_is_the_item_bootstrap() -> None:
    from judgekit.analysis.correction.clusters import corrected_weighted_clustered

    to = {1: "refuse", 0: "comply"}
    judge = [to[v] for v in JL] + [to[v] for v in ALL[:30]][15:] + ["comply"] * 45
    ref = [to[v] for v in RL] + [None] * 60
    assert len(judge) == 100 and judge.count("refuse") == 30
    w = {"refuse": 1.0, "comply": 0.0}
    r = corrected_weighted_clustered(judge, ref, list(range(100)), weights=w, n_resamples=4000)
    flat = corrected_rate(ALL, judge_labelled=JL, reference_labelled=RL, positive=1,
                          n_resamples=4000)
    assert r.corrected == pytest.approx(flat.corrected)
    assert (r.ci_low, r.ci_high) == pytest.approx((flat.ci_low, flat.ci_high), abs=0.03)


def test_ppi_mean_value_simulation() -> None:
    """Mean restrictiveness R: a judge that reads a fifth of the items one level more compliant.
    PPI++'s interval covers the true mean R; its error is a fraction of the raw one's."""
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    rng = np.random.default_rng(8)
    covered, raw_err, cor_err = 0, [], []
    n_sets = 150
    for _ in range(n_sets):
        t = rng.choice(5, 1000, p=[0.3, 0.2, 0.1, 0.2, 0.2])
        j = np.where(rng.random(1000) < 0.2, np.maximum(t - 1, 0), t)
        lab = rng.choice(1000, 200, replace=False)
        r = corrected_rate(levels[j].tolist(), judge_labelled=levels[j[lab]].tolist(),
                           reference_labelled=levels[t[lab]].tolist(), positive=None,
                           method="ppi", n_resamples=1000, seed=int(rng.integers(1 << 30)))
        truth = levels[t].mean()
        covered += r.ci_low <= truth <= r.ci_high
        raw_err.append(r.raw - truth)
        cor_err.append(r.corrected - truth)
    assert covered / n_sets >= 0.93
    assert np.mean(raw_err) < -0.03  # the judge reads R low
    assert abs(np.mean(cor_err)) < abs(np.mean(raw_err)) / 3
    assert np.mean(np.abs(cor_err)) < np.mean(np.abs(raw_err)) / 2
