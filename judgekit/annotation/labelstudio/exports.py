"""Label Studio annotations read from tasks: the API's and JSON exports, JSON_MIN and CSV rows.

Every reader returns :class:`Annotation` rows, one per annotation (cancelled ones included,
flagged), so a pull treats an export file and the API alike. A file of the wrong shape is one
sentence naming the task, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.annotation.labelstudio.config import COMMENT_CONTROL
from judgekit.annotation.labelstudio.values import is_missing, rater_name
from judgekit.errors import JudgekitError
from judgekit.rubric import Rubric


@dataclass
class Annotation:
    """One annotation of one task, as an export or the API gives it."""

    task_id: Any
    item_id: str
    annotation_id: Any
    user: Any  # an email / username, or a Label Studio user id
    updated: float  # seconds since the epoch; 0 when the export carries no time
    choices: dict[str, Any]  # control name -> list of choices / raw value
    comment: str | None
    cancelled: bool
    data: dict[str, Any]  # the task data (item_id, messages, response, metadata)


def _ts(v: Any) -> float:
    if v is None or v == "" or (isinstance(v, float) and v != v):
        return 0.0
    if isinstance(v, int | float):
        return float(v)
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def from_full_tasks(tasks: Sequence[Mapping[str, Any]], where: str) -> list[Annotation]:
    """Annotations of tasks in Label Studio's full shape (the API's tasks, a JSON export).

    ``where`` names the source in error messages.
    """
    out = []
    for n, task in enumerate(tasks, start=1):
        tid = task.get("id", n)

        def bad(what: str, tid: Any = tid) -> JudgekitError:
            return JudgekitError(
                f"{where}: task {tid} is not in Label Studio's JSON export shape ({what}); export "
                "the project again as JSON, JSON_MIN or CSV."
            )

        raw_data = task.get("data") or {}
        if not isinstance(raw_data, dict):
            raise bad("'data' is not an object")
        data = dict(raw_data)
        iid = data.get("item_id")
        # "completions" is what Label Studio before 1.0 called annotations.
        anns = task.get("annotations") or task.get("completions") or []
        if not isinstance(anns, list) or not all(isinstance(a, dict) for a in anns):
            raise bad("'annotations' is not a list of objects")
        for a in anns:
            results = a.get("result") or []
            if not isinstance(results, list) or not all(
                isinstance(r, dict) and isinstance(r.get("value") or {}, dict) for r in results
            ):
                raise bad(f"annotation {a.get('id')}: 'result' is not a list of objects with a 'value'")
            for r in results:
                if "choices" in (r.get("value") or {}) and not isinstance(r["value"]["choices"], list):
                    raise bad(f"annotation {a.get('id')}: 'choices' is not a list")
        if is_missing(iid) or str(iid).strip() == "":
            if not anns:
                continue
            raise JudgekitError(
                f"{where}: task {tid} has no item_id in its data, so its labels cannot be matched "
                "to an item; push tasks with judgekit or add item_id to the task data."
            )
        for a in anns:
            choices: dict[str, Any] = {}
            comment = None
            for res in a.get("result") or []:
                value = res.get("value") or {}
                name = res.get("from_name")
                if "choices" in value:
                    choices[name] = value["choices"]
                elif name == COMMENT_CONTROL and "text" in value:
                    text = value["text"]
                    comment = " ".join(map(str, text)) if isinstance(text, list) else str(text)
            user = a.get("completed_by")
            if isinstance(user, dict):
                user = rater_name(user) or user.get("id")
            out.append(
                Annotation(
                    task_id=tid,
                    item_id=str(iid),
                    annotation_id=a.get("id"),
                    user=user,
                    updated=_ts(a.get("updated_at") or a.get("created_at")),
                    choices=choices,
                    comment=comment,
                    cancelled=bool(a.get("was_cancelled")),
                    data=data,
                )
            )
    return out


_FLAT_FIELDS = {"id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
                "item_id", "messages", "response", "prompt", COMMENT_CONTROL, "was_cancelled"}


def from_flat_rows(rows: Sequence[Mapping[str, Any]], rubrics: Sequence[Rubric], where: str) -> list[Annotation]:
    """Annotations from flat rows (JSON_MIN, CSV): one column per rubric, named after it."""
    names = {r.name for r in rubrics}
    out = []
    for n, row in enumerate(rows, start=1):
        user = row.get("annotator")
        if is_missing(user) or str(user).strip() == "":
            continue  # a task nobody annotated
        iid = row.get("item_id")
        if is_missing(iid) or str(iid).strip() == "":
            raise JudgekitError(
                f"{where} row {n}: no item_id, so its labels cannot be matched to an item; export "
                "a project pushed by judgekit or add an item_id column."
            )
        choices: dict[str, Any] = {}
        for name in names:
            if name in row and not is_missing(row[name]) and str(row[name]).strip() != "":
                v = row[name]
                if isinstance(v, str) and v.strip().startswith("{"):
                    with contextlib.suppress(ValueError, AttributeError):
                        v = json.loads(v).get("choices", v)
                choices[name] = v if isinstance(v, list) else [v]
        comment = row.get(COMMENT_CONTROL)
        data = {k: v for k, v in row.items() if k not in _FLAT_FIELDS and k not in names}
        data["item_id"] = str(iid)
        for k in ("messages", "response", "prompt"):
            if k in row and not is_missing(row[k]):
                data[k] = row[k]
        if isinstance(user, float) and user.is_integer():
            user = int(user)
        out.append(
            Annotation(
                task_id=row.get("id", n),
                item_id=str(iid),
                annotation_id=row.get("annotation_id", n),
                user=user,
                updated=_ts(row.get("updated_at") or row.get("created_at")),
                choices=choices,
                comment=None if is_missing(comment) or str(comment).strip() == "" else str(comment),
                cancelled=str(row.get("was_cancelled", "")).lower() in ("true", "1"),
                data=data,
            )
        )
    return out


def read_export(path: str | Path, rubrics: Sequence[Rubric]) -> list[Annotation]:
    """Annotations from a Label Studio export file: JSON, JSON_MIN (``.json``) or CSV."""
    p = Path(path)
    where = f"Label Studio export {p}"
    if not p.exists():
        raise JudgekitError(f"{where}: no such file; check the path.")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        try:
            df = pd.read_csv(p, dtype={"item_id": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise JudgekitError(f"{where}: cannot read it as CSV ({str(exc).splitlines()[0][:120]}).") from None
        if "annotator" not in df.columns:
            raise JudgekitError(f"{where}: no 'annotator' column; export the project as CSV from Label Studio.")
        rows: list[dict[str, Any]] = [
            {str(k): v for k, v in r.items()}
            for r in df.astype(object).where(df.notna(), None).to_dict("records")
        ]
        return from_flat_rows(rows, rubrics, where)
    if suffix != ".json":
        raise JudgekitError(f"{where}: use a .json (JSON or JSON_MIN) or .csv export.")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{where}: invalid JSON at line {exc.lineno}; export it again.") from None
    except UnicodeDecodeError:
        raise JudgekitError(f"{where} is not UTF-8 text; export it again.") from None
    if not isinstance(data, list):
        raise JudgekitError(f"{where}: expected a JSON list of tasks (JSON or JSON_MIN export).")
    if not data:
        return []
    if not all(isinstance(x, dict) for x in data):
        raise JudgekitError(f"{where}: every entry must be a JSON object; export it again.")
    if any("annotations" in x or "completions" in x or "data" in x for x in data):
        return from_full_tasks(data, where)
    return from_flat_rows(data, rubrics, where)
