"""Single values as Label Studio and pandas hand them over: empty cells, numbers, annotators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgekit.schema import is_missing

__all__ = ["as_float", "is_missing", "rater_name"]


def as_float(v: Any) -> float:
    """``v`` as a number for ordering (an id, a count); anything that is not one counts as 0."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def rater_name(user: Mapping[str, Any]) -> str:
    """A Label Studio user's stable rater id: email, else username."""
    for key in ("email", "username"):
        v = str(user.get(key) or "").strip()
        if v:
            return v
    return ""
