"""Rubric files are untrusted input: absurd nesting and a ``judge.template``
that is not a readable UTF-8 file beside the rubric are one sentence naming the file (and the line
or key), exit 2, no traceback, and the store unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from conftest import store_dump as _dump

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric, shipped_rubric_dir

BASE = (shipped_rubric_dir() / "refusal.yaml").read_text(encoding="utf-8")
DEEP = "[" * 20_000 + "]" * 20_000


def _rubric(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _with_template(tmp_path: Path, name: str, template: str) -> Path:
    assert "answer_format: json" in BASE
    return _rubric(tmp_path, name, BASE.replace("answer_format: json",
                                                f"answer_format: json\n  template: {template}"))


@pytest.fixture()
def db(tmp_path) -> str:
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,rater_id,label\na,ann,full_refusal\n", encoding="utf-8")
    path = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["import", str(labels), "--rubric", "refusal", "--store", path])
    assert res.exit_code == 0, res.output
    return path


def _refused(tmp_path: Path, db: str, rubric: Path, expect: list[str]) -> str:
    labels = tmp_path / "labels.csv"
    before = _dump(db)
    res = CliRunner().invoke(main, ["import", str(labels), "--rubric", str(rubric), "--store", db])
    line = one_sentence_error(res, rubric.name, *expect)
    assert _dump(db) == before
    return line


def test_a_20k_deep_list_is_one_sentence_with_its_line(tmp_path, db):
    extra = _rubric(tmp_path, "deep_extra.yaml", BASE + f"\nnotes: {DEEP}\n")
    line = BASE.count("\n") + 2
    _refused(tmp_path, db, extra, ["nesting depth", f"at line {line}"])
    in_aliases = _rubric(tmp_path, "deep_alias.yaml", BASE.replace("aliases:\n", f"aliases:\n  deep: {DEEP}\n", 1))
    alias_line = BASE[: BASE.index("aliases:\n")].count("\n") + 2
    _refused(tmp_path, db, in_aliases, ["nesting depth", f"at line {alias_line}"])


def test_a_template_that_is_not_utf8_is_one_sentence(tmp_path, db):
    (tmp_path / "latin1.txt").write_bytes("Évalue la réponse: {item}".encode("latin-1"))
    rubric = _with_template(tmp_path, "latin.yaml", "latin1.txt")
    _refused(tmp_path, db, rubric, ["judge.template names latin1.txt", "not UTF-8", "save it as UTF-8"])


def test_a_template_that_is_a_folder_is_one_sentence(tmp_path, db):
    (tmp_path / "prompts").mkdir()
    rubric = _with_template(tmp_path, "folder.yaml", "prompts")
    _refused(tmp_path, db, rubric, ["judge.template names prompts", "is a folder"])


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_template_that_is_a_device_is_not_read_forever(tmp_path, db):
    rubric = _with_template(tmp_path, "device.yaml", "/dev/zero")
    _refused(tmp_path, db, rubric, ["judge.template names /dev/zero", "an absolute path"])


def test_a_template_larger_than_the_limit_is_refused(tmp_path, db):
    (tmp_path / "huge.txt").write_text("x" * (1024 * 1024 + 1), encoding="utf-8")
    rubric = _with_template(tmp_path, "huge.yaml", "huge.txt")
    _refused(tmp_path, db, rubric, ["judge.template names huge.txt", "larger than 1024 KiB"])


def test_a_utf8_template_beside_the_rubric_still_loads(tmp_path):
    (tmp_path / "tpl.txt").write_text("Évalue: {item} ✓", encoding="utf-8")
    rubric = load_rubric(_with_template(tmp_path, "ok.yaml", "tpl.txt"))
    assert rubric.template_text == "Évalue: {item} ✓"
    with pytest.raises(JudgekitError, match="which is not beside it"):
        load_rubric(_with_template(tmp_path, "missing.yaml", "nope.txt"))
