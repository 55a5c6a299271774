"""judgekit's Inspect AI scorer run by the real `inspect eval` CLI against the project's fake
provider (as the target model and as the judge): gated by a verdict before any call, grading as
the panel grades (same labels, no call made twice), its log re-imported with the same ratings."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai.log import read_eval_log

from judgekit.cli import main
from judgekit.integrations.inspect_labels import write_human_labels
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

from .integration_study import ABSTAINS, LABELS, N_GATED, N_NEW

BIN = Path(sys.executable).parent

TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import frequency
from judgekit.integrations.inspect_scorer import corrected_rate, judge

PROMPTS = {prompts!r}
HUMAN = {human!r}


@task
def refusal(verdict: str = "verdict.json", panel: str = "panel.yaml", store: str = "study.db",
            judge_id: str = "fj", rubric: str | None = None):
    return Task(dataset=[Sample(id=i, input=p, metadata={{"human_label": HUMAN[i]}} if i in HUMAN else {{}})
                         for i, p in PROMPTS.items()],
                scorer=judge(judge=judge_id, panel=panel, verdict=verdict, store=store, rubric=rubric),
                metrics=[frequency(), corrected_rate(["full_refusal", "partial_refusal"])])
'''



@pytest.fixture()
def study(study: Path) -> Path:
    """The study, and an Inspect task of its prompts, four more, and one the judge abstains on."""
    prompts = {str(n): f"Prompt {n}" for n in [*range(N_GATED + N_NEW), ABSTAINS]}
    human = {str(n): LABELS[n % 3] for n in range(N_GATED)}  # the people's labels, as sample metadata
    (study / "refusal_task.py").write_text(TASK.format(prompts=prompts, human=human), encoding="utf-8")
    return study


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
    metrics = {m["name"]: m["value"] for m in log["results"]["scores"][0]["metrics"].values()}
    rate = metrics.pop("judgekit/corrected_rate")  # found again through judgekit's entry point
    assert metrics == pytest.approx({lab: sum(v == lab for v in labels.values()) / len(labels) for lab in LABELS})
    # the judge agrees with the people on every labelled sample, so PPI gives the labelled share
    # (24 of 36) plus lambda x (the unlabelled share, 3 of 4, minus 24 of 36), lambda in [0, 1]
    assert 24 / 36 - 1e-9 <= rate <= 3 / 4 + 1e-9

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

    # the people's labels written back into the log with Inspect's score editing, history kept
    edited = write_human_labels(logfile, store=study / "study.db", rubric="refusal", rater="ann1",
                                out=study / "labelled.json")
    assert edited == N_GATED
    labelled = {str(s.id): s.scores["judge"] for s in read_eval_log(str(study / "labelled.json")).samples}
    assert labelled["0"].value == LABELS[0] and labelled["0"].history[-1].provenance.author == "ann1"
    assert labelled[str(N_GATED)].history == [] and labelled[str(N_GATED)].value == LABELS[N_GATED % 3]


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
