"""A gate over a criteria file with thousands of criteria answers in time linear in them (no
per-criterion pass over every item's id as text, no name-by-name duplicate count), and each
criterion's figure is the one the gate gives for that criterion alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.gate.run import run_gate
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.testing.study import write_study

POLICY = ("rubric: restrictiveness\njudges: [judge-fair]\nreference: adjudicated\nn_resamples: 100\nchecks:\n"
          "  min_items: 10\n  min_value: 0.5\n  analysis_fidelity: {{analysis: criteria, criteria: {crit}, "
          "max_abs_diff: 0.05}}\n")


def _criteria(path: Path, ks: list[int]) -> None:
    labels = ("r4_hard_refusal", "[r3_deflection, r4_hard_refusal]", "r0_full_compliance")
    path.write_text("criteria:\n" + "".join(
        f"  - {{name: c{k}, rubric: restrictiveness, label: {labels[k % 3]}, where: {{severity: {1 + k % 5}}}}}\n"
        for k in ks))


@pytest.mark.slow
@pytest.mark.timeout(600)  # a hang guard: 10,000 criteria took minutes
def test_thousands_of_criteria_give_each_criterions_own_figure(tmp_path: Path) -> None:
    paths = write_study(tmp_path, figures=("C",), n_resamples=100, human_share=0.5, conversations_per_tier=10)
    _criteria(tmp_path / "many.yaml", list(range(3000)))
    _criteria(tmp_path / "few.yaml", [7, 2998])
    (tmp_path / "many.p.yaml").write_text(POLICY.format(crit="many.yaml"))
    (tmp_path / "few.p.yaml").write_text(POLICY.format(crit="few.yaml"))
    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        many, _ = run_gate(store, tmp_path / "many.p.yaml", record=False)
        few, _ = run_gate(store, tmp_path / "few.p.yaml", record=False)
    checks = {c["name"]: c for c in many["judges"][0]["checks"] if c["name"].startswith("analysis_fidelity[")}
    assert len(checks) == 3000
    for c in few["judges"][0]["checks"]:
        if c["name"].startswith("analysis_fidelity["):
            m = checks[c["name"]]
            assert (m["figure"], m["ci"], m["n"], m["state"]) == (c["figure"], c["ci"], c["n"], c["state"]), c["name"]


def test_a_repeated_criterion_name_is_still_refused(tmp_path: Path) -> None:
    from judgekit.analysis.criteria.spec import parse_criteria
    from judgekit.errors import JudgekitError

    crit = {"criteria": [{"name": f"c{k % 2500}", "rubric": "restrictiveness", "label": "r4_hard_refusal"}
                         for k in range(3000)]}
    with pytest.raises(JudgekitError, match="criterion name 'c0' is used twice"):
        parse_criteria(crit, source="x")


def test_a_gate_reads_its_criteria_file_once_and_each_rubric_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import judgekit.analysis.criteria.spec as spec

    paths = write_study(tmp_path, figures=("C",), n_resamples=20, human_share=0.5, conversations_per_tier=2)
    _criteria(tmp_path / "many.yaml", list(range(60)))
    (tmp_path / "many.p.yaml").write_text(POLICY.format(crit="many.yaml"))
    calls = {"rubric": 0, "criteria": 0}
    real_rubric, real_criteria = spec.load_rubric, spec.load_criteria

    def count_rubric(ref: object) -> object:
        calls["rubric"] += 1
        return real_rubric(ref)  # type: ignore[arg-type]

    def count_criteria(path: object) -> object:
        calls["criteria"] += 1
        return real_criteria(path)  # type: ignore[arg-type]

    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        monkeypatch.setattr(spec, "load_rubric", count_rubric)
        monkeypatch.setattr(spec, "load_criteria", count_criteria)
        verdict, _ = run_gate(store, tmp_path / "many.p.yaml", record=False)
    assert len(verdict["criteria_digests"]) == 60
    assert calls == {"rubric": 2, "criteria": 1}  # one rubric, read when validating and when digesting


def test_criteria_masked_together_match_as_each_does_alone() -> None:
    """Matches remembered across criteria keep 1, 1.0, True and "1" apart as each reads them."""
    import pandas as pd

    from judgekit.analysis.criteria.spec import criterion_mask, parse_criteria

    items = pd.DataFrame({"x": ["1", "2", "true", "1.0"], "y": ["a", "a", "b", "b"]})
    wheres = [({"x": 1}, [1, 0, 0, 1]), ({"x": "1"}, [1, 0, 0, 0]), ({"x": True}, [1, 0, 1, 0]),
              ({"x": [2, "true"]}, [0, 1, 1, 0]), ({"x": 1.0}, [1, 0, 0, 1]), ({"x": [1, True]}, [1, 0, 1, 1]),
              ({"x": 1, "y": "a"}, [1, 0, 0, 0])]
    crit = parse_criteria({"criteria": [{"name": f"c{k}", "rubric": "restrictiveness", "label": "r4_hard_refusal",
                                         "where": w} for k, (w, _) in enumerate(wheres)]}, source="x")
    seen: dict[str, pd.Series] = {}
    for c, (w, want) in zip(crit.criteria, wheres, strict=True):
        assert criterion_mask(c, items, seen=seen).tolist() == [bool(v) for v in want], w
