"""An analysis restricted with ``--where`` is trusted only for a part of the items its verdict's
checks are about: the pooled certificate says nothing about ``severity=4,5`` or ``model=mA`` alone.
On the shipped synthetic study (judge-a passes a policy with ``by: [model]``: per-slice checks
about each model, none about severity), and on certificates built from checks."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judgekit.cli import main
from judgekit.verdict.check import Subject, new_check
from judgekit.verdict.policy import Policy
from judgekit.verdict.population import figure_covers, judge_covers
from tests.conftest import one_sentence_error

pytest_plugins = ["tests.analysis_fixtures"]


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_calibration_on_tiers_the_verdict_has_no_check_about_is_refused(synthetic_store: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    res = run("analyze", "calibration", "--judge", "judge-a", "--verdict", synthetic_store["restrictiveness"],
              "--harm-column", "severity", "--where", "severity=4,5", "--bootstrap", "0",
              "--store", synthetic_store["store"], "--out", tmp_path, "--quiet")
    one_sentence_error(res, "judge 'judge-a'", "(severity=4,5)", "no check of the verdict is about severity=4",
                       "--untrusted")
    assert not (tmp_path / "calibration.json").exists()


def test_distribution_on_a_model_the_verdict_checks_is_trusted(synthetic_store: dict[str, Path],
                                                               tmp_path: Path) -> None:
    res = run("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness", "--no-forms",
              "--verdict", synthetic_store["restrictiveness"], "--where", "model=synth-drifting",
              "--bootstrap", "0", "--store", synthetic_store["store"], "--out", tmp_path, "--quiet")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "distribution.json").read_text())["trusted"] is True


def test_untrusted_runs_an_uncovered_part_stamped(synthetic_store: dict[str, Path], tmp_path: Path) -> None:
    res = run("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness", "--no-forms",
              "--verdict", synthetic_store["restrictiveness"], "--where", "severity=5", "--untrusted",
              "--bootstrap", "0", "--store", synthetic_store["store"], "--out", tmp_path, "--quiet")
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "distribution.json").read_text())
    assert data["trusted"] is False and "severity=5" in json.dumps(data["notes"])


# ------------------------------------------------------- certificates per cell, from checks
POLICY = Policy.model_validate({
    "rubric": "refusal", "judges": ["j"],
    "checks": {"min_items": 10, "min_value": 0.5,
               "analysis_fidelity": {"analysis": "criteria", "criteria": "c.yaml", "max_abs_diff": 0.05}}})


def _crit(figure: float, model: str | None = None, name: str = "hard") -> object:
    cell = f"rate(criterion={name}{', model=' + model if model else ''})"
    return new_check("analysis_fidelity", "j", figure, 0.05, 100, "d",
                     subject=Subject(analysis="criteria", figure="rate", criterion=name, model=model, cell=cell),
                     unit="prompts", min_n=10)


def test_a_criterion_certified_pooled_is_not_certified_for_a_model_whose_check_fails() -> None:
    checks = [_crit(0.01), _crit(0.02, "mB"), _crit(0.25, "mA")]  # mA's |difference| 0.25 > 0.05
    assert figure_covers(checks, "rate(criterion=hard)", [("model", ["mB"])], POLICY) is None
    why = figure_covers(checks, "rate(criterion=hard)", [("model", ["mA"])], POLICY)
    assert why is not None and "about model=mA fails" in why


def test_a_pooled_certificate_covers_no_part_it_has_no_check_about() -> None:
    checks = [_crit(0.01)]
    assert figure_covers(checks, "rate(criterion=hard)", [], POLICY) is None
    why = figure_covers(checks, "rate(criterion=hard)", [("model", ["mA"])], POLICY)
    assert why == "no check of the verdict is about model=mA"
    assert judge_covers(checks, [("severity", ["4", "5"])], POLICY) == "no check of the verdict is about severity=4"


def test_a_filter_that_keeps_every_item_is_the_whole_population(synthetic_store: dict[str, Path],
                                                               tmp_path: Path) -> None:
    # every item has a severity of 1 to 5: the filter leaves the analysis as it is without it
    res = run("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness", "--no-forms",
              "--verdict", synthetic_store["restrictiveness"], "--where", "severity=1,2,3,4,5",
              "--bootstrap", "0", "--store", synthetic_store["store"], "--out", tmp_path, "--quiet")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "distribution.json").read_text())["trusted"] is True
