"""Label Studio annotations read from tasks: the API's and JSON exports, JSON_MIN and CSV rows.

Every reader returns :class:`Annotation` rows, one per annotation (cancelled ones included,
flagged), so a pull treats an export file and the API alike. A file (or an answer) of the wrong
shape is one sentence naming the file, the task or row, the annotation and the key, never a
traceback: a value is kept exactly as written or refused (an id is text or a whole number, a
choice is text, a time has its zone, a CSV row has the header's cells), never coerced.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.annotation.labelstudio.config import COMMENT_CONTROL
from judgekit.annotation.labelstudio.values import (
    excerpt,
    id_problem,
    is_missing,
    kind,
    messages_problem,
    rater_name,
    text_problem,
    timestamp,
)
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric


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


def from_full_tasks(
    tasks: Sequence[Any], where: str, *, fix: str = "export the project again as JSON, JSON_MIN or CSV"
) -> list[Annotation]:
    """Annotations of tasks in Label Studio's full shape (the API's tasks, a JSON export).

    ``where`` names the source in error messages, ``fix`` ends them. Every value judgekit uses
    is checked, and a task of the wrong shape is one sentence naming the task (its id, else its
    position), the annotation and the key: ``data`` an object with an ``item_id`` (text or a whole number, as
    written), ``messages`` a list of ``{role, content}`` objects (or its JSON text), ``prompt``
    and ``response`` text; ``annotations`` a list of objects, each with ``completed_by`` (a user
    id, an email or username, or a user object), ``result`` a list of objects whose ``value`` is
    an object with ``choices`` a list of texts under a ``from_name``, ``was_cancelled`` true or
    false, times as numbers or ISO 8601 with a zone.
    """
    out = []
    fix = fix if fix.endswith(("?", ".")) else fix + "."
    for n, task in enumerate(tasks, start=1):
        if not isinstance(task, Mapping):
            raise JudgekitError(f"{where}: entry {n} of the task list is {kind(task)}, not a task object; {fix}")
        tid = task.get("id", n)

        def bad(what: str, tid: Any = tid) -> JudgekitError:
            return JudgekitError(
                f"{where}: task {tid} is not in Label Studio's JSON export shape ({what}); {fix}"
            )

        if id_problem(tid) is not None:
            tid = f"number {n} in the list"
            raise bad(f"its 'id' {id_problem(task.get('id'))}", tid)

        raw_data = task.get("data")
        if raw_data is None:
            raw_data = {}
        if not isinstance(raw_data, Mapping):
            raise bad(f"'data' is not an object but {kind(raw_data)}")
        data = dict(raw_data)
        # "completions" is what Label Studio before 1.0 called annotations.
        key = "annotations" if task.get("annotations") is not None else "completions"
        anns = task.get(key)
        if anns is None:
            anns = []
        if not isinstance(anns, list) or not all(isinstance(a, Mapping) for a in anns):
            raise bad(f"'{key}' is not a list of objects")
        iid = data.get("item_id")
        if is_missing(iid) or (isinstance(iid, str) and iid.strip() == ""):
            if not anns:
                continue
            raise JudgekitError(
                f"{where}: task {tid} has no item_id in its data, so its labels cannot be matched "
                "to an item; push tasks with judgekit or add item_id to the task data."
            )
        if anns:
            problem = _data_problem(data, iid)
            if problem is not None:
                raise bad(problem)
        out += [_full_annotation(a, tid, str(iid), data, bad) for a in anns]
    return out


def _flat_state(row: Mapping[str, Any], bad: Callable[[str], JudgekitError]) -> tuple[Any, bool, float]:
    """``(comment, cancelled, updated)`` of a flat row, each checked."""
    comment = row.get(COMMENT_CONTROL)
    if isinstance(comment, list) and all(isinstance(t, str) for t in comment):
        comment = " ".join(comment)
    if not is_missing(comment) and not isinstance(comment, str):
        raise bad(f"'{COMMENT_CONTROL}' is {kind(comment)}, not text")
    cancelled = row.get("was_cancelled")
    if is_missing(cancelled) or cancelled == "":
        cancelled = False
    if not isinstance(cancelled, bool):
        raise bad(f"'was_cancelled' is {kind(cancelled)}, not true or false")
    updated = 0.0
    for field in ("updated_at", "created_at"):
        when = timestamp(None if is_missing(row.get(field)) else row.get(field))
        if isinstance(when, str):
            raise bad(f"'{field}' {when}")
        updated = updated or when
    return comment, cancelled, updated


def _flat_choices(row: Mapping[str, Any], names: set[str],
                  bad: Callable[[str], JudgekitError]) -> dict[str, Any]:
    """Each rubric's choices in a flat row: its cell's text, or ``{"choices": [...]}`` (an object,
    or its JSON text in a CSV)."""
    choices: dict[str, Any] = {}
    for name in sorted(names):
        v = row.get(name)
        if is_missing(v) or (isinstance(v, str) and v.strip() == ""):
            continue
        if isinstance(v, str) and v.strip().startswith("{"):
            try:
                v = json.loads(v)
            except (ValueError, RecursionError):
                raise bad(f"'{name}' starts like a JSON object but is not one") from None
        if isinstance(v, Mapping):
            if "choices" not in v:
                raise bad(f"'{name}' is an object without 'choices'")
            v = v["choices"]
            if not isinstance(v, list):
                raise bad(f"'{name}' 'choices' is {kind(v)}, not a list")
        got = v if isinstance(v, list) else [v]
        other = next((c for c in got if not isinstance(c, str)), None)
        if other is not None or not got:
            raise bad(f"'{name}' is {kind(v)}; a choice is text (the label's code)")
        choices[name] = got
    return choices


def _full_annotation(a: Mapping[str, Any], tid: Any, iid: str, data: dict[str, Any],
                     bad: Callable[..., JudgekitError]) -> Annotation:
    """One annotation of a full-export task, every value it carries checked."""
    aid = a.get("id")
    if aid is not None and id_problem(aid) is not None:
        raise bad(f"an annotation's 'id' {id_problem(aid)}")

    def bad_ann(what: str, aid: Any = aid) -> JudgekitError:
        return bad(f"annotation {aid}: {what}")

    cancelled = a.get("was_cancelled")
    if cancelled is None:
        cancelled = False
    if not isinstance(cancelled, bool):
        raise bad_ann(f"'was_cancelled' is {kind(cancelled)}, not true or false")
    user = _annotator(a.get("completed_by"), cancelled, bad_ann)
    updated = 0.0
    for field in ("updated_at", "created_at"):
        when = timestamp(a.get(field))
        if isinstance(when, str):
            raise bad_ann(f"'{field}' {when}")
        updated = updated or when
    results = a.get("result")
    if results is None:
        results = []
    if not isinstance(results, list) or not all(isinstance(r, Mapping) for r in results):
        raise bad_ann("'result' is not a list of objects with a 'value'")
    choices, comment = _answers(results, bad_ann)
    return Annotation(task_id=tid, item_id=iid, annotation_id=aid, user=user, updated=updated,
                      choices=choices, comment=comment, cancelled=cancelled, data=data)


def _data_problem(data: Mapping[str, Any], iid: Any) -> str | None:
    """What is wrong with an annotated task's data (``None``: nothing): its item id, its messages,
    its prompt and response."""
    problem = id_problem(iid)
    if problem is not None:
        return f"'data.item_id' {problem}; an item id is kept exactly as written"
    problem = messages_problem(data.get("messages"), "data.messages")
    if problem is not None:
        return problem
    for field in ("prompt", "response"):
        if data.get(field) is not None and not isinstance(data[field], str):
            return f"'data.{field}' is {kind(data[field])}, not text"
    return None


def _answers(results: list[Any], bad_ann: Callable[[str], JudgekitError]) -> tuple[dict[str, Any], str | None]:
    """``(choices by control name, comment)`` of an annotation's ``result`` list, each checked."""
    choices: dict[str, Any] = {}
    comment = None
    for k, res in enumerate(results):
        value = res.get("value")
        if value is None:
            continue  # a result without a value (a relation between regions)
        if not isinstance(value, Mapping):
            raise bad_ann(f"result[{k}] 'value' is {kind(value)}, not an object")
        name = res.get("from_name")
        if "choices" in value:
            if not isinstance(name, str) or not name:
                raise bad_ann(f"result[{k}] has choices but 'from_name' is {kind(name)}, "
                              "not the name of a control")
            got = value["choices"]
            if not isinstance(got, list):
                raise bad_ann(f"'choices' is not a list (result[{k}], {name})")
            if not all(isinstance(c, str) for c in got):
                other = next(c for c in got if not isinstance(c, str))
                raise bad_ann(f"result[{k}] ({name}) 'choices' holds {kind(other)}; "
                              "choices are texts")
            if name in choices:
                raise bad_ann(f"two results answer {name}; keep one")
            choices[name] = got
        elif name == COMMENT_CONTROL and "text" in value:
            text = value["text"]
            if isinstance(text, list) and all(isinstance(t, str) for t in text):
                text = " ".join(text)
            if not isinstance(text, str):
                raise bad_ann(f"result[{k}] ({name}) 'text' is {kind(text)}, not text")
            comment = text
    return choices, comment


def _annotator(user: Any, cancelled: bool, bad: Callable[[str], JudgekitError]) -> Any:
    """The annotator of a full-export annotation: a user id, an email or username, or the rater
    id of a user object (email, else username, else its id)."""
    if user is None:
        if cancelled:
            return None
        raise bad("no 'completed_by', so judgekit cannot tell who annotated it")
    if isinstance(user, Mapping):
        for field in ("email", "username"):
            v = user.get(field)
            if v is not None and not isinstance(v, str):
                raise bad(f"'completed_by.{field}' is {kind(v)}, not text")
        name = rater_name(user)
        if name:
            problem = text_problem(name)
            if problem is not None:
                field = "email" if str(user.get("email") or "").strip() else "username"
                raise bad(f"'completed_by.{field}' {problem}")
            return name
        uid = user.get("id")
        if isinstance(uid, int) and not isinstance(uid, bool):
            return uid
        raise bad("'completed_by' is a user object without an email, a username or a whole-number id")
    if isinstance(user, int) and not isinstance(user, bool):
        return user
    if isinstance(user, str) and user.strip():
        problem = text_problem(user)
        if problem is not None:
            raise bad(f"'completed_by' {problem}")
        return user
    raise bad(f"'completed_by' is {kind(user)}, not a user id, an email or a user object")


_FLAT_FIELDS = {"id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
                "item_id", "messages", "response", "prompt", COMMENT_CONTROL, "was_cancelled"}


def from_flat_rows(
    rows: Sequence[Mapping[str, Any]],
    rubrics: Sequence[Rubric],
    where: str,
    *,
    lines: Sequence[int] | None = None,
) -> list[Annotation]:
    """Annotations from flat rows (JSON_MIN, CSV): one column per rubric, named after it.

    Each value judgekit uses is checked, as :func:`from_full_tasks` does, and a row of the wrong
    shape is one sentence naming the row (``lines``: each row's physical line in a CSV file) and
    the key. A rubric's cell is its choice (text), or ``{"choices": [...]}`` (an object, or its
    JSON text in a CSV).
    """
    names = {r.name for r in rubrics}
    out = []
    for n, row in enumerate(rows, start=1):
        ref = f"{where} line {lines[n - 1]}" if lines is not None else f"{where} row {n}"

        def bad(what: str, ref: str = ref) -> JudgekitError:
            return JudgekitError(f"{ref}: {what}; export the project again as JSON, JSON_MIN or CSV.")

        user = row.get("annotator")
        if is_missing(user) or (isinstance(user, str) and user.strip() == ""):
            continue  # a task nobody annotated
        if id_problem(user) is not None:
            raise bad(f"'annotator' {id_problem(user)} (a user id, an email or a username)")
        iid = row.get("item_id")
        if is_missing(iid) or (isinstance(iid, str) and iid.strip() == ""):
            raise JudgekitError(
                f"{ref}: no item_id, so its labels cannot be matched to an item; export "
                "a project pushed by judgekit or add an item_id column."
            )
        if id_problem(iid) is not None:
            raise bad(f"'item_id' {id_problem(iid)}; an item id is kept exactly as written")
        for field in ("id", "annotation_id"):
            v = row.get(field)
            if not is_missing(v) and id_problem(v) is not None:
                raise bad(f"'{field}' {id_problem(v)}")
        choices = _flat_choices(row, names, bad)
        comment, cancelled, updated = _flat_state(row, bad)
        problem = messages_problem(None if is_missing(row.get("messages")) else row.get("messages"))
        if problem is not None:
            raise bad(problem)
        for field in ("prompt", "response"):
            v = row.get(field)
            if not is_missing(v) and not isinstance(v, str):
                raise bad(f"'{field}' is {kind(v)}, not text")
        data = {k: v for k, v in row.items() if k not in _FLAT_FIELDS and k not in names}
        data["item_id"] = str(iid)
        for k in ("messages", "response", "prompt"):
            if k in row and not is_missing(row[k]) and row[k] != "":
                data[k] = row[k]
        aid = row.get("annotation_id")
        tid = row.get("id")
        out.append(
            Annotation(
                task_id=n if is_missing(tid) else tid,
                item_id=str(iid),
                annotation_id=n if is_missing(aid) else aid,
                user=user,
                updated=updated,
                choices=choices,
                comment=comment if isinstance(comment, str) and comment.strip() else None,
                cancelled=cancelled,
                data=data,
            )
        )
    return out


#: a number as a CSV cell holds one in its plain form (``3``, ``-2``, ``0.25``; not ``007``,
#: ``1.50``, ``1e3``): such metadata columns hold numbers, any other column text as written
_PLAIN_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")
_CSV_INTS = ("id", "annotation_id", "annotator")
_CSV_BOOLS = {"true": True, "false": False, "1": True, "0": False}


def _read_csv_export(p: Path, where: str) -> tuple[list[dict[str, Any]], list[int]]:
    """The rows of a CSV export, every cell exactly as written, and each row's first physical line.

    Every row must have the header's cells (a line break inside a cell must be quoted). Empty
    cells are ``None``; ``id``, ``annotation_id`` and ``annotator`` written as whole numbers are
    Label Studio ids (ints), ``was_cancelled`` is true/false; a metadata column whose every
    filled cell is a plain number holds numbers.
    """
    try:
        with p.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise JudgekitError(f"{where} is empty; export the project again as CSV.")
            raw: list[list[str]] = []
            lines: list[int] = []
            start = reader.line_num + 1
            for cells in reader:
                if cells:  # a blank line is no row
                    if len(cells) != len(header):
                        raise JudgekitError(
                            f"{where} line {start}: {len(cells)} cells where the header has "
                            f"{len(header)} (a comma or a line break inside a cell must be quoted); "
                            "export the project again as CSV."
                        )
                    raw.append(cells)
                    lines.append(start)
                start = reader.line_num + 1
    except UnicodeDecodeError:
        raise JudgekitError(f"{where} is not UTF-8 text; export it again.") from None
    except csv.Error as exc:
        raise JudgekitError(f"{where}: cannot read it as CSV ({exc}); export it again.") from None
    for col in header:
        if not col or col != col.strip():
            raise JudgekitError(
                f"{where}: the header has an empty column name or one with white space at either "
                f"end ({excerpt(col)}); export the project again as CSV."
            )
        if header.count(col) > 1:
            raise JudgekitError(f"{where}: the header names column {col!r} twice; export it again.")
    if "annotator" not in header:
        raise JudgekitError(f"{where}: no 'annotator' column; export the project as CSV from Label Studio.")
    numeric = {
        col for k, col in enumerate(header)
        if col not in _FLAT_FIELDS and any(r[k] for r in raw)
        and all(_PLAIN_NUMBER.fullmatch(r[k]) for r in raw if r[k])
    }
    rows = []
    for cells in raw:
        row: dict[str, Any] = {}
        for col, cell in zip(header, cells, strict=True):
            value: Any = cell if cell != "" else None
            if value is None:
                pass
            elif col in _CSV_INTS and re.fullmatch(r"[0-9]+", cell):
                value = int(cell)
            elif col == "was_cancelled":
                value = _CSV_BOOLS.get(cell.lower(), cell)
            elif col in numeric:
                value = float(cell) if "." in cell else int(cell)
            row[col] = value
        rows.append(row)
    return rows, lines


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


class _DuplicateKey(ValueError):
    pass


def read_export(path: str | Path, rubrics: Sequence[Rubric]) -> list[Annotation]:
    """Annotations from a Label Studio export file: JSON, JSON_MIN (``.json``) or CSV."""
    p = Path(path)
    where = f"Label Studio export {p}"
    if not p.exists():
        raise JudgekitError(f"{where}: no such file; check the path.")
    if not p.is_file():
        raise JudgekitError(f"{where} is not a file; give the exported .json or .csv file.")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        rows, lines = _read_csv_export(p, where)
        return from_flat_rows(rows, rubrics, where, lines=lines)
    if suffix != ".json":
        raise JudgekitError(f"{where}: use a .json (JSON or JSON_MIN) or .csv export.")
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"), object_pairs_hook=_unique_keys,
                          parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{where}: invalid JSON at line {exc.lineno}; export it again.") from None
    except _DuplicateKey as exc:
        raise JudgekitError(
            f"{where}: the key {excerpt(exc.args[0])} appears twice in one object (which one "
            "would count?); export it again."
        ) from None
    except _Constant as exc:
        raise JudgekitError(f"{where}: {exc.args[0]} is not a JSON value; export it again.") from None
    except RecursionError:
        raise JudgekitError(f"{where}: the JSON is nested too deeply to be an export; export it again.") from None
    except UnicodeDecodeError:
        raise JudgekitError(f"{where} is not UTF-8 text; export it again.") from None
    if not isinstance(data, list):
        raise JudgekitError(f"{where}: expected a JSON list of tasks (JSON or JSON_MIN export).")
    if not data:
        return []
    if not all(isinstance(x, dict) for x in data):
        n = next(i for i, x in enumerate(data, start=1) if not isinstance(x, dict))
        raise JudgekitError(
            f"{where}: entry {n} of the list is {kind(data[n - 1])}; every entry must be a JSON "
            "object; export it again."
        )
    if any("annotations" in x or "completions" in x or "data" in x for x in data):
        return from_full_tasks(data, where)
    return from_flat_rows(data, rubrics, where)


class _Constant(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Constant(name)
