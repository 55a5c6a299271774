"""`explain` prints a check's figure, interval and threshold with the digits that tell them apart:
a threshold of 0.0004 is "0.0004", never "0.000"."""

from __future__ import annotations

from judgekit.gate.run import explain
from judgekit.verdict.check import Check, Interval, check_json
from judgekit.verdict.numbers import beside


def _verdict(ch: Check) -> dict[str, object]:
    return {"rubric": "r@1", "judges": [{"judge": "j", "state": ch.state, "checks": [check_json(ch)]}]}


def test_explain_prints_a_small_threshold_and_figure_with_their_digits() -> None:
    ch = Check("max_abstention_rate", "j", 0.0012, 0.0004, 5000, "abstentions",
               interval=Interval(0.0006, 0.0021, "wilson", 0.95))
    assert ch.state == "fail"
    line = next(x for x in explain(_verdict(ch)) if "max_abstention_rate" in x)
    assert "vs threshold 0.0004 " in line, line
    assert "0.000–" not in line and "0.00060–0.00210" in line, line
    assert line.split(": ", 1)[1].startswith("0.00120 "), line


def test_beside_keeps_three_decimals_unless_they_hide_the_value() -> None:
    assert beside(0.1234, 0.7) == "0.123"
    assert beside(0.0004) == "0.0004"
    assert beside(-0.0) == "0.000" and beside(0.0) == "0.000"
    assert beside(0.02004, 0.02) == "0.02004"  # apart from the threshold it faces
    assert beside(0.02, 0.02) == "0.020"
    assert beside(0.0006, 0.0004) == "0.00060"
    assert beside(-0.00004) == "-4e-05"
