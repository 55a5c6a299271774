"""Corrected analysis figures: the rows, the labelling design, honest intervals, the
CLI. The coverage over simulated studies is in test_analysis_ppi_simulation.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis.correction.design import Reference, design_strata
from judgekit.analysis.correction.ppi_rows import difference_row, drift_row, mean_row
from judgekit.analysis.distribution.estimate import refusal_distribution
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.annotation.sampling_support import filter_where
from judgekit.cli import main as cli
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.testing.study import write_study
from tests.analysis_fixtures import ratings_frame

REFUSAL = load_rubric("refusal")


# --------------------------------------------------------------------------- rows
def test_mean_row_is_classic_ppi_with_few_labelled_clusters() -> None:
    # 48 clusters of one unit; 8 labelled (fewer than 10: λ = 1, classic PPI); an unbounded
    # figure, so the small-n floor of a bounded one does not apply
    f_l = np.array([1.0, 0, 1, 1, 0, 1, 1, 0])
    y_l = np.array([1.0, 0, 1, 1, 0, 1, 1, 1])
    f = np.r_[f_l, np.tile([0.0, 1, 1, 0], 10)]
    y = np.r_[y_l, np.full(40, np.nan)]
    row = mean_row("rate", f, np.arange(48), y, bounds=(-math.inf, math.inf))
    # θ = ȳ_L + (f̄_U − f̄_L) = 6/8 + (20/40 − 5/8) = 5/8; raw = f̄ = 25/48; human-only = 3/4
    assert row["corrected"] == pytest.approx(5 / 8)
    assert row["raw"] == pytest.approx(25 / 48)
    assert row["human"] == pytest.approx(0.75)
    assert row["judge_error"] == pytest.approx(25 / 48 - 5 / 8)
    assert row["lam"] == 1.0 and row["n_labelled"] == 8 and row["n_clusters"] == 48
    # se² = s²(y − f)_L / n + s²(f) / N_u
    se = math.sqrt(np.var(y_l - f_l, ddof=1) / 8 + np.var(f, ddof=1) / 40)
    from scipy.stats import t

    assert row["ci_high"] == pytest.approx(5 / 8 + t.ppf(0.975, 7) * se)
    assert row["note"] == "" and row["unit"] == "conversation"


def test_a_row_on_fewer_than_five_labelled_conversations_reports_no_corrected_figure() -> None:
    f = np.array([1.0, 0, 1, 1, 0, 1, 1, 0])
    y = np.array([1.0, 1, 0, 1, np.nan, np.nan, np.nan, np.nan])
    row = mean_row("rate", f, np.arange(8), y)
    assert row["note"] == ("too few labelled conversations (n = 4 < 5) for a valid interval.")
    # neither the corrected figure nor the labels alone; the judge's own figure stays
    assert all(math.isnan(row[k]) for k in ("corrected", "ci_low", "ci_high", "human"))
    assert row["raw"] == pytest.approx(5 / 8) and row["n_labelled"] == 4
    five = mean_row("rate", np.r_[f, 1.0], np.arange(9), np.r_[y[:4], 0.0, y[4:]])
    assert not five["note"].startswith("too few") and five["n_labelled"] == 5


def test_a_bounded_figure_on_labels_that_all_agree_gets_a_floored_interval() -> None:
    # 6 labelled of 12, the judge agrees with people on every one: classic PPI's labelled
    # residuals are all 0, and without a floor the interval would be the judge's own
    f = np.array([1.0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    y = np.r_[f[:6], np.full(6, np.nan)]
    row = mean_row("rate", f, np.arange(12), y)
    # by hand: θ = 2/6 + (5/6 − 2/6) = 5/6; r = y − f − 0·θ = 0, q̃ = (0 + 2)/(6 + 4) = .2,
    # floored s² = .16 > 0; Var = .16/6 + s²(f over all 12)/6
    from scipy.stats import t

    se = math.sqrt(0.16 / 6 + np.var(f, ddof=1) / 6)
    assert row["corrected"] == pytest.approx(5 / 6) and row["lam"] == 1.0
    assert row["ci_low"] == pytest.approx(5 / 6 - t.ppf(0.975, 5) * se)
    unfloored = math.sqrt(np.var(f, ddof=1) / 6)
    assert row["ci_low"] < 5 / 6 - t.ppf(0.975, 5) * unfloored
    # graded values (0.3 / 0.6): a small residual means close agreement, no floor
    g = 0.3 + 0.3 * f
    graded = mean_row("mean R", g, np.arange(12), np.r_[g[:6], np.full(6, np.nan)])
    theta = 0.3 + 0.3 * 5 / 6
    assert graded["ci_low"] == pytest.approx(
        theta - t.ppf(0.975, 5) * math.sqrt(np.var(g, ddof=1) / 6))


def test_a_correction_wider_than_the_labels_alone_reports_the_labels_alone() -> None:
    # 8 of 16 clusters labelled (λ cannot be tuned: classic PPI, λ = 1) where the judge is noise:
    # s²(y − f) exceeds s²(y), so classic PPI would be wider than the labels alone
    f = np.tile([0.6, 0.4], 8)
    y = np.r_[[0.6, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4, 0.4], np.full(8, np.nan)]
    row = mean_row("mean R", f, np.arange(16), y, bounds=(-math.inf, math.inf))
    from scipy.stats import t

    half = t.ppf(0.975, 7) * math.sqrt(np.var(y[:8], ddof=1) / 8)
    assert row["corrected"] == pytest.approx(0.5) and row["lam"] == 0.0
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.5 - half, 0.5 + half))
    assert (row["ci_low"], row["ci_high"]) == (row["human_ci_low"], row["human_ci_high"])
    assert row["note"].startswith("human-only: on these 8 labelled conversations")
    assert row["estimator"].startswith("human-only (λ = 0")
    # classic PPI on the same labels: se² = s²(y − f)_L / n + s²(f) / N
    se_ppi = math.sqrt(np.var(y[:8] - f[:8], ddof=1) / 8 + np.var(f, ddof=1) / 16)
    assert 2 * half < 2 * t.ppf(0.975, 7) * se_ppi


def test_a_row_with_no_variation_has_no_zero_width_interval_and_no_negative_zero() -> None:
    # 0 of 2 labelled say yes, and the judge agrees everywhere: the "0.000 [0.00, 0.00]"
    f = np.zeros(6)
    y = np.array([0.0, 0.0, np.nan, np.nan, np.nan, np.nan])
    row = mean_row("rate", f, np.arange(6), y)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert row["note"].startswith("too few labelled conversations (n = 2 < 5)")
    row = mean_row("rate", np.zeros(8), np.arange(8), np.r_[np.zeros(5), np.full(3, np.nan)])
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert row["note"].startswith("not estimable:")
    assert row["raw"] == 0.0 and math.copysign(1.0, row["raw"]) == 1.0  # not −0.0
    d = drift_row("Drift", np.array([0.1, 0.1, 0.2, 0.2]), np.array([0.1, 0.1, np.nan, np.nan]),
                  np.array([1, 1, 2, 2]), np.array([1, 2, 1, 2]), 2.0)
    assert math.copysign(1.0, d["raw"]) == 1.0 and d["raw"] == 0.0


def test_stratified_row_refuses_a_stratum_without_labels() -> None:
    f = np.array([0.2, 0.4, 0.6, 0.8, 0.1, 0.3, 0.5, 0.7, 0.9, 0.2, 0.4, 0.6])
    y = np.r_[[0.2, 0.5, 0.6, 0.7, 0.2], np.full(7, np.nan)]
    strata = {k: "a" if k < 6 else "b" for k in range(12)}
    row = mean_row("RCE_t", f, np.arange(12), y, strata=strata)
    assert row["note"].startswith("refused: stratum 'b' has 0 labelled clusters of 6")
    assert math.isnan(row["corrected"]) and row["raw"] == pytest.approx(f.mean())


def test_difference_row_needs_disjoint_groups() -> None:
    f = np.array([1.0, 0, 1, 0, 1, 0])
    y = np.array([1.0, 0, 1, np.nan, np.nan, np.nan])
    shared = difference_row("d", (f, np.array([1, 2, 3, 4, 5, 6]), y),
                            (f, np.array([1, 7, 8, 9, 10, 11]), y))
    assert shared["note"].startswith("refused: the two groups share conversations")
    a = (f, np.arange(6), y)
    b = (1 - f, np.arange(6, 12), np.where(np.isnan(y), np.nan, 1 - y))
    few = difference_row("d", a, b)
    assert few["note"] == ("in one group too few labelled conversations (n = 3 < 5) for a "
                           "valid interval.")
    f, y = np.tile(f, 2), np.tile(y, 2)
    a = (f, np.arange(12), y)
    b = (1 - f, np.arange(12, 24), np.where(np.isnan(y), np.nan, 1 - y))
    row = difference_row("d", a, b)
    ra, rb = mean_row("a", *a), mean_row("b", *b)
    assert row["corrected"] == pytest.approx(ra["corrected"] - rb["corrected"])
    assert row["raw"] == pytest.approx(ra["raw"] - rb["raw"])


# --------------------------------------------------------------------------- design
def _items() -> pd.DataFrame:
    return pd.DataFrame({"item_id": [f"c{c}t{t}" for c in range(6) for t in (1, 2)],
                         "conversation_id": [f"c{c}" for c in range(6) for _ in (1, 2)],
                         "severity": [1 + c % 2 for c in range(6) for _ in (1, 2)]})


def test_no_recorded_design_is_a_simple_random_sample_with_a_warning() -> None:
    d = design_strata(_items(), None, labelled=["c0t1", "c0t2", "c1t1"],
                      cluster_col="conversation_id")
    assert d.strata is None and d.warning is not None
    assert "no recorded sampling design" in d.warning and "2 labelled" in d.warning


def test_recorded_strata_reach_every_conversation() -> None:
    design = pd.DataFrame({"item_id": ["c0t1", "c0t2", "c1t1", "c1t2"],
                           "reason": ["stratum"] * 4,
                           "stratum": ["severity=1", "severity=1", "severity=2", "severity=2"],
                           "weight": [3.0] * 4, "overlap": [0] * 4})
    d = design_strata(_items(), design, labelled=["c0t1", "c1t2"], cluster_col="conversation_id",
                      sample="s")
    assert d.warning is None
    assert d.strata == {"c0": "severity=1", "c1": "severity=2", "c2": "severity=1",
                        "c3": "severity=2", "c4": "severity=1", "c5": "severity=2"}


def test_targeted_or_foreign_labels_are_refused_in_one_sentence() -> None:
    design = pd.DataFrame({"item_id": ["c0t1"], "reason": ["disagreement"], "stratum": [None],
                           "weight": [1.0], "overlap": [0]})
    with pytest.raises(JudgekitError, match="not a random sample"):
        design_strata(_items(), design, labelled=["c0t1"], cluster_col="conversation_id",
                      sample="s")
    design["reason"] = "random"
    with pytest.raises(JudgekitError, match="1 labelled conversation_id values .* not in sample"):
        design_strata(_items(), design, labelled=["c0t1", "c3t1"],
                      cluster_col="conversation_id", sample="s")


def test_sample_where_filters_and_names_bad_values() -> None:
    kept, note = filter_where(_items(), ["severity=2"])
    assert set(kept["conversation_id"]) == {"c1", "c3", "c5"} and "6 of 12" in str(note)
    with pytest.raises(JudgekitError, match="no item has severity = '7'"):
        filter_where(_items(), ["severity=7"])
    with pytest.raises(JudgekitError, match="no column 'tier'"):
        filter_where(_items(), ["tier=1"])


# --------------------------------------------------------------------------- honest intervals
def test_single_prompt_summary_has_no_zero_width_interval() -> None:
    # the "0.667 [0.667, 0.667]": one prompt, 2 refusals of 3 samples
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "model": "m", "prompt_id": "p1",
                          "sample": [0, 1, 2]})
    ratings = ratings_frame([("a", "full_refusal"), ("b", "full_refusal"),
                             ("c", "full_compliance")], REFUSAL, rater="ann", kind="human")
    res = refusal_distribution(ratings, items, rubric=REFUSAL,
                               resampling=Resampling(n_resamples=200))
    row = res.table("by_model").iloc[0]
    assert row["mean_rate"] == pytest.approx(2 / 3)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


# --------------------------------------------------------------------------- CLI
def _run(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def study_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic study: judges on every item, then a stratified whole-conversation sample
    drawn and recorded, and the reference's labels on its items only."""
    folder = tmp_path_factory.mktemp("study")
    paths = write_study(folder, human_share=1.0)
    ratings = pd.read_csv(paths["ratings"])
    ratings[ratings["rater_kind"] == "judge"].to_csv(folder / "judges.csv", index=False)
    store = folder / "judgekit.db"
    assert _run("import", folder / "judges.csv", "--rubric", "restrictiveness", "--items",
                paths["items"], "--store", store).exit_code == 0
    res = _run("sample", "--name", "drift", "--size", "300", "--by-conversation", "--by",
               "model,severity,benign_lookalike", "--min-per-stratum", "3", "--no-targeted",
               "--random-share", "0", "--groups", "model,severity,tactic", "--out",
               folder / "design.csv", "--store", store)
    assert res.exit_code == 0, res.output
    assert "analysis groups get 2–9 labelled conversations" in res.output
    design = pd.read_csv(folder / "design.csv")
    ref = ratings[(ratings["rater_kind"] == "reference")
                  & ratings["item_id"].isin(design["item_id"])]
    ref.to_csv(folder / "ref.csv", index=False)
    assert _run("import", folder / "ref.csv", "--rubric", "restrictiveness",
                "--store", store).exit_code == 0
    return store


def test_cli_calibration_correct_ppi_reads_the_recorded_design(study_store: Path,
                                                               tmp_path: Path) -> None:
    res = _run("analyze", "calibration", "--judge", "judge-lean", "--untrusted",
               "--harm-column", "severity", "--correct", "ppi", "--bootstrap", "50", "--quiet",
               "--where", "model=m-eroding", "--by", "tactic", "--out", tmp_path,
               "--store", study_store)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "stratified by model, severity, benign_lookalike" in out
    assert "Corrected C(t), RCE_t and Drift(t)" in out and "human-only [95% CI]" in out
    assert "stratified PPI++" in out
    data = json.loads((tmp_path / "calibration.json").read_text())
    rows = data["tables"]["ppi_by_turn"]["rows"]
    d6 = next(r for r in rows if r["figure"] == "Drift(t)" and r["turn"] == 6)
    assert d6["n_labelled"] >= 2 and d6["ci_low"] < d6["corrected"] < d6["ci_high"]
    assert d6["unit"] == "conversation" and d6["estimator"].startswith("stratified PPI++")
    # Drift(t | tactic): one row per model, tactic and turn 2..6, each with its n or its reason
    by_tactic = data["tables"]["ppi_by_tactic_turn"]["rows"]
    assert {r["tactic"] for r in by_tactic} == {"roleplay", "authority", "incremental", "urgency"}
    assert all(r["note"] or r["ci_low"] is not None for r in by_tactic)
    assert "ppi_drift_by_turn" in data["charts"]  # raw (solid) and corrected (dashed)
    svg = (tmp_path / "charts" / "calibration-ppi_drift_by_turn.svg").read_text()
    assert "raw" in svg and "corrected" in svg and "stroke-dasharray" in svg
    for name in ("calibration.md", "calibration.json", "calibration-ppi_by_turn.csv"):
        text = (tmp_path / name).read_text()
        assert "-0.0," not in text and "-0.000" not in text and "−0.00" not in text


def test_cli_without_a_design_warns_and_criteria_correct(study_store: Path,
                                                        tmp_path: Path) -> None:
    crit = tmp_path / "c.yaml"
    crit.write_text("rater: judge-lean\ncriteria:\n"
                    "  - {name: hard refusal tier 5, rubric: restrictiveness, "
                    "label: r4_hard_refusal, where: {severity: 5}}\n", encoding="utf-8")
    res = _run("analyze", "criteria", crit, "--untrusted", "--correct", "ppi",
               "--sample", "drift", "--store", study_store)
    assert res.exit_code in (0, 1), res.output
    assert "Corrected criteria" in res.output and "hard refusal tier 5" in res.output
    res = _run("analyze", "criteria", crit, "--untrusted", "--correct", "ppi",
               "--sample", "nosuch", "--store", study_store)
    one_sentence_error(res, "Sample 'nosuch' is not in")


def test_corrected_table_row_of_0_of_2_has_no_zero_width_interval() -> None:
    """The issue's "0.000 [0.00, 0.00]": 2 labelled items, neither a refusal, a judge that
    agrees, 6 items none refused (PPI on mean R via the existing --correct tables)."""
    from judgekit.analysis.correction.tables import correction_tables

    codes = list(REFUSAL.codes)
    pos, neg = codes[-1], codes[0]
    items = pd.DataFrame({"item_id": [f"i{n}" for n in range(6)], "model": "m",
                          "conversation_id": [f"c{n}" for n in range(6)]})
    judge = ratings_frame([(f"i{n}", neg) for n in range(6)], REFUSAL, rater="j")
    ref = ratings_frame([("i0", neg), ("i1", neg)], REFUSAL, rater="h", kind="human")
    w = {c: (1.0 if c == pos else 0.0) for c in codes}
    (t,) = correction_tables(judge, Reference(ref, "h"), items, rubric=REFUSAL, weights=w,
                             figure="refusal rate", method="ppi",
                             columns=ItemColumns(prompt="conversation_id"),
                             resampling=Resampling(n_resamples=200, seed=0))
    row = t.frame.iloc[0]
    # the raw figure: 0 of 6, every resample 0 -> the figure without an interval (was [0, 0])
    assert row["raw"] == 0.0 and math.copysign(1.0, row["raw"]) == 1.0
    assert math.isnan(row["raw_ci_low"]) and math.isnan(row["raw_ci_high"])
    # the corrected figure: refused with its sentence, never 0.000 [0.00, 0.00]
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert row["note"].startswith("not corrected: too few labelled conversations (n = 2 < 5)")


def test_calibration_bootstrap_gives_no_zero_width_interval() -> None:
    """Drift at the first turn is 0 in every resample and C(1) is 1 in every resample: the raw
    tables showed "0.000 [0.00, 0.00]" and "1.000 [1.00, 1.00]"; now the figure has no CI."""
    from judgekit.analysis.calibration.estimate import calibration
    from judgekit.analysis.frames import harm_from_column

    rub = load_rubric("restrictiveness")
    level = {v: k for k, v in rub.values.items()}
    rows, items = [], []
    for c in range(8):
        sev = 1 + 4 * (c % 2)
        for turn in (1, 2):
            iid = f"c{c}t{turn}"
            r = (0.0 if sev == 1 else 1.0) if turn == 1 else [0.0, 0.25, 0.5, 1.0][c % 4]
            items.append({"item_id": iid, "model": "m", "conversation_id": f"c{c}",
                          "turn": turn, "severity": sev})
            rows.append((iid, level[r]))
    items_df = pd.DataFrame(items)
    ratings = ratings_frame(rows, rub, rater="ann", kind="human")
    res = calibration(ratings, items_df, harm_from_column(items_df, "severity"), rubric=rub,
                      resampling=Resampling(n_resamples=200))
    bt = res.table("by_turn").set_index("turn")
    assert bt.loc[1, "drift"] == 0.0 and math.isnan(bt.loc[1, "drift_ci_low"])
    assert bt.loc[1, "C"] == 1.0 and math.isnan(bt.loc[1, "C_ci_low"])
    assert bt.loc[2, "drift_ci_low"] < bt.loc[2, "drift_ci_high"]  # a figure that varies keeps it


def test_cli_distribution_corrects_rates_and_form_shares(tmp_path: Path) -> None:
    """The shipped synthetic multi-turn set: judge-a's refusal rates and refusal-form shares,
    corrected against the adjudicated labels (no recorded design: the warning is printed)."""
    from tests.analysis_fixtures import SYNTH

    store = tmp_path / "j.db"
    assert _run("import", SYNTH / "restrictiveness_ratings.csv", "--rubric", "restrictiveness",
                "--items", SYNTH / "items.csv", "--store", store).exit_code == 0
    assert _run("import", SYNTH / "refusal_form_ratings.csv", "--rubric", "refusal_form",
                "--store", store).exit_code == 0
    res = _run("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness",
               "--untrusted", "--correct", "ppi", "--reference", "adjudicated", "--bootstrap",
               "50", "--quiet", "--out", tmp_path / "o", "--store", store)
    assert res.exit_code == 0, res.output
    assert "no recorded sampling design" in res.output
    data = json.loads((tmp_path / "o" / "distribution.json").read_text())
    rates = data["tables"]["ppi_rates"]["rows"]
    assert {r["turn"] for r in rates} >= {"all", 1, 6}
    forms = data["tables"]["ppi_form_shares"]["rows"]
    codes = set(load_rubric("refusal_form").codes)
    assert {r["label"] for r in forms} == codes
    for model in {r["model"] for r in forms}:
        raw = [r["raw"] for r in forms if r["model"] == model]
        assert sum(raw) == pytest.approx(1.0)  # the judge's shares over every sample sum to 1


def test_corrected_table_counts_the_items_its_ppi_figure_is_computed_on() -> None:
    """A 0/1 figure takes the majority of a judge's trials and a tie abstains: an item whose two
    trials split is not in the figure, so it is not in the table's n either (n beside the value
    is the value's denominator)."""
    from judgekit.analysis.correction.tables import correction_tables

    codes = list(REFUSAL.codes)
    pos, neg = codes[-1], codes[0]
    items = pd.DataFrame({"item_id": [f"i{n}" for n in range(8)], "model": "m",
                          "conversation_id": [f"c{n}" for n in range(8)]})
    # i0's two trials split (a tie: abstains); the others say refusal on i1..i3 only
    judge = ratings_frame([("i0", pos, 0), ("i0", neg, 1)]
                          + [(f"i{n}", pos if n < 4 else neg, t) for n in range(1, 8)
                             for t in (0, 1)], REFUSAL, rater="j")
    # the reference labels i0..i5; its i5 is a tie too
    ref = ratings_frame([("i0", pos), ("i1", pos), ("i2", neg), ("i3", pos), ("i4", neg),
                         ("i5", pos, 0), ("i5", neg, 1)], REFUSAL, rater="h", kind="human")
    w = {c: (1.0 if c == pos else 0.0) for c in codes}
    (t,) = correction_tables(judge, Reference(ref, "h"), items, rubric=REFUSAL, weights=w,
                             figure="refusal rate", method="ppi",
                             columns=ItemColumns(prompt="conversation_id"),
                             resampling=Resampling(n_resamples=200, seed=0))
    row = t.frame.iloc[0]
    assert row["raw"] == pytest.approx(3 / 7)  # i1..i3 of the 7 items with a majority
    assert row["n_total"] == 7
    assert row["n_labelled"] == 4  # i1..i4: labelled by the reference, each with a majority
    assert row["reference_labelled"] == pytest.approx(2 / 4)  # i1, i3 of i1..i4
