"""A check is one typed record: its display name is rendered from its fields, one function
writes it into a verdict and one reads it back, strictly."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from judgekit.errors import JudgekitError
from judgekit.verdict.check import (
    Budget,
    Check,
    CheckProblem,
    Interval,
    Subject,
    check_json,
    new_check,
    read_check,
)
from judgekit.verdict.read import SCHEMA_VERSION, validate_verdict


def _fidelity() -> Check:
    subject = Subject(analysis="calibration", figure="drift", cell="drift(model=llama, 70b, tier=4, turn=6)",
                      model="llama, 70b", tier="4", turn="6")
    return Check("analysis_fidelity", "j", 0.03, 0.05, 40, "d", subject=subject, unit="conversations",
                 interval=Interval(0.01, 0.07, "bootstrap", 0.9), min_n=20)


@pytest.mark.parametrize(("check", "name"), [
    (Check("min_value", "j", 0.7, 0.6, 100, "", metric="weighted_kappa"), "min_weighted_kappa"),
    (Check("min_lower_bound", "j", 0.7, 0.6, 100, "", metric="kappa"), "min_kappa_lower_bound"),
    (Check("min_class_recall", "j", 0.7, 0.6, 100, "", subject=Subject(label="full_refusal")),
     "min_recall[full_refusal]"),
    (Check("per_slice", "j", 0.7, 0.6, 100, "", subject=Subject(by="model", key="a=b")), "per_slice[model=a=b]"),
    (Check("max_abs_bias_slice", "j", 0.01, 0.05, 100, "", subject=Subject(by="m", key="x")), "max_abs_bias[m=x]"),
    (Check("max_covariate_effect", "j", 0.01, 0.05, 100, "",
           subject=Subject(column="chars", target="full", by="m", key="x")), "max_covariate_effect[chars:full|m=x]"),
    (Check("max_flip_rate", "j", 0.01, 0.05, 100, "", subject=Subject(variant="padding")), "max_flip_rate[padding]"),
    (Check("min_stability", "j", 0.9, 0.8, 100, ""), "min_stability"),
    (_fidelity(), "analysis_fidelity[calibration:drift(model=llama, 70b, tier=4, turn=6)]"),
])
def test_the_name_is_rendered_from_the_fields(check: Check, name: str) -> None:
    assert check.name == name


def test_a_check_reads_back_as_it_was_written() -> None:
    ch = _fidelity().with_budget(Budget(120, "about 20 more conversations", {}, 20, "conversations"))
    assert ch.state == "inconclusive"
    data = json.loads(json.dumps(check_json(ch)))
    assert data["state"] == "inconclusive" and data["rule"] == "ci<=" and data["ci_level"] == 0.9
    assert read_check(data, "j") == ch


def test_a_budget_is_kept_only_while_the_check_is_open() -> None:
    passing = replace(_fidelity(), interval=Interval(0.0, 0.04, "bootstrap", 0.9))
    assert passing.state == "pass" and passing.with_budget(Budget(1, "x")).budget is None


def test_a_small_sample_says_so_first_in_its_floors_words() -> None:
    ch = new_check("analysis_fidelity", "j", 0.01, 0.05, 12, "the figure", min_n=20,
                   subject=_fidelity().subject, floor="conversations is below min_units")
    assert ch.state == "inconclusive"
    assert ch.detail == "SMALL SAMPLE: n=12 conversations is below min_units 20; the figure"


@pytest.mark.parametrize(("edit", "phrase"), [
    (lambda d: d.update(name="analysis_fidelity[calibration:C(model=x)]"), "its name is not"),
    (lambda d: d.update(rule="ci>="), "is not the rule of analysis_fidelity"),
    (lambda d: d.update(kind="max_whatever"), "is not a check `judgekit gate` makes"),
    (lambda d: d["subject"].update(colour="red"), "unknown key 'colour'"),
    (lambda d: d["subject"].update(turn=6), "subject.turn"),
    (lambda d: d.update(ci_method=None), "bounds without a method"),
    (lambda d: d.update(ci=[0.07, 0.01]), "is not an interval"),
    (lambda d: d.update(figure="0.03"), "figure"),
    (lambda d: d.pop("unit"), "unit"),
    # the certificates read the figure, the model and the criterion: none may leave the cell
    (lambda d: d["subject"].update(figure="C"), "its cell"),
    (lambda d: d["subject"].update(model="other"), "its cell"),
    (lambda d: d["subject"].update(criterion="leak rate"), "its cell"),
    (lambda d: d["subject"].update(label="full_refusal"), "does not have"),
])
def test_an_edited_check_is_refused_in_one_phrase(edit, phrase: str) -> None:
    data = check_json(_fidelity().with_budget(Budget(None, "x")))
    edit(data)
    with pytest.raises(CheckProblem, match=phrase.replace("[", r"\[").replace("(", r"\(")):
        read_check(data, "j")


def test_an_older_verdict_is_refused_saying_to_run_the_gate_again() -> None:
    assert SCHEMA_VERSION == 4
    old = {"schema_version": 3, "judges": [{"judge": "j", "checks": []}]}
    with pytest.raises(JudgekitError) as err:
        validate_verdict(old, "v.json")
    msg = str(err.value)
    assert "schema_version 3 is not one this judgekit reads" in msg and "run `judgekit gate" in msg
    assert msg.count(". ") == 0 and "\n" not in msg
