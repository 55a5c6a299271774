"""Corrected analysis figures over 200 simulated studies.

Each study is the synthetic calibration-drift study (:mod:`judgekit.testing.study`, the
``m-eroding`` model: five tiers, look-alikes, six turns) with a random or a stratified (model ×
tier × look-alike) labelling of 10–30% of its conversations, analysed through the analysis
functions (:mod:`judgekit.analysis.calibration.corrected`, ``distribution_ppi``, ``criteria_ppi``)
for a fair judge and for one that leans toward compliance as turns go on. The truth is the
reference's figure over every conversation (the generator rates them all; the labelled share is
kept, the rest dropped)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgekit.analysis.calibration.corrected import corrected_calibration, pair_units
from judgekit.analysis.calibration.units import build_units
from judgekit.analysis.frames import harm_from_column, per_item_values
from judgekit.rubric.model import load_rubric
from judgekit.testing.study import make_study
from tests.ppi_study_sim import run_study, summarise

N_STUDIES = 200
#: the figures the acceptance names, as the analysis tables call them
FIGURES = ["C(t)", "RCE_t", "Drift(t)", "Drift(t | tier)", "refusal rate", "rate"]


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.concat([run_study(s, "random" if s % 2 == 0 else "stratified")
                      for s in range(N_STUDIES)], ignore_index=True)


@pytest.mark.slow
@pytest.mark.timeout(600)  # ~60 CPU s; up to ~160 s wall seen on a loaded 2-core machine
def test_coverage_of_every_corrected_figure(rows: pd.DataFrame) -> None:
    for design in ("random", "stratified", None):
        part = rows if design is None else rows[rows["design"] == design]
        s = summarise(part)
        print(f"\n{design or 'all'}:\n{s.round(3).to_string()}")
        for judge in ("judge-fair", "judge-lean"):
            for fig in FIGURES:
                cov = s.loc[(judge, fig), "coverage"]
                assert cov >= 0.93, (design, judge, fig, cov)
                # not estimable is said, not hidden; C(t) at turn 1 (every model concordant)
                # never is, as its resamples do not vary; a cell with fewer than
                # MIN_LABELLED_CLUSTERS labelled conversations is not reported (a Drift(t | tier)
                # cell holds about 3 here: 0.26-0.32 of them are estimable by seed-fixed studies)
                assert s.loc[(judge, fig), "estimable"] >= 0.25, (design, judge, fig)


@pytest.mark.slow
@pytest.mark.timeout(600)  # ~60 CPU s; up to ~160 s wall seen on a loaded 2-core machine
def test_corrected_point_removes_the_lean(rows: pd.DataFrame) -> None:
    # at the last turn (where the lean is largest; per turn figures) and over all rows else
    lean = rows[(rows["judge"] == "judge-lean") & rows["ci_low"].notna()]
    last = lean[lean["turn"].astype(str).isin(["6", "6.0", "all"])]
    for fig in FIGURES:
        part = last[last["figure"] == fig]
        bias_c = (part["corrected"] - part["truth"]).mean()
        bias_r = (part["raw"] - part["truth"]).mean()
        print(f"{fig}: bias raw {bias_r:+.4f}, corrected {bias_c:+.4f} ({len(part)} rows)")
        assert abs(bias_r) > 0.01, fig  # the lean is there to remove
        assert abs(bias_c) < abs(bias_r) / 3, (fig, bias_c, bias_r)


@pytest.mark.slow
@pytest.mark.timeout(600)  # ~60 CPU s; up to ~160 s wall seen on a loaded 2-core machine
def test_fair_judge_narrows_the_human_only_interval(rows: pd.DataFrame) -> None:
    s = summarise(rows[rows["judge"] == "judge-fair"])
    for fig in FIGURES:
        assert s.loc[("judge-fair", fig), "width_ratio"] < 1.0, fig


@pytest.mark.slow
@pytest.mark.timeout(600)  # ~60 CPU s; up to ~160 s wall seen on a loaded 2-core machine
def test_fair_judge_correction_is_never_wider_than_the_labels_alone(rows: pd.DataFrame) -> None:
    # the same labels, two intervals: the corrected one no wider than the human-only one in at
    # least 95% of rows of every figure (Drift(t | tier) cells of < 10 labelled conversations
    # included, where λ cannot be tuned)
    fair = rows[(rows["judge"] == "judge-fair") & rows["ci_low"].notna()
                & rows["human_ci_low"].notna()]
    no_wider = ((fair["ci_high"] - fair["ci_low"])
                <= (fair["human_ci_high"] - fair["human_ci_low"]) + 1e-12)
    share = no_wider.groupby(fair["figure"]).mean()
    print(share.round(3).to_string())
    for fig in FIGURES:
        assert share[fig] >= 0.95, (fig, share[fig])


def test_drift_6_tier_4_with_150_labelled_conversations() -> None:
    """The issue's study: 150 of 330 conversations labelled at random, the leaning judge."""
    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=0, human_share=1.0)
    harm = harm_from_column(items, "severity")

    def units(rater: str) -> pd.DataFrame:
        frame = ratings[ratings["rater_id"] == rater]
        return build_units(per_item_values(frame, rub), items, harm)[0]

    ref = units("adjudicated")
    truth = corrected_calibration(pair_units(ref, ref), figures=("drift_tier",),
                                  n_boot=1)[0].frame
    convs = sorted(ref["cluster"].unique())
    assert len(convs) == 330
    lab = set(np.random.default_rng(0).choice(convs, 150, replace=False))
    got = corrected_calibration(pair_units(units("judge-lean"), ref[ref["cluster"].isin(lab)]),
                                figures=("drift_tier",))[0].frame
    for model in ("m-eroding", "m-steady"):
        t = truth[(truth["model"] == model) & (truth["tier"] == 4) & (truth["turn"] == 6)]
        g = got[(got["model"] == model) & (got["tier"] == 4) & (got["turn"] == 6)].iloc[0]
        true = float(t["raw"].iloc[0])
        miss = max(g["raw_ci_low"] - true, true - g["raw_ci_high"])
        print(f"{model} Drift(6 | tier 4): truth {true:.3f}; corrected {g['corrected']:.3f} "
              f"[{g['ci_low']:.3f}, {g['ci_high']:.3f}] (n {g['n_labelled']} of "
              f"{g['n_clusters']}); raw {g['raw']:.3f} [{g['raw_ci_low']:.3f}, "
              f"{g['raw_ci_high']:.3f}] misses it by {miss:.3f}")
        assert g["ci_low"] <= true <= g["ci_high"]
        assert miss > 0  # the raw interval excludes the truth
