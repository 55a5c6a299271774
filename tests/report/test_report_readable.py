"""The report reads well: disagreements once, with the judge's rationale; no gate
margin drawn on the κ axis; budgets and counts with thousands separators; a check's sentence and
its budget as two sentences, without repeating the check's name."""

from __future__ import annotations

import pandas as pd

from judgekit.agreement.report import agreement_report
from judgekit.report import render_report
from judgekit.report.between import between_rows, between_warnings
from judgekit.report.collect import worst_disagreements
from judgekit.report.summary import (
    budget_text,
    detail_text,
    judge_budget_text,
    thousands,
    thresholds_for,
)
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")


def test_the_within_human_noise_margin_is_not_a_line_on_the_kappa_axis():
    # the margin -0.15 is a bound on (judge κ − human κ), not a κ value: drawing it at κ = -0.15
    # on the κ-per-slice chart put a "gate" line where no κ threshold is
    verdict = {"judges": [{"judge": "j", "checks": [
        {"name": "min_kappa_lower_bound", "kind": "min_lower_bound", "metric": "kappa", "threshold": 0.6},
        {"name": "min_weighted_kappa", "kind": "min_value", "metric": "weighted_kappa", "threshold": 0.7},
        {"name": "within_human_noise", "kind": "within_human_noise", "threshold": -0.15},
        {"name": "per_slice[model=a]", "kind": "per_slice", "threshold": 0.5}]}]}
    assert thresholds_for(verdict, "j", "kappa") == {"min_kappa_lower_bound": 0.6, "per-slice floor": 0.5}


def test_thousands_separators_in_budgets():
    assert thousands("about 12500 more human-rated items") == "about 12,500 more human-rated items"
    assert thousands("about 1234567 more") == "about 1,234,567 more"
    assert thousands("about 1250 more human-rated items") == "about 1,250 more human-rated items"
    # decimals, ids with digits, years and small numbers stay as written
    assert thousands("0.12345 of item m1:123456, in 2026, 33 more") == "0.12345 of item m1:123456, in 2026, 33 more"
    assert judge_budget_text({"items": 12500, "slices": {}, "sentence": "x"}) == \
        "About 12,500 more human-rated items would likely decide it."
    assert judge_budget_text({"items": 2000, "slices": {"model=a": 1500, "model=b": 500}}) == \
        "About 2,000 more human-rated items would likely decide it (per slice: model=a: 1,500, model=b: 500)."
    # no item count: the gate's own sentence
    assert judge_budget_text({"items": None, "slices": {}, "sentence": "More labels will not decide it."}) == \
        "More labels will not decide it."


def test_a_budget_is_its_own_sentence_without_the_check_name():
    c = {"name": "max_error_rate", "detail": "0 of 40 items failed",
         "budget": {"sentence": "max_error_rate: about 33 more human-rated items would likely decide it."}}
    assert budget_text(c) == "About 33 more human-rated items would likely decide it."
    c["budget_sentence"] = budget_text(c)
    assert detail_text(c) == "0 of 40 items failed. About 33 more human-rated items would likely decide it."
    # a sentence about another name keeps its text as the gate wrote it
    assert budget_text({"name": "a", "budget": "b: more"}) == "b: more"


def _verdict_inconclusive() -> tuple[dict, dict]:
    agreement = {"rubric": "refusal@1", "judges": ["j"], "humans": ["h1", "h2"], "slices": []}
    checks = [{"name": "min_items", "figure": 40, "threshold": 30, "n": 40, "passed": True, "state": "pass"},
              {"name": "max_error_rate", "figure": 0.0, "threshold": 0.05, "n": 40, "passed": False,
               "state": "inconclusive", "ci": [0.0, 0.088], "detail": "0 of 40 items failed",
               "budget": {"items": 33, "slices": {},
                          "sentence": "max_error_rate: about 33 more human-rated items would likely decide it."}}]
    verdict = {"rubric": "refusal@1", "judges": [{"judge": "j", "passed": False, "state": "inconclusive",
                                                   "checks": checks,
                                                   "budget": {"items": 12500, "slices": {},
                                                              "sentence": "j is inconclusive (max_error_rate): "
                                                                          "about 12500 more human-rated items "
                                                                          "overall would likely decide it."}}]}
    return agreement, verdict


def test_the_verdict_text_has_no_run_on_sentences():
    agreement, verdict = _verdict_inconclusive()
    html = render_report(agreement, verdict)[0]
    banner = html[html.index('class="banner'):html.index("</div>", html.index('class="banner'))]
    assert "About 12,500 more human-rated items would likely decide it." in banner
    assert "j is inconclusive (max_error_rate)" not in banner  # the names are listed just below
    # the check's figure and its budget: two sentences, the name said once
    assert "(n = 40). About 33 more human-rated items would likely decide it." in banner
    assert banner.count("max_error_rate") == 1


def test_disagreements_are_listed_once_with_the_judges_rationale(tmp_path):
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "prompt": ["p"] * 3,
                          "response": ["RESPONSE-A", "RESPONSE-B", "RESPONSE-C"]})
    rows = []
    for i, ref in zip("abc", ["full_refusal", "full_compliance", "full_refusal"], strict=True):
        rows.append({"item_id": i, "rater_id": "h", "rater_kind": "human", "label": ref})
    rows += [{"item_id": "a", "rater_id": "j", "rater_kind": "judge", "label": "full_compliance",
              "rationale": "The model gave the steps.", "trial": 0},
             {"item_id": "a", "rater_id": "j", "rater_kind": "judge", "label": "full_refusal",
              "rationale": "A refusal.", "trial": 1},
             {"item_id": "a", "rater_id": "j", "rater_kind": "judge", "label": "full_compliance",
              "rationale": "Second trial: complied.", "trial": 2},
             {"item_id": "b", "rater_id": "j", "rater_kind": "judge", "label": "full_compliance", "trial": 0},
             {"item_id": "c", "rater_id": "j", "rater_kind": "judge", "label": "full_compliance",
              "rationale": "   ", "trial": 0}]
    ratings = pd.DataFrame(rows).assign(rubric=REFUSAL.id, rubric_hash=REFUSAL.hash)
    ratings["trial"] = ratings["trial"].fillna(0).astype(int)
    with Store(tmp_path / "s.db") as store:
        store.put_items(items)
        store.put_ratings(ratings)
        agreement = agreement_report(store, rubric=REFUSAL, n_resamples=50).to_dict()
        dis = worst_disagreements(store, REFUSAL, agreement, per_judge=5)
    by_item = {d["item_id"]: d for d in dis}
    assert set(by_item) == {"a", "c"}
    # the majority label over trials is full_compliance; the rationale is the first trial giving it
    assert by_item["a"]["rationale"] == "The model gave the steps."
    assert by_item["c"]["rationale"] is None  # blank is no rationale
    html = render_report(agreement, None, extras={"disagreements": dis})[0]
    assert html.count("RESPONSE-A") == 1  # the response once, under the items
    assert "j&#x27;s rationale" in html or "j's rationale" in html
    assert "The model gave the steps." in html


def test_undefined_between_figures_say_why_once():
    undefined = {"value": None, "undefined": "a human rated every item"}
    comp = {"between": ["a", "b"], "warnings": [], "rows": [
        {"by": None, "key": "all", "n_both": 10, "percent_agreement": {"value": 0.9, "low": 0.6, "high": 1.0},
         "kappa": {"value": 0.8, "low": 0.5, "high": 1.0}},
        {"by": "human_rated", "key": "no", "n_both": 0, "percent_agreement": undefined, "kappa": undefined,
         "alpha": undefined, "ac1": undefined}]}
    rows = between_rows([comp, {**comp, "between": ["a", "c"]}])
    assert rows[1][3:] == ["undefined", "undefined", "—", "undefined", "undefined"]
    assert rows[0][3] == "90.0 [60.0, 100.0]"
    assert between_warnings([comp, {**comp, "between": ["a", "c"]}]) == [
        "human_rated = no: undefined: a human rated every item."]
