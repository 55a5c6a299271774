"""``import --set`` keeps out of the rating columns' names, and an export of item metadata whose
names meet a rating column's (``status`` beside ``item.status``) keeps every column apart."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main

LABELS = "item_id,prompt,response,h1\na1,p1,r1,full_compliance\na2,p2,r2,full_refusal\n"


@pytest.mark.parametrize("column", ["rater_kind", "status", "trial", "value", "provenance", "rater_id", "label",
                                    "confidence"])
def test_set_refuses_a_rating_column_name(tmp_path: Path, column: str) -> None:
    (tmp_path / "l.csv").write_text(LABELS)
    db = tmp_path / "s.db"
    out = CliRunner().invoke(main, ["import", str(tmp_path / "l.csv"), "--rubric", "refusal", "--raters", "h1",
                                    "--set", f"{column}=x", "--store", str(db)])
    one_sentence_error(out, f"--set {column}=", "rating")


def test_export_keeps_item_metadata_apart_from_a_rating_column_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "l.csv").write_text("item_id,h1\na1,full_compliance\na2,full_refusal\n")
    (tmp_path / "items.csv").write_text("item_id,prompt,response,status\na1,p1,r1,A\na2,p2,r2,A\n")
    db = str(tmp_path / "s.db")
    runner = CliRunner()
    done = runner.invoke(main, ["import", str(tmp_path / "l.csv"), "--items", str(tmp_path / "items.csv"),
                                "--rubric", "refusal", "--raters", "h1", "--set", "item.status=B", "--store", db])
    assert done.exit_code == 0, done.output
    out = tmp_path / "r.parquet"
    done = runner.invoke(main, ["export", "ratings", "--items", "--out", str(out), "--store", db])
    assert done.exit_code == 0, done.output
    df = pd.read_parquet(out)
    assert df.columns.is_unique
    assert df["status"].tolist() == ["ok", "ok"]
    meta = {c: sorted(df[c]) for c in df.columns if c.endswith("status") and c != "status"}
    assert sorted(meta.values()) == [["A", "A"], ["B", "B"]], meta
