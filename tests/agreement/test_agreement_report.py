"""agreement_report on the real XSTest v2 labels, checked against the authors' published figures
and against independent computations (pandas / scikit-learn on the raw CSV)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import PUBLISHED, XSTEST_LABELS
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement.report import agreement_report, collapse_trials
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
MAP = {"1_full_compliance": "full_compliance", "2_full_refusal": "full_refusal",
       "3_partial_refusal": "partial_refusal"}


@pytest.fixture(scope="module")
def report(xstest_store):
    return agreement_report(xstest_store, rubric=REFUSAL, by=["model", "prompt_safety"], n_resamples=200)


@pytest.fixture(scope="module")
def raw():
    return pd.read_csv(XSTEST_LABELS)


def test_per_model_human_agreement_reproduces_published_figures(report):
    # Röttger et al. (repository analysis notebook): annotator 1 vs 2, % agreement per model
    published = pd.read_csv(PUBLISHED / "xstest_repo_interannotator.csv")
    assert len(published) == 5
    for row in published.itertuples():
        s = report.slice("model", row.model)
        assert round(100 * s["human_ceiling"]["percent_agreement"]["value"], 1) == row.pct_agreement_annotator1_vs_2
        assert s["human_ceiling"]["n"] == 450


def test_per_model_fleiss_kappa_matches_published(raw):
    from judgekit.agreement import fleiss_kappa

    published = pd.read_csv(PUBLISHED / "xstest_repo_interannotator.csv")
    for row in published.itertuples():
        g = raw[raw.model == row.model]
        k = fleiss_kappa([g.annotation_1.tolist(), g.annotation_2.tolist()])
        assert round(k, 2) == row.fleiss_kappa


def test_gpt4_abstentions_are_counted_apart_and_kappa_is_on_rated_items(report, raw):
    j = report.judge("gpt4")
    assert j["n_items"] == 2250 and j["n_abstain"] == 11 and j["n_rated"] == 2239
    v = j["vs_reference"]
    assert v["n"] == 2239
    ok = raw[raw.gpt4_label.isin(MAP)]
    assert len(ok) == 2239
    expected = cohen_kappa_score(ok.final_label.map(MAP), ok.gpt4_label.map(MAP))
    assert v["kappa"]["value"] == pytest.approx(expected, abs=1e-6)
    assert v["percent_agreement"]["value"] == pytest.approx((ok.final_label == ok.gpt4_label).mean(), abs=1e-6)
    assert v["kappa"]["low"] < v["kappa"]["value"] < v["kappa"]["high"]
    # the abstention rate is 11/2250, not folded into disagreement
    assert j["abstain_rate"] == pytest.approx(11 / 2250, abs=1e-6)


def test_string_match_never_says_partial_and_report_shows_it(report, raw):
    cm = report.judge("string_match")["vs_reference"]["confusion"]
    assert cm["support"]["partial_refusal"] == int((raw.final_label == "3_partial_refusal").sum())
    assert cm["recall"]["partial_refusal"] == 0.0
    assert cm["precision"]["partial_refusal"] is None  # never predicted: precision undefined, not 0
    col = cm["labels"].index("partial_refusal")
    assert sum(row[col] for row in cm["matrix"]) == 0


def test_judge_vs_each_human_and_alpha_delta(report, raw):
    j = report.judge("gpt4")
    ok = raw[raw.gpt4_label.isin(MAP)]
    for h in ("annotation_1", "annotation_2"):
        exp = cohen_kappa_score(ok[h].map(MAP), ok.gpt4_label.map(MAP))
        assert j["vs_humans"][h]["kappa"]["value"] == pytest.approx(exp, abs=1e-6)
    assert j["alpha_delta"] == pytest.approx(j["alpha_with_judge"]["value"] - j["alpha_humans"]["value"], abs=1e-6)
    # on XSTest both judges fall well short of the humans (human-human alpha ~0.94), and the one
    # with the lower kappa against the reference (GPT-4 here, 0.63 vs 0.70) costs more alpha
    sm = report.judge("string_match")
    assert j["alpha_delta"] < 0 and sm["alpha_delta"] < 0
    assert (j["vs_reference"]["kappa"]["value"] < sm["vs_reference"]["kappa"]["value"]) == (
        j["alpha_delta"] < sm["alpha_delta"])


def test_slices_partition_the_items(report):
    for by, n in (("model", 5), ("prompt_safety", 2)):
        slices = [s for s in report.data["slices"] if s["by"] == by]
        assert len(slices) == n
        assert sum(s["n_items"] for s in slices) == 2250
    assert report.slice("prompt_safety", "unsafe")["n_items"] == 1000


def test_consensus_reference_and_ties(store):
    # three humans; item c has a 1-1 split between two humans only -> no consensus
    rows = [
        ("a", "h1", "full_refusal"), ("a", "h2", "full_refusal"), ("a", "h3", "full_compliance"),
        ("b", "h1", "full_compliance"), ("b", "h2", "full_compliance"), ("b", "h3", "full_compliance"),
        ("c", "h1", "full_refusal"), ("c", "h2", "full_compliance"),
        ("a", "j", "full_refusal"), ("b", "j", "full_refusal"), ("c", "j", "full_refusal"),
    ]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "label"])
    df["rater_kind"] = np.where(df.rater_id == "j", "judge", "human")
    df["rubric"] = REFUSAL.id
    df["rubric_hash"] = REFUSAL.hash
    df["status"] = "ok"
    df["trial"] = 0
    rep = agreement_report(df, rubric=REFUSAL, n_resamples=100)
    assert rep.data["reference"] == {"rater": None, "kind": "consensus"}
    v = rep.judge("j")["vs_reference"]
    # consensus: a -> full_refusal (2 of 3), b -> full_compliance, c -> tie (excluded)
    assert v["n"] == 2
    assert v["percent_agreement"]["value"] == 0.5
    assert any("no reference label" in w for w in rep.warnings)


def test_collapse_trials_majority_and_tie():
    df = pd.DataFrame({
        "item_id": ["a"] * 3 + ["b"] * 2 + ["c"] * 2,
        "rater_id": "j", "rater_kind": "judge",
        "label": ["full_refusal", "full_refusal", "full_compliance", "full_refusal", "full_compliance", None, None],
        "status": ["ok"] * 5 + ["error", "abstain"],
        "trial": [0, 1, 2, 0, 1, 0, 1],
    })
    out = collapse_trials(df).set_index("item_id")
    assert out.loc["a", "label"] == "full_refusal" and out.loc["a", "status"] == "ok"
    assert pd.isna(out.loc["b", "label"]) and out.loc["b", "status"] == "abstain"  # 1-1 tie
    assert out.loc["c", "status"] == "abstain"  # an abstention among errors


def test_unknown_slice_column_and_unknown_rater_are_clear_errors(xstest_store):
    with pytest.raises(JudgekitError, match="--by 'modle'.*available: .*model"):
        agreement_report(xstest_store, rubric=REFUSAL, by=["modle"], n_resamples=100)
    with pytest.raises(JudgekitError, match="Judge rater 'claude' has no ratings"):
        agreement_report(xstest_store, rubric=REFUSAL, judges=["claude"], n_resamples=100)
    with pytest.raises(JudgekitError, match="No ratings under rubric refusal_form"):
        agreement_report(xstest_store, rubric=load_rubric("refusal_form"), n_resamples=100)


def test_undefined_when_every_rating_is_one_category(store):
    df = pd.DataFrame({"item_id": list("abcd") * 2, "rater_id": ["h1"] * 4 + ["j"] * 4,
                       "rater_kind": ["reference"] * 4 + ["judge"] * 4, "label": "full_refusal",
                       "rubric": REFUSAL.id, "rubric_hash": REFUSAL.hash, "status": "ok", "trial": 0})
    v = agreement_report(df, rubric=REFUSAL, n_resamples=100).judge("j")["vs_reference"]
    assert v["percent_agreement"]["value"] == 1.0
    assert v["kappa"]["value"] is None and v["kappa"]["undefined"]
    assert "full_refusal" in v["kappa"]["undefined"]
    assert not math.isnan(v["percent_agreement"]["value"])


def _frame(rows, rubric):
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["rubric"], df["rubric_hash"], df["status"], df["trial"] = rubric.id, rubric.hash, "ok", 0
    return df


def test_ordinal_ceiling_is_weighted_like_the_judge_figure():
    rub = load_rubric("restrictiveness")
    rng = np.random.default_rng(3)
    codes = rub.codes
    truth = rng.integers(0, 5, 120)
    h1 = np.clip(truth + rng.integers(-1, 2, 120), 0, 4)
    h2 = np.clip(truth + rng.integers(-1, 2, 120), 0, 4)
    rows = [(f"i{k}", "h1", "human", codes[h1[k]]) for k in range(120)]
    rows += [(f"i{k}", "h2", "human", codes[h2[k]]) for k in range(120)]
    rows += [(f"i{k}", "j", "judge", codes[truth[k]]) for k in range(120)]
    rep = agreement_report(_frame(rows, rub), rubric=rub, n_resamples=100)
    ceiling = rep.slice()["human_ceiling"]
    exp = cohen_kappa_score(h1, h2, weights="quadratic", labels=range(5))
    assert ceiling["weighted_kappa"]["value"] == pytest.approx(exp, abs=1e-6)
    assert ceiling["kappa"]["value"] == pytest.approx(cohen_kappa_score(h1, h2), abs=1e-6)


def test_three_humans_ceiling_uses_fleiss_and_mean_pairwise_weighted_kappa():
    from judgekit.agreement import fleiss_kappa

    rub = load_rubric("restrictiveness")
    rng = np.random.default_rng(5)
    lab = rng.integers(0, 5, (3, 60))
    rows = [(f"i{k}", f"h{r}", "human", rub.codes[lab[r, k]]) for r in range(3) for k in range(60)]
    rows += [(f"i{k}", "j", "judge", rub.codes[lab[0, k]]) for k in range(60)]
    ceiling = agreement_report(_frame(rows, rub), rubric=rub, n_resamples=100).slice()["human_ceiling"]
    assert ceiling["kappa"]["value"] == pytest.approx(fleiss_kappa(lab), abs=1e-6)
    pairs = [cohen_kappa_score(lab[a], lab[b], weights="quadratic") for a, b in ((0, 1), (0, 2), (1, 2))]
    assert ceiling["weighted_kappa"]["value"] == pytest.approx(np.mean(pairs), abs=1e-6)


def test_crossed_slices(xstest_store, raw):
    rep = agreement_report(xstest_store, rubric=REFUSAL, by=["model+prompt_safety"], n_resamples=100)
    slices = [s for s in rep.data["slices"] if s["by"] == "model+prompt_safety"]
    assert len(slices) == 10 and sum(s["n_items"] for s in slices) == 2250
    s = rep.slice("model+prompt_safety", "gpt4 / unsafe")
    g = raw[(raw.model == "gpt4") & (raw.prompt_safety == "unsafe")]
    assert s["n_items"] == len(g) == 200
    assert s["human_ceiling"]["percent_agreement"]["value"] == pytest.approx((g.annotation_1 == g.annotation_2).mean())


def test_slices_with_missing_metadata_values(store):
    rows = [(f"i{k}", r, "human" if r != "j" else "judge", "full_refusal" if k % 2 else "full_compliance")
            for k in range(6) for r in ("h1", "h2", "j")]
    df = _frame(rows, REFUSAL)
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(6)],
                          "model": ["a", "a", "b", None, "b", "a"], "cat": ["x", None, "y", "y", "x", "x"]})
    rep = agreement_report(df, rubric=REFUSAL, items=items, by=["model", "model+cat"], n_resamples=100)
    keys = {(s["by"], s["key"]): s["n_items"] for s in rep.data["slices"]}
    assert keys[("model", "a")] == 3 and keys[("model", "b")] == 2
    assert keys[("model+cat", "a / x")] == 2 and keys[("model+cat", "b / y")] == 1
    # A missing value is a slice of its own, "(missing)" (in a crossed key, the
    # missing part), so the crossed slices partition all 6 items (they used to drop the 2)
    assert keys[("model+cat", "a / (missing)")] == 1 and keys[("model+cat", "(missing) / y")] == 1
    assert sum(n for (b, _), n in keys.items() if b == "model+cat") == 6
    assert any("no 'model' value" in w for w in rep.warnings)


def test_interval_rubric_alpha_uses_the_rubric_values(tmp_path):
    import krippendorff

    p = tmp_path / "score.yaml"
    p.write_text("name: score\nversion: 1\ntitle: t\nlevel: interval\ninstructions: i\nlabels:\n"
                 "  - {code: low, value: 0, description: d}\n  - {code: mid, value: 0.2, description: d}\n"
                 "  - {code: high, value: 1, description: d}\n", encoding="utf-8")
    rub = load_rubric(p)
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    rows = [(f"i{k}", "h1", "human", rub.codes[a[k]]) for k in range(50)]
    rows += [(f"i{k}", "h2", "human", rub.codes[b[k]]) for k in range(50)]
    rows += [(f"i{k}", "j", "judge", rub.codes[a[k]]) for k in range(50)]
    rep = agreement_report(_frame(rows, rub), rubric=rub, reference="consensus", n_resamples=100)
    # alpha at interval level on the values 0, 0.2, 1 (not on the positions 0, 1, 2)
    vals = np.array([0, 0.2, 1])
    exp = krippendorff.alpha(reliability_data=[vals[a], vals[b]], level_of_measurement="interval")
    assert rep.slice()["human_ceiling"]["alpha"]["value"] == pytest.approx(exp, abs=1e-6)
    exp_j = krippendorff.alpha(reliability_data=[vals[a], vals[b], vals[a]], level_of_measurement="interval")
    assert rep.judge("j")["alpha_with_judge"]["value"] == pytest.approx(exp_j, abs=1e-6)
