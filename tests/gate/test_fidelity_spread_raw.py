"""A fidelity check has "no spread" only when its bootstrap interval has none: an interval narrower
than the verdict's 6 recorded places is kept (its ends rounded outward), never reported as "the same
difference in every resample"."""

from __future__ import annotations

from judgekit.analysis.fidelity import FigurePair
from judgekit.gate.fidelity import fidelity_checks
from judgekit.verdict.fidelity_policy import AnalysisFidelity

SPEC = AnalysisFidelity(analysis="calibration", figures=["C"], max_abs_diff=0.05, min_units=10,
                        harm_column="severity")


def _pair(low: float, high: float) -> FigurePair:
    return FigurePair("calibration", "C", {"model": "m"}, 0.5300002, 0.5, 0.0300002, low, high, 40, "conversations",
                      level=0.9)


def test_a_narrow_interval_is_not_read_as_no_spread() -> None:
    ch = fidelity_checks(SPEC, "j", [_pair(0.0300001, 0.0300004)])[0]
    assert "no spread" not in ch.detail, ch.detail
    assert ch.interval is not None and ch.interval.low < ch.interval.high
    assert ch.interval.low <= 0.0300001 and ch.interval.high >= 0.0300004  # rounded outward, never inward
    assert ch.state == "pass"


def test_an_interval_with_no_spread_is_still_said_so() -> None:
    ch = fidelity_checks(SPEC, "j", [_pair(0.0300002, 0.0300002)])[0]
    assert "no spread" in ch.detail and ch.interval is None


def test_a_narrow_interval_prints_with_two_different_ends() -> None:
    import re

    for low, high in ((0.0300001, 0.0300004), (-0.0001, 0.0002)):
        ch = fidelity_checks(SPEC, "j", [_pair(low, high)])[0]
        lo, hi = re.search(r"CI ([-+0-9.e]+), ([-+0-9.e]+)\]", ch.detail).groups()
        assert lo != hi, ch.detail
        assert float(lo) <= low and float(hi) >= high, ch.detail  # printed outward, never narrower
        assert not re.search(r"-0\.0+(?![0-9])", ch.detail), ch.detail  # no negative zero
