"""Every analysis refuses judge ratings without a matching passing verdict (real gate, real
verdicts), says how to get one, and stamps everything UNTRUSTED when forced."""

from __future__ import annotations

import json
import re

import pytest

from judgekit.analysis.calibration.estimate import calibration
from judgekit.analysis.criteria import evaluate_criteria, parse_criteria
from judgekit.analysis.distribution.estimate import FormRatings, refusal_distribution
from judgekit.analysis.frames import harm_from_column
from judgekit.analysis.options import Resampling
from judgekit.analysis.trust import TrustContext, check_trust
from judgekit.errors import UntrustedJudgeError
from judgekit.report.analysis import to_html, to_json, to_markdown
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

pytest_plugins = ["tests.analysis_fixtures"]

R = load_rubric("restrictiveness")
F = load_rubric("refusal_form")


@pytest.fixture(scope="module")
def synth(synthetic_store):
    with Store(synthetic_store["store"]) as store:
        data = {
            "a": store.ratings(rubric=R, rater_ids=["judge-a"]),
            "b": store.ratings(rubric=R, rater_ids=["judge-b"]),
            "human": store.ratings(rubric=R, rater_ids=["adjudicated"]),
            "forms_a": store.ratings(rubric=F, rater_ids=["judge-a"]),
            "items": store.items(),
        }
    data["v_r"] = json.loads(synthetic_store["restrictiveness"].read_text())
    data["v_f"] = json.loads(synthetic_store["refusal_form"].read_text())
    return data


def test_the_real_gate_passes_judge_a_and_fails_judge_b(synth):
    by = {j["judge"]: j["passed"] for j in synth["v_r"]["judges"]}
    assert by == {"judge-a": True, "judge-b": False}


def test_without_a_verdict_every_analysis_refuses_and_says_how(synth):
    items = synth["items"]
    harm = harm_from_column(items, "severity")
    calls = [
        lambda: calibration(synth["a"], items, harm, rubric=R, resampling=Resampling(n_resamples=0)),
        lambda: refusal_distribution(synth["a"], items, rubric=R,
                                     resampling=Resampling(n_resamples=0)),
        lambda: evaluate_criteria(parse_criteria({"criteria": [{
            "name": "x", "rubric": "restrictiveness", "label": "r4_hard_refusal", "op": "<=",
            "threshold": 1}]}), synth["a"], items, rater="judge-a"),
    ]
    for call in calls:
        with pytest.raises(UntrustedJudgeError) as exc:
            call()
        msg = str(exc.value)
        assert "judge-a" in msg and "judgekit gate" in msg and "untrusted" in msg
        # from Python no command-line flag; the command line adds its own
        assert "--" not in msg and "--untrusted" in (exc.value.cli_hint or "")


def test_a_failing_verdict_is_refused(synth):
    with pytest.raises(UntrustedJudgeError, match="'judge-b' did not pass the gate"):
        calibration(synth["b"], synth["items"], harm_from_column(synth["items"], "severity"),
                    rubric=R, trust=TrustContext(verdicts=[synth["v_r"]]),
                    resampling=Resampling(n_resamples=0))


def test_a_verdict_for_another_rubric_is_refused(synth):
    with pytest.raises(UntrustedJudgeError, match="verdict is for rubric refusal_form@1"):
        refusal_distribution(synth["a"], synth["items"], rubric=R,
                             trust=TrustContext(verdicts=[synth["v_f"]]),
                             resampling=Resampling(n_resamples=0))


def test_the_matching_verdict_is_found_among_several(synth):
    res = refusal_distribution(synth["a"], synth["items"], rubric=R,
                               forms=FormRatings(synth["forms_a"], F),
                               trust=TrustContext(verdicts=[synth["v_f"], synth["v_r"]]),
                               resampling=Resampling(n_resamples=0))
    assert res.trusted
    assert "UNTRUSTED" not in to_markdown(res) and "UNTRUSTED" not in to_html(res)
    assert set(res.meta["trust"]["trusted"]) == {"judge-a under restrictiveness@1",
                                                 "judge-a under refusal_form@1"}


def test_forms_from_an_ungated_rubric_are_refused(synth):
    with pytest.raises(UntrustedJudgeError, match="refusal_form@1"):
        refusal_distribution(synth["a"], synth["items"], rubric=R,
                             forms=FormRatings(synth["forms_a"], F),
                             trust=TrustContext(verdicts=[synth["v_r"]]),
                             resampling=Resampling(n_resamples=0))


def test_a_changed_judge_is_refused(synth):
    good = synth["v_r"]["judges"][0]["judge_hash"]
    check_trust(synth["a"], R, [synth["v_r"]], judge_hashes={"judge-a": good})
    with pytest.raises(UntrustedJudgeError, match="changed since the verdict"):
        check_trust(synth["a"], R, [synth["v_r"]], judge_hashes={"judge-a": "other"})


def test_human_raters_need_no_verdict(synth):
    res = calibration(synth["human"], synth["items"], harm_from_column(synth["items"], "severity"),
                      rubric=R, resampling=Resampling(n_resamples=0))
    assert res.trusted and res.meta["trust"]["human_raters"] == ["adjudicated"]


def test_untrusted_stamps_every_title(synth):
    res = calibration(synth["b"], synth["items"], harm_from_column(synth["items"], "severity"),
                      rubric=R, trust=TrustContext(verdicts=[synth["v_r"]], untrusted=True),
                      resampling=Resampling(n_resamples=20))
    assert not res.trusted
    assert res.title.startswith("UNTRUSTED")
    assert res.tables and all(t.title.startswith("UNTRUSTED") for t in res.tables)
    assert res.charts and all(c.title.startswith("UNTRUSTED") for c in res.charts)
    assert "did not pass" in res.notes[0]
    j = to_json(res)
    assert j["trusted"] is False
    assert all(t["title"].startswith("UNTRUSTED") for t in j["tables"].values())
    assert all(c["title"].startswith("UNTRUSTED") for c in j["charts"].values())
    html = to_html(res)
    # every section heading (except the definitions) and every chart title carries the stamp
    heads = re.findall(r"<h2>(.*?)</h2>", html)
    assert "UNTRUSTED — Charts" in heads
    assert all(h.startswith("UNTRUSTED") for h in heads if h != "What the figures mean")
    svg_titles = re.findall(r"<svg[^>]*>\s*<title>(.*?)</title>", html)
    assert len(svg_titles) == len(res.charts)
    assert all(t.startswith("UNTRUSTED") for t in svg_titles)
    md_heads = [ln for ln in to_markdown(res).splitlines() if ln.startswith("## ")]
    table_heads = [h for h in md_heads if h not in ("## Definitions", "## Notes", "## Charts")]
    assert table_heads and all(h.startswith("## UNTRUSTED") for h in table_heads)


def test_criteria_are_gated_per_rubric(synth):
    import pandas as pd

    spec = parse_criteria({"rater": "judge-a", "criteria": [
        {"name": "r", "rubric": "restrictiveness", "label": "r4_hard_refusal", "op": "<=",
         "threshold": 1},
        {"name": "f", "rubric": "refusal_form", "label": "direct_refusal", "op": "<=",
         "threshold": 1}]})
    both = pd.concat([synth["a"], synth["forms_a"]])
    with pytest.raises(UntrustedJudgeError, match="refusal_form"):
        evaluate_criteria(spec, both, synth["items"], trust=TrustContext(verdicts=[synth["v_r"]]))
    result, passed = evaluate_criteria(spec, both, synth["items"],
                                       trust=TrustContext(verdicts=[synth["v_r"], synth["v_f"]]))
    assert result.trusted and passed
