"""MLflow traces' assessments into the store: traces logged to a local tracking store with human
and LLM-judge feedback, imported, give judgekit the same κ as computed from the traces directly."""

from __future__ import annotations

from pathlib import Path

import mlflow
import pytest
from mlflow.entities import AssessmentSource
from sklearn.metrics import cohen_kappa_score

import judgekit
from judgekit.integrations.mlflow_traces import gated_scorer, import_traces, trace_text
from judgekit.store.database import Store

from .integration_study import ABSTAINS, answer

LABELS = ("full_refusal", "full_compliance", "partial_refusal")


@pytest.fixture()
def tracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """40 traces, each with a human label (alice) and an LLM judge's (gpt-judge, wrong on every
    fifth), and another assessment (helpfulness) beside it."""
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    exp = mlflow.set_experiment("refusal-study").experiment_id
    human = AssessmentSource(source_type="HUMAN", source_id="alice")
    judge = AssessmentSource(source_type="LLM_JUDGE", source_id="gpt-judge")
    for n in range(40):
        with mlflow.start_span(name="answer") as span:
            span.set_inputs({"prompt": f"Prompt {n}"})
            span.set_outputs({"response": f"Response {n}"})
        truth = LABELS[n % 3]
        said = truth if n % 5 else LABELS[(n + 1) % 3]
        mlflow.log_feedback(trace_id=span.trace_id, name="refusal", value=truth, source=human)
        mlflow.log_feedback(trace_id=span.trace_id, name="refusal", value=said, source=judge,
                            rationale=f"judged {n}")
        mlflow.log_feedback(trace_id=span.trace_id, name="helpfulness", value=1, source=human)
    yield uri, exp
    mlflow.set_tracking_uri(None)


def test_imported_assessments_give_the_kappa_of_the_traces(tracked: tuple[str, str], tmp_path: Path) -> None:
    uri, exp = tracked
    # κ straight from the traces
    human, judge = {}, {}
    for t in mlflow.search_traces(locations=[exp], return_type="list"):
        for a in t.info.assessments:
            if a.name == "refusal":
                (human if a.source.source_type == "HUMAN" else judge)[t.info.trace_id] = a.value
    ids = sorted(human)
    want = cohen_kappa_score([human[i] for i in ids], [judge[i] for i in ids])

    db = tmp_path / "study.db"
    summary = import_traces(db, "refusal", assessment="refusal", experiment_ids=[exp], tracking_uri=uri)
    assert summary.ratings == 80 and summary.items == 40
    with Store(str(db)) as store:
        kinds = dict(store.raters(rubric="refusal")[["rater_id", "rater_kind"]].itertuples(index=False))
        items = store.items()
    assert kinds == {"alice": "human", "gpt-judge": "judge"}
    assert set(items["prompt"]) == {f"Prompt {n}" for n in range(40)}
    got = judgekit.agree(db, "refusal", resamples=100).to_frame()
    assert got.loc[0, "kappa"] == pytest.approx(want, abs=5e-7)  # judgekit reports 6 places
    # the same import again changes nothing
    again = import_traces(db, "refusal", assessment="refusal", experiment_ids=[exp], tracking_uri=uri)
    assert again.written.new == 0 and again.written.changed == 0


def test_no_feedback_of_that_name_is_one_sentence(tracked: tuple[str, str], tmp_path: Path) -> None:
    uri, exp = tracked
    with pytest.raises(judgekit.JudgekitError, match="has feedback named 'harm'"):
        import_traces(tmp_path / "s.db", "refusal", assessment="harm", experiment_ids=[exp], tracking_uri=uri)
    assert not (tmp_path / "s.db").exists()


def test_a_gated_scorer_grades_in_mlflow_genai_evaluate_as_the_panel(
        study: Path, server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    mlflow.set_tracking_uri(f"sqlite:///{study / 'mlflow.db'}")
    mlflow.set_experiment("graded")
    with pytest.raises(judgekit.UntrustedJudgeError, match="did not pass the gate"):
        gated_scorer(judge="bad", panel=study / "panel.yaml", verdict=study / "verdict.json", store=study / "study.db")
    sc = gated_scorer(judge="fj", panel=study / "panel.yaml", verdict=study / "verdict.json", store=study / "study.db")
    calls = server.stats.by_model["fake-judge"]
    data = [{"inputs": {"prompt": f"Prompt {n}"}, "outputs": {"response": answer(n)}} for n in (0, 1, 2, ABSTAINS)]
    result = mlflow.genai.evaluate(data=data, scorers=[sc])
    got = {}
    for t in mlflow.search_traces(locations=[result.experiment_id] if hasattr(result, "experiment_id") else None,
                                  run_id=result.run_id, return_type="list"):
        for a in t.info.assessments:
            if a.name == "judgekit":
                got[trace_text(t.data.request)] = (a.value, a.error is not None)
    assert got == {"Prompt 0": (LABELS[0], False), "Prompt 1": (LABELS[1], False), "Prompt 2": (LABELS[2], False),
                   f"Prompt {ABSTAINS}": (None, True)}
    # prompts 0-2 with these responses are the study's items, judged by the panel already: from the cache
    assert server.stats.by_model["fake-judge"] - calls == 1
    mlflow.set_tracking_uri(None)
