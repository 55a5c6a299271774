"""A header of a million columns ran import at 100% CPU for
minutes (checking the header for a repeated name compared every name with every other). The
number of columns and the header's length are bounded: one sentence naming the file and line,
exit 2, in seconds, nothing stored.

Before the fix the command would run for minutes: it runs in a child process with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_sentence_error

from judgekit.errors import JudgekitError
from judgekit.io.csv_fast import MAX_COLUMNS, MAX_HEADER_CHARS
from judgekit.io.tables import read_columns

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "judgekit", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def wide_csv(path: Path, n_extra: int, *, rows: int = 1) -> Path:
    names = ["item_id", "rater_id", "label"] + [f"c{k}" for k in range(n_extra)]
    lines = [",".join(names)]
    lines += [",".join([f"i{r}", "h1", "full_refusal"] + ["x"] * n_extra) for r in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_million_columns_is_refused_in_seconds(tmp_path: Path):
    f = wide_csv(tmp_path / "wide.csv", 1_000_000)
    # a hang guard: checking the header pair by pair ran for minutes
    proc = run_cli("import", str(f), "--rubric", "refusal", "--store", str(tmp_path / "s.db"), timeout=60)
    one_sentence_error(proc, f"{f} line 1", "1,000,003 columns", f"at most {MAX_COLUMNS:,}")
    assert not (tmp_path / "s.db").exists()


def test_the_column_bound_holds_for_every_reader(tmp_path: Path):
    n = MAX_COLUMNS + 1 - 3
    csv_file = wide_csv(tmp_path / "w.csv", n)
    with pytest.raises(JudgekitError, match=rf"w\.csv line 1: the header has {MAX_COLUMNS + 1:,} columns"):
        read_columns(csv_file)
    row = {"item_id": "i1", "rater_id": "h1", "label": "x", **{f"c{k}": 1 for k in range(n)}}
    jsonl = tmp_path / "w.jsonl"
    jsonl.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match=rf"w\.jsonl has {MAX_COLUMNS + 1:,} columns"):
        read_columns(jsonl)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({k: [v] for k, v in row.items()}), tmp_path / "w.parquet")
    with pytest.raises(JudgekitError, match=rf"w\.parquet has {MAX_COLUMNS + 1:,} columns"):
        read_columns(tmp_path / "w.parquet")


def test_the_bound_itself_is_read(tmp_path: Path):
    f = wide_csv(tmp_path / "ok.csv", MAX_COLUMNS - 3, rows=2)
    columns, data, _ = read_columns(f)
    assert len(columns) == MAX_COLUMNS and data["c0"] == ["x", "x"]


def test_a_header_line_longer_than_the_bound_is_refused(tmp_path: Path):
    f = tmp_path / "long.csv"
    name = "n" * (MAX_HEADER_CHARS + 10)
    f.write_text(f"item_id,rater_id,label,{name}\ni1,h1,full_refusal,x\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match=rf"long\.csv line 1: the header is longer than {MAX_HEADER_CHARS:,} characters"):
        read_columns(f)


def test_a_header_that_repeats_a_name_is_still_named(tmp_path: Path):
    f = tmp_path / "dup.csv"
    f.write_text("item_id,a,b,a\ni1,1,2,3\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match=r"names the column 'a' twice \(columns 2 and 4\)"):
        read_columns(f)
