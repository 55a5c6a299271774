"""The bad-input corpus's provider bodies:
``judgekit judge`` against a hostile fake provider, in a child process with 1.5 GB of address
space, ends with exit 0, no traceback, within its time bound, and one rating per call whose
status and reason name what was wrong — for the anthropic SDK, the openai SDK and the lean HTTP
client alike."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from corpus.cases_provider import CASES, ProviderCase

import judgekit
from judgekit.testing.fakeserver import FakeServer

JUDGEKIT_ROOT = Path(judgekit.__file__).resolve().parent.parent
JUDGES = ("claude", "gpt", "lean")
N_ITEMS = 2


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))


def _items(folder: Path) -> None:
    rows = [{"item_id": f"it{i}", "prompt": f"Question {i}", "response": "I can't help with that."}
            for i in range(N_ITEMS)]
    import json

    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_hostile_provider_body_is_one_rating_with_its_reason(case: ProviderCase, tmp_path: Path):
    with FakeServer(rates={case.fault: 1.0}, **case.server) as server:
        _items(tmp_path)
        common = {"max_attempts": 2, "backoff_s": 0.1, "max_backoff_s": 1, "timeout_s": 10, **case.judge}
        panel = {"rubric": "refusal", "items": "items.jsonl", "judges": [
            {"id": "claude", "model": "anthropic:claude-haiku-4-5", **common},
            {"id": "gpt", "model": "openai:gpt-4o-mini", **common},
            {"id": "lean", "model": f"openai-compatible:{server.openai_url}#qwen", **common},
        ]}
        (tmp_path / "panel.yaml").write_text(yaml.safe_dump(panel), encoding="utf-8")
        env = {"PYTHONPATH": str(JUDGEKIT_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "ANTHROPIC_API_KEY": "k-test", "OPENAI_API_KEY": "k-test",
               "ANTHROPIC_BASE_URL": server.url, "OPENAI_BASE_URL": server.openai_url}
        proc = subprocess.run(  # the case's bound on the whole command: the child's timeout
            [sys.executable, "-m", "judgekit", "judge", str(tmp_path / "panel.yaml"),
             "--store", str(tmp_path / "s.db"), "--no-progress"],
            capture_output=True, text=True, cwd=tmp_path, timeout=case.max_seconds,
            preexec_fn=_limit_memory, env=env)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Traceback" not in output
    con = sqlite3.connect(tmp_path / "s.db")
    try:
        rows = con.execute("SELECT rater_id, status, rationale FROM ratings").fetchall()
    finally:
        con.close()
    for judge in JUDGES:
        mine = [(st, text) for rater, st, text in rows if rater == judge]
        assert len(mine) == N_ITEMS, (judge, rows)
        for status, text in mine:
            assert status == case.status, (judge, status, text)
            for needle in case.expect:
                assert needle in (text or ""), (judge, text)
