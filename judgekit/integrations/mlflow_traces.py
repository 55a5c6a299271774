"""Import MLflow traces' assessments: human feedback and LLM-judge feedback as judgekit ratings.

``pip install 'judgekit-trust[mlflow]'``. Each trace (``mlflow.search_traces``) is an item —
``item_id`` the trace id, ``prompt`` and ``response`` the trace's request and response (the text
when the request or response is a string, or an object with one text field; its JSON otherwise)
— and each of its valid feedback assessments of one name is a rating: rater id the assessment
source's id, rater kind ``human`` for a ``HUMAN`` source and ``judge`` for ``LLM_JUDGE`` and
``CODE`` sources, label the feedback's value (through the rubric's aliases), rationale its
rationale. A feedback that carries an error is an ``error`` rating; an overridden assessment
(``valid`` false) is left out, and of several by one source on one trace the latest counts.
``judgekit agree`` and ``judgekit gate`` then evaluate the MLflow judge against the humans::

    from judgekit.integrations.mlflow_traces import import_traces
    import_traces("study.db", "refusal", experiment_ids=["1"], assessment="refusal",
                  tracking_uri="sqlite:///mlflow.db")
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgekit.integrations.bridge import (
    JudgekitError,
    gated_judge,
    import_rows,
    judge_items,
    output_item_id,
)

__all__ = ["gated_scorer", "import_traces", "trace_rows", "trace_text"]

_KIND = {"HUMAN": "human", "LLM_JUDGE": "judge", "CODE": "judge"}


def trace_text(raw: Any) -> Any:
    """A trace's request or response as text (or chat messages)."""
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            return {"messages": value["messages"]}
        texts = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and texts:
            return texts[0]
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def trace_rows(traces: Iterable[Any], *, assessment: str) -> list[dict[str, Any]]:
    """One long rating row (``item_id, prompt | messages, response, rater_id, rater_kind, label,
    status, rationale``) per valid feedback named ``assessment`` of each trace."""
    rows: list[dict[str, Any]] = []
    for trace in traces:
        info = trace.info
        latest: dict[str, Any] = {}
        for a in info.assessments or []:
            if a.name != assessment or type(a).__name__ != "Feedback" or a.valid is False:
                continue
            key = a.source.source_id
            stamp = getattr(a, "last_update_time_ms", None) or getattr(a, "create_time_ms", None) or 0
            if key not in latest or stamp >= latest[key][0]:
                latest[key] = (stamp, a)
        if not latest:
            continue
        prompt = trace_text(trace.data.request if trace.data.request is not None else info.request_preview)
        item: dict[str, Any] = {"item_id": info.trace_id, "response": trace_text(
            trace.data.response if trace.data.response is not None else info.response_preview)}
        if isinstance(prompt, dict):
            item["messages"] = json.dumps(prompt["messages"], ensure_ascii=False)
        else:
            item["prompt"] = prompt
        for source_id, (_, a) in sorted(latest.items()):
            kind = _KIND.get(str(a.source.source_type).upper())
            if kind is None:
                continue
            error = getattr(a, "error", None)
            rows.append({**item, "rater_id": source_id, "rater_kind": kind,
                         "label": None if error is not None else a.value,
                         "status": "error" if error is not None else "ok",
                         "rationale": a.rationale if error is None else str(getattr(error, "error_message", error))})
    return rows


def import_traces(
    store: str | Path,
    rubric: str | Path,
    *,
    assessment: str,
    experiment_ids: Sequence[str] | None = None,
    tracking_uri: str | None = None,
    filter_string: str | None = None,
) -> Any:
    """Import the ``assessment`` feedback of the traces of ``experiment_ids`` (MLflow's current
    experiment when None) into ``store`` under ``rubric``; returns the import's summary."""
    try:
        import mlflow
    except ImportError:
        raise JudgekitError("Importing MLflow traces needs mlflow: pip install 'judgekit-trust[mlflow]'.") from None
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    kwargs: dict[str, Any] = {"return_type": "list", "max_results": 100000}
    if experiment_ids is not None:
        kwargs["locations"] = list(experiment_ids)
    if filter_string is not None:
        kwargs["filter_string"] = filter_string
    rows = trace_rows(mlflow.search_traces(**kwargs), assessment=assessment)
    if not rows:
        raise JudgekitError(f"No trace of MLflow experiment(s) {', '.join(experiment_ids or ['(current)'])} "
                            f"has feedback named {assessment!r}; check the assessment's name.")
    exps = "+".join(experiment_ids) if experiment_ids else "current"
    return import_rows(store, rows, rubric, source=f"mlflow-experiment-{exps}-{assessment}")


def gated_scorer(
    *,
    judge: str | Mapping[str, Any],
    verdict: str | Path | None,
    store: str | Path = "judgekit.db",
    panel: str | Path | None = None,
    rubric: str | Path | None = None,
    figure: str | None = None,
    name: str = "judgekit",
) -> Any:
    """A scorer for ``mlflow.genai.evaluate`` that grades with a judgekit judge under its verdict.

    The verdict is checked here, before any call (:func:`judgekit.require_trusted`; one sentence
    naming it and what to run, as :class:`judgekit.UntrustedJudgeError`). Each row's ``inputs``
    and ``outputs`` are read as the importer reads a trace's request and response, rated as a
    panel rates an item (same prompt, same call cache, the rating in the store under the trace id
    when there is one), and returned as an MLflow ``Feedback``: the label as its value, the
    rationale, the judge as an ``LLM_JUDGE`` source; an abstention or a failed call is a feedback
    with an error, never a silent label."""
    from mlflow.entities import AssessmentError, AssessmentSource, Feedback
    from mlflow.genai.scorers import scorer

    gj = gated_judge(judge=judge, verdict=verdict, store=store, rubric=rubric, panel=panel, figure=figure)
    source = AssessmentSource(source_type="LLM_JUDGE", source_id=gj.entry.id)

    def grade(inputs: Any, outputs: Any, trace: Any = None) -> Feedback:
        prompt, response = trace_text(inputs), trace_text(outputs)
        trace_id = getattr(getattr(trace, "info", None), "trace_id", None)
        item: dict[str, Any] = {"item_id": trace_id or output_item_id("mlflow", prompt, response),
                                "response": response if isinstance(response, str) else json.dumps(response)}
        if isinstance(prompt, dict):
            item["messages"] = json.dumps(prompt["messages"], ensure_ascii=False)
        else:
            item["prompt"] = prompt
        rating = judge_items(gj, [item], source="mlflow")[0]
        if rating.status != "ok" or rating.label is None:
            return Feedback(name=name, source=source, rationale=rating.rationale,
                            error=AssessmentError(error_code=f"JUDGEKIT_{rating.status.upper()}",
                                                  error_message=rating.rationale or rating.status))
        return Feedback(name=name, value=rating.label, rationale=rating.rationale, source=source,
                        metadata={"verdict": gj.verdict, "rubric": gj.rubric.ref, "item_id": rating.item_id})

    return scorer(grade, name=name)
