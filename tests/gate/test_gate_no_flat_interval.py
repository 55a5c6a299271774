"""No zero-width interval and no negative zero in the gate: a figure difference with no spread is
reported with its n and the rule used, and numbers never print as -0.000."""

from __future__ import annotations

from judgekit.analysis.fidelity import FigurePair
from judgekit.gate.fidelity import fidelity_checks, fidelity_lines
from judgekit.gate.run import explain
from judgekit.verdict.check import check_json, new_check
from judgekit.verdict.fidelity_policy import AnalysisFidelity


def _flat(diff: float = -0.0) -> FigurePair:
    return FigurePair("calibration", "drift", {"model": "m", "turn": 2}, 0.5, 0.5, diff, diff, -diff, 40,
                      "conversations")


def test_a_difference_with_no_spread_has_no_interval_and_says_its_n_and_rule():
    spec = AnalysisFidelity(analysis="calibration", figures=["drift"], max_abs_diff=0.05, min_units=10)
    (ch,) = fidelity_checks(spec, "j", [_flat()])
    assert ch.interval is None and check_json(ch)["ci"] is None
    assert "-0.000" not in ch.detail and "−0.000" not in ch.detail
    assert "no spread" in ch.detail and "40 conversations" in ch.detail
    assert "the point decides" in ch.detail
    (line,) = fidelity_lines("j", [ch])[1:]
    assert "-0.000" not in line


def test_explain_never_prints_a_negative_zero():
    ch = new_check("max_abs_bias", "j", -0.0, 0.05, 5, "bias", min_n=30)
    v = {"rubric": "r", "judges": [{"judge": "j", "state": "inconclusive", "checks": [check_json(ch)],
                                    "budget": None}]}
    text = "\n".join(explain(v))
    assert "max_abs_bias (inconclusive): 0.000 " in text and "-0.000" not in text


def test_a_zero_width_interval_is_no_interval_and_the_check_says_its_n_and_rule():
    from judgekit.verdict.check import Interval

    ch = new_check("min_lower_bound", "j", 1.0, 0.6, 120, "lower end of the 95% CI of kappa", metric="kappa",
                   interval=Interval(1.0, 1.0, "bootstrap", 0.95), min_n=30)
    assert ch.interval is None and ch.state == "pass"
    assert "no spread" in ch.detail and "n=120" in ch.detail and "the point decides" in ch.detail
