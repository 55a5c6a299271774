"""The terminal agreement tables never print a negative zero: an interval end that rounds to zero
reads 0.00, as the Markdown and HTML reports print it."""

from __future__ import annotations

from judgekit.report.terminal import f3


def test_an_interval_end_just_below_zero_prints_without_a_minus_sign() -> None:
    # the demo's mistralinstruct gpt4 κ: 0.082 with a lower bound of about −0.004
    assert f3({"value": 0.082, "low": -0.004, "high": 0.17}) == "0.082 [0.00, 0.17]"
    assert f3({"value": -0.0004, "low": -0.2, "high": 0.1}) == "0.000 [-0.20, 0.10]"
    assert f3({"value": 0.3, "low": -0.006, "high": 0.5}) == "0.300 [-0.01, 0.50]"
