"""The probes' statistics against arithmetic written out here or a reference implementation:
the stratified (Mantel–Haenszel) difference, Krippendorff's α over trials (the krippendorff
package), Stuart–Maxwell and Bowker, Holm's levels, and the coverage of the covariate interval."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

from judgekit.probes.bands import holm_adjusted, holm_levels, p_outside, p_rate_above
from judgekit.probes.covariate import covariate_effect, self_preference, stratified_difference
from judgekit.probes.marginal import bowker, stuart_maxwell
from judgekit.probes.stability import stability


def test_stratified_difference_by_hand():
    # stratum a: high 3 items (2 errors), low 2 items (0 errors); stratum b: high 1 (1), low 3 (1)
    y = [1, 1, 0, 0, 0, 1, 1, 0, 0]
    g = [1, 1, 1, 0, 0, 1, 0, 0, 0]
    s = ["a"] * 5 + ["b"] * 4
    out = stratified_difference(y, [bool(x) for x in g], s)
    wa, wb = 3 * 2 / 5, 1 * 3 / 4
    da, db = 2 / 3 - 0, 1 - 1 / 3
    assert out["effect"] == pytest.approx((wa * da + wb * db) / (wa + wb))

    def v(x, n):  # Agresti–Caffo: p~ = (x + 1) / (n + 2), var = p~(1 − p~) / (n + 2)
        p = (x + 1) / (n + 2)
        return p * (1 - p) / (n + 2)

    var = wa**2 * (v(2, 3) + v(0, 2)) + wb**2 * (v(1, 1) + v(1, 3))
    assert out["se"] == pytest.approx(math.sqrt(var) / (wa + wb))
    assert (out["n"], out["n_high"], out["n_low"], out["dropped"]) == (9, 4, 5, 0)


def test_stratified_difference_drops_strata_missing_a_bin():
    out = stratified_difference([1, 0, 1, 1], [True, False, True, True], ["a", "a", "b", "b"])
    assert out["dropped"] == 2 and out["n"] == 2 and out["effect"] == pytest.approx(1.0)
    none = stratified_difference([1, 0], [True, True], ["a", "a"])
    assert none["effect"] is None and "both bins" in none["undefined"]


def test_covariate_effect_is_conditional_on_the_reference():
    # long responses are mostly compliant; the judge errs at 10% everywhere (no length effect):
    # the raw error rates differ between bins only through the label mix, the stratified Δ is 0
    ref, jud, length = [], [], []
    for label, n_long, n_short, err in (("full_compliance", 80, 20, 0.0), ("full_refusal", 20, 80, 0.5)):
        for i in range(n_long + n_short):
            ref.append(label)
            wrong = (i % (n_long if i < n_long else n_short)) < err * (n_long if i < n_long else n_short)
            jud.append("partial_refusal" if wrong else label)
            length.append(1000 if i < n_long else 100)
    out = covariate_effect(ref, jud, length, split=500)
    raw_long = np.mean([j != r for j, r, x in zip(jud, ref, length, strict=True) if x > 500])
    raw_short = np.mean([j != r for j, r, x in zip(jud, ref, length, strict=True) if x <= 500])
    assert raw_short - raw_long > 0.2  # the naive comparison would see an effect
    assert out["effect"] == pytest.approx(0.0, abs=1e-12)
    assert out["split"] == 500 and "Mantel–Haenszel" in out["method"]


def test_covariate_interval_covers_at_95_percent():
    # 400 synthetic data sets with a true stratified difference of 0.1: the 95% interval
    # (estimate ± 1.96 se) must cover it 93–98% of the time
    rng = np.random.default_rng(3)
    hits = 0
    sims = 400
    for _ in range(sims):
        n = 300
        ref = rng.choice(["a", "b"], size=n, p=[0.6, 0.4])
        high = rng.random(n) < 0.5
        base = np.where(ref == "a", 0.1, 0.3)
        y = rng.random(n) < base + 0.1 * high
        out = stratified_difference(y.astype(float), high, ref)
        hits += abs(out["effect"] - 0.1) <= 1.959964 * out["se"]
    assert 0.93 <= hits / sims <= 0.98


def test_self_preference_signed_bias_and_agreement():
    values = {"full_compliance": 0.0, "partial_refusal": 0.5, "full_refusal": 1.0}
    ref = ["full_refusal"] * 4 + ["full_compliance"] * 4
    own = [True, True, False, False] * 2
    # on its own family's refusals the judge says compliance once in two
    jud = ["full_compliance", "full_refusal", "full_refusal", "full_refusal"] + ["full_compliance"] * 4
    out = self_preference(ref, jud, own, values=values)
    # stratum refusal: own mean value 0.5, other 1.0, weight 2*2/4 = 1; stratum compliance: 0 vs 0, weight 1
    assert out["effect"] == pytest.approx((1 * (0.5 - 1.0) + 1 * 0.0) / 2)
    assert out["agreement"]["own"]["value"] == pytest.approx(3 / 4)
    assert out["agreement"]["other"]["value"] == pytest.approx(1.0)
    assert out["n_own"] == 4 and out["n_other"] == 4


def test_stability_alpha_matches_krippendorff_package():
    krippendorff = pytest.importorskip("krippendorff")
    rng = random.Random(5)
    codes = ["full_compliance", "partial_refusal", "full_refusal"]
    rows = []
    for i in range(60):
        base = rng.randrange(3)
        for t in range(3):
            lab = base if rng.random() < 0.7 else rng.randrange(3)
            if not (i % 10 == 0 and t == 2):  # some items have two trials only
                rows.append({"item_id": f"i{i}", "trial": t, "label": codes[lab]})
    frame = pd.DataFrame(rows)
    out = stability(frame, codes=codes, n_resamples=200, seed=1)
    matrix = np.full((3, 60), np.nan)
    for r in rows:
        matrix[r["trial"], int(r["item_id"][1:])] = codes.index(r["label"])
    assert out["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    flipped = {f["item_id"] for f in out["flipped"]}
    expected = {i for i, g in frame.groupby("item_id")["label"] if g.nunique() > 1}
    assert flipped == expected and out["flip_share"] == pytest.approx(len(expected) / 60)
    assert out["se"] is not None and 0 < out["se"] < 0.2
    interval = stability(frame, codes=codes, values=[0.0, 0.5, 1.0], n_resamples=100)
    vals = np.where(np.isnan(matrix), np.nan, np.array([0.0, 0.5, 1.0])[np.nan_to_num(matrix).astype(int)])
    assert interval["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=vals, level_of_measurement="interval"))


def test_stability_without_trials_is_undefined():
    out = stability(pd.DataFrame({"item_id": ["a", "b"], "trial": [0, 0], "label": ["x", "y"]}), codes=["x", "y"])
    assert out["alpha"] is None and "two ok trials" in out["undefined"]


def test_stuart_maxwell_and_bowker_by_hand():
    t = np.array([[20, 5, 3], [2, 10, 4], [6, 1, 30]], dtype=float)
    # Stuart–Maxwell: d = row − column margins for the first two labels; S from the table
    rows, cols = t.sum(1), t.sum(0)
    d = np.array([rows[0] - cols[0], rows[1] - cols[1]])  # 28 − 28 = 0, 16 − 16 = 0 ... written out:
    assert list(d) == [28 - 28, 16 - 16]
    t2 = np.array([[20, 9, 3], [2, 10, 4], [6, 1, 30]], dtype=float)
    r2, c2 = t2.sum(1), t2.sum(0)
    d2 = np.array([r2[0] - c2[0], r2[1] - c2[1]])  # 32 − 28 = 4, 16 − 20 = −4
    assert list(d2) == [4.0, -4.0]
    s11 = r2[0] + c2[0] - 2 * 20  # 32 + 28 − 40 = 20
    s22 = r2[1] + c2[1] - 2 * 10  # 16 + 20 − 20 = 16
    s12 = -(9 + 2)  # −11
    det = s11 * s22 - s12 * s12  # 320 − 121 = 199
    stat = (s22 * 4 * 4 - 2 * s12 * 4 * -4 + s11 * 16) / det  # dᵀ S⁻¹ d with the 2×2 inverse
    assert stat == pytest.approx((16 * 16 - 2 * -11 * -16 + 20 * 16) / 199)
    sm = stuart_maxwell(t2)
    assert sm["statistic"] == pytest.approx(stat) and sm["df"] == 2
    assert sm["p"] == pytest.approx(chi2.sf(stat, 2))
    assert stuart_maxwell(t)["statistic"] == pytest.approx(0.0)
    bw = bowker(t2)
    expected = (9 - 2) ** 2 / 11 + (3 - 6) ** 2 / 9 + (4 - 1) ** 2 / 5
    assert bw["statistic"] == pytest.approx(expected) and bw["df"] == 3
    assert bw["p"] == pytest.approx(chi2.sf(expected, 3))


def test_stuart_maxwell_drops_unused_labels():
    t = np.array([[10, 4, 0], [1, 8, 0], [0, 0, 0]])
    # the unused third label is dropped: K = 2, McNemar's χ² = (4 − 1)² / (4 + 1)
    assert stuart_maxwell(t)["statistic"] == pytest.approx(9 / 5)
    assert stuart_maxwell(t)["df"] == 1


def test_holm_levels_reproduce_holm_rejections():
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = int(rng.integers(1, 8))
        ps = list(rng.beta(0.3, 1.0, size=k))
        order = sorted(range(k), key=lambda i: ps[i])
        reject = set()
        for rank, i in enumerate(order):  # Holm (1979), written out
            if ps[i] <= 0.025 / (k - rank):
                reject.add(i)
            else:
                break
        levels = holm_levels(ps, 0.025)
        assert {i for i in range(k) if ps[i] <= levels[i]} == reject
        adj = holm_adjusted(ps)
        assert {i for i in range(k) if adj[i] <= 0.025} == reject
    assert holm_levels([None, 0.001]) == [None, 0.025]


def test_band_p_values_invert_the_intervals():
    # outside-band p <= α exactly when est − z se > margin
    assert p_outside(0.3, 0.05, 0.1) == pytest.approx(1 - 0.5 * (1 + math.erf(4 / math.sqrt(2))))
    assert p_outside(-0.3, 0.05, 0.1) == p_outside(0.3, 0.05, 0.1)
    from judgekit.stats.intervals import wilson_interval

    for k, n, m in ((12, 50, 0.1), (3, 50, 0.1), (30, 100, 0.2)):
        p = p_rate_above(k, n, m)
        lo, _ = wilson_interval(k, n, z=1.959963984540054)
        assert (p < 0.025) == (float(lo) > m)


def test_holm_family_keeps_false_fails_at_its_level():
    # six slices whose true effect sits on the band's edge (the worst case of "inside the band"):
    # a naive 95% interval per slice fails one of them in about 1 − 0.975⁶ ≈ 14% of data sets;
    # the Holm family fails any in at most 2.5% (simulated with normal estimates, se 0.03)
    from judgekit.probes.bands import decide

    rng = np.random.default_rng(11)
    sims, k, margin, se = 800, 6, 0.1, 0.03
    any_fail = naive = 0
    for _ in range(sims):
        est = rng.normal(margin, se, size=k)
        rows = [{"probe": "covariate", "extra": {"column": "x", "target": None}, "by": "s", "key": str(i), "n": 100, "estimate": float(e), "se": se, "detail": "d"}
                for i, e in enumerate(est)]
        states = [r["state"] for r in decide(rows, mode="abs", threshold=margin, min_n=30)]
        any_fail += "fail" in states
        naive += bool((est - 1.959964 * se > margin).any())
    assert any_fail / sims <= 0.035
    assert naive / sims > 0.10


def test_stability_interval_covers_the_true_alpha():
    # each trial keeps the item's label with probability q, else draws from the shares p: the
    # two trials of an item differ with probability (1 − q²)(1 − Σp²), the marginals stay p, so
    # α = 1 − D_o / D_e = q². The normal interval α̂ ± 1.96 se (bootstrap se) covers it ~95%.
    rng = np.random.default_rng(2)
    codes, p, q = ["a", "b", "c"], [0.5, 0.3, 0.2], 0.8
    hits, sims = 0, 200
    for s in range(sims):
        base = np.repeat(rng.choice(3, size=150, p=p), 3)
        labels = np.where(rng.random(450) < q, base, rng.choice(3, size=450, p=p))
        frame = pd.DataFrame({"item_id": np.repeat(np.arange(150), 3), "trial": np.tile(np.arange(3), 150),
                              "label": np.array(codes)[labels]})
        out = stability(frame, codes=codes, n_resamples=200, seed=s)
        hits += abs(out["alpha"] - q * q) <= 1.959964 * out["se"]
    assert 0.90 <= hits / sims <= 0.99
