"""Tests of judgekit.stats.selective (Trust or Escalate, Jung, Brahman & Choi, ICLR 2025)."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from judgekit.stats.confidence import (
    logprob_confidence,
    panel_agreement_confidence,
    simulated_annotators_confidence,
    trial_agreement_confidence,
)
from judgekit.stats.selective import (
    GRID_SIZE,
    calibrate_threshold,
    candidate_grid,
    clopper_pearson_upper,
)
from judgekit.stats.selective_cascade import apply_cascade, calibrate_cascade

# ------------------------------------------------------------------------------------------
# Clopper-Pearson
# ------------------------------------------------------------------------------------------


def test_clopper_pearson_closed_forms() -> None:
    # k = 0: P(Bin(n, r) <= 0) = (1 - r)^n = delta  =>  U = 1 - delta^(1/n)
    assert clopper_pearson_upper(0, 10, 0.1) == pytest.approx(1 - 0.1 ** (1 / 10), abs=1e-12)
    # k = n: nothing can be excluded
    assert clopper_pearson_upper(7, 7, 0.05) == 1.0
    assert clopper_pearson_upper(0, 0, 0.05) == 1.0
    # general: Beta^{-1}(1 - delta; k + 1, n - k), and binom.cdf(k, n, U) = delta there
    u = clopper_pearson_upper(3, 17, 0.1)
    assert u == pytest.approx(beta_dist.ppf(0.9, 4, 14), abs=1e-15)
    from scipy.stats import binom

    assert binom.cdf(3, 17, u) == pytest.approx(0.1, abs=1e-10)
    # vectorised, and monotone in k
    us = clopper_pearson_upper(np.arange(0, 5), 20, 0.1)
    assert np.all(np.diff(us) > 0)
    with pytest.raises(ValueError):
        clopper_pearson_upper(5, 4, 0.1)
    with pytest.raises(ValueError):
        clopper_pearson_upper(1, 4, 1.5)


# ------------------------------------------------------------------------------------------
# A worked case: 20 items
# ------------------------------------------------------------------------------------------

# Item i = 1..20 has confidence 1 - 0.04 i (0.96, 0.92, ..., 0.20); the judge agrees with the
# humans on items 1-12, 14, 17, 19 and disagrees on 13, 15, 16, 18, 20.
WORKED_CONF = np.round(1 - 0.04 * np.arange(1, 21), 2)
WORKED_AGREE = np.array([1] * 12 + [0, 1, 0, 0, 1, 0, 1, 0])


def test_worked_case_fixed_sequence() -> None:
    # alpha = 0.3, delta = 0.1, min_kept = 10 (the authors use 30; 20 items need fewer).
    # Candidates: grid points g_j = j/4999 keeping >= 10 items, i.e. g_j <= 0.60 (j <= 2999):
    # 3000 candidates. Scanning from the top, the kept set only changes at the confidences:
    #   kept n  lowest conf  disagreements k   U = Beta^{-1}(0.9; k+1, n-k)
    #   10      0.60         0                 1 - 0.1^(1/10) = 0.2057  <= 0.3 pass
    #   11      0.56         0                 1 - 0.1^(1/11) = 0.1889  pass
    #   12      0.52         0                 1 - 0.1^(1/12) = 0.1746  pass
    #   13      0.48         1 (item 13)       0.2678  pass
    #   14      0.44         1                 0.2507  pass
    #   15      0.40         2 (item 15)       0.3173  > 0.3  FAIL -> stop
    # The lowest passing candidate is the smallest grid point above 0.40 that excludes item 15:
    # 0.40 * 4999 = 1999.6, so g_1999 = 0.39988 keeps item 15 (fails) and g_2000 = 2000/4999.
    r = calibrate_threshold(WORKED_CONF, WORKED_AGREE, alpha=0.3, delta=0.1, min_kept=10)
    assert r.met
    assert r.threshold == pytest.approx(2000 / 4999, abs=1e-15)
    assert r.n_kept == 14
    assert r.coverage == pytest.approx(14 / 20)
    assert r.agreement == pytest.approx(13 / 14)
    assert r.upper_bound == pytest.approx(beta_dist.ppf(0.9, 2, 13), abs=1e-15)
    assert r.upper_bound == pytest.approx(0.25067461131546975, abs=1e-12)
    # the next item down would have failed: 2 disagreements among 15
    assert beta_dist.ppf(0.9, 3, 13) == pytest.approx(0.3172871108599544, abs=1e-12)
    assert beta_dist.ppf(0.9, 3, 13) > 0.3


def test_worked_case_authors_rule_quirk() -> None:
    # The authors probe lambda - 1/m (m = 3000 candidates here, step 0.000333) rather than the
    # next grid point (step 1/4999 = 0.0002). At lambda = g_2001 = 0.40028 the probe is 0.39995,
    # which keeps item 15 and fails, so they return g_2001, one grid point higher than the
    # textbook rule (same 14 items kept here).
    r = calibrate_threshold(WORKED_CONF, WORKED_AGREE, 0.3, 0.1, min_kept=10, rule="authors")
    assert r.met
    assert r.threshold == pytest.approx(2001 / 4999, abs=1e-6)
    assert r.n_kept == 14


def test_ties_are_kept_with_greater_or_equal() -> None:
    # 40 items at confidence exactly 0.5, all agreeing; grid point 0.5 is not on linspace(0,1,5000)
    # but ties are all-or-nothing: the threshold keeps all 40 or none.
    conf = np.full(40, 0.5)
    r = calibrate_threshold(conf, np.ones(40), 0.1, 0.1)
    assert r.met and r.n_kept == 40
    # keep iff conf >= threshold: an item exactly at the threshold is kept
    assert apply_cascade([[r.threshold, r.threshold - 1e-9]], [r.threshold]) == [0, None]


# ------------------------------------------------------------------------------------------
# Refusal
# ------------------------------------------------------------------------------------------


def test_refuses_when_alpha_too_small_for_n() -> None:
    # 100 items, all agreeing. Even keeping all 100 the bound would be 1 - 0.1^(1/100) = 0.0228
    # > 0.01; and the scan starts at the most confident candidate, which keeps about 30 items
    # (the minimum), where the bound is 1 - 0.1^(1/30) = 0.0739 > 0.01: refuse.
    conf = np.linspace(0.6, 1.0, 100)
    r = calibrate_threshold(conf, np.ones(100), alpha=0.01, delta=0.1)
    assert not r.met
    assert r.threshold is None and r.n_kept == 0 and r.coverage == 0.0
    assert "no threshold meets the target" in r.reason
    # the authors' code does not refuse: it returns its most confident candidate (untested)
    a = calibrate_threshold(conf, np.ones(100), alpha=0.01, delta=0.1, rule="authors")
    assert not a.met and a.threshold is not None and a.n_kept >= 30
    # the same data meet a target the first candidate can pass (0.08 >= 0.0739), and then the
    # scan runs down to the lowest candidate (all 100 kept, bound 0.0228)
    ok = calibrate_threshold(conf, np.ones(100), alpha=0.08, delta=0.1)
    assert ok.met and ok.n_kept == 100
    assert ok.upper_bound == pytest.approx(1 - 0.1 ** (1 / 100), abs=1e-12)


def test_refuses_with_too_few_items() -> None:
    r = calibrate_threshold(np.linspace(0.5, 1, 20), np.ones(20), 0.2, 0.1)
    assert not r.met and r.threshold is None
    assert "fewer than 30" in r.reason
    a = calibrate_threshold(np.linspace(0.5, 1, 20), np.ones(20), 0.2, 0.1, rule="authors")
    assert a.threshold == 0.0 and not a.met  # the authors keep everything, untested


def test_nan_confidence_is_never_kept() -> None:
    conf = np.r_[np.linspace(0.9, 1.0, 40), np.nan]
    r = calibrate_threshold(conf, np.r_[np.ones(40), 0], 0.2, 0.1)
    assert r.met and r.n_kept == 40 and r.n_items == 41
    assert apply_cascade([conf], [0.0])[-1] is None


def test_input_validation() -> None:
    with pytest.raises(ValueError):
        calibrate_threshold([0.5, 0.6], [1], 0.1, 0.1)
    with pytest.raises(ValueError):
        calibrate_threshold([0.5], [2], 0.1, 0.1)
    with pytest.raises(ValueError):
        calibrate_threshold([0.5], [1], 0.0, 0.1)
    with pytest.raises(ValueError):
        calibrate_threshold([0.5], [1], 0.1, 0.1, rule="other")  # type: ignore[arg-type]


def test_candidate_grid() -> None:
    g = candidate_grid()
    assert g.size == GRID_SIZE and g[0] == 0.0 and g[-1] == 1.0
    g32 = candidate_grid(float32=True)
    assert g32.dtype == np.float32 and np.max(np.abs(g32 - g)) < 1e-7


# ------------------------------------------------------------------------------------------
# Cascade
# ------------------------------------------------------------------------------------------


def test_apply_cascade_first_judge_that_reaches_its_threshold() -> None:
    c0 = [0.95, 0.50, 0.20, np.nan]
    c1 = [0.99, 0.90, 0.30, 0.99]
    assert apply_cascade([c0, c1], [0.9, 0.8]) == [0, 1, None, 1]
    assert apply_cascade([c0, c1], [None, 0.8]) == [1, 1, None, 1]
    with pytest.raises(ValueError):
        apply_cascade([c0, c1], [0.9])


def test_cascade_calibrates_later_judges_on_the_leftovers() -> None:
    rng = np.random.default_rng(3)
    n = 600
    c0, c1 = rng.uniform(0.5, 1, n), rng.uniform(0.5, 1, n)
    a0, a1 = (rng.uniform(size=n) < c0).astype(int), (rng.uniform(size=n) < c1).astype(int)
    cas = calibrate_cascade([c0, c1], [a0, a1], 0.2, 0.1)
    t0, t1 = cas.thresholds
    assert t0 is not None and t1 is not None
    # judge 0 alone on everything; judge 1 on the items judge 0 did not keep
    assert cas.per_judge[0] == calibrate_threshold(c0, a0, 0.2, 0.1)
    left = c0 < t0
    assert cas.per_judge[1] == calibrate_threshold(c1[left], a1[left], 0.2, 0.1)
    kept_by = apply_cascade([c0, c1], [t0, t1])
    assert [None if j < 0 else int(j) for j in cas.kept_by] == kept_by
    assert cas.coverage == pytest.approx(sum(cas.judge_coverage))
    kept = cas.kept_by >= 0
    agreed = np.where(cas.kept_by == 0, a0, a1)[kept]
    assert cas.selective_agreement == pytest.approx(agreed.mean())


# ------------------------------------------------------------------------------------------
# Confidence helpers
# ------------------------------------------------------------------------------------------


def test_trial_and_panel_agreement_confidence() -> None:
    r = trial_agreement_confidence(["refusal", "refusal", "compliance", None, "refusal"])
    assert r.label == "refusal" and r.confidence == pytest.approx(3 / 4) and r.n == 4
    tie = trial_agreement_confidence(["a", "b"])
    assert tie.label == "a" and tie.confidence == 0.5
    empty = trial_agreement_confidence([None, None])
    assert empty.label is None and math.isnan(empty.confidence)
    p = panel_agreement_confidence(["x", "y", "y"])
    assert p.label == "y" and p.confidence == pytest.approx(2 / 3)


def test_simulated_annotators_confidence() -> None:
    # 3 few-shot sets x 2 orders = 6 trials; mean P(label 0) = 0.7
    probs = [[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.7, 0.3], [0.5, 0.5], [0.7, 0.3]]
    y, c = simulated_annotators_confidence(probs)
    assert y == 0 and c == pytest.approx(0.7)


def test_logprob_confidence() -> None:
    lp = {"A": math.log(0.6), "B": math.log(0.2)}
    r = logprob_confidence(lp)
    assert r.label == "A" and r.confidence == pytest.approx(0.75)  # 0.6 / (0.6 + 0.2)
    raw = logprob_confidence(lp, normalize=False)
    assert raw.confidence == pytest.approx(0.6)  # the authors' exp(logprob)
    only = logprob_confidence({"A": -math.inf, "B": math.log(0.3)})
    assert only.label == "B" and only.confidence == pytest.approx(1.0)
    with pytest.raises(ValueError):
        logprob_confidence({"A": 0.5})


# ------------------------------------------------------------------------------------------
# Simulation: the guarantee holds over random calibration/test splits
# ------------------------------------------------------------------------------------------

N_SPLITS = 500
ALPHA, DELTA = 0.15, 0.1
# failure share allowed: delta plus two binomial standard errors of a share over 500 splits
TOLERANCE = DELTA + 2 * math.sqrt(DELTA * (1 - DELTA) / N_SPLITS)  # 0.1 + 0.0268


def _study(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """Two judges; each is right with probability equal to its confidence's calibrated map.

    Judge A (cheap) is informative on half the items (kind 0) and near chance on the rest;
    judge B (strong) the other way round, so a cascade can keep items either judge trusts.
    """
    kind = rng.integers(0, 2, n)
    ca = np.where(kind == 0, rng.uniform(0.55, 1.0, n), rng.uniform(0.5, 0.7, n))
    cb = np.where(kind == 1, rng.uniform(0.55, 1.0, n), rng.uniform(0.5, 0.7, n))
    aa = (rng.uniform(size=n) < ca).astype(int)  # higher confidence => more likely correct
    ab = (rng.uniform(size=n) < cb).astype(int)
    return ca, cb, aa, ab


@pytest.mark.slow
def test_simulation_guarantee_and_cascade_coverage() -> None:
    rng = np.random.default_rng(20250101)
    n_study, n_cal = 4000, 1000
    ca, cb, aa, ab = _study(rng, n_study)
    fail_a = fail_b = fail_cas = 0
    cov_a, cov_b, cov_cas = [], [], []
    for _ in range(N_SPLITS):
        perm = rng.permutation(n_study)
        cal, test = perm[:n_cal], perm[n_cal:]
        ra = calibrate_threshold(ca[cal], aa[cal], ALPHA, DELTA)
        rb = calibrate_threshold(cb[cal], ab[cal], ALPHA, DELTA)
        cas = calibrate_cascade([ca[cal], cb[cal]], [aa[cal], ab[cal]], ALPHA, DELTA)
        for r, c, a, name in ((ra, ca, aa, "a"), (rb, cb, ab, "b")):
            assert r.threshold is not None
            kept = c[test] >= r.threshold
            failed = a[test][kept].mean() < 1 - ALPHA
            if name == "a":
                fail_a += failed
                cov_a.append(kept.mean())
            else:
                fail_b += failed
                cov_b.append(kept.mean())
        who = np.array([-1 if j is None else j for j in apply_cascade(
            [ca[test], cb[test]], cas.thresholds)])
        kept = who >= 0
        agreed = np.where(who == 0, aa[test], ab[test])[kept]
        fail_cas += agreed.mean() < 1 - ALPHA
        cov_cas.append(kept.mean())
    assert fail_a / N_SPLITS <= TOLERANCE
    assert fail_b / N_SPLITS <= TOLERANCE
    assert fail_cas / N_SPLITS <= TOLERANCE
    # the cascade keeps more items than either judge alone, at the same alpha and delta
    assert np.mean(cov_cas) > max(np.mean(cov_a), np.mean(cov_b)) + 0.05
    assert np.mean(np.array(cov_cas) > np.maximum(cov_a, cov_b)) > 0.95


# ------------------------------------------------------------------------------------------
# Reproduction of the authors' code on their published calibration judgments
# ------------------------------------------------------------------------------------------

# The authors' repository (github.com/jaehunjung1/cascaded-selective-evaluation, commit
# 1b969f22b9c6c78ff1034e63237769041d8f1788) ships no licence, so its data are not copied here.
# Point JUDGEKIT_SELECTIVE_REPO at a checkout to run this test. The expected figures below were
# produced once by running the authors' own CascadedClassifier(model_names, calibration_samples,
# alpha, delta).lambda_hats, .apply_decision_rule(calibration_samples, model_names) and
# SelectiveClassificationUtil(phats, yhats, labels, delta).lambda_hat(alpha) (torch 2.14.1, CPU)
# on result/{mistral-7b-instruct,gpt-3.5-turbo,gpt-4-turbo}.calibration.jsonl (500 merged items;
# their test files are not in the repository, so the decision rule is applied to the
# calibration items). (alpha, delta): cascade thresholds, coverage, selective accuracy, share of
# kept items per judge, single-judge thresholds (mistral, gpt-3.5, gpt-4).
AUTHORS_FIGURES = {
    (0.15, 0.1): ((0.9997999668121338, 0.7927585244178772, 0.9995999336242676), 0.64,
                  0.878125011920929, (0.178125, 0.725, 0.096875),
                  (0.9997999668121338, 0.7927585244178772, 0.9121824502944946)),
    (0.1, 0.1): ((0.9997999668121338, 0.9637927412986755, 0.9997999668121338), 0.496,
                 0.9112903475761414, (0.22983870664892508, 0.5725806560638698,
                                      0.19758063728720518),
                 (0.9997999668121338, 0.9995999336242676, 0.9997999668121338)),
    (0.2, 0.05): ((0.9997999668121338, 0.6719343662261963, 0.9979996085166931), 0.778,
                  0.843187689781189, (0.14652956850885007, 0.7763496077242834,
                                      0.07712082376686649),
                  (0.9997999668121338, 0.6715342998504639, 0.7193438410758972)),
    (0.05, 0.1): ((0.9997999668121338, 0.9995999336242676, 0.9997999668121338), 0.38,
                  0.9263157844543457, (0.3, 0.16315789411768028, 0.5368421019609615),
                  (0.9997999668121338, 0.9995999336242676, 0.9997999668121338)),
    (0.25, 0.2): ((0.5241048336029053,) * 3, 1.0, 0.764, (0.962, 0.034, 0.004),
                  (0.5241048336029053, 0.5139027833938599, 0.0)),
}
MODELS = ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo")
# Thresholds agree to float32 rounding of the grid: torch.linspace's float32 points differ from
# numpy's float32 rounding of linspace by one ulp (6e-8) at about 1 point in 5; the kept sets
# (hence coverage and agreement) are identical.
GRID_ULP = 1.2e-7


def _load_authors_calibration(root: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Their merge_data + prepare_data: dedupe by instruction+outputs, majority human label."""
    merged: dict[str, dict] = {}
    for name in MODELS:
        path = root / "result" / f"{name}.calibration.jsonl"
        for line in path.read_text().splitlines():
            s = json.loads(line)
            key = f"{s['instruction']}-{s['outputs']}"
            merged.setdefault(key, {"pref": s["preferences"], "probs": {}})["probs"][name] = (
                s["probs"])
    rows = [v for v in merged.values() if len(v["probs"]) == len(MODELS)]
    labels = np.array([Counter(list(r["pref"].values())).most_common(1)[0][0] - 1 for r in rows])
    conf, agree = [], []
    for name in MODELS:
        p = np.array([r["probs"][name] for r in rows], dtype=np.float32)  # torch.Tensor: float32
        conf.append(p.max(axis=1))
        agree.append((p.argmax(axis=1) == labels).astype(int))
    return conf, agree


@pytest.mark.skipif(not os.environ.get("JUDGEKIT_SELECTIVE_REPO"),
                    reason="set JUDGEKIT_SELECTIVE_REPO to a checkout of the authors' repository")
def test_reproduces_authors_code_on_their_calibration_judgments() -> None:
    conf, agree = _load_authors_calibration(Path(os.environ["JUDGEKIT_SELECTIVE_REPO"]))
    assert conf[0].size == 500
    for (alpha, delta), (lams, cov, acc, comp, single) in AUTHORS_FIGURES.items():
        cas = calibrate_cascade(conf, agree, alpha, delta, rule="authors")
        assert cas.thresholds == pytest.approx(lams, abs=GRID_ULP)
        assert cas.coverage == pytest.approx(cov, abs=1e-6)
        assert cas.selective_agreement == pytest.approx(acc, abs=1e-6)
        assert [c / cas.coverage for c in cas.judge_coverage] == pytest.approx(comp, abs=1e-6)
        for j in range(len(MODELS)):
            r = calibrate_threshold(conf[j], agree[j], alpha, delta, rule="authors")
            assert r.threshold == pytest.approx(single[j], abs=GRID_ULP)
