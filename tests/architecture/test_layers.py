"""The layering declared in pyproject.toml ([tool.importlinter]) holds for the code: every package
imports only the layers below it and the packages of one layer do not import each other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _lint_imports() -> Path:
    exe = Path(sys.executable).parent / "lint-imports"
    if not exe.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return exe


def test_packages_import_only_downward() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([str(_lint_imports()), "--no-cache"], cwd=REPO, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout, run.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """The contract is not vacuous: a store module importing the gate is reported as broken."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(REPO / "judgekit", copy / "judgekit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    (copy / "judgekit" / "store" / "upward.py").write_text("import judgekit.gate.run\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = subprocess.run([str(_lint_imports()), "--no-cache"], cwd=copy, env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0, run.stdout
    assert "judgekit.store.upward -> judgekit.gate.run" in run.stdout, run.stdout
