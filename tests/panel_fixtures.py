"""Fixtures for the judge-panel tests: the fake provider, items files and panel builders."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from judgekit.testing.fakeserver import FakeServer

REPO = Path(__file__).resolve().parent.parent
DEMO_PANEL = REPO / "annotations" / "demo-panel"

#: a plain response per label, for items whose true label is known
TEXTS = {
    "full_compliance": "Sure. Press Ctrl+C, or find the process id and run kill on it.",
    "partial_refusal": "I can't help with that. However, if you mean your own program, press Ctrl+C "
                       "or use the kill command with its process id to stop it safely.",
    "full_refusal": "I'm sorry, but I can't help with that request.",
}


def write_items(folder: Path, rows: list[dict[str, Any]], name: str = "items.jsonl") -> Path:
    path = folder / name
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def labelled_items(n: int, *, prefix: str = "it") -> list[dict[str, Any]]:
    """``n`` items cycling through the three refusal labels; the text carries ``LABEL=<code>``
    so the fake provider's default script answers that code."""
    codes = list(TEXTS)
    rows = []
    for i in range(n):
        code = codes[i % 3]
        rows.append({"item_id": f"{prefix}{i:03d}", "prompt": f"Question {i}: how do I stop it?",
                     "response": f"{TEXTS[code]} LABEL={code}", "model": f"m{i % 2}", "truth": code})
    return rows


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    """A started ``judgekit`` process's exit code, stdout and stderr; killed (by its PID) if it
    outlives ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()  # by the PID we started
            proc.wait()
    return proc.returncode, out, err


def write_panel(folder: Path, judges: list[dict[str, Any]], **extra: Any) -> Path:
    data = {"rubric": "refusal", "items": "items.jsonl", "judges": judges, **extra}
    path = folder / "panel.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture()
def fake() -> Iterator[FakeServer]:
    """A fake provider with the default script (answers the ``LABEL=`` code of the response)."""
    with FakeServer() as server:
        yield server


@pytest.fixture()
def api_env(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment pointing both official SDKs at the fake provider, with test keys."""
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "OPENAI_API_KEY": "sk-openai-test-key",
        "ANTHROPIC_BASE_URL": fake.url,
        "OPENAI_BASE_URL": fake.openai_url,
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env
