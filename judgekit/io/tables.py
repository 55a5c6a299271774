"""Reading and writing tables: CSV, JSONL (or a JSON list), Parquet.

An Inspect AI log (``.eval``, or a ``.json`` log) is recognised as format ``inspect`` but is not
a table: :mod:`judgekit.io.inspect` reads it.

Every read failure becomes one :class:`JudgekitError` sentence naming the file (and the line where
the parser says one) and the fix.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.core.atomic import new_temp_file as new_temp_file  # re-exported
from judgekit.core.atomic import write_text_atomic as write_text_atomic  # re-exported
from judgekit.core.oserrors import os_error
from judgekit.core.paths import open_input, regular_input, regular_output
from judgekit.core.values import JSONValueError, check_ids, id_problem, plain_number, row_ref
from judgekit.core.values import LineNumbers as LineNumbers  # re-exported: its old home
from judgekit.errors import JudgekitError
from judgekit.io.csv_fast import MAX_COLUMNS, check_header_size, detect_newline, read_csv_fast
from judgekit.io.mapping import apply_column_map
from judgekit.io.shapes import read_json, read_jsonl
from judgekit.store.items_table import ItemTable, validate_item_table
from judgekit.store.schema import is_missing

if TYPE_CHECKING:  # pandas is imported where a frame is made: reading columns needs none
    import pandas as pd

_FORMATS = ("csv", "jsonl", "json", "parquet", "inspect")


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """The format of ``path``: given, or from the file ending."""
    if fmt:
        if fmt not in _FORMATS:
            raise JudgekitError(f"Unknown format {fmt!r}; use one of {', '.join(_FORMATS)}.")
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix == "eval":
        return "inspect"
    if suffix == "json" and Path(path).is_file():
        from judgekit.io.inspect import looks_like_inspect_json

        if looks_like_inspect_json(path):
            return "inspect"
    if suffix in ("jsonl", "ndjson"):
        return "jsonl"
    if suffix in ("csv", "tsv", "json", "parquet"):
        return "csv" if suffix == "tsv" else suffix
    if suffix == "pq":
        return "parquet"
    raise JudgekitError(
        f"{path}: cannot tell the format from the ending {Path(path).suffix!r}; "
        "use .csv, .jsonl, .json or .parquet (or .eval for an Inspect log)."
    )


#: columns whose cells are kept as text exactly as written (never read as numbers)
_TEXT_COLUMNS = frozenset({
    "item_id", "rater_id", "rater_kind", "label", "status", "rationale", "prompt", "response",
    "messages", "trial", "created_at", "source",
})
#: rating and text fields whose cell must be one value, not a JSON object or list
_SCALAR_COLUMNS = _TEXT_COLUMNS - {"messages"}
_ID_COLUMNS = ("item_id", "rater_id")


def read_table(
    path: str | Path,
    fmt: str | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    key_column: str | None = None,
    flatten: bool = False,
    map_option: str = "--map",
) -> pd.DataFrame:
    """Read a table file into a DataFrame of Python values kept exactly as written.

    ``column_map`` (``{judgekit_name: file_column}``, see :mod:`judgekit.io.mapping`) reads a
    file's column as that judgekit field; ``key_column`` reads a JSON object of lists (each key
    becomes that column) and ``flatten`` makes nested objects (JSON, Parquet structs) ``a.b``
    columns (see :mod:`judgekit.io.shapes`); ``map_option`` names the option in messages.

    * CSV/TSV: every row must have exactly the header's cells (a line break, carriage return or
      comma inside a cell must be quoted) or the read fails naming the physical line; a header
      name given twice, empty or with white space at either end is an error. Cells are text as
      written (an empty cell is missing); a column other than the rating and text fields
      (:data:`_TEXT_COLUMNS`) whose every filled cell is a number in its plain form (``3``,
      ``-2``, ``0.25``) holds those numbers; any other column stays text (``007``, ``1.50``).
      A UTF-8 BOM, CRLF or CR line ends and Excel quoting (``""`` inside quotes) are read.
    * JSONL / JSON (a list of rows, an object holding one list of rows, or an object of lists
      with ``key_column``): a key twice in one object, ``NaN`` and ``Infinity`` are errors; an
      object or a list as a metadata value is stored as its JSON text (keys in the written order).
    * Parquet: dates and times become ISO 8601 text, decimals their exact text, structs, maps and
      lists JSON text; binary columns are an error.

    ``item_id`` and ``rater_id`` are ids exactly as written: text unchanged, an integer as its
    digits, a decimal number, white space at either end or a control character an error. The
    frame's ``attrs["lines"]`` (CSV, JSONL) holds each row's first physical line, for messages.
    """
    import pandas as pd

    columns, data, lines = read_columns(path, fmt, column_map=column_map, key_column=key_column,
                                        flatten=flatten, map_option=map_option)
    df = pd.DataFrame({name: pd.Series(data[name], dtype=object) for name in columns})
    if lines is not None:
        df.attrs["lines"] = LineNumbers(lines)
    return df


def read_columns(
    path: str | Path,
    fmt: str | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    key_column: str | None = None,
    flatten: bool = False,
    map_option: str = "--map",
) -> tuple[list[str], dict[str, list[Any]], Sequence[int] | None]:
    """What :func:`read_table` reads, without pandas: (columns, each column's values, each
    row's first physical line or None). Same checks, same values, same messages."""
    p = regular_input(path)  # a FIFO or device (/dev/zero) is refused, never read
    kind = _readable_table(p, fmt, key_column=key_column, flatten=flatten)
    lines: Sequence[int] | None = None
    try:
        if kind == "csv":
            sep = "\t" if p.suffix.lower() == ".tsv" else ","
            columns, data, lines = _read_csv(p, sep)
        elif kind == "jsonl":
            columns, data, lines = read_jsonl(p, flatten=flatten)
        elif kind == "json":
            columns, data = read_json(p, key_column=key_column, flatten=flatten)
        else:
            columns, data = _read_parquet(p, flatten=flatten)
    except JudgekitError:
        raise
    except UnicodeDecodeError:
        raise JudgekitError(f"{p} is not UTF-8 text; save it as UTF-8.") from None
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{p}: invalid JSON at line {exc.lineno}; fix that line.") from None
    except JSONValueError as exc:
        raise JudgekitError(f"{p}: {exc}; fix it.") from None
    except RecursionError:
        raise JudgekitError(
            f"{p}: JSON nested too deeply for judgekit to read; flatten that value."
        ) from None
    except PermissionError as exc:
        raise os_error(exc, "cannot read it") from None
    except Exception as exc:  # pyarrow raises many types for a broken parquet file
        raise JudgekitError(f"{p}: cannot read it as {kind} ({_short(exc)}).") from None
    if not data or not next(iter(data.values())):
        raise JudgekitError(f"{p} has a header but no rows; add rows.")
    if len(columns) > MAX_COLUMNS:
        raise JudgekitError(f"{p} has {len(columns):,} columns, and judgekit reads at most "
                            f"{MAX_COLUMNS:,} (ids, texts, labels and metadata); remove columns or "
                            "split the file.")
    _check_column_names(p, columns, csv=kind == "csv")
    columns, data = apply_column_map(p, columns, data, column_map or {}, option=map_option)
    if kind == "csv":
        for name in columns:
            if name not in _TEXT_COLUMNS:
                data[name] = _plain_numbers(data[name])
    else:
        for name in columns:
            data[name] = _cells(p, name, data[name], lines)
        for name in ("prompt", "response"):  # text as written: JSON 5 / true are "5" / "true"
            if name in data:
                data[name] = [v if isinstance(v, str) or is_missing(v) else json.dumps(v) for v in data[name]]
    for name in _ID_COLUMNS:
        if name in data:
            data[name] = _id_cells(p, name, data[name], lines, csv=kind == "csv")
    return columns, data, lines


def _readable_table(p: Path, fmt: str | None, *, key_column: str | None, flatten: bool) -> str:
    """The table format of ``p``, or a refusal: no such file, a folder, an empty file, an Inspect
    log, or ``--key-column`` / ``--flatten`` given for a format without lists or nesting."""
    try:
        if not p.exists():
            raise JudgekitError(f"{p}: no such file; check the path.")
        if p.is_dir():
            raise JudgekitError(f"{p} is a folder; give a CSV, JSONL or Parquet file.")
        size = p.stat().st_size
    except OSError as exc:  # a name too long, no permission
        raise os_error(exc, "cannot read it") from None
    if size == 0:
        raise JudgekitError(f"{p} is empty; give a file with a header row and at least one row.")
    kind = table_format(p, fmt)
    if kind == "inspect":
        raise JudgekitError(
            f"{p} is an Inspect log, not a table; import it with `judgekit import {p} --rubric NAME`."
        )
    if key_column is not None and kind != "json":
        raise JudgekitError(
            f"{p}: --key-column reads a JSON object of lists of rows, and this file is {kind}; "
            "drop --key-column."
        )
    if flatten and kind == "csv":
        raise JudgekitError(f"{p}: --flatten flattens nested JSON objects, and a CSV file has none; "
                            "drop --flatten.")
    return kind


# ------------------------------------------------------------------ CSV
_CSV_PROBLEMS = {
    "new-line character seen in unquoted field": (
        "a line break (a carriage return) inside a cell that is not in double quotes; quote "
        "the cell or remove the carriage return"
    ),
    "expected after": (
        "text after the closing double quote of a cell; a double quote inside a quoted cell is "
        'written ""'
    ),
    "unexpected end of data": "a double quote opened here is never closed; close it",
}


def _read_csv(p: Path, sep: str) -> tuple[list[str], dict[str, list[Any]], Sequence[int]]:
    # lines end at \n (or \r\n), or at \r in an old-Mac file (see detect_newline)
    newline = detect_newline(p, sep)
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    fast = read_csv_fast(p, sep, newline)
    if fast is not None:
        return csv_unescaped(*fast)
    with open_input(p) as fh:
        data = fh.read()

    def reader() -> Any:  # lines end only at `newline`, none translated: a quoted one is kept as written
        return csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=newline),
                          delimiter=sep, strict=True)

    header_row: list[str] | None = None
    rows = []
    lines: list[int] = []
    slow = reader()
    last = header_line = 0
    try:
        for row in slow:
            start, last = last + 1, slow.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if header_row is None:
                check_header_size(p, row, start)
                header_row, header_line = row, start
                continue
            if len(row) != len(header_row):
                span = f" (the row runs on to line {last})" if last != start else ""
                raise JudgekitError(
                    f"{p}: malformed CSV: line {start} has {len(row)} cell"
                    f"{'s' if len(row) != 1 else ''} where the header has {len(header_row)}{span}; "
                    "a comma, line break or carriage return inside a cell must be inside double "
                    "quotes, and every row needs every cell (empty ones too); fix that row."
                )
            rows.append(row)
            lines.append(start)
    except csv.Error as exc:
        msg = str(exc)
        problem = next((v for k, v in _CSV_PROBLEMS.items() if k in msg), f"malformed CSV ({msg})")
        line = last + 1 if "end of data" in msg else slow.line_num
        raise JudgekitError(f"{p} line {line}: {problem}.") from None
    if header_row is None:
        raise JudgekitError(f"{p} has no rows; give a file with a header row and rows.")
    return csv_unescaped(header_row, _columns_of(p, header_row, header_line, rows), lines)


def _columns_of(p: Path, header: list[str], header_line: int, rows: list[list[str]]) -> dict[str, list[Any]]:
    data: dict[str, list[Any]] = {}
    cells = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    for k, name in enumerate(header):
        if name in data:
            first = header.index(name) + 1
            raise JudgekitError(
                f"{p} line {header_line}: the header names the column {name!r} twice (columns "
                f"{first} and {k + 1}); rename or remove one."
            )
        # an empty cell is missing; a repeated cell is one shared string (a million ratings of
        # five raters hold a handful of distinct rater ids and labels, not five million strings)
        seen: dict[str, str] = {}
        data[name] = [(seen.setdefault(v, v) if v else None) for v in cells[k]]
    return data


def _plain_numbers(values: list[Any]) -> list[Any]:
    """The column as numbers when every filled cell is a number in its plain form (the text
    Python writes for it, so nothing is lost), else unchanged text."""
    numbers: dict[str, int | float] = {}
    for v in set(values):
        if v is None:
            continue
        number = plain_number(v)  # the rule of judgekit.core.values.plain_number
        if number is None:
            return values
        numbers[v] = number
    if not numbers:
        return values
    return [None if v is None else numbers[v] for v in values]


# ------------------------------------------------------------------ Parquet
def _read_parquet(p: Path, *, flatten: bool = False) -> tuple[list[str], dict[str, list[Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    width = len(pq.read_schema(p).names)  # before reading a million columns
    if width > MAX_COLUMNS:
        raise JudgekitError(f"{p} has {width:,} columns, and judgekit reads at most {MAX_COLUMNS:,} "
                            "(ids, texts, labels and metadata); remove columns or split the file.")
    table = pq.read_table(p)
    written = table.column_names
    while flatten and any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()  # one level per pass: struct column a, field b -> column a.b
    meta = table.schema.pandas_metadata or {}
    # a pandas index written as a column is not data (pd.read_parquet makes it the index)
    index_cols = {c for c in meta.get("index_columns", []) if isinstance(c, str)}
    names = [n for n in table.column_names if n not in index_cols]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None and flatten and written.count(dup) < 2:  # made by flattening a struct
        raise JudgekitError(f"{p}: --flatten makes the column {dup!r} twice (a key of that name "
                            "and a nested one); rename one of them.")
    if dup is not None:
        raise JudgekitError(f"{p}: the column {dup!r} appears twice; rename or remove one.")
    data = {
        name: table.column(i).to_pylist()
        for i, name in enumerate(table.column_names) if name not in index_cols
    }
    return names, data


# ------------------------------------------------------------------ cells
def _check_column_names(p: Path, columns: list[Any], *, csv: bool) -> None:

    for k, name in enumerate(columns):
        if not isinstance(name, str) or not name.strip():
            if not csv:
                raise JudgekitError(f"{p}: a key {name!r} has no name; name it or remove it.")
            raise JudgekitError(
                f"{p}: column {k + 1} has no name in the header; name it or remove the column "
                "(a pandas index written with to_csv(index=True)?)."
            )
        problem = id_problem(name, "the column name")
        if problem:
            raise JudgekitError(f"{p}: {problem}.")


def _id_cells(
    p: Path, name: str, values: list[Any], lines: Sequence[int] | None, *, csv: bool
) -> list[Any]:
    return check_ids(values, name, str(p), csv=csv, lines=lines, allow_missing=True)


_SIMPLE = frozenset({str, int, bool, type(None)})


def _cells(p: Path, name: str, values: list[Any], lines: Sequence[int] | None) -> list[Any]:
    """JSON / Parquet values as judgekit stores them (see :func:`read_table`)."""
    if {type(v) for v in values} <= _SIMPLE:
        return values

    out = []
    for i, v in enumerate(values):
        if type(v) in _SIMPLE or name in _ID_COLUMNS:
            out.append(v)
            continue
        try:
            out.append(_cell(name, v))
        except _CellError as exc:
            raise JudgekitError(f"{row_ref(str(p), i, csv=False, lines=lines)}: {name} {exc}.") from None
    return out


class _CellError(ValueError):
    pass


def _cell(name: str, v: Any) -> Any:
    if isinstance(v, float):
        if math.isinf(v):
            raise _CellError("is infinite; give a finite number or leave it empty")
        return v  # NaN (Parquet): an empty cell, as pandas has it
    if isinstance(v, dict | list):
        if name == "messages":
            return v
        if name in _SCALAR_COLUMNS:
            kind = "an object" if isinstance(v, dict) else "a list"
            raise _CellError(f"is {kind}; give one value")
        try:
            return json.dumps(v, ensure_ascii=False, allow_nan=False, default=_json_value)
        except RecursionError:
            raise _CellError("is nested too deeply; flatten it") from None
        except ValueError:
            raise _CellError("holds NaN or Infinity; give finite numbers or null") from None
        except TypeError as exc:
            raise _CellError(str(exc)) from None
    if isinstance(v, dt.datetime | dt.date | dt.time):
        return v if name == "created_at" and isinstance(v, dt.datetime) else v.isoformat()
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            raise _CellError("is not a finite number; give a number or leave it empty")
        return str(v)
    if isinstance(v, bytes | bytearray | memoryview):
        raise _CellError("holds binary data, not text; store that column as text (UTF-8 strings)")
    raise _CellError(
        f"holds a {type(v).__name__} value, which judgekit does not store; convert that column "
        "to text or numbers"
    )


def _json_value(v: Any) -> Any:
    """Non-JSON values inside a Parquet struct or list (dates, decimals) as exact text."""
    if isinstance(v, dt.datetime | dt.date | dt.time):
        return v.isoformat()
    if isinstance(v, decimal.Decimal) and v.is_finite():
        return str(v)
    if isinstance(v, bytes | bytearray | memoryview):
        raise TypeError("holds binary data, not text; store it as text (UTF-8 strings)")
    raise TypeError(f"holds a {type(v).__name__} value, which judgekit does not store")


def write_table(df: pd.DataFrame, path: str | Path, fmt: str | None = None) -> Path:
    """Write ``df`` atomically (temp file + rename): a failed write leaves no half file. In CSV a
    text cell that a spreadsheet would run as a formula gets a single quote before it
    (:mod:`judgekit.io.tables`); the other formats keep every text exactly."""
    p = regular_output(path)  # never renamed over a FIFO or a device
    kind = table_format(p, fmt)
    if kind == "inspect":
        raise JudgekitError(f"{p}: judgekit does not write Inspect logs; give a .csv, .jsonl, "
                            ".json or .parquet path.")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_error(exc, "cannot create this folder") from None
    fd, tmp = new_temp_file(p)
    os.close(fd)
    try:
        if kind == "csv":  # cells a spreadsheet would run as formulas get a ' (io.csv_out)
            _write_csv(df, tmp)
        elif kind == "jsonl":
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)
        elif kind == "json":
            df.to_json(tmp, orient="records", force_ascii=False, indent=1)
        else:
            df.to_parquet(tmp, index=False)
        os.replace(tmp, p)
    except OSError as exc:  # a full disk, the target a folder
        raise os_error(OSError(exc.errno, exc.strerror, str(p)), "cannot write it") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return p


def _short(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__


def read_items(path: str | Path, *, need_response: bool = True) -> ItemTable:
    """Read and check an items file (for judging), as ``validate_items(read_table(path))``."""
    from judgekit.io.tables import read_columns

    columns, data, lines = read_columns(path)
    return validate_item_table(ItemTable(columns, data, lines), source=str(path),
                               need_response=need_response)


# Writing a table as CSV, safe to open in a spreadsheet.
#
# A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
# formula (or the start of one) by Excel, LibreOffice and Google Sheets: a rationale or metadata
# value copied from a model's answer could run ``=HYPERLINK(...)`` or worse when a reviewer opens
# the export ("CSV injection"). As OWASP recommends
# (https://owasp.org/www-community/attacks/CSV_Injection), such a cell is written with a single
# quote before it, which the spreadsheet shows as text. Only CSV output is changed: the store,
# JSONL, JSON and Parquet keep every text exactly as written. A number is not a formula: numeric
# columns are written as numbers (``-0.5``), and a text cell that is a number in its plain form
# (:func:`judgekit.core.values.plain_number`, e.g. ``-0.5``, ``-3``) is left as it is.

if TYPE_CHECKING:
    import pandas as pd

#: a cell a spreadsheet would run (its first character in OWASP's list), behind the quotes already
#: before it: judgekit writes one more quote before such a cell and takes one off on reading, so
#: every text reads back as written
_ESCAPED = re.compile("'*[=+\\-@\t\r]")


def _csv_safe_cell(value: Any) -> Any:
    """``value`` with a single quote before it when it is a text that a spreadsheet would read as
    a formula, or such a text behind quotes (see the module docstring); anything else unchanged."""
    if isinstance(value, str) and _ESCAPED.match(value) and plain_number(value) is None:
        return "'" + value
    return value


def _csv_cell_read(value: Any) -> Any:
    """The text :func:`_csv_safe_cell` was given: one quote fewer before a quoted formula start."""
    if isinstance(value, str) and value.startswith("'") and _ESCAPED.match(value):
        return value[1:]
    return value


def csv_unescaped(header: list[str], columns: dict[str, list[Any]],
                  lines: Sequence[int]) -> tuple[list[str], dict[str, list[Any]], Sequence[int]]:
    """A CSV file's header and columns with the quote :func:`_csv_safe_cell` wrote taken off."""
    out = {}
    for name, values in columns.items():
        if any(isinstance(v, str) and v.startswith("'") for v in values):
            values = [_csv_cell_read(v) for v in values]
        out[_csv_cell_read(name)] = values
    return [_csv_cell_read(h) for h in header], out, lines


def _write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` to ``path`` as CSV (no index), its text cells and column names made safe with
    :func:`_csv_safe_cell`; ``df`` itself is not changed."""
    import pandas as pd

    out = df.copy(deep=False)
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]):
            out[c] = out[c].map(_csv_safe_cell)
    out.columns = [_csv_safe_cell(c) for c in out.columns]
    # Python's CSV writer leaves a lone carriage return unquoted, which no reader can tell from a
    # line end: a file with one quotes every text cell, so it reads back exactly
    has_cr = any(
        isinstance(v, str) and "\r" in v
        for c in range(out.shape[1]) if not pd.api.types.is_numeric_dtype(out.iloc[:, c])
        for v in out.iloc[:, c].tolist()
    )
    out.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC if has_cr else csv.QUOTE_MINIMAL)
