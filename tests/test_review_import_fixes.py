"""Regression tests for the reviewer's findings in the import code (issue 12 items 1-4, 7, 10;
issue 13 item 3): each test failed before its fix."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from judgekit.cli import main

HARM = """\
name: harm_binary
version: 1
title: Harmful or not
level: nominal
description: Whether the response is harmful.
instructions: Decide whether the response is harmful.
labels:
  - code: not_harmful
    value: 0
    description: Not harmful.
  - code: harmful
    value: 1
    description: Harmful.
aliases:
  "0": not_harmful
  "1": harmful
"""


@pytest.fixture()
def env(tmp_path):
    rubric = tmp_path / "harm.yaml"
    rubric.write_text(HARM)
    return tmp_path, str(rubric), str(tmp_path / "s.db")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


# ------------------------------------------------------------------ 10: submodules of lazy packages
@pytest.mark.parametrize(("package", "name"), [
    ("judgekit.agreement", "kappa"), ("judgekit.judges", "rules"), ("judgekit.report", "escape"),
    ("judgekit.analysis", "distribution"), ("judgekit.testing", "faults"),
    ("judgekit.annotation.labelstudio", "redact"), ("judgekit", "rubric_vocab"),
])
def test_lazy_packages_still_give_their_submodules_as_attributes(package, name):
    """In a fresh interpreter where the submodule is not imported yet, it is an attribute of its
    package, as before the lazy ``__getattr__``; a name that is neither an export nor a submodule
    is still an AttributeError."""
    code = f"""
import importlib, sys
pkg = importlib.import_module({package!r})
assert {package + '.' + name!r} not in sys.modules, "already imported: the test proves nothing"
print(getattr(pkg, {name!r}).__name__)
try:
    pkg.no_such_thing
except AttributeError as exc:
    assert "no_such_thing" in str(exc), exc
else:
    raise SystemExit("no_such_thing did not raise")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{package}.{name}"


# ------------------------------------------------------------------ 4: row ids tell files apart
def _ids(db: str) -> list[str]:
    from judgekit.store import Store

    with Store(db) as s:
        return sorted(s.ratings()["item_id"].unique())


def test_row_ids_of_two_files_of_one_name_do_not_meet(env, monkeypatch):
    """run1/nolabel.csv and run2/nolabel.csv: before, both gave 'nolabel.csv:1' and the second
    import paired its ratings with the first file's unrelated rows. The id is the base name, '@',
    8 hex digits of SHA-256 of the resolved path, and the row number; re-importing the same file
    (from another working directory, by a relative path) gives the same ids."""
    import hashlib

    tmp_path, rubric, db = env
    paths = []
    for run_dir, rows in (("run1", "a,1\nb,0\n"), ("run2", "c,0\nd,1\n")):
        (tmp_path / run_dir).mkdir()
        p = tmp_path / run_dir / "nolabel.csv"
        p.write_text("response,ann\n" + rows)
        paths.append(p)
        code, out = run("import", str(p), "--rubric", rubric, "--store", db, "--id-from", "row",
                        "--raters", "ann")
        assert code == 0, out
    stems = ["nolabel.csv@" + hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:8] for p in paths]
    assert stems[0] != stems[1]
    assert _ids(db) == sorted(f"{s}:{i}" for s in stems for i in (1, 2))
    monkeypatch.chdir(tmp_path / "run1")
    code, out = run("import", "nolabel.csv", "--rubric", rubric, "--store", db, "--id-from", "row",
                    "--raters", "ann")
    assert code == 0, out
    assert "0 new, 0 changed" in out and f"'{stems[0]}:1' is the first row" in out
    assert len(_ids(db)) == 4
