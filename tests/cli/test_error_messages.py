"""Error messages stay one short sentence whatever the input.

A value quoted in an error is an excerpt: a 1M-character label, key or rater id gives a message
of a few hundred characters, not 1 MB. Errors about a policy's ``by``, ``reference`` and
``humans`` name the policy file and the key to fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.errors import EXCERPT_CHARS, JudgekitError, UntrustedJudgeError, excerpt
from judgekit.rubric.model import load_rubric

BIG = "x" * 1_000_000
LABELS = ["full_compliance", "partial_refusal", "full_refusal"]


def run(*args: str):
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


def short_error(code: int, output: str, limit: int = 400) -> str:
    line = one_sentence_error((code, output))
    assert len(line) < limit, f"{len(line)} characters: {line[:300]}"
    return line


@pytest.fixture()
def small_store(tmp_path) -> Path:
    """12 items with metadata ``model``: humans h1, h2, reference final, judge j1."""
    rows = ["item_id,prompt,response,model,h1,h2,final,j1"]
    for i in range(12):
        lab = LABELS[i % 3]
        rows.append(f"i{i},p{i},r{i},m{i % 2},{lab},{LABELS[(i + 1) % 3] if i % 4 == 0 else lab},{lab},{lab}")
    csv = tmp_path / "labels.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    code, out = run("import", str(csv), "--rubric", "refusal", "--raters", "h1,h2",
                    "--reference", "final=final", "--judges", "j1=j1", "--store", str(db))
    assert code == 0, out
    return db


# ------------------------------------------------------------------ the helper
def test_excerpt_quotes_short_values_exactly_and_cuts_long_ones():
    assert excerpt("checks") == "'checks'"
    assert excerpt("it's") == '"it\'s"'
    assert excerpt("a\nb") == "'a\\nb'"
    cut = excerpt(BIG)
    assert cut == "'" + "x" * EXCERPT_CHARS + "…'"
    assert excerpt(BIG, 10, quote=False) == "xxxxxxxxxx…"
    assert excerpt("line\nbreak", quote=False) == "line\\nbreak"  # still one line
    assert excerpt(list(range(1000))).endswith("…") and len(excerpt(list(range(1000)))) < 100
    assert excerpt(42) == "42"


def test_every_judgekit_error_bounds_the_values_it_quotes():
    # a message built elsewhere with {value!r}: the quoted value is cut, the fix at the end stays
    msg = str(JudgekitError(f"data.csv line 2: rater {BIG!r} is unknown; add it with --raters."))
    assert msg == f"data.csv line 2: rater '{'x' * EXCERPT_CHARS}…' is unknown; add it with --raters."
    both = str(UntrustedJudgeError(f"judge {BIG + chr(39)!r} and {BIG!r}; fix it."))
    assert len(both) < 250 and both.endswith("; fix it.")
    # an unquoted long value: the start and the end (the fix) are kept
    long = str(JudgekitError("file " + "y" * 100_000 + " is bad; use another one."))
    assert len(long) < 2100 and long.startswith("file yyy") and long.endswith("; use another one.")
    # ordinary messages are untouched
    assert str(JudgekitError("Rubric 'refusl' does not exist; use refusal.")) == \
        "Rubric 'refusl' does not exist; use refusal."


# ------------------------------------------------------------------ through the CLI
def test_a_million_character_label_gives_a_short_error(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(f"item_id,prompt,response,h1\na,p,r,{BIG}\n", encoding="utf-8")
    line = short_error(*run("import", str(p), "--rubric", "refusal", "--raters", "h1",
                            "--store", str(tmp_path / "s.db")))
    assert "line 2" in line and "label 'xxxxxxxx" in line and "…'" in line


def test_a_long_value_in_a_rubric_gives_a_short_error(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    p = tmp_path / "r.yaml"
    p.write_text(text.replace("aliases:\n", f"aliases:\n  huh: {BIG}\n", 1), encoding="utf-8")
    line = short_error(*run("rubrics", str(p)))
    assert f"Rubric file {p}: alias 'huh' points to 'xxxx" in line and "not a label code" in line
    # an unknown key of 1,000 characters (YAML allows keys up to 1,024)
    p.write_text(text + f"{'k' * 1000}: 1\n", encoding="utf-8")
    line = short_error(*run("rubrics", str(p)))
    assert "unknown key 'kkkkkkkk" in line and "(a typo?); remove or rename it." in line


def test_a_long_judge_name_in_a_policy_gives_a_short_error(tmp_path, small_store):
    p = tmp_path / "policy.yaml"
    p.write_text(f"rubric: refusal\njudges: [{BIG}]\nchecks: {{min_items: 5, min_value: 0.5}}\n", encoding="utf-8")
    line = short_error(*run("gate", str(p), "--store", str(small_store), "--out", str(tmp_path)))
    assert line.startswith(f"error: Policy file {p}: judge 'xxxx") and "judges with ratings: j1." in line


@pytest.mark.parametrize("command", [["gate"], ["judge"], ["analyze", "criteria"], ["rubrics"]])
def test_a_file_name_too_long_for_the_file_system_is_one_sentence(tmp_path, small_store, command):
    name = str(tmp_path / ("y" * 5000 + ".yaml"))
    store = ["--store", str(small_store)] if command != ["rubrics"] else []
    line = short_error(*run(*command, name, *store))
    assert "yyyy…" in line


def test_rubric_template_that_cannot_be_read_is_one_sentence(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    p = tmp_path / "r.yaml"
    text = text.replace("judge:\n", "judge:\n  template: guide.txt\n", 1)
    p.write_text(text, encoding="utf-8")
    (tmp_path / "guide.txt").write_bytes(b"caf\xe9 latin-1\n")
    line = short_error(*run("rubrics", str(p)))
    assert f"Rubric file {p}: judge.template names guide.txt, which is not UTF-8 text" in line
    assert line.endswith("save it as UTF-8.")
    (tmp_path / "guide.txt").unlink()
    (tmp_path / "guide.txt").mkdir()
    p.write_text(text + "# edited\n", encoding="utf-8")
    line = short_error(*run("rubrics", str(p)))
    assert f"Rubric file {p}: judge.template names guide.txt, which is a folder" in line


# ------------------------------------------------------------------ policy keys name the file
@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("by: [model, nosuchcol]\n",
         "by names 'nosuchcol', which is not an item metadata column in {store}; fix 'by' "
         "(available: model)."),
        ("by: [model+colour]\n", "by names 'colour', which is not an item metadata column"),
        ("reference: nobody\n",
         "reference 'nobody' has no ratings under refusal@1#{hash} in {store}; fix 'reference' "
         "(use one of final, h1, h2 or 'consensus')."),
        ("humans: [h1, ghost]\n",
         "humans names 'ghost', a rater with no ratings under refusal@1#{hash} in {store}; "
         "fix 'humans' (human raters: final, h1, h2)."),
        ("humans: [h1, j1]\n", "humans names 'j1', a judge rater, not a human; fix 'humans'"),
        (f"by: [{BIG}]\n", "by names 'xxxxxxxx"),
    ],
)
def test_policy_by_reference_humans_errors_name_the_policy_file(tmp_path, small_store, extra, expected):
    p = tmp_path / "policy.yaml"
    p.write_text("rubric: refusal\njudges: [j1]\nchecks: {min_items: 5, min_value: 0.5}\nn_resamples: 200\n" + extra,
                 encoding="utf-8")
    out_dir = tmp_path / "out"
    line = short_error(*run("gate", str(p), "--store", str(small_store), "--out", str(out_dir)))
    want = expected.format(store=small_store, hash=load_rubric("refusal").hash)
    assert line.startswith(f"error: Policy file {p}: "), line
    assert want in line, line
    assert not (out_dir / "verdict.json").exists()


def test_a_valid_policy_with_by_reference_and_humans_still_gates(tmp_path, small_store):
    p = tmp_path / "policy.yaml"
    p.write_text("rubric: refusal\njudges: [j1]\nreference: final\nhumans: [h1, h2]\nby: [model]\n"
                 "checks: {min_items: 5, min_value: 0.5, per_slice: {min_items: 1, min_value: 0.5}}\nn_resamples: 200\n",
                 encoding="utf-8")
    code, out = run("gate", str(p), "--store", str(small_store), "--out", str(tmp_path / "out"))
    assert code == 0, out
    assert "per_slice" in (tmp_path / "out" / "verdict.json").read_text()


def test_errors_raised_in_code_are_bounded_too():
    with pytest.raises(JudgekitError) as info:
        load_rubric(BIG[:100_000])  # a rubric name, not a path
    assert len(str(info.value)) < 300 and "does not exist" in str(info.value)
