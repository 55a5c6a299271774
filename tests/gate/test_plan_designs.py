"""`judgekit plan` compares the labels a uniform, a stratified and an active design need for one
interval width on the corrected figure."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judgekit.cli import main
from judgekit.testing.study import write_study

POLICY = ("rubric: restrictiveness\njudges: [judge-fair, judge-lean]\nreference: adjudicated\n"
          "n_resamples: 200\nchecks:\n  min_items: 100\n  metric: weighted_kappa\n  min_value: 0.7\n")


def _run(*args: object) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_plan_prints_the_labels_each_design_needs_for_one_width(tmp_path: Path) -> None:
    paths = write_study(tmp_path, human_share=0.3)
    store = tmp_path / "s.db"
    res = _run("import", paths["ratings"], "--rubric", "restrictiveness", "--items",
               paths["items"], "--store", store)
    assert res.exit_code == 0, res.output  # type: ignore[attr-defined]
    (tmp_path / "p.yaml").write_text(POLICY)
    res = _run("plan", tmp_path / "p.yaml", "--store", store, "--budget", "150",
               "--out", tmp_path / "plan.json")
    out = res.output  # type: ignore[attr-defined]
    assert res.exit_code == 0, out  # type: ignore[attr-defined]
    assert "judge-lean: labels for one 95% interval of width" in out
    assert "stratified by the judges’ labels" in out and "active (sample --active" in out
    # the closing line stays last
    assert out.strip().splitlines()[-2].startswith("Plan:")
    designs = {d["judge"]: d for d in json.loads((tmp_path / "plan.json").read_text())["designs"]}
    lean = designs["judge-lean"]
    # the width is the one uniform sampling reaches with the budget: uniform needs the budget
    assert abs(lean["uniform"] - 150) <= 1
    # the leaning judge errs in some cells more than others: the √error rule needs fewer
    assert lean["active"] < lean["uniform"]
