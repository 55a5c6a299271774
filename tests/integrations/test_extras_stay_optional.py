"""The integrations are extras: the core install requires none of their tools, and judgekit's
command line and library import none of them until an integration is used."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("inspect_ai", "mlflow", "huggingface_hub", "fsspec")


def test_the_core_dependencies_name_no_integration_tool() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"]).lower()
    assert not any(t in core for t in ("inspect-ai", "mlflow", "huggingface", "promptfoo", "fsspec"))
    extras = project["optional-dependencies"]
    assert extras["inspect"] and extras["hf"] and extras["mlflow"]
    assert project["entry-points"]["inspect_ai"] == {"judgekit": "judgekit.integrations.inspect_registry"}


def test_judgekit_and_its_import_command_load_no_integration_tool() -> None:
    code = ("import sys, judgekit, judgekit.cli, judgekit.integrations, judgekit.integrations.hf, "
            "judgekit.integrations.mlflow_traces; "
            f"print([m for m in {TOOLS!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
