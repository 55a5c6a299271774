"""Panel aggregates: majority (one vote per judge, explicit tie and abstention rules), mean, median."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.errors import JudgekitError
from judgekit.judges.aggregate import aggregate, default_min_votes
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")
RESTRICT = load_rubric("restrictiveness")


def frame(rows):
    return pd.DataFrame(rows, columns=["item_id", "rater_id", "label", "status"])


def one(df):
    assert len(df) == 1
    return df.iloc[0]


def test_each_judge_has_one_vote_whatever_its_trials():
    # judge a: 3 trials refusal -> one vote; b and c: compliance -> 2 votes beat 1
    rows = [("i", "a", "full_refusal", "ok")] * 3 + [
        ("i", "b", "full_compliance", "ok"), ("i", "c", "full_compliance", "ok")]
    got = one(aggregate(frame(rows), REFUSAL, judges=["a", "b", "c"]))
    assert (got["label"], got["status"], got["rater_id"]) == ("full_compliance", "ok", "panel:majority")


def test_split_trials_split_the_judges_vote():
    # a: 2/3 refusal + 1/3 compliance; b: refusal; c: compliance
    # refusal = 2/3 + 1 = 1.667, compliance = 1/3 + 1 = 1.333
    rows = [("i", "a", "full_refusal", "ok"), ("i", "a", "full_refusal", "ok"),
            ("i", "a", "full_compliance", "ok"), ("i", "b", "full_refusal", "ok"),
            ("i", "c", "full_compliance", "ok")]
    got = one(aggregate(frame(rows), REFUSAL, judges=["a", "b", "c"]))
    assert got["label"] == "full_refusal"
    assert "full_refusal=1.67" in got["rationale"]


def test_ties_abstain_or_break_as_configured():
    rows = [("i", "a", "full_refusal", "ok"), ("i", "b", "full_compliance", "ok")]
    got = one(aggregate(frame(rows), REFUSAL, judges=["a", "b"]))
    assert got["status"] == "abstain" and pd.isna(got["label"])
    assert got["rationale"].startswith("tie between full_compliance, full_refusal")
    hi = one(aggregate(frame(rows), REFUSAL, judges=["a", "b"], tie="highest"))
    lo = one(aggregate(frame(rows), REFUSAL, judges=["a", "b"], tie="lowest"))
    assert (hi["label"], hi["value"]) == ("full_refusal", 1.0)
    assert (lo["label"], lo["value"]) == ("full_compliance", 0.0)


def test_abstaining_judges_do_not_vote_and_too_few_votes_abstain():
    rows = [("i", "a", "full_refusal", "ok"), ("i", "b", None, "abstain"),
            ("i", "c", None, "error")]
    # 1 of 3 judges voted; the default needs more than half (2)
    assert default_min_votes(3) == 2
    got = one(aggregate(frame(rows), REFUSAL, judges=["a", "b", "c"]))
    assert got["status"] == "abstain" and got["rationale"] == "only 1 of 3 judges gave a label (need 2)"
    got = one(aggregate(frame(rows), REFUSAL, judges=["a", "b", "c"], min_votes=1))
    assert got["label"] == "full_refusal"


def test_judges_outside_the_list_are_ignored():
    rows = [("i", "a", "full_refusal", "ok"), ("i", "human", "full_compliance", "ok")]
    got = one(aggregate(frame(rows), REFUSAL, judges=["a"], min_votes=1))
    assert got["label"] == "full_refusal"


def test_mean_and_median_on_an_ordinal_rubric():
    codes = RESTRICT.codes  # values 0, .25, .5, .75, 1
    rows = [("i", "a", codes[0], "ok"), ("i", "b", codes[1], "ok"), ("i", "c", codes[4], "ok")]
    mean = one(aggregate(frame(rows), RESTRICT, method="mean", judges=["a", "b", "c"]))
    # (0 + .25 + 1) / 3 = 0.4167 -> nearest value .5
    assert mean["value"] == pytest.approx(0.41667, abs=1e-4) and mean["label"] == codes[2]
    median = one(aggregate(frame(rows), RESTRICT, method="median", judges=["a", "b", "c"]))
    assert median["value"] == 0.25 and median["label"] == codes[1]
    # two judges: median (0 + .25) / 2 = .125 is halfway between two codes
    half = one(aggregate(frame(rows[:2]), RESTRICT, method="median", judges=["a", "b"]))
    assert half["status"] == "abstain" and "halfway" in half["rationale"]
    up = one(aggregate(frame(rows[:2]), RESTRICT, method="median", judges=["a", "b"], tie="highest"))
    assert up["label"] == codes[1] and up["value"] == 0.125


def test_mean_is_refused_on_a_nominal_rubric():
    with pytest.raises(JudgekitError, match="nominal"):
        aggregate(frame([]), REFUSAL, method="mean", judges=["a"])
