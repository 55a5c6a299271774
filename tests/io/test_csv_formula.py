"""A CSV judgekit writes cannot carry a spreadsheet formula.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula (or
starts one) when the CSV is opened in a spreadsheet; OWASP's advice ("CSV Injection") is to put a
single quote before it. judgekit does that in CSV output only: the store, JSONL, JSON and Parquet
keep the text exactly as written, and a number (``-0.5``) stays a number.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.io.tables import write_table

#: the OWASP list, each as a cell's start
FORMULAS = ["=1+2", "+1+2", "-1+2", "@SUM(A1)", "\t=1+2", "\r=1+2", "=HYPERLINK(\"http://x\",\"y\")"]


def read_csv_cells(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_csv_cells_that_start_a_formula_get_a_single_quote(tmp_path: Path):
    df = pd.DataFrame({
        "text": [*FORMULAS, "plain", "-0.5", "-", ""],
        "number": [-0.5] * len(FORMULAS) + [1.0, -2.0, 3.5, 0.0],
    })
    out = write_table(df, tmp_path / "t.csv")
    rows = read_csv_cells(out)
    assert rows[0] == ["text", "number"]
    texts = [r[0] for r in rows[1:]]
    assert texts[: len(FORMULAS)] == ["'" + f for f in FORMULAS]
    assert texts[len(FORMULAS):] == ["plain", "-0.5", "'-", ""]  # a number in text stays a number
    assert [r[1] for r in rows[1:]] == ["-0.5"] * len(FORMULAS) + ["1.0", "-2.0", "3.5", "0.0"]


def test_a_header_that_starts_a_formula_is_neutralised_too(tmp_path: Path):
    out = write_table(pd.DataFrame({"=cmd": ["a"], "ok": ["b"]}), tmp_path / "h.csv")
    assert read_csv_cells(out)[0] == ["'=cmd", "ok"]


@pytest.mark.parametrize("ending", ["jsonl", "json", "parquet"])
def test_other_formats_keep_the_text_exactly(tmp_path: Path, ending: str):
    df = pd.DataFrame({"text": FORMULAS})
    out = write_table(df, tmp_path / f"t.{ending}")
    if ending == "parquet":
        back = pd.read_parquet(out)["text"].tolist()
    elif ending == "jsonl":
        back = [json.loads(line)["text"] for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        back = [row["text"] for row in json.loads(out.read_text(encoding="utf-8"))]
    assert back == FORMULAS


def test_export_ratings_csv_neutralises_and_the_store_keeps_the_text(tmp_path: Path):
    store = tmp_path / "s.db"
    src = tmp_path / "in.jsonl"
    rationales = ["=1+2", "@SUM(A1)", "-1+2", "fine"]
    src.write_text("".join(
        json.dumps({"item_id": f"i{k}", "rater_id": "h1", "label": "full_refusal", "rationale": r}) + "\n"
        for k, r in enumerate(rationales)), encoding="utf-8")
    res = CliRunner().invoke(main, ["import", str(src), "--rubric", "refusal", "--store", str(store)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["export", "ratings", "--store", str(store), "--out", str(tmp_path / "r.csv")])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text(encoding="utf-8"))))
    assert sorted(r["rationale"] for r in rows) == sorted(["'=1+2", "'@SUM(A1)", "'-1+2", "fine"])
    assert {r["value"] for r in rows} == {"1.0"}  # numbers stay numbers
    con = sqlite3.connect(store)
    try:
        stored = sorted(r for (r,) in con.execute("SELECT rationale FROM ratings"))
    finally:
        con.close()
    assert stored == sorted(rationales)
    res = CliRunner().invoke(main, ["export", "ratings", "--store", str(store), "--out", str(tmp_path / "r.jsonl")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["rationale"] for line in lines) == sorted(rationales)
