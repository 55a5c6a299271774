"""Human ratings without Label Studio: the column mapping documented in docs/labelstudio.md."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store


def test_prolific_long_export_after_renaming(tmp_path):
    prolific = pd.DataFrame(
        {
            "PROLIFIC_PID": ["5f1a", "5f1a", "77bc", "77bc"],
            "question_id": ["q1", "q2", "q1", "q2"],
            "answer": ["3", "hard_refusal", "r3_deflection", "0"],  # aliases and codes mixed
            "comment": ["", "clear", None, "all given"],
            "severity": [2, 4, 2, 4],
        }
    )
    raw = tmp_path / "prolific.csv"
    prolific.to_csv(raw, index=False)
    # the documented rename
    renamed = tmp_path / "ratings.csv"
    pd.read_csv(raw).rename(
        columns={"question_id": "item_id", "PROLIFIC_PID": "rater_id", "answer": "label", "comment": "rationale"}
    ).to_csv(renamed, index=False)
    db = tmp_path / "j.db"
    result = CliRunner().invoke(main, ["import", str(renamed), "--rubric", "restrictiveness", "--store", str(db)])
    assert result.exit_code == 0, result.output
    with Store(db) as s:
        r = s.ratings(rubric=load_rubric("restrictiveness")).sort_values(["rater_id", "item_id"])
        assert r[["rater_id", "item_id", "label"]].values.tolist() == [
            ["5f1a", "q1", "r3_deflection"],
            ["5f1a", "q2", "r4_hard_refusal"],
            ["77bc", "q1", "r3_deflection"],
            ["77bc", "q2", "r0_full_compliance"],
        ]
        assert set(r["rater_kind"]) == {"human"}
        assert s.items().set_index("item_id").loc["q2", "severity"] == 4


def test_spreadsheet_one_column_per_annotator(tmp_path):
    sheet = tmp_path / "sheet.csv"
    pd.DataFrame(
        {
            "item_id": ["a", "b", "c"],
            "col_a": ["full_refusal", "full_compliance", "partial_refusal"],
            "col_b": ["full_refusal", "partial_refusal", None],
            "adjudicated": ["full_refusal", "partial_refusal", "partial_refusal"],
        }
    ).to_csv(sheet, index=False)
    db = tmp_path / "j.db"
    result = CliRunner().invoke(
        main,
        ["import", str(sheet), "--rubric", "refusal", "--raters", "alice=col_a,bob=col_b",
         "--reference", "final=adjudicated", "--store", str(db)],
    )
    assert result.exit_code == 0, result.output
    with Store(db) as s:
        r = s.ratings(rubric=load_rubric("refusal"))
        assert r.groupby("rater_id").size().to_dict() == {"alice": 3, "bob": 2, "final": 3}
        assert set(r.loc[r.rater_id == "final", "rater_kind"]) == {"reference"}
