"""Reading and writing tables: CSV, JSONL (or a JSON list), Parquet.

An Inspect AI log (``.eval``, or a ``.json`` log) is recognised as format ``inspect`` but is not
a table: :mod:`judgekit.io.inspect` reads it.

Every read failure becomes one :class:`JudgekitError` sentence naming the file (and the line where
the parser says one) and the fix.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import warnings
from pathlib import Path

import pandas as pd

from judgekit.errors import JudgekitError

FORMATS = ("csv", "jsonl", "json", "parquet", "inspect")


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """The format of ``path``: given, or from the file ending."""
    if fmt:
        if fmt not in FORMATS:
            raise JudgekitError(f"Unknown format {fmt!r}; use one of {', '.join(FORMATS)}.")
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


def read_table(path: str | Path, fmt: str | None = None) -> pd.DataFrame:
    """Read a table file into a DataFrame of strings/numbers (ids stay strings)."""
    p = Path(path)
    if not p.exists():
        raise JudgekitError(f"{p}: no such file; check the path.")
    if p.is_dir():
        raise JudgekitError(f"{p} is a folder; give a CSV, JSONL or Parquet file.")
    if p.stat().st_size == 0:
        raise JudgekitError(f"{p} is empty; give a file with a header row and at least one row.")
    kind = table_format(p, fmt)
    if kind == "inspect":
        raise JudgekitError(
            f"{p} is an Inspect log, not a table; import it with `judgekit import {p} --rubric NAME`."
        )
    try:
        if kind == "csv":
            sep = "\t" if p.suffix.lower() == ".tsv" else ","
            with warnings.catch_warnings():
                # a row with more cells than the header must be an error, not silent data loss
                warnings.simplefilter("error", pd.errors.ParserWarning)
                df = pd.read_csv(p, sep=sep, dtype={"item_id": str}, index_col=False)
        elif kind == "jsonl":
            df = _read_jsonl(p)
        elif kind == "json":
            data = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(data, list):
                raise JudgekitError(f"{p}: expected a JSON list of row objects.")
            df = pd.DataFrame(data)
        else:
            df = pd.read_parquet(p)
    except JudgekitError:
        raise
    except pd.errors.EmptyDataError:
        raise JudgekitError(f"{p} has no rows; give a file with a header row and rows.") from None
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        raise JudgekitError(f"{p}: malformed CSV ({_short(exc)}); fix that row.") from None
    except UnicodeDecodeError:
        raise JudgekitError(f"{p} is not UTF-8 text; save it as UTF-8.") from None
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{p}: invalid JSON at line {exc.lineno}; fix that line.") from None
    except Exception as exc:  # pyarrow raises many types for a broken parquet file
        raise JudgekitError(f"{p}: cannot read it as {kind} ({_short(exc)}).") from None
    if df.empty:
        raise JudgekitError(f"{p} has a header but no rows; add rows.")
    if "item_id" in df.columns:
        df["item_id"] = df["item_id"].astype(str)
    return df


def _read_jsonl(p: Path) -> pd.DataFrame:
    rows = []
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                raise JudgekitError(
                    f"{p}: line {lineno} is not valid JSON; fix or remove that line."
                ) from None
            if not isinstance(obj, dict):
                raise JudgekitError(f"{p}: line {lineno} is not a JSON object; each line must be one.")
            rows.append(obj)
    if not rows:
        raise JudgekitError(f"{p} has no rows; give one JSON object per line.")
    return pd.DataFrame(rows)


def write_table(df: pd.DataFrame, path: str | Path, fmt: str | None = None) -> Path:
    """Write ``df`` atomically (temp file + rename): a failed write leaves no half file."""
    p = Path(path)
    kind = table_format(p, fmt)
    if kind == "inspect":
        raise JudgekitError(f"{p}: judgekit does not write Inspect logs; give a .csv, .jsonl, "
                            ".json or .parquet path.")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = new_temp_file(p)
    os.close(fd)
    try:
        if kind == "csv":
            df.to_csv(tmp, index=False)
        elif kind == "jsonl":
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)
        elif kind == "json":
            df.to_json(tmp, orient="records", force_ascii=False, indent=1)
        else:
            df.to_parquet(tmp, index=False)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return p


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write a text file atomically."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = new_temp_file(p)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, p)
    return p


def new_temp_file(target: str | Path) -> tuple[int, str]:
    """A new, exclusive temp file beside ``target`` to write and then ``os.replace`` onto it:
    ``(fd, path)``.

    Unlike :func:`tempfile.mkstemp` (always 0600, which the rename would keep), it gets the mode
    any new file gets: 0666 less the umask (0644 under the usual 022), or the mode of ``target``
    when that file exists, so rewriting a report neither hides it from its readers nor widens
    what its owner narrowed.
    """
    p = Path(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = p.parent / f".{p.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        try:
            st = os.stat(p)
        except OSError:  # no such file yet: the umask has applied
            return fd, str(tmp)
        if stat.S_ISREG(st.st_mode) and hasattr(os, "fchmod"):
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
        return fd, str(tmp)
    raise FileExistsError(f"{p.parent}: cannot create a temp file for {p.name}")


def _short(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
