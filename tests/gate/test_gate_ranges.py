"""Thresholds checked against their statistic's range, bounded resamples, the report's threshold direction from the check's kind, and
criteria fidelity with a custom rubric file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import one_sentence_error

from judgekit.errors import JudgekitError

BASE = "rubric: refusal\njudges: [j1]\nchecks:\n  min_items: 30\n"


def _load(tmp_path: Path, body: str, top: str = "") -> None:
    from judgekit.verdict.policy import load_policy

    p = tmp_path / "policy.yaml"
    p.write_text(top + BASE + body, encoding="utf-8")
    load_policy(p)


@pytest.mark.parametrize(("body", "top", "phrase"), [
    ("  min_value: -5\n", "", "checks.min_value -5 is outside the range [-1, 1] of kappa"),
    ("  min_value: -1\n", "", "checks.min_value -1 is the lowest kappa can be, so the check can never fail"),
    ("  metric: percent_agreement\n  min_lower_bound: 0\n", "", "the lowest percent_agreement can be"),
    ("  min_value: 1.5\n", "", "outside the range [-1, 1] of kappa"),
    ("  alt_test: {min_winning_rate: 0}\n", "", "checks.alt_test.min_winning_rate 0 is the lowest"),
    ("  min_value: 0.5\n  max_error_rate: 1\n", "", "checks.max_error_rate 1 is the highest a rate can be"),
    ("  min_value: 0.5\n  per_slice: {min_value: -2}\n", "", "checks.per_slice.min_value -2 is outside"),
    ("  min_value: 0.5\n  within_human_noise: {margin: 2}\n", "", "checks.within_human_noise.margin 2 is the highest"),
    ("  min_value: 0.5\n  min_coverage: 0\n", "", "checks.min_coverage 0 is the lowest"),
    ("  min_value: 0.5\n", "n_resamples: 1000000000\n", "n_resamples 1,000,000,000 is more than 100,000"),
])
def test_threshold_outside_or_on_the_edge_of_its_range_is_refused(tmp_path: Path, body: str, top: str,
                                                                  phrase: str) -> None:
    with pytest.raises(JudgekitError) as exc:
        _load(tmp_path, body, top)
    msg = str(exc.value)
    assert phrase in msg and str(tmp_path / "policy.yaml") in msg and msg.count("\n") == 0


def test_min_items_below_the_floor_is_refused(tmp_path: Path) -> None:
    from judgekit.verdict.policy import load_policy

    p = tmp_path / "policy.yaml"
    p.write_text("rubric: refusal\njudges: [j1]\nchecks: {min_items: 1, min_value: 0.5}\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match="checks.min_items 1 is below 5"):
        load_policy(p)


def test_thresholds_inside_the_range_are_kept(tmp_path: Path) -> None:
    _load(tmp_path, "  min_value: -0.99\n  max_error_rate: 0.99\n  alt_test: {min_winning_rate: 0.01}\n",
          "n_resamples: 100000\n")


def test_cli_refuses_a_policy_that_cannot_fail_with_exit_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from judgekit.cli import main
    from judgekit.store.database import Store

    with Store(tmp_path / "s.db"):
        pass
    p = tmp_path / "policy.yaml"
    p.write_text(BASE + "  min_value: -5\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["gate", str(p), "--store", str(tmp_path / "s.db")])
    one_sentence_error(res, "outside the range [-1, 1] of kappa")


@pytest.mark.parametrize(("kind", "figure", "threshold", "subject", "want"), [
    # within_human_noise: −0.087 against −0.100 is a minimum (was printed "≤")
    ("within_human_noise", -0.087, -0.1, {}, "≥"),
    ("min_lower_bound", 0.7, 0.6, {}, "≥"),
    ("analysis_fidelity", 0.01, 0.05, {"analysis": "calibration", "figure": "C", "cell": "C(model=m)"}, "≤"),
    ("alt_test", 0.3, 0.5, {}, "≥"),
    ("per_slice", 0.7, 0.5, {"by": "m", "key": "a"}, "≥"),
    ("max_abs_bias_slice", 0.01, 0.05, {"by": "m", "key": "a"}, "≤"),
])
def test_report_direction_comes_from_the_kind_never_the_result(kind: str, figure: float, threshold: float,
                                                               subject: dict, want: str) -> None:
    from judgekit.report.summary import comparison
    from judgekit.verdict.check import Check, Subject, check_json

    check = check_json(Check(kind, "j", figure, threshold, 100, "", subject=Subject(**subject), metric="kappa"))
    assert comparison(check) == want
    assert comparison({"name": "not_a_check", "figure": 0.3, "threshold": 0.5}) == ""


def test_criteria_fidelity_accepts_a_custom_rubric_file(tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, conversations_per_tier=6, lookalikes=2)
    rub = tmp_path / "myrubric.yaml"
    shutil.copy(load_rubric("restrictiveness").source, rub)
    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric(str(rub)), items_path=paths["items"])
    # the criterion names the rubric by its file, as `judgekit analyze criteria` needs
    (tmp_path / "crit.yaml").write_text(
        f"criteria:\n  - {{name: hard at tier 5, rubric: '{rub}', label: r4_hard_refusal,"
        " where: {severity: 5}, op: '>=', threshold: 0.5}\n", encoding="utf-8")
    pol = tmp_path / "crit-policy.yaml"
    pol.write_text(f"rubric: '{rub}'\njudges: [judge-fair]\nreference: adjudicated\nn_resamples: 200\n"
                   "checks:\n  min_items: 10\n  min_value: 0.5\n"
                   "  analysis_fidelity: {analysis: criteria, criteria: crit.yaml, max_abs_diff: 0.05}\n",
                   encoding="utf-8")
    with Store(tmp_path / "s.db") as store:
        v, _ = run_gate(store, pol)
    names = [c["name"] for c in v["judges"][0]["checks"]]
    assert "analysis_fidelity[criteria:rate(criterion=hard at tier 5)]" in names


@pytest.mark.parametrize(("alpha", "phrase"), [
    ("0", "checks.analysis_fidelity.alpha: Input should be greater than or equal to 0.001"),
    ("0.3", "checks.analysis_fidelity.alpha: Input should be less than or equal to 0.25"),
    ("yes", "checks.analysis_fidelity.alpha: Input should be a valid number"),
    ("'0.05'", "checks.analysis_fidelity.alpha: Input should be a valid number"),
])
def test_fidelity_alpha_outside_its_range_is_refused(tmp_path: Path, alpha: str, phrase: str) -> None:
    # alpha is each one-sided test's error: the check reads the 1 − 2α interval, so α in (0, 0.25]
    body = ("  min_value: 0.5\n  analysis_fidelity: {analysis: distribution, max_abs_diff: 0.05, "
            f"alpha: {alpha}}}\n")
    with pytest.raises(JudgekitError) as err:
        _load(tmp_path, body)
    assert phrase in str(err.value) and "policy.yaml" in str(err.value), str(err.value)


def test_fidelity_alpha_sets_the_level() -> None:
    from judgekit.verdict.fidelity_policy import AnalysisFidelity

    spec = AnalysisFidelity(analysis="distribution", max_abs_diff=0.05)
    assert spec.alpha == 0.05 and spec.level == pytest.approx(0.90)
    assert AnalysisFidelity(analysis="distribution", max_abs_diff=0.05, alpha=0.025).level == pytest.approx(0.95)
