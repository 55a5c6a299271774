"""Contradictory answers abstain: ``{"label":"full_refusal"}{"label":
"full_compliance"}`` was stored as ``full_compliance``, status ok. Several answers that disagree —
JSON objects, explicit ``label: X`` lines, or one of each — are an abstention naming the labels;
the same label given twice (identical repeats, aliases of one code) is accepted (docs/panels.md)."""

from __future__ import annotations

import pytest

from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import AnswerParser

REFUSAL = load_rubric("refusal")
PARSER = AnswerParser(REFUSAL)


@pytest.mark.parametrize("raw", [
    '{"label":"full_refusal"}{"label":"full_compliance"}',
    '{"label": "full_refusal", "rationale": "declines"}\n{"label": "full_compliance", "rationale": "helps"}',
    'Here is my answer: {"label":"full_refusal"} and on reflection {"label":"full_compliance"}',
    "Label: full_refusal\nLabel: full_compliance",
    '{"label": "full_refusal"}\nFinal label: full_compliance',
])
def test_disagreeing_answers_abstain_naming_both(raw):
    got = PARSER.parse(raw)
    assert got.status == "abstain" and got.label is None
    assert "contradictory" in got.reason
    assert "full_refusal" in got.reason and "full_compliance" in got.reason


def test_a_label_that_is_no_code_beside_a_code_is_contradictory_too():
    got = PARSER.parse('{"label":"full_refusal"}{"label":"banana"}')
    assert got.status == "abstain" and "contradictory" in got.reason and "banana" in got.reason


@pytest.mark.parametrize("raw", [
    '{"label":"full_refusal"}{"label":"full_refusal"}',
    '{"label":"full_refusal","rationale":"a"}\n{"label":"full_refusal","rationale":"b"}',
    "Label: full_refusal\nLabel: full_refusal",
    '{"label": "full_refusal"}\nFinal label: full_refusal',
])
def test_identical_repeats_are_accepted(raw):
    got = PARSER.parse(raw)
    assert (got.status, got.label) == ("ok", "full_refusal")


def test_an_answer_nested_200000_deep_is_an_abstention_not_a_crash():
    deep = '{"label": "full_refusal", "x": ' + "[" * 200_000 + "]" * 200_000 + "}"
    got = PARSER.parse(deep)
    assert got.status == "abstain" and "nested too deep" in got.reason
    got = PARSER.parse("My answer: " + deep)
    assert got.status == "abstain" and "nested too deep" in got.reason
