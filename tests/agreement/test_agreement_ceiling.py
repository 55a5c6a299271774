"""The like-for-like human ceiling (leave-one-out), the pairwise human table and
the names of the ceiling's κ figures; on hand-computed cases, a synthetic outlier annotator and
the real XSTest annotators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import XSTEST_LABELS
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement.ceiling import loo_consensus
from judgekit.agreement.report import agreement_report
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
RESTRICT = load_rubric("restrictiveness")
MAP = {"1_full_compliance": "full_compliance", "2_full_refusal": "full_refusal",
       "3_partial_refusal": "partial_refusal"}


def _frame(rows, rubric):
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["rubric"], df["rubric_hash"], df["status"], df["trial"] = rubric.id, rubric.hash, "ok", 0
    return df


def _wide(raters: dict[str, str], kinds: dict[str, str], rubric=REFUSAL):
    """Ratings from strings of label letters (C = compliance, R = refusal, P = partial, . none)."""
    code = {"C": rubric.codes[0], "P": rubric.codes[1], "R": rubric.codes[2]}
    rows = [(f"i{k + 1}", r, kinds.get(r, "human"), code[ch])
            for r, s in raters.items() for k, ch in enumerate(s) if ch != "."]
    return _frame(rows, rubric)


# --------------------------------------------------------------------------- a tiny case by hand
TINY = {"h1": "RRRCCC", "h2": "RRCCCC", "h3": "CRRCRC", "j": "RRRCCC"}


@pytest.fixture(scope="module")
def tiny():
    return agreement_report(_wide(TINY, {"j": "judge"}), rubric=REFUSAL, n_resamples=300).slice()


def test_tiny_leave_one_out_arithmetic(tiny):
    # C-1 = majority of h2, h3: i1 R/C tie, i2 R, i3 C/R tie, i4 C, i5 C/R tie, i6 C
    #   h1 on i2, i4, i6 = R, C, C vs R, C, C: 3/3; kappa 1; 3 ties
    # C-2 = majority of h1, h3: i1 tie, i2 R, i3 R, i4 C, i5 tie, i6 C
    #   h2 on i2, i3, i4, i6 = R, C, C, C vs R, R, C, C: po = 3/4, pe = .5 * .25 + .5 * .75 = .5
    #   -> kappa = (.75 - .5) / .5 = .5; 2 ties
    # C-3 = majority of h1, h2: i1 R, i2 R, i3 tie, i4 C, i5 C, i6 C
    #   h3 on i1, i2, i4, i5, i6 = C, R, C, R, C vs R, R, C, C, C: po = 3/5,
    #   pe = (2/5)(2/5) + (3/5)(3/5) = 13/25 -> kappa = (15/25 - 13/25) / (12/25) = 1/6; 1 tie
    loo = tiny["human_ceiling"]["loo"]
    per = {p["human"]: p for p in loo["per_human"]}
    assert [p["human"] for p in loo["per_human"]] == ["h1", "h2", "h3"]
    assert {h: p["n"] for h, p in per.items()} == {"h1": 3, "h2": 4, "h3": 5}
    assert {h: p["n_ties"] for h, p in per.items()} == {"h1": 3, "h2": 2, "h3": 1}
    assert per["h1"]["kappa"]["value"] == 1.0
    assert per["h2"]["kappa"]["value"] == 0.5 and per["h2"]["percent_agreement"]["value"] == 0.75
    assert per["h3"]["kappa"]["value"] == pytest.approx(1 / 6, abs=1e-6)
    assert per["h3"]["percent_agreement"]["value"] == 0.6
    assert per["h3"]["weighted_kappa"] is None  # nominal rubric
    # the ceiling is the mean over humans: (1 + 1/2 + 1/6) / 3 = 10/18
    assert loo["mean"]["kappa"]["value"] == pytest.approx(10 / 18, abs=1e-6)
    assert loo["mean"]["n_humans"] == 3 and loo["mean"]["n"] == 6
    assert loo["undefined"] is None


def test_tiny_judge_against_the_same_consensus(tiny):
    # j says what h1 says: against C-1 on i2, i4, i6 it agrees fully (kappa 1, like h1); against
    # C-2 on i2, i3, i4, i6 = R, R, C, C vs R, R, C, C: 1; against C-3 on i1 i2 i4 i5 i6: 1
    vs = tiny["judges"]["j"]["vs_loo"]
    per = {p["human"]: p for p in vs["per_human"]}
    assert {h: p["n"] for h, p in per.items()} == {"h1": 3, "h2": 4, "h3": 5}
    assert all(p["kappa"]["value"] == 1.0 for p in per.values())
    # on the same items the human's own figure, and the paired difference judge - human
    assert per["h2"]["human_same_items"]["kappa"]["value"] == 0.5
    assert per["h2"]["difference"]["kappa"]["value"] == 0.5
    assert per["h3"]["difference"]["kappa"]["value"] == pytest.approx(5 / 6, abs=1e-6)
    assert vs["mean"]["kappa"]["value"] == 1.0
    assert vs["mean"]["difference"]["kappa"]["value"] == pytest.approx(1 - 10 / 18, abs=1e-6)


def test_tiny_pairwise_table_and_names(tiny):
    hp = tiny["human_pairwise"]
    assert hp["raters"] == ["h1", "h2", "h3"]
    pairs = {(p["a"], p["b"]): p for p in hp["pairs"]}
    assert set(pairs) == {("h1", "h2"), ("h1", "h3"), ("h2", "h3")}
    # % agreement: h1-h2 5/6, h1-h3 4/6, h2-h3 3/6
    assert [pairs[k]["percent_agreement"]["value"] for k in sorted(pairs)] == pytest.approx([5 / 6, 4 / 6, 3 / 6], abs=1e-6)
    for (a, b), p in pairs.items():
        exp = cohen_kappa_score(list(TINY[a]), list(TINY[b]))
        assert p["kappa"]["value"] == pytest.approx(exp, abs=1e-6) and p["n"] == 6
        i, k = hp["raters"].index(a), hp["raters"].index(b)
        assert hp["matrix"]["kappa"][i][k] == hp["matrix"]["kappa"][k][i] == p["kappa"]["value"]
    assert hp["matrix"]["kappa"][0][0] is None
    # three humans: the pooled ceiling kappa is Fleiss', and says so
    assert tiny["human_ceiling"]["kappa_name"] == "Fleiss κ"


def test_consensus_ties_are_vectorised_and_exclude_only_the_left_out_human():
    # rows: items; columns: 4 humans (codes 0..2, -1 missing)
    h = np.array([[0, 0, 1, 1], [0, 0, 0, 1], [2, -1, 2, 0], [-1, -1, 1, -1]])
    cons, tie = loo_consensus(h, 3)
    # item 1: leaving out h0 leaves 0, 1, 1 -> 1; leaving out h2 leaves 0, 0, 1 -> 0
    assert cons[0].tolist() == [1, 1, 0, 0] and not tie[0].any()
    # item 2: leaving out h3 leaves 0, 0, 0 -> 0; leaving out h0 leaves 0, 0, 1 -> 0
    assert cons[1].tolist() == [0, 0, 0, 0]
    # item 3 (h1 missing): leaving out h0 leaves 2, 0 -> tie; leaving out h3 leaves 2, 2 -> 2
    assert cons[2].tolist() == [-1, 2, -1, 2] and tie[2].tolist() == [True, False, True, False]
    # item 4: only h2 rated; without h2 nobody is left (no consensus, and not a tie)
    assert cons[3].tolist() == [1, 1, -1, 1] and not tie[3].any()


# --------------------------------------------------------------------------- an outlier annotator
def test_outlier_annotator_shows_in_pairwise_and_loo():
    rng = np.random.default_rng(11)
    n = 400
    truth = rng.integers(0, 3, n)

    def noisy(p):
        return np.where(rng.random(n) < p, truth, rng.integers(0, 3, n))

    lab = {"h1": noisy(0.9), "h2": noisy(0.9), "h3": noisy(0.45), "j": noisy(0.8)}
    rows = [(f"i{k}", r, "judge" if r == "j" else "human", REFUSAL.codes[v[k]]) for r, v in lab.items() for k in range(n)]
    s = agreement_report(_frame(rows, REFUSAL), rubric=REFUSAL, n_resamples=200).slice()
    pairs = {(p["a"], p["b"]): p["kappa"] for p in s["human_pairwise"]["pairs"]}
    good = pairs["h1", "h2"]
    assert good["value"] == pytest.approx(cohen_kappa_score(lab["h1"], lab["h2"]), abs=1e-6)
    for k in (("h1", "h3"), ("h2", "h3")):
        assert pairs[k]["value"] == pytest.approx(cohen_kappa_score(lab[k[0]], lab[k[1]]), abs=1e-6)
        # visibly lower: the outlier's pairs' CIs lie wholly below the good pair's
        assert pairs[k]["high"] < good["low"]
    per = {p["human"]: p["kappa"] for p in s["human_ceiling"]["loo"]["per_human"]}
    assert per["h3"]["high"] < min(per["h1"]["low"], per["h2"]["low"])
    # h3 vs the consensus of h1, h2: computed on the items where h1 and h2 agree
    agree = lab["h1"] == lab["h2"]
    assert per["h3"]["value"] == pytest.approx(cohen_kappa_score(lab["h3"][agree], lab["h1"][agree]), abs=1e-6)
    assert s["human_ceiling"]["loo"]["per_human"][2]["n_ties"] == int((~agree).sum())


# --------------------------------------------------------------------------- XSTest, two annotators
@pytest.fixture(scope="module")
def raw():
    return pd.read_csv(XSTEST_LABELS)


@pytest.fixture(scope="module")
def xs_report(xstest_store):
    return agreement_report(xstest_store, rubric=REFUSAL, by=["model"], n_resamples=200)


def test_xstest_two_humans_loo_is_the_pairwise_cohen_kappa(xs_report, raw):
    for s in xs_report.data["slices"]:
        g = raw if s["key"] == "all" else raw[raw.model == s["key"]]
        exp = cohen_kappa_score(g.annotation_1, g.annotation_2)
        pair = s["human_pairwise"]["pairs"]
        assert len(pair) == 1 and pair[0]["kappa"]["value"] == pytest.approx(exp, abs=1e-6)
        loo = s["human_ceiling"]["loo"]
        for p in loo["per_human"]:
            assert p["kappa"]["value"] == pair[0]["kappa"]["value"]
            assert p["n"] == len(g) and p["n_ties"] == 0
            assert p["kappa"]["low"] < p["kappa"]["value"] < p["kappa"]["high"]
        assert loo["mean"]["kappa"]["value"] == pair[0]["kappa"]["value"]
        assert s["human_ceiling"]["kappa_name"] == "Cohen κ"


def test_xstest_judge_against_each_left_out_consensus(xs_report, raw):
    vs = xs_report.judge("gpt4")["vs_loo"]
    ok = raw[raw.gpt4_label.isin(MAP)]
    per = {p["human"]: p for p in vs["per_human"]}
    # leaving annotation_1 out, the consensus is annotation_2, and the other way round
    for left_out, other in (("annotation_1", "annotation_2"), ("annotation_2", "annotation_1")):
        exp = cohen_kappa_score(ok[other].map(MAP), ok.gpt4_label.map(MAP))
        assert per[left_out]["kappa"]["value"] == pytest.approx(exp, abs=1e-6)
        assert per[left_out]["n"] == 2239  # the judge's 11 abstentions are not compared
        hum = cohen_kappa_score(ok[other], ok[left_out])
        assert per[left_out]["human_same_items"]["kappa"]["value"] == pytest.approx(hum, abs=1e-6)
    mean = np.mean([p["kappa"]["value"] for p in per.values()])
    assert vs["mean"]["kappa"]["value"] == pytest.approx(mean, abs=1e-6)
    # GPT-4 sits far below the humans on XSTest: the paired difference's CI excludes 0
    assert vs["mean"]["difference"]["kappa"]["high"] < 0


def test_a_human_reference_still_has_a_ceiling(xstest_store, raw):
    # today's code dropped the reference human from the ceiling: one human left, n = 0
    rep = agreement_report(xstest_store, rubric=REFUSAL, reference="annotation_1", n_resamples=200)
    s = rep.slice()
    assert rep.data["reference"] == {"rater": "annotation_1", "kind": "human"}
    c = s["human_ceiling"]
    assert c["n"] == 2250 and c["raters"] == ["annotation_1", "annotation_2"]
    assert c["kappa"]["value"] == pytest.approx(cohen_kappa_score(raw.annotation_1, raw.annotation_2), abs=1e-6)
    assert rep.data["ceiling_raters"] == ["annotation_1", "annotation_2"]
    assert c["loo"]["undefined"] is None and len(c["loo"]["per_human"]) == 2
    per = {p["human"]: p for p in rep.judge("gpt4")["vs_loo"]["per_human"]}
    ok = raw[raw.gpt4_label.isin(MAP)]
    exp = cohen_kappa_score(ok.annotation_2.map(MAP), ok.gpt4_label.map(MAP))
    assert per["annotation_1"]["kappa"]["value"] == pytest.approx(exp, abs=1e-6)
    # the judge is still scored against the reference, and vs_humans still lists the others
    assert set(rep.judge("gpt4")["vs_humans"]) == {"annotation_2"}


def test_one_human_and_a_judge_has_an_undefined_ceiling_with_the_reason():
    df = _wide({"h1": "RRCCRC", "j": "RRCCCC"}, {"j": "judge"})
    s = agreement_report(df, rubric=REFUSAL, n_resamples=100).slice()
    loo = s["human_ceiling"]["loo"]
    assert loo["per_human"] == [] and "one human rater (h1)" in loo["undefined"]
    assert loo["mean"]["kappa"]["value"] is None and "at least two humans" in loo["mean"]["kappa"]["undefined"]
    vs = s["judges"]["j"]["vs_loo"]
    assert vs["mean"]["kappa"]["value"] is None and "one human rater" in vs["undefined"]
    assert s["human_pairwise"]["pairs"] == [] and s["human_pairwise"]["undefined"]


def test_ordinal_loo_has_weighted_kappa_and_names():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 5, 150)
    h1 = np.clip(truth + rng.integers(-1, 2, 150), 0, 4)
    h2 = np.clip(truth + rng.integers(-1, 2, 150), 0, 4)
    rows = [(f"i{k}", r, "judge" if r == "j" else "human", RESTRICT.codes[v[k]])
            for r, v in (("h1", h1), ("h2", h2), ("j", truth)) for k in range(150)]
    s = agreement_report(_frame(rows, RESTRICT), rubric=RESTRICT, n_resamples=100).slice()
    c = s["human_ceiling"]
    assert c["kappa_name"] == "Cohen κ" and c["weighted_kappa_name"] == "quadratic-weighted Cohen κ"
    exp = cohen_kappa_score(h1, h2, weights="quadratic", labels=range(5))
    for p in c["loo"]["per_human"]:
        assert p["weighted_kappa"]["value"] == pytest.approx(exp, abs=1e-6)
    per = {p["human"]: p for p in s["judges"]["j"]["vs_loo"]["per_human"]}
    exp_j = cohen_kappa_score(truth, h2, weights="quadratic", labels=range(5))
    assert per["h1"]["weighted_kappa"]["value"] == pytest.approx(exp_j, abs=1e-6)
