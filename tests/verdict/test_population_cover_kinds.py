"""Which checks make a verdict cover a part of the items (``--where``): only checks that compare
the judge with the reference in that cell. A probe about a slice (the judge's stability or
self-preference there) passes without a single human label being compared there, so it says
nothing about the judge's fidelity on that slice alone."""

from __future__ import annotations

from judgekit.verdict.check import Interval, Subject, new_check
from judgekit.verdict.policy import Policy
from judgekit.verdict.population import judge_covers

POLICY = Policy.model_validate({"rubric": "refusal", "judges": ["j"], "by": ["model"],
                                "checks": {"min_items": 10, "min_value": 0.5}})


def _sliced(kind: str, figure: float, threshold: float, key: str = "mA") -> object:
    return new_check(kind, "j", figure, threshold, 100, "d", subject=Subject(by="model", key=key),
                     interval=Interval(figure - 0.01, figure + 0.01, "percentile", 0.95))


def test_a_passing_probe_about_a_slice_does_not_cover_it() -> None:
    stable = _sliced("min_stability", 0.99, 0.9)  # stable on mA: passes, but compares with no human
    assert stable.state == "pass"
    why = judge_covers([stable], [("model", ["mA"])], POLICY)
    assert why == "no check of the verdict is about model=mA"


def test_a_passing_per_slice_check_covers_its_slice() -> None:
    agree = _sliced("per_slice", 0.8, 0.5)
    assert agree.state == "pass"
    assert judge_covers([agree], [("model", ["mA"])], POLICY) is None
    assert judge_covers([agree], [("model", ["mB"])], POLICY) == "no check of the verdict is about model=mB"


def test_a_failing_probe_about_a_covered_slice_still_refuses_it() -> None:
    agree, unstable = _sliced("per_slice", 0.8, 0.5), _sliced("min_stability", 0.5, 0.9)
    assert agree.state == "pass" and unstable.state == "fail"
    assert judge_covers([agree, unstable], [("model", ["mA"])], POLICY) == (
        f"its check {unstable.name} about model=mA fails")


def _on(by: str, key: str) -> object:
    return new_check("per_slice", "j", 0.8, 0.5, 100, "d", subject=Subject(by=by, key=key),
                     interval=Interval(0.75, 0.85, "percentile", 0.95))


def test_two_filters_need_a_check_about_their_crossed_cell() -> None:
    # each model and each tier certified on its own says nothing about tier 5 of mA alone
    checks = [_on("model", "mA"), _on("model", "mB"), _on("severity", "4"), _on("severity", "5")]
    where = [("model", ["mA"]), ("severity", ["5"])]
    assert judge_covers(checks, where[:1], POLICY) is None and judge_covers(checks, where[1:], POLICY) is None
    assert judge_covers(checks, where, POLICY) == "no check of the verdict is about model=mA, severity=5"
    crossed = [*checks, _on("model+severity", "mA / 5")]
    assert judge_covers(crossed, where, POLICY) is None
    assert judge_covers(crossed, [("severity", ["5"]), ("model", ["mA"])], POLICY) is None
    assert judge_covers(crossed, [("model", ["mA", "mB"]), ("severity", ["5"])], POLICY) == (
        "no check of the verdict is about model=mB, severity=5")


def test_a_boolean_slice_is_covered_however_the_filter_spells_it() -> None:
    # items with JSON booleans: the gate's slice key is "True"; --where selects them with true/yes/1
    checks = [_on("flagged", "True"), _on("flagged", "False")]
    for spelled in ("True", "true", "yes", "1"):
        assert judge_covers(checks, [("flagged", [spelled])], POLICY) is None, spelled
    assert judge_covers(checks[1:], [("flagged", ["yes"])], POLICY) == "no check of the verdict is about flagged=yes"
