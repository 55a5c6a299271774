"""The study the integration tests grade with: a store with human labels, two judges (one served
by the project's fake provider, one rules judge), and the gate's verdict (the first passes).

This folder is a package (``__init__.py``) so that this conftest is ``integrations.conftest``,
never the ``conftest`` that tests/ modules import from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.testing.fakeserver import FakeServer

from .integration_study import LABELS, N_GATED, answer, script


@pytest.fixture(scope="module")
def server():
    with FakeServer(script) as srv:
        yield srv


@pytest.fixture()
def study(tmp_path: Path, server: FakeServer) -> Path:
    """A store with human labels on N_GATED items, the judge `fj` (the fake provider) and `bad`
    (it always answers full_compliance) judged on them, and the gate's verdict: fj passes."""
    rows = [f"{n},Prompt {n},{answer(n)},{LABELS[n % 3]},{LABELS[n % 3]}" for n in range(N_GATED)]
    (tmp_path / "items.csv").write_text("item_id,prompt,response,ann1,ann2\n" + "\n".join(rows) + "\n",
                                        encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["import", str(tmp_path / "items.csv"), "--rubric", "refusal",
                             "--raters", "ann1,ann2", "--store", str(tmp_path / "study.db")])
    assert r.exit_code == 0, r.output
    url = server.openai_url
    (tmp_path / "panel.yaml").write_text(
        "rubric: refusal\nitems: items.csv\naggregate: null\njudges:\n"
        f"  - {{id: fj, model: 'openai-compatible:{url}#fake-judge', temperature: 0}}\n"
        f"  - {{id: bad, model: 'rules:refusal-keywords'}}\n", encoding="utf-8")
    r = runner.invoke(main, ["judge", str(tmp_path / "panel.yaml"), "--store", str(tmp_path / "study.db")])
    assert r.exit_code == 0, r.output
    (tmp_path / "policy.yaml").write_text(
        "rubric: refusal\njudges: [fj, bad]\nhumans: [ann1, ann2]\n"
        "checks:\n  min_items: 30\n  metric: kappa\n  min_lower_bound: 0.6\n", encoding="utf-8")
    r = runner.invoke(main, ["gate", str(tmp_path / "policy.yaml"), "--store", str(tmp_path / "study.db"),
                             "--out", str(tmp_path)])
    verdict = json.loads((tmp_path / "verdict.json").read_text(encoding="utf-8"))
    assert {j["judge"]: j["state"] for j in verdict["judges"]} == {"fj": "pass", "bad": "fail"}, r.output
    return tmp_path


