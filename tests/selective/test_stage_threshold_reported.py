"""The stage report shows the threshold the cascade used: under the authors' rule a judge left with
too few items reuses the previous judge's threshold, and its stage says so (never the 0.0 of the
untested call)."""

from __future__ import annotations

import numpy as np

from judgekit.selective.calibrate import calibrate_judgments
from judgekit.selective.judgments import Judgments
from judgekit.selective.policy import SelectivePolicy
from judgekit.stats.selective_cascade import apply_cascade

POLICY = SelectivePolicy(**{"rubric": "refusal", "reference": "final", "alpha": 0.03, "delta": 0.1,
                            "rule": "authors", "calibration": {"fraction": 1.0, "seed": 0},
                            "cascade": [{"judge": "a", "confidence": {"source": "trials"}},
                                        {"judge": "b", "confidence": {"source": "trials"}}]})


def _judgments() -> Judgments:
    n = 200
    rng = np.random.default_rng(3)
    conf_a = np.r_[np.full(190, 0.9), np.full(10, 0.3)]
    conf_b = rng.uniform(0.0, 1.0, n)
    items = tuple(f"i{i:03d}" for i in range(n))
    human = tuple("full_refusal" for _ in items)
    # judge a is wrong on its 10 unconfident items, so its threshold lies above them
    labels_a = tuple("full_refusal" if i < 190 else "full_compliance" for i in range(n))
    return Judgments(("a", "b"), items, (labels_a, human), (conf_a, conf_b), human)


def test_stage_reports_the_threshold_the_cascade_applies():
    j = _judgments()
    cal = calibrate_judgments(j, POLICY, curves=False)
    a, b = cal.stages
    assert b.n_seen < POLICY.min_kept  # judge b is left fewer items than a candidate needs
    assert 0.3 < a.threshold <= 0.9
    assert b.threshold == a.threshold  # the authors' code reuses judge a's threshold ...
    # ... and its stage says so, not "returns 0.0"
    assert "0.0" not in b.reason.split("reuses")[0]
    assert f"{a.threshold:.4f}" in b.reason
    # what the report shows is what is applied
    who = apply_cascade(j.confidence_at(np.arange(200)), cal.thresholds())
    kept_b = sum(1 for k in who if k == 1)
    assert kept_b == b.n_kept
