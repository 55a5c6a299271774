"""promptfoo (from npm, run by Node) on a suite graded by judgekit's Python assertion, under the
study's verdict, and its results file imported back into a store with the same ratings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.integrations.promptfoo_results import import_promptfoo
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

from .integration_study import LABELS

ROOT = Path(__file__).resolve().parents[2]
#: where scripts/test.sh installs promptfoo when it is missing (`npm install promptfoo`)
PROMPTFOO = Path(os.environ.get("JUDGEKIT_PROMPTFOO") or ROOT / ".cache" / "promptfoo" / "node_modules" / ".bin" / "promptfoo")

SUITE = """\
prompts: ["{{{{response}}}}"]
providers: [echo]
tests:
{tests}
"""


def _suite(folder: Path, judge: str, n: int) -> None:
    tests = "".join(
        f"  - vars: {{response: 'Response {k}. LABEL={LABELS[k % 3]}'}}\n"
        "    assert:\n"
        "      - type: python\n"
        "        value: file://judge_assert.py\n"
        f"        config: {{panel: panel.yaml, judge: {judge}, verdict: verdict.json, store: study.db, "
        "pass: [full_refusal, partial_refusal]}\n"
        for k in range(n))
    (folder / "promptfooconfig.yaml").write_text(SUITE.format(tests=tests), encoding="utf-8")
    (folder / "judge_assert.py").write_text(
        "from judgekit.integrations.promptfoo_assert import get_assert  # noqa: F401\n", encoding="utf-8")


def _promptfoo(folder: Path) -> subprocess.CompletedProcess[str]:
    if not PROMPTFOO.exists():  # never skipped: scripts/test.sh installs it
        pytest.fail(f"promptfoo is not installed at {PROMPTFOO}: run scripts/test.sh, or "
                    "`npm install --prefix .cache/promptfoo promptfoo` (or set JUDGEKIT_PROMPTFOO).")
    env = {**os.environ, "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
           "PROMPTFOO_CACHE_PATH": str(folder / ".promptfoo-cache"), "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    node = shutil.which("node")
    assert node, "promptfoo needs Node"
    return subprocess.run([str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json",
                           "--no-progress-bar", "--no-cache"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_a_suite_graded_by_the_judgekit_assertion_imports_with_the_same_ratings(
        study: Path, server: FakeServer) -> None:
    _suite(study, "fj", 6)
    res = _promptfoo(study)
    assert (study / "results.json").exists(), res.stdout + res.stderr
    results = json.loads((study / "results.json").read_text(encoding="utf-8"))["results"]["results"]
    graded = [r["gradingResult"]["componentResults"][0] for r in results]
    assert [g["metadata"]["judgekit"]["label"] for g in graded] == [LABELS[k % 3] for k in range(6)]
    assert [g["pass"] for g in graded] == [LABELS[k % 3] != "full_compliance" for k in range(6)]
    with Store(str(study / "study.db")) as db:
        stored = db.ratings(rubric="refusal", rater_ids=["fj"])
    own = dict(zip(stored["item_id"].astype(str), stored["label"], strict=True))
    ids = [g["metadata"]["judgekit"]["item_id"] for g in graded]
    assert [own[i] for i in ids] == [LABELS[k % 3] for k in range(6)]

    summary = import_promptfoo(study / "back.db", study / "results.json", "refusal")
    assert summary.ratings == 6
    with Store(str(study / "back.db")) as back:
        got = back.ratings(rubric="refusal")
        items = back.items()
    assert dict(zip(got["item_id"].astype(str), got["label"], strict=True)) == {i: own[i] for i in ids}
    assert set(items["provider"]) == {"echo"}


def test_an_untrusted_judge_fails_every_assertion_before_any_judge_call(study: Path, server: FakeServer) -> None:
    _suite(study, "bad", 2)
    before = server.stats.requests
    res = _promptfoo(study)
    results = json.loads((study / "results.json").read_text(encoding="utf-8"))["results"]["results"]
    assert all(not r["success"] for r in results), res.stdout
    said = json.dumps(results)
    assert "did not pass the gate" in said and "Verdict verdict.json" in said
    assert server.stats.requests == before
    with Store(str(study / "study.db")) as db:
        assert not any(str(i).startswith("promptfoo:") for i in db.items()["item_id"])


def test_other_graders_pass_or_fail_import_as_rubric_labels(tmp_path: Path) -> None:
    results = {"results": {"results": [
        {"prompt": {"raw": f"P{k}"}, "response": {"output": f"R{k}"}, "vars": {"item_id": f"i{k}"},
         "provider": {"id": "openai:gpt-4o-mini"}, "testIdx": k,
         "gradingResult": {"componentResults": [
             {"pass": k % 2 == 0, "reason": "rubric", "assertion": {"type": "llm-rubric", "value": "refuses"}},
             {"pass": k % 3 == 0, "reason": "thumbs", "assertion": {"type": "human"}}]}}
        for k in range(4)]}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    labels = {"pass": "full_refusal", "fail": "full_compliance"}
    import_promptfoo(tmp_path / "s.db", path, "refusal", labels=labels)
    with Store(str(tmp_path / "s.db")) as db:
        got = {(r.item_id, r.rater_id, r.rater_kind): r.label for r in db.ratings(rubric="refusal").itertuples()}
    assert got == {**{(f"i{k}", "llm-rubric", "judge"): labels["pass" if k % 2 == 0 else "fail"] for k in range(4)},
                   **{(f"i{k}", "human", "human"): labels["pass" if k % 3 == 0 else "fail"] for k in range(4)}}
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(tmp_path / "s.db"), "--resamples", "50"])
    assert r.exit_code == 0, r.output
