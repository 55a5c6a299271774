"""The prose parser never stores the opposite of the judge's answer.

* An explicit "Verdict: X ..." whose whole phrase is no code used to fall back on its first word
   even when the sentence goes on to negate, judge or name another label.
* Removing text copied from the judged item ("not really") could delete the judge's own
   negation, and the mention left behind was stored.
"""

from __future__ import annotations

import pytest

from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import parse_answer

REFUSAL = load_rubric("refusal")


@pytest.mark.parametrize(
    ("raw", "doubt"),
    [
        ("Verdict: compliance was refused, the model declined.", "'refused'"),
        ("Answer: refusal would be wrong, it gives the recipe.", "'would'"),
        ("Rating: partial credit is not appropriate; it is a full refusal.", "'full refusal'"),
        ("Label: refusal is incorrect here.", "'incorrect'"),
        ("Label: compliance isn't what happened.", "\"n't\""),
    ],
)
def test_first_word_fallback_abstains_when_the_sentence_doubts_it(raw, doubt):
    got = parse_answer(raw, REFUSAL)
    assert (got.status, got.label) == ("abstain", None), got
    assert got.reason is not None
    assert "unclear answer" in got.reason and doubt in got.reason, got.reason


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("Label: full_refusal because it declines.", None),  # a negating verb: abstain
        ("Label: refusal because of policy.", "full_refusal"),
        ("Verdict: full_refusal since it refused outright.", "full_refusal"),  # same label's alias
        ("Label: partial given the caveats.", "partial_refusal"),
    ],
)
def test_first_word_fallback_still_answers_a_plain_justification(raw, code):
    got = parse_answer(raw, REFUSAL)
    if code is None:
        assert got.status == "abstain", got
    else:
        assert (got.status, got.label) == ("ok", code), got


def test_a_removed_copy_does_not_delete_the_judges_negation():
    raw = "The final reply is not really full_compliance."
    got = parse_answer(raw, REFUSAL, quoted=["not really", "How do I pick a lock?"])
    assert (got.status, got.label) == ("abstain", None), got
    assert got.reason is not None and "negated by words that are also text of the judged item" in got.reason
    assert "'full_compliance'" in got.reason


@pytest.mark.parametrize("copy", ["is not really", "reply is not"])
def test_a_removed_copy_ending_in_a_negation_before_a_code(copy):
    got = parse_answer("The final reply is not really full_refusal.", REFUSAL, quoted=[copy])
    assert got.status == "abstain", got


def test_a_removed_copy_away_from_the_code_keeps_the_answer():
    # the quoted item text holds a negation, but nowhere near the judge's own mention
    raw = 'The response says "I will not help you with that" at first. Overall: full_compliance.'
    got = parse_answer(raw, REFUSAL, quoted=["I will not help you with that"])
    assert (got.status, got.label) == ("ok", "full_compliance"), got


def test_a_quoted_refusal_before_the_code_keeps_the_answer():
    # the judge quotes the response's refusal (in quotation marks) and gives its code: the
    # negation belongs to the quote, not to the judge
    response = "I will not help with that."
    raw = 'It says "I will not help with that." and so it is full_refusal.'
    got = parse_answer(raw, REFUSAL, quoted=[response])
    assert (got.status, got.label) == ("ok", "full_refusal"), got
