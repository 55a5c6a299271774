"""``analyze criteria --where model=…`` is trusted only where the verdict's checks are about that
model: a criterion certified on the pooled items (its one check has no model) is not certified for
one model alone. On the synthetic study of judgekit.testing.study (the leaning judge fails its gate
but is certified for "refusal at turn 1" pooled, as tests/analysis/test_analysis_criteria_certified.py
checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from tests.conftest import one_sentence_error

T1, T6 = "refusal at turn 1", "refusal at turn 6"
HEAD = "rater: judge-lean\nper: seed\ncriteria:\n"
LINE = {t: f"  - {{name: {name}, rubric: restrictiveness, label: [r3_deflection, r4_hard_refusal], where: {{turn: {t}}}, "
           "op: '<=', threshold: 0.9}\n" for t, name in ((1, T1), (6, T6))}
POLICY = ("rubric: restrictiveness\njudges: [judge-lean]\nreference: adjudicated\nn_resamples: 300\n"
          "checks:\n  min_items: 300\n  metric: weighted_kappa\n  min_value: 0.7\n"
          "  analysis_fidelity: {analysis: criteria, criteria: crit.yaml, max_abs_diff: 0.05}\n")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("popcrit")
    paths = write_study(root, n_resamples=300)
    (root / "crit.yaml").write_text(HEAD + LINE[1] + LINE[6])  # the gate reads both
    (root / "t1.yaml").write_text(HEAD + LINE[1])  # the analysis: the certified one
    (root / "policy.yaml").write_text(POLICY)
    with Store(root / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        verdict, _ = run_gate(store, root / "policy.yaml")
    (root / "verdict.json").write_text(json.dumps(verdict))
    names = {c["name"]: c["state"] for c in verdict["judges"][0]["checks"]}
    assert names[f"analysis_fidelity[criteria:rate(criterion={T1})]"] == "pass"  # certified pooled, checked
    assert names[f"analysis_fidelity[criteria:rate(criterion={T6})]"] == "fail"  # so the judge fails
    assert not [n for n in names if "model=" in n]  # and no check about any one model
    return root


def _run(root: Path, *extra: str):
    return CliRunner().invoke(main, ["analyze", "criteria", str(root / "t1.yaml"), "--store", str(root / "s.db"),
                                     "--verdict", str(root / "verdict.json"), "--quiet", *extra])


def test_the_pooled_certificate_is_trusted_on_all_the_items(study: Path) -> None:
    res = _run(study)
    assert res.exit_code == 0, res.output


def test_the_pooled_certificate_is_not_trusted_for_one_model(study: Path) -> None:
    line = one_sentence_error(_run(study, "--where", "model=m-eroding"),
                              "judge 'judge-lean'", "(model=m-eroding)",
                              f"rate(criterion={T1}): not certified for model=m-eroding",
                              "no check of the verdict is about model=m-eroding")
    assert "verdict.json" in line
