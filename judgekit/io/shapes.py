"""The shapes of JSON a table comes in, and flattening nested objects to ``a.b`` columns.

* JSONL: one row object per line;
* a JSON list of row objects;
* a JSON object holding one list of row objects under a key (``{"data": [{...}, ...]}``; other
  keys with plain values, such as a version, are not rows and are left out; beside another
  object or list the file is refused, as the rows would be a guess);
* a JSON object of lists (``{"b1": [{...}, {...}], "b2": [...]}``) with ``key_column=NAME``: each
  key becomes the value of column ``NAME`` of its rows.

With ``flatten``, a nested object becomes one column per leaf, named by its path
(``{"meta": {"model": "x"}}`` → column ``meta.model``); lists (``messages`` too) stay values and
an empty object stays ``{}``. Without it a nested object is one value (stored as its JSON text).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.core.paths import open_input_text
from judgekit.core.values import JSONValueError, loads_json_strict
from judgekit.errors import JudgekitError, excerpt

Rows = list[dict[str, Any]]


def read_jsonl(p: Path, *, flatten: bool = False) -> tuple[list[str], dict[str, list[Any]], list[int]]:
    """One JSON object per line: (columns, column values, each row's line)."""
    rows = []
    lines = []
    origins = FlatOrigins(p)
    with open_input_text(p, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = loads_json_strict(line)
            except json.JSONDecodeError:
                raise JudgekitError(
                    f"{p}: line {lineno} is not valid JSON; fix or remove that line."
                ) from None
            except (JSONValueError, ValueError) as exc:  # also a number of over 4,300 digits
                raise JudgekitError(f"{p} line {lineno}: {_short(exc)}; fix that line.") from None
            except RecursionError:
                raise JudgekitError(
                    f"{p}: line {lineno} nests JSON too deeply for judgekit to read; flatten it."
                ) from None
            if not isinstance(obj, dict):
                raise JudgekitError(f"{p}: line {lineno} is not a JSON object; each line must be one.")
            rows.append(_flatten_row(obj, f"{p} line {lineno}", origins, f"line {lineno}")
                        if flatten else obj)
            lines.append(lineno)
    if not rows:
        raise JudgekitError(f"{p} has no rows; give one JSON object per line.")
    columns, data = _columns_of(rows)
    return columns, data, lines


def read_json(
    p: Path, *, key_column: str | None = None, flatten: bool = False
) -> tuple[list[str], dict[str, list[Any]]]:
    """A JSON file in any of the shapes of this module: (columns, column values)."""
    with open_input_text(p, encoding="utf-8-sig") as fh:
        data = loads_json_strict(fh.read())
    rows = _rows_of(p, data, key_column)
    if flatten:
        origins = FlatOrigins(p)
        rows = [_flatten_row(row, f"{p} row {i + 1}", origins, f"row {i + 1}")
                for i, row in enumerate(rows)]
    return _columns_of(rows)


def _rows_of(p: Path, data: Any, key_column: str | None) -> Rows:
    """The row objects of a parsed JSON file (see the module's shapes)."""
    if key_column is not None:
        return _object_of_lists(p, data, key_column)
    if isinstance(data, list):
        return _checked_rows(p, data, "of the list")
    if not isinstance(data, dict):
        raise JudgekitError(f"{p}: expected a JSON list of row objects, not a {type(data).__name__}.")
    lists = [k for k, v in data.items() if _is_rows(v)]
    nested = [k for k, v in data.items() if k not in lists and isinstance(v, dict | list)]
    if len(lists) == 1 and not nested:
        return _checked_rows(p, data[lists[0]], f"under {lists[0]!r}")
    if len(lists) == 1:
        raise JudgekitError(
            f"{p}: expected a JSON list of row objects or an object holding one list of rows beside "
            f"plain values; this object has the list {excerpt(lists[0], 40)} beside the "
            f"{'object' if isinstance(data[nested[0]], dict) else 'list'} {excerpt(nested[0], 40)}, "
            "so which are the rows is unclear; give the rows as a JSON list."
        )
    if len(lists) > 1:
        keys = ", ".join(repr(k) for k in lists[:5]) + (", …" if len(lists) > 5 else "")
        raise JudgekitError(
            f"{p}: an object of {len(lists)} lists of rows (keys {keys}); give --key-column NAME "
            "to read each key as column NAME of its rows, or make it one list of row objects."
        )
    raise JudgekitError(
        f"{p}: expected a JSON list of row objects, an object holding one list of rows, or an "
        "object of lists of rows (with --key-column NAME); this object holds no list of rows."
    )


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(r, dict) for r in value)


def _checked_rows(p: Path, rows: list[Any], where: str) -> Rows:
    if not rows:
        raise JudgekitError(f"{p} has no rows; give a JSON list of row objects.")
    bad = next((i for i, row in enumerate(rows) if not isinstance(row, dict)), None)
    if bad is not None:
        raise JudgekitError(f"{p}: row {bad + 1} {where} is not a JSON object; each row must be one.")
    return rows


def _object_of_lists(p: Path, data: Any, key_column: str) -> Rows:
    if not isinstance(data, dict):
        what = "a JSON list of rows" if isinstance(data, list) else f"a JSON {type(data).__name__}"
        raise JudgekitError(
            f"{p}: --key-column {key_column} reads a JSON object of lists of rows, and this file is "
            f"{what}; drop --key-column."
        )
    if not key_column.strip() or key_column != key_column.strip():
        raise JudgekitError(f"{p}: --key-column {key_column!r} is not a column name; give a name "
                            "without white space at either end.")
    out: Rows = []
    for key, rows in data.items():
        if not isinstance(rows, list):
            raise JudgekitError(
                f"{p}: key {excerpt(key, 40)} holds a {type(rows).__name__}, not a list of rows; "
                f"with --key-column {key_column} every key must hold a list of row objects."
            )
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise JudgekitError(
                    f"{p}: key {excerpt(key, 40)}, row {i + 1} is not a JSON object; each row must be one."
                )
            if key_column in row and row[key_column] != key:
                raise JudgekitError(
                    f"{p}: key {excerpt(key, 40)}, row {i + 1} has its own {key_column} "
                    f"{excerpt(row[key_column], 40)}, which --key-column {key_column} would replace "
                    "by the key; give another --key-column name."
                )
            out.append({key_column: key, **row})
    if not out:
        raise JudgekitError(f"{p} has no rows; every key holds an empty list.")
    return out


class FlatOrigins:
    """Which flattened names of one file came from a nested path and which from a literal key
    (``"a.b"``), so that the two in different rows are the error they are in one row."""

    def __init__(self, p: Path) -> None:
        self.p = p
        self.first: dict[str, tuple[bool, str]] = {}  # name -> (nested, where it first came)

    def note(self, name: str, nested: bool, where: str) -> None:
        seen = self.first.setdefault(name, (nested, where))
        if seen[0] != nested:
            key, obj = (seen[1], where) if nested else (where, seen[1])
            raise JudgekitError(
                f"{self.p}: --flatten makes the column {excerpt(name, 60)} twice (a key of that name "
                f"in {key} and a nested one in {obj}); rename one of them."
            )


def _flatten_row(row: dict[str, Any], where: str, origins: FlatOrigins | None = None,
                row_name: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": 2}`` → ``{"a.b": 1, "c": 2}``; two paths to one name are an error
    naming ``where``; with ``origins`` (the file's), also when they are in two rows (``row_name``,
    ``line 3``, says which this one is)."""
    out: dict[str, Any] = {}

    def walk(prefix: str, obj: dict[str, Any]) -> None:
        for key, value in obj.items():
            name = prefix + key
            if isinstance(value, dict) and value and name != "messages":
                walk(name + ".", value)
                continue
            if name in out:
                raise JudgekitError(
                    f"{where}: --flatten makes the column {excerpt(name, 60)} twice (a key of that "
                    "name and a nested one); rename one of them."
                )
            out[name] = value
            if origins is not None and (prefix or "." in name):
                origins.note(name, bool(prefix), row_name)

    walk("", row)
    return out


def _columns_of(rows: Rows) -> tuple[list[str], dict[str, list[Any]]]:
    """Columns in the order their keys first appear; a row without a key has it missing."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return columns, {c: [row.get(c) for row in rows] for c in columns}


def _short(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
