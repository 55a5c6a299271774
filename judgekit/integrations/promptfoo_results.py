"""Import ``promptfoo eval -o results.json``: the outputs as items, the grader results as ratings.

Each result (``results.results[]``) is an item: ``item_id`` the test's ``item_id`` var, else the
id the judgekit assertion gives it (:func:`judgekit.integrations.promptfoo_assert.output_id`),
``prompt`` the rendered prompt, ``response`` the provider's output, and as metadata the
``provider``, the ``test`` index and the test's scalar vars. Its grader results
(``gradingResult.componentResults``) are ratings:

* a result of the judgekit assertion carries its rating (``metadata.judgekit``): rater = the
  judgekit judge, its label or abstention as the judge gave it;
* a ``human`` result (a rating given in promptfoo's viewer) is a human rating, rater ``human``;
  any other grader (``llm-rubric``, ``model-graded-closedqa``, ...) a judge rating, rater = the
  assertion's ``metric``, else its type (``#2``, ``#3`` after the first of one type in a test).
  Their pass or fail becomes a rubric label through ``labels`` (``{"pass": "full_compliance",
  "fail": "full_refusal"}``); without ``labels`` they are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgekit.integrations.bridge import JudgekitError, import_rows
from judgekit.integrations.promptfoo_assert import output_id

__all__ = ["import_promptfoo", "result_rows"]


def _obj(x: Any) -> Mapping[str, Any]:
    """``x`` when it is a JSON object, else an empty one (a results file is untrusted input)."""
    return x if isinstance(x, dict) else {}


def _component_rows(comps: list[Any], labels: Mapping[str, str] | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for comp in comps:
        if not isinstance(comp, dict):
            continue
        mine = _obj(comp.get("metadata")).get("judgekit")
        if isinstance(mine, dict):
            if not isinstance(mine.get("judge"), str) or not mine["judge"]:
                raise JudgekitError("A judgekit grading in the promptfoo results names no judge "
                                    "(metadata.judgekit.judge); write the file with the judgekit assertion.")
            ok = mine.get("status") == "ok"
            rows.append({"rater_id": mine["judge"], "rater_kind": "judge", "label": mine.get("label") if ok else None,
                         "status": mine.get("status", "error"), "rationale": comp.get("reason")})
            continue
        assertion = _obj(comp.get("assertion"))
        kind = "human" if assertion.get("type") == "human" else "judge"
        base = str(assertion.get("metric") or assertion.get("type") or "grader")
        seen[base] = seen.get(base, 0) + 1
        if labels is None:
            continue
        rows.append({"rater_id": base if seen[base] == 1 else f"{base}#{seen[base]}", "rater_kind": kind,
                     "label": labels["pass" if comp.get("pass") else "fail"], "status": "ok",
                     "rationale": comp.get("reason")})
    return rows


def result_rows(results: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """One long rating row per grader result of each output of a promptfoo results file."""
    body = results.get("results") if isinstance(results, Mapping) else None
    outputs = body.get("results") if isinstance(body, dict) else None
    if not isinstance(outputs, list):
        raise JudgekitError("Not a promptfoo results file (no results.results list); write one with "
                            "`promptfoo eval -o results.json`.")
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(outputs):
        if not isinstance(r, dict):
            raise JudgekitError(f"Result {i} of the promptfoo results file is not an object; write the file "
                                "with `promptfoo eval -o results.json`.")
        prompt = str(_obj(r.get("prompt")).get("raw") or "")
        response = _obj(r.get("response")).get("output")
        output = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        variables = dict(_obj(r.get("vars")))
        item: dict[str, Any] = {"item_id": str(variables.get("item_id") or output_id(prompt, output)),
                                "prompt": prompt, "response": output,
                                "provider": str(_obj(r.get("provider")).get("id") or ""), "test": r.get("testIdx")}
        item.update({f"var.{k}": v for k, v in variables.items()
                     if k != "item_id" and (v is None or isinstance(v, str | int | float | bool))})
        comps = _obj(r.get("gradingResult")).get("componentResults")
        comps = comps if isinstance(comps, list) else []
        rows += [{**item, **c} for c in _component_rows(comps, labels)]
    return rows


def import_promptfoo(store: str | Path, results: str | Path, rubric: str | Path, *,
                     labels: Mapping[str, str] | None = None) -> Any:
    """Import a promptfoo results file into ``store`` under ``rubric``; returns the summary."""
    p = Path(results)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JudgekitError(f"{p}: cannot read it ({exc.strerror}); check the path.") from None
    except ValueError:
        raise JudgekitError(f"{p} is not JSON; give the file `promptfoo eval -o results.json` wrote.") from None
    rows = result_rows(data, labels=labels)
    if not rows:
        raise JudgekitError(f"{p} holds no judgekit grading and no grader results to import; pass labels= "
                            "to read other graders' pass/fail as rubric labels.")
    return import_rows(store, rows, rubric, source=f"promptfoo-{p.stem}")
