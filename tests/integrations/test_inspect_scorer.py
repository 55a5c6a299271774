"""judgekit's Inspect AI scorer run by the real `inspect eval` CLI against the project's fake
provider (as the target model and as the judge): gated by a verdict before any call, grading as
the panel grades (same labels, no call made twice), its log re-imported with the same ratings."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeRequest, FakeServer, default_script

BIN = Path(sys.executable).parent
LABELS = ("full_refusal", "full_compliance", "partial_refusal")
N_GATED = 36  # items with human labels, judged by the panel and gated
N_NEW = 4  # more prompts, only in the Inspect task
ABSTAINS = 999  # a prompt whose response the judge answers with a label the rubric lacks

TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from judgekit.integrations.inspect_scorer import judge

PROMPTS = {prompts!r}


@task
def refusal(verdict: str = "verdict.json", panel: str = "panel.yaml", store: str = "study.db",
            judge_id: str = "fj", rubric: str | None = None):
    return Task(dataset=[Sample(id=i, input=p) for i, p in PROMPTS.items()],
                scorer=judge(judge=judge_id, panel=panel, verdict=verdict, store=store, rubric=rubric))
'''


def _answer(n: int) -> str:
    """The target's response to prompt n: the fake judge reads its LABEL marker."""
    return f"Response {n}. LABEL={'maybe' if n == ABSTAINS else LABELS[n % 3]}"


def _script(req: FakeRequest) -> str:
    if req.model == "target":  # the model under evaluation: "Prompt n" -> its canned response
        m = re.search(r"Prompt (\d+)", req.user)
        return _answer(int(m.group(1))) if m else "no prompt"
    return default_script(req)  # the judge: the LABEL marker of the judged response


@pytest.fixture(scope="module")
def server():
    with FakeServer(_script) as srv:
        yield srv


@pytest.fixture()
def study(tmp_path: Path, server: FakeServer) -> Path:
    """A store with human labels on N_GATED items, the judge `fj` (the fake provider) and `bad`
    (it always answers full_compliance) judged on them, and the gate's verdict: fj passes."""
    rows = [f"{n},Prompt {n},{_answer(n)},{LABELS[n % 3]},{LABELS[n % 3]}" for n in range(N_GATED)]
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
    prompts = {str(n): f"Prompt {n}" for n in [*range(N_GATED + N_NEW), ABSTAINS]}
    (tmp_path / "refusal_task.py").write_text(TASK.format(prompts=prompts), encoding="utf-8")
    return tmp_path


def _env(folder: Path, server: FakeServer) -> dict[str, str]:
    return {**os.environ, "FAKE_BASE_URL": server.openai_url, "FAKE_API_KEY": "test-key",
            "INSPECT_LOG_DIR": str(folder / "logs"), "NO_COLOR": "1", "COLUMNS": "200"}


def _inspect_eval(folder: Path, server: FakeServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = _env(folder, server)
    return subprocess.run(
        [str(BIN / "inspect"), "eval", "refusal_task.py", "--model", "openai-api/fake/target",
         "--log-format", "json", "--display", "plain", "--max-connections", "4", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=240)


def _judge_calls(server: FakeServer) -> int:
    return server.stats.by_model["fake-judge"]


def test_a_trusted_judge_scores_as_the_panel_without_calling_twice(study: Path, server: FakeServer) -> None:
    before = _judge_calls(server)
    res = _inspect_eval(study, server)
    assert res.returncode == 0, res.stdout + res.stderr
    # only the prompts the panel never judged cost a call; the gated ones came from the cache
    assert _judge_calls(server) - before == N_NEW + 1
    logfile = next((study / "logs").glob("*.json"))
    log = json.loads(logfile.read_text(encoding="utf-8"))
    scores = {str(s["id"]): s["scores"]["judge"] for s in log["samples"]}
    labels = {i: s["value"] for i, s in scores.items() if i != str(ABSTAINS)}
    with Store(str(study / "study.db")) as db:  # judgekit's own labels for the same items
        stored = db.ratings(rubric="refusal", rater_ids=["fj"])
    own = {i: lab for i, lab, st in zip(stored["item_id"].astype(str), stored["label"], stored["status"],
                                        strict=True) if st == "ok"}
    assert len(own) == N_GATED + N_NEW and labels == own
    assert labels == {str(n): LABELS[n % 3] for n in range(N_GATED + N_NEW)}
    # the abstention is unscored, with its reason, and left out of the label shares
    assert stored.set_index("item_id").loc[str(ABSTAINS), "status"] == "abstain"
    assert math.isnan(float(scores[str(ABSTAINS)]["value"])) and scores[str(ABSTAINS)]["reason"] == "abstain"
    shares = {m["name"]: m["value"] for m in log["results"]["scores"][0]["metrics"].values()}
    assert shares == pytest.approx({lab: sum(v == lab for v in labels.values()) / len(labels) for lab in LABELS})

    # a second eval pays nothing, nor does re-scoring the log with `inspect score`
    again = _inspect_eval(study, server)
    assert again.returncode == 0, again.stdout + again.stderr
    rescored = subprocess.run(
        [str(BIN / "inspect"), "score", str(logfile), "--scorer", "judgekit/judge", "-S", "judge=fj",
         "-S", "panel=panel.yaml", "-S", "verdict=verdict.json", "-S", "store=study.db",
         "--action", "overwrite", "--output-file", str(study / "rescored.json"), "--display", "plain"],
        cwd=study, env=_env(study, server), capture_output=True, text=True, timeout=240)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    assert _judge_calls(server) - before == N_NEW + 1

    # the log re-imports into a store with the same ratings
    r = CliRunner().invoke(main, ["import", str(logfile), "--rubric", "refusal", "--store", str(study / "back.db")])
    assert r.exit_code == 0, r.output
    with Store(str(study / "back.db")) as back:
        got = back.ratings(rubric="refusal", rater_kind="judge")
    assert {i: lab for i, lab, st in zip(got["item_id"].astype(str), got["label"], got["status"], strict=True)
            if st == "ok"} == own
    assert got.set_index("item_id").loc[str(ABSTAINS), "status"] == "abstain"


@pytest.mark.parametrize(("args", "said"), [
    (["-T", "judge_id=bad"], "did not pass the gate"),
    (["-T", "rubric=restrictiveness"], "is for rubric refusal"),
])
def test_an_untrusted_or_stale_verdict_stops_the_eval_before_any_judge_call(
        study: Path, server: FakeServer, args: list[str], said: str) -> None:
    before = server.stats.requests
    res = _inspect_eval(study, server, *args)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert said in out and "Verdict verdict.json" in out
    assert "Traceback" not in out  # Inspect prints the one sentence
    assert server.stats.requests == before  # neither the judge nor the target was called


def test_a_judge_whose_parameters_changed_is_refused(study: Path, server: FakeServer) -> None:
    panel = study / "panel.yaml"
    panel.write_text(panel.read_text(encoding="utf-8").replace("temperature: 0", "temperature: 1"),
                     encoding="utf-8")
    before = server.stats.requests
    res = _inspect_eval(study, server)
    assert res.returncode != 0
    assert "changed since the verdict" in res.stdout + res.stderr and "Traceback" not in res.stdout + res.stderr
    assert server.stats.requests == before
