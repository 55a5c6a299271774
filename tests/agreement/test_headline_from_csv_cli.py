"""From CSV files through the CLI: two annotators who disagree on some items and a judge; the
headline judge-vs-human figure and the human figure beside it are on the same items (asserted
from the JSON's n), and the table prints that n."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judgekit.cli import main


def _study(tmp_path: Path) -> Path:
    labs = ["full_refusal", "full_compliance"]
    rows = []
    for n in range(60):
        a = labs[n % 2]
        b = labs[(n + 1) % 2] if n % 7 == 0 else a  # the annotators disagree on 9 items
        rows.append(f"i{n},p{n},r{n},{a},{b},{a}")
    csv = tmp_path / "study.csv"
    csv.write_text("item_id,prompt,response,ann1,ann2,careful\n" + "\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    r = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--raters", "ann1,ann2",
                                  "--judges", "careful", "--store", str(db)])
    assert r.exit_code == 0, r.output
    return db


def test_headline_and_human_figure_share_their_items(tmp_path):
    db = _study(tmp_path)
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100",
                                  "--json"])
    assert r.exit_code == 0, r.output
    overall = json.loads(r.output)["slices"][0]
    judge = overall["judges"]["careful"]
    head = judge["headline"]
    assert judge["vs_reference"]["n"] == 51  # the majority drops the 9 tied items
    assert head["basis"] == "leave-one-out"
    assert head["n"] == head["humans"]["n"] == 60
    assert head["kappa"]["n"] == head["humans"]["kappa"]["n"] == 60
    for f in (head["kappa"], head["humans"]["kappa"], head["percent_agreement"]):
        assert -1.0 <= f["low"] <= f["value"] <= f["high"] <= 1.0
    table = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100"])
    text = " ".join(table.output.split())
    assert "Judges against the consensus of the other humans" in text and "same items" in text
