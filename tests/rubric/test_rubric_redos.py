"""A rubric's alias pattern cannot hang judgekit (ReDoS).

Python's ``re`` backtracks exponentially on nested repetition: ``(a+)+b`` against ``'a'*40+'!'``
takes longer than the age of the universe. The patterns now run on the ``regex`` engine, which
settles these in milliseconds, with a time bound on every match; a pattern that still backtracks
on the probe values is refused when the rubric is loaded, and one that exceeds the bound on a
value is refused then — one sentence naming the rubric file and the pattern.

A hang before the fix would hang the test run (``re`` cannot be interrupted): the commands that
could hang run in a child process with a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_sentence_error
from test_rubric_vocab import HARM, write_rubric

from judgekit.errors import JudgekitError

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "judgekit", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def pattern_rubric(folder: Path, pattern: str, name: str = "redos.yaml") -> Path:
    return write_rubric(folder, f"alias_patterns:\n  - {{pattern: '{pattern}', code: harmful}}\n", name)


@pytest.mark.parametrize(("pattern", "label"), [
    ("(a+)+b", "a" * 40 + "!"),
    (r"^(\w+\s?)*$", " ".join(["word"] * 30) + "!"),
])
def test_import_of_a_label_against_a_nested_pattern_ends_quickly(tmp_path: Path, pattern: str, label: str):
    rubric = pattern_rubric(tmp_path, pattern)
    labels = tmp_path / "labels.csv"
    labels.write_text(f"item_id,response,h1\ni1,r,{label}\ni2,r,yes\n", encoding="utf-8")
    proc = run_cli("import", str(labels), "--rubric", str(rubric), "--raters", "h1",
                   "--store", str(tmp_path / "s.db"))  # a hang is the child's timeout
    # the label is simply not one of the rubric's: the usual sentence, naming the row
    one_sentence_error(proc, "labels.csv line 2: label", "is not in rubric harmbin@1")
    assert not (tmp_path / "s.db").exists()


def test_a_provider_answer_against_a_nested_pattern_ends_quickly(tmp_path: Path):
    """The judge's answer goes through the same normalisation (``Rubric.normalise``)."""
    rubric = pattern_rubric(tmp_path, "(a+)+b")
    code = (
        "from judgekit.rubric.model import load_rubric\n"
        "from judgekit.rubric.answer import parse_answer\n"
        f"r = load_rubric({str(rubric)!r})\n"
        "parse_answer('a' * 40 + '!', r)\n"
        "print(r.normalise('a' * 40 + '!'), r.normalise('aaab'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.split() == ["None", "harmful"], proc.stderr


@pytest.mark.timeout(30)  # a hang guard: backtracking would run for ages
def test_a_pattern_that_backtracks_on_the_probes_is_refused_when_loaded(tmp_path: Path):
    from judgekit.rubric.model import load_rubric

    rubric = pattern_rubric(tmp_path, "(a|aa)+b")  # exponential on the regex engine too
    with pytest.raises(JudgekitError) as info:
        load_rubric(rubric)
    message = str(info.value)
    assert str(rubric) in message and "alias_patterns[0]" in message, message
    assert "(a|aa)+b" in message and "nested repetition" in message, message
    assert "\n" not in message


def test_the_refused_pattern_is_one_sentence_on_the_command_line(tmp_path: Path):
    rubric = pattern_rubric(tmp_path, "(a|aa)+b")
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,response,h1\ni1,r,yes\n", encoding="utf-8")
    proc = run_cli("import", str(labels), "--rubric", str(rubric), "--raters", "h1",
                   "--store", str(tmp_path / "s.db"))
    one_sentence_error(proc, "alias_patterns[0]", str(rubric))
    assert not (tmp_path / "s.db").exists()


@pytest.mark.timeout(30)  # a hang guard: backtracking would run for ages
def test_a_value_that_exceeds_the_time_bound_is_refused_naming_the_rubric(tmp_path: Path, monkeypatch):
    """The bound at match time, for a pattern the load-time probes do not catch (here: no probes)."""
    from judgekit.rubric import vocab
    from judgekit.rubric.model import load_rubric

    monkeypatch.setattr(vocab, "probe_values", lambda pattern: [])
    monkeypatch.setattr(vocab, "MATCH_TIMEOUT_S", 0.05)
    rubric = load_rubric(pattern_rubric(tmp_path, "(x|xx)+y", "late.yaml"))
    assert rubric.normalise("xxy") == "harmful"  # an ordinary value matches as before
    with pytest.raises(JudgekitError) as info:
        rubric.normalise("x" * 80 + "!")
    message = str(info.value)
    assert str(tmp_path / "late.yaml") in message and "alias_patterns[0]" in message, message
    assert "(x|xx)+y" in message


def test_ordinary_patterns_keep_their_meaning(tmp_path: Path):
    from judgekit.rubric.model import load_rubric

    text = HARM + ("alias_patterns:\n  - {pattern: 'Rating: \\[\\[10\\]\\]', code: harmful}\n"
                   "  - {pattern: '(?i:yes)\\s+(?=indeed)\\w+', code: not_harmful}\n")
    path = tmp_path / "ok.yaml"
    path.write_text(text, encoding="utf-8")
    r = load_rubric(path)
    assert r.normalise("rating: [[10]]") == "harmful"
    assert r.normalise("  Rating: [[10]]  ") == "harmful"
    assert r.normalise("Rating: [[10]] because") is None
    assert r.normalise("YES indeed") == "not_harmful"
