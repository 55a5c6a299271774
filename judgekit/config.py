"""User-written config files (rubrics, policies, panels, sample specs, criteria): reading YAML and
turning validation errors into one sentence that names the key and the fix.

Every such file is validated with pydantic ``extra="forbid"``: a typo is an error, not a no-op.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from judgekit.errors import JudgekitError


def read_yaml_mapping(path: str | Path, *, what: str, expect: str) -> dict[str, Any]:
    """The top-level mapping of a YAML file; ``what`` names the file ("Policy file"), ``expect``
    says what the mapping should hold ("rubric, judges and checks")."""
    p = Path(path)
    if not p.exists():
        raise JudgekitError(f"{what} {p} does not exist; check the path.")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise JudgekitError(f"{what} {p}: invalid YAML{where}; fix the syntax.") from None
    except UnicodeDecodeError:
        raise JudgekitError(f"{what} {p} is not UTF-8 text; save it as UTF-8.") from None
    except IsADirectoryError:
        raise JudgekitError(f"{what} {p} is a folder; give the YAML file.") from None
    if not isinstance(data, dict):
        raise JudgekitError(f"{what} {p}: expected a mapping with {expect} at the top.")
    return data


def format_loc(loc: Sequence[Any]) -> str:
    """``("judges", 2, "modle")`` → ``judges[2].modle``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def describe_error(err: Any, key: str | None = None) -> str:
    """One pydantic error as a phrase: unknown key / missing key / the key and the problem."""
    key = format_loc(err["loc"]) if key is None else key
    if err["type"] == "extra_forbidden":
        return f"unknown key {key!r} (a typo?); remove or rename it"
    if err["type"] == "missing":
        return f"missing required key {key!r}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{key}: {msg}" if key else msg


def first_error(exc: ValidationError) -> str:
    """The most useful validation error of ``exc`` as a phrase (see :func:`describe_error`).

    A misspelt required key shows up twice: as a missing key and as an unknown one. The unknown
    key is what the user wrote, so it is reported, with the missing key it probably means.
    """
    errors = exc.errors()
    missing = {tuple(e["loc"]): e for e in errors if e["type"] == "missing"}
    for err in errors:
        if err["type"] != "extra_forbidden":
            continue
        parent, key = tuple(err["loc"][:-1]), str(err["loc"][-1])
        candidates = [str(loc[-1]) for loc in missing if loc[:-1] == parent]
        close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
        if close:
            return (f"unknown key {format_loc(err['loc'])!r}: a typo of the required key "
                    f"{format_loc((*parent, close[0]))!r}? Rename it")
    return describe_error(errors[0])
