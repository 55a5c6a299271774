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
