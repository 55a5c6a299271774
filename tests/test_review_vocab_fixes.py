"""Regression tests for the reviewer's findings in the rubric vocabulary and views code (issue 12
items 5-8): each test failed before its fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.rubric import load_rubric

HARM = """\
name: harmbin
version: 1
title: Harmful or not
level: nominal
instructions: Is the response harmful?
labels:
  - {code: not_harmful, value: 0, description: not harmful}
  - {code: harmful, value: 1, description: harmful}
"""


def write_rubric(folder: Path, extra: str = "", name: str = "harmbin.yaml", base: str = HARM) -> Path:
    path = folder / name
    path.write_text(base + textwrap.dedent(extra), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


# ------------------------------------------------------------------ 5: plain numbers only
RANGES = """\
alias_ranges:
  - {at_least: 2, below: 7, code: not_harmful}
  - {at_least: 7, at_most: 100, code: harmful}
"""


@pytest.mark.parametrize("text", ["007", "1e1", "+7", "7.", "7.0e0", " 0x7", "7.50", "1_0", "٧"])
def test_a_text_that_is_not_a_plain_number_never_falls_into_a_range(tmp_path, text):
    """The CSV reader keeps these as text (io.tables: not the text Python writes for a number), so
    a range does not read them as numbers either: they stay unmapped."""
    r = load_rubric(write_rubric(tmp_path, RANGES))
    assert r.normalise(text) is None


def test_plain_number_texts_still_fall_into_ranges(tmp_path):
    r = load_rubric(write_rubric(tmp_path, RANGES))
    assert [r.normalise(t) for t in ("7", "10", "6.5", "2", "100", "-3", "1e-05")] == [
        "harmful", "harmful", "not_harmful", "not_harmful", "harmful", None, None]


def test_csv_column_of_mixed_cells_maps_plain_numbers_only(tmp_path):
    """A column with a non-number cell stays text; '7' maps by the range, '007' is unmapped (an
    abstention with the raw value), exactly as a cell the table reader would not call a number."""
    rubric = write_rubric(tmp_path, RANGES)
    data = tmp_path / "l.csv"
    data.write_text("item_id,rater_id,label\na,j,7\nb,j,007\nc,j,n/a\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", db, "--kind", "judge")
    assert code == 0, out
    from judgekit.store import Store

    with Store(db) as s:
        got = s.ratings(rubric=load_rubric(rubric)).set_index("item_id")
    assert got.loc["a", "label"] == "harmful" and got.loc["a", "status"] == "ok"
    assert got.loc["b", "status"] == "abstain" and got.loc["c", "status"] == "abstain"


# ------------------------------------------------------------------ 7c: the pattern as written
def test_pattern_compile_error_shows_the_pattern_as_written(tmp_path):
    extra = "alias_patterns:\n  - {pattern: 'Rating: \\[\\[(10', code: harmful}\n"
    rubric = write_rubric(tmp_path, extra)
    data = tmp_path / "labels.csv"
    data.write_text("item_id,rater_id,label\na,h,harmful\n", encoding="utf-8")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", str(tmp_path / "s.db"))
    line = one_sentence_error(code, out)
    assert r"'Rating: \[\[(10' is not a regular expression (missing ), unterminated subpattern" in line, line
    assert "\\\\" not in line


def test_pattern_compile_error_escapes_control_characters(tmp_path):
    extra = 'alias_patterns:\n  - {pattern: "a\\e]0;x\\a(", code: harmful}\n'
    rubric = write_rubric(tmp_path, extra)
    data = tmp_path / "labels.csv"
    data.write_text("item_id,rater_id,label\na,h,harmful\n", encoding="utf-8")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", str(tmp_path / "s.db"))
    line = one_sentence_error(code, out)
    assert "\x1b" not in line and r"'a\x1b]0;x\x07(' is not a regular expression" in line, line
