"""Coverage of the human-rated items, signed bias, per-class
precision/recall/F1, slice counts and slice order, with the arithmetic written out."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.agreement.judge_figures import positive_code
from judgekit.agreement.report import agreement_report
from judgekit.cli import main
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
RESTRICT = load_rubric("restrictiveness")
Z = 1.959963984540054  # two-sided 95% normal quantile


def _frame(rows, rubric):
    """rows: (item, rater, kind, label[, status])"""
    rows = [r if len(r) == 5 else (*r, "ok") for r in rows]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status"])
    df["rubric"], df["rubric_hash"], df["trial"] = rubric.id, rubric.hash, 0
    return df


def _wilson(k, n, z=Z):
    # Wilson (1927): centre (p + z^2/2n) / (1 + z^2/n), half-width z/(1 + z^2/n) sqrt(p(1-p)/n + z^2/4n^2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


# --------------------------------------------------------------------------- coverage
def _skipping_judge_rows():
    # 300 items carry the adjudicated label; the judge rates 240 of them (80%), abstains on 20,
    # errors on 10 and never attempts 30; it also rates 50 items no human or reference rated
    codes = REFUSAL.codes
    rows = [(f"i{k}", "ref", "reference", codes[k % 3]) for k in range(300)]
    rows += [(f"i{k}", "j", "judge", codes[k % 3]) for k in range(240)]
    rows += [(f"i{k}", "j", "judge", None, "abstain") for k in range(240, 260)]
    rows += [(f"i{k}", "j", "judge", None, "error") for k in range(260, 270)]
    rows += [(f"o{k}", "j", "judge", codes[0]) for k in range(50)]
    return rows


def test_a_judge_that_skipped_a_fifth_of_the_items_has_coverage_0_8_with_its_wilson_interval():
    rep = agreement_report(_frame(_skipping_judge_rows(), REFUSAL), rubric=REFUSAL, n_resamples=100)
    cov = rep.judge("j")["coverage"]
    assert {k: cov[k] for k in ("in_scope", "rated", "abstained", "errored", "not_attempted", "rated_out_of_scope")} == {
        "in_scope": 300, "rated": 240, "abstained": 20, "errored": 10, "not_attempted": 30, "rated_out_of_scope": 50}
    share = cov["share"]
    assert share["value"] == 0.8 and share["n"] == 300
    # Wilson, p = 240/300 = 0.8, n = 300, z^2 = 3.841459: centre = (0.8 + 0.0064024) / 1.0128049
    # = 0.796207, half = 1.935184 * sqrt(0.16/300 + 3.841459/360000) = 0.045136 -> [0.75107, 0.84134]
    lo, hi = _wilson(240, 300)
    assert (round(lo, 5), round(hi, 5)) == (0.75107, 0.84134)
    assert share["low"] == pytest.approx(lo, abs=1e-6) and share["high"] == pytest.approx(hi, abs=1e-6)
    assert rep.slice()["n_in_scope"] == 300 and rep.slice()["n_rated"] == {"j": 290}


def test_coverage_reaches_the_json_of_agree(tmp_path, store):
    df = _frame(_skipping_judge_rows(), REFUSAL)[["item_id", "rater_id", "rater_kind", "label", "status"]]
    p = tmp_path / "r.csv"
    df.to_csv(p, index=False)
    from judgekit.io.ratings import import_ratings

    import_ratings(store, p, REFUSAL)
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", store.path, "--json", str(out),
                                    "--resamples", "100"])
    assert res.exit_code == 0, res.output
    cov = json.loads(out.read_text())["slices"][0]["judges"]["j"]["coverage"]
    assert (cov["rated"], cov["in_scope"], cov["share"]["value"]) == (240, 300, 0.8)


# --------------------------------------------------------------------------- signed bias
def _drifting_judge(turns=6, per_turn=200):
    """Restrictiveness (values 0, .25, .5, .75, 1). The reference is k % 4 (levels 0-3); at turn t
    the judge rates one level higher on a share (t - 1) / 10 of the items, else agrees."""
    rows, items = [], []
    for t in range(1, turns + 1):
        for k in range(per_turn):
            item = f"t{t}-{k}"
            truth = k % 4
            shifted = (k * 7919) % per_turn < per_turn * (t - 1) / 10
            rows += [(item, "ref", "reference", RESTRICT.codes[truth]),
                     (item, "j", "judge", RESTRICT.codes[truth + int(shifted)])]
            items.append({"item_id": item, "turn": t})
    return _frame(rows, RESTRICT), pd.DataFrame(items)


def test_bias_growing_with_the_turn_shows_per_turn_while_weighted_kappa_stays_high():
    df, items = _drifting_judge()
    rep = agreement_report(df, rubric=RESTRICT, items=items, by=["turn"], n_resamples=500)
    turns = [s for s in rep.data["slices"] if s["by"] == "turn"]
    assert [s["key"] for s in turns] == ["1", "2", "3", "4", "5", "6"]
    bias = [s["judges"]["j"]["bias"]["mean_diff"] for s in turns]
    # mean signed difference on the rubric's values: share shifted x 0.25 = 0, .025, ..., .125
    assert [b["value"] for b in bias] == pytest.approx([0.0, 0.025, 0.05, 0.075, 0.1, 0.125], abs=1e-9)
    assert all(a["value"] < b["value"] for a, b in zip(bias, bias[1:], strict=False))
    assert bias[0]["low"] == bias[0]["high"] == 0.0
    assert bias[-1]["low"] > 0  # the CI excludes 0 at the last turn
    last = turns[-1]["judges"]["j"]
    assert last["bias"]["max_abs"] == {**last["bias"]["max_abs"], "value": 0.125, "signed": 0.125,
                                       "code": None, "of": "mean_diff"}
    # ... while agreement looks fine: weighted kappa stays high though exact agreement is 50%
    assert last["vs_reference"]["percent_agreement"]["value"] == 0.5
    assert last["vs_reference"]["weighted_kappa"]["value"] > 0.8
    # every label's share moves up one level: shares of the judge minus the reference sum to 0
    sd = last["bias"]["share_diff"]
    assert sum(f["value"] for f in sd.values()) == pytest.approx(0, abs=1e-9)
    assert sd["r0_full_compliance"]["value"] < 0 < sd["r4_hard_refusal"]["value"]


def test_nominal_bias_is_the_difference_of_label_shares():
    # reference: 10 compliance, 10 partial, 10 full refusal; the judge calls every partial a full
    # refusal -> judge shares 1/3, 0, 2/3 vs 1/3, 1/3, 1/3: differences 0, -1/3, +1/3
    c, p, r = REFUSAL.codes
    ref = [c] * 10 + [p] * 10 + [r] * 10
    judge = [c] * 10 + [r] * 10 + [r] * 10
    rows = [(f"i{k}", "ref", "reference", ref[k]) for k in range(30)]
    rows += [(f"i{k}", "j", "judge", judge[k]) for k in range(30)]
    b = agreement_report(_frame(rows, REFUSAL), rubric=REFUSAL, n_resamples=300).judge("j")["bias"]
    assert b["mean_diff"] is None and b["n"] == 30
    assert {k: f["value"] for k, f in b["share_diff"].items()} == pytest.approx(
        {c: 0.0, p: -1 / 3, r: 1 / 3}, abs=1e-6)
    assert b["share_diff"][p]["high"] < 0 < b["share_diff"][r]["low"]
    # a tie in |difference| goes to the label listed first in the rubric (partial before full)
    assert b["max_abs"]["code"] == p and b["max_abs"]["value"] == pytest.approx(1 / 3, abs=1e-6)
    assert b["max_abs"]["signed"] == pytest.approx(-1 / 3, abs=1e-6) and b["max_abs"]["of"] == "share_diff"


# --------------------------------------------------------------------------- per class
@pytest.fixture()
def binary(tmp_path):
    p = tmp_path / "binary.yaml"
    p.write_text("name: binary_refusal\nversion: 1\ntitle: t\nlevel: nominal\ninstructions: i\nlabels:\n"
                 "  - {code: refuse, value: 1, description: d}\n  - {code: comply, value: 0, description: d}\n",
                 encoding="utf-8")
    return load_rubric(p)


def test_binary_per_class_precision_recall_f1_and_the_positive_class(binary):
    # 50 reference refusals: the judge says refuse on 45 (TP), comply on 5 (FN); of 50 reference
    # compliances it calls 3 refusals (FP)
    ref = ["refuse"] * 50 + ["comply"] * 50
    judge = ["refuse"] * 45 + ["comply"] * 5 + ["refuse"] * 3 + ["comply"] * 47
    rows = [(f"i{k}", "ref", "reference", ref[k]) for k in range(100)]
    rows += [(f"i{k}", "j", "judge", judge[k]) for k in range(100)]
    pc = agreement_report(_frame(rows, binary), rubric=binary, n_resamples=300).judge("j")["per_class"]
    assert pc["positive"] == "refuse"  # the label with the higher rubric value, listed first here
    pos = pc["positive_class"]
    assert pos["code"] == "refuse" and pos["support"] == 50 and pos["predicted"] == 48
    # precision 45/48, recall 45/50 with Wilson intervals; F1 = 2*45 / (50 + 48) = 90/98
    assert pos["precision"]["value"] == pytest.approx(45 / 48, abs=1e-6)
    assert (pos["precision"]["low"], pos["precision"]["high"]) == pytest.approx(_wilson(45, 48), abs=1e-6)
    assert (round(pos["precision"]["low"], 4), round(pos["precision"]["high"], 4)) == (0.8316, 0.9785)
    assert pos["recall"]["value"] == 0.9 and pos["recall"]["n"] == 50
    assert (pos["recall"]["low"], pos["recall"]["high"]) == pytest.approx(_wilson(45, 50), abs=1e-6)
    assert pos["f1"]["value"] == pytest.approx(90 / 98, abs=1e-6)
    assert pos["f1"]["low"] < pos["f1"]["value"] < pos["f1"]["high"]
    comply = pc["classes"]["comply"]
    assert comply["f1"]["value"] == pytest.approx(94 / 102, abs=1e-6)  # TP 47, support 50, predicted 52
    assert pc["macro_f1"]["value"] == pytest.approx((90 / 98 + 94 / 102) / 2, abs=1e-6)


def test_positive_class_rule_and_three_label_rubrics(binary):
    assert positive_code(["comply", "refuse"], [0.0, 1.0]) == "refuse"
    assert positive_code(["refuse", "comply"], [1.0, 0.0]) == "refuse"
    assert positive_code(["a", "b"], [0.5, 0.5]) == "b"  # equal values: the second listed
    assert positive_code(REFUSAL.codes, [REFUSAL.values[c] for c in REFUSAL.codes]) is None
    c, p, r = REFUSAL.codes
    rows = [(f"i{k}", "ref", "reference", [c, p, r][k % 3]) for k in range(30)]
    rows += [(f"i{k}", "j", "judge", [c, c, r][k % 3]) for k in range(30)]
    pc = agreement_report(_frame(rows, REFUSAL), rubric=REFUSAL, n_resamples=100).judge("j")["per_class"]
    assert pc["positive"] is None and pc["positive_class"] is None
    # the judge never says partial: precision undefined (not 0), recall 0 of 10
    assert pc["classes"][p]["precision"]["value"] is None and "never said" in pc["classes"][p]["precision"]["undefined"]
    assert pc["classes"][p]["recall"]["value"] == 0.0 and pc["classes"][p]["f1"]["value"] == 0.0


# --------------------------------------------------------------------------- slices
def test_numeric_slices_sort_numerically_and_missing_values_form_a_slice():
    turn = [1, 2, 10, 11, 2, 10, None, 1, 2, 10]
    model = ["b", "a", "b", "", None, "a", "a", "b", "a", "a"]
    rows = []
    for k in range(10):
        rows += [(f"i{k}", "ref", "reference", REFUSAL.codes[k % 2]), (f"i{k}", "j", "judge", REFUSAL.codes[0])]
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(10)], "turn": turn, "model": model})
    rep = agreement_report(_frame(rows, REFUSAL), rubric=REFUSAL, items=items, by=["turn", "model", "turn+model"],
                           n_resamples=50)
    keys = {by: [s["key"] for s in rep.data["slices"] if s["by"] == by] for by in ("turn", "model", "turn+model")}
    # pandas reads the column with a gap as floats: the keys are what the column holds, in
    # numeric order (1, 2, 10, 11, not 1, 10, 11, 2), the missing one last
    assert keys["turn"] == ["1.0", "2.0", "10.0", "11.0", "(missing)"]
    assert keys["model"] == ["a", "b", "(missing)"]  # "" and None are both missing
    assert keys["turn+model"] == ["1.0 / b", "2.0 / a", "2.0 / (missing)", "10.0 / a", "10.0 / b",
                                  "11.0 / (missing)", "(missing) / a"]
    n = {(s["by"], s["key"]): s["n_items"] for s in rep.data["slices"]}
    assert n[("model", "(missing)")] == 2 and sum(v for (b, _), v in n.items() if b == "model") == 10
    assert any("2 items have no 'model' value" in w and "(missing)" in w for w in rep.warnings)
    # slice-level counts: items rated per judge (the n a slice table shows)
    s = rep.slice("model", "a")
    assert s["n_rated"] == {"j": 5} and s["n_in_scope"] == 5


def test_integer_slices_sort_numerically():
    rows, items = [], []
    for k, t in enumerate([10, 2, 1, 11, 3]):
        rows += [(f"i{k}", "ref", "reference", REFUSAL.codes[0]), (f"i{k}", "j", "judge", REFUSAL.codes[0])]
        items.append({"item_id": f"i{k}", "turn": t})
    rep = agreement_report(_frame(rows, REFUSAL), rubric=REFUSAL, items=pd.DataFrame(items), by=["turn"],
                           n_resamples=20)
    assert [s["key"] for s in rep.data["slices"][1:]] == ["1", "2", "3", "10", "11"]
