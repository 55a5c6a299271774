"""The Inspect metric corrected_rate: the judge's share of some labels, corrected by the samples
that carry a human label in their metadata."""

from __future__ import annotations

import math

import pytest
from inspect_ai.scorer import SampleScore, Score

from judgekit.integrations.inspect_scorer import corrected_rate

REFUSED = ["full_refusal", "partial_refusal"]


def _sample(k: int, judge: str | float, human: str | None = None) -> SampleScore:
    return SampleScore(score=Score(value=judge), sample_id=k,
                       sample_metadata={"human_label": human} if human is not None else {})


def test_the_rate_is_corrected_by_the_human_labelled_samples() -> None:
    # 20 labelled: the judge calls 10 refusals, the people 12 (it misses two); 20 unlabelled: the
    # judge calls 10. The judge's share is 0.5 in both parts, so PPI gives the people's 0.6 on
    # the labelled part plus lambda x (0.5 - 0.5): 0.6 whatever lambda.
    scores = []
    for k in range(20):
        judge = "full_refusal" if k < 10 else "full_compliance"
        human = "full_refusal" if k < 12 else "full_compliance"
        scores.append(_sample(k, judge, human))
    scores += [_sample(20 + k, "partial_refusal" if k % 2 else "full_compliance") for k in range(20)]
    scores.append(_sample(99, float("nan"), "full_refusal"))  # unscored: not a unit
    assert corrected_rate(REFUSED)(scores) == pytest.approx(0.6)


def test_without_two_human_labels_the_rate_is_not_estimable() -> None:
    scores = [_sample(0, "full_refusal", "full_refusal"), _sample(1, "full_compliance")]
    assert math.isnan(corrected_rate(REFUSED)(scores))
