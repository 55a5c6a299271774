"""Single values as Label Studio and pandas hand them over: empty cells, numbers, annotators, and
the checks that keep a value exactly as written or refuse it (ids, times, conversations)."""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from judgekit.store.schema import is_missing

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


# ------------------------------------------------- values checked, kept exactly or refused
def excerpt(v: Any, limit: int = 40) -> str:
    """``repr(v)`` cut to ``limit`` characters (a message never quotes a whole long value)."""
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def kind(v: Any) -> str:
    """What a JSON value is, for a message: ``a list``, ``an object``, ``a number``, …"""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"{str(v).lower()} (a JSON boolean)"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list | tuple):
        return "a list"
    if isinstance(v, int | float):
        return f"the number {excerpt(v)}"
    if isinstance(v, str):
        return f"the text {excerpt(v)}"
    return f"a {type(v).__name__}"


def text_problem(v: str) -> str | None:
    """Why text cannot be an id (or an annotator's name) as written: white space at either end,
    a control character; ``None`` if it can."""
    if v != v.strip():
        return f"{excerpt(v)} has white space at the {'start' if v[:1].isspace() else 'end'}"
    bad = next((c for c in v if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        return f"{excerpt(v)} contains the control character {bad!r}"
    return None


def id_problem(v: Any) -> str | None:
    """Why ``v`` is not an id as Label Studio writes one (text, or a whole JSON number); ``None``
    if it is. The reason reads after the key: ``'item_id' is the number 1.5, not text …``,
    ``'item_id' ' a' has white space at the start``."""
    if isinstance(v, bool) or not isinstance(v, int | str):
        return f"is {kind(v)}, not text or a whole number"
    return text_problem(v) if isinstance(v, str) else None


def timestamp(v: Any) -> float | str:
    """Seconds since 1970 from an export's time (a number, or ISO 8601 with its zone, as Label
    Studio writes ``2024-05-01T10:00:00.123456Z``); 0.0 for none; else why not (a str)."""
    if v is None or v == "":
        return 0.0
    if isinstance(v, bool):
        return f"is {kind(v)}, not a time"
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else f"is {kind(v)}, not a time"
    if isinstance(v, str):
        try:
            when = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            return f"{excerpt(v)} is not an ISO 8601 time"
        if when.utcoffset() is None:
            return f"{excerpt(v)} has no time zone"
        return when.timestamp()
    return f"is {kind(v)}, not a time"


def messages_problem(v: Any, name: str = "messages") -> str | None:
    """Why ``v`` is not a conversation: a list of ``{role, content}`` objects (or its JSON
    text), ``content`` text or a list of content parts, ``role`` non-empty text; ``None`` if it is one
    (or absent). The reason names the key (``name``, e.g. ``data.messages[2].content``)."""
    if v is None:
        return None
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except (ValueError, RecursionError):
            return f"'{name}' is text that is not a JSON list of {{role, content}} objects"
        if not isinstance(v, list):
            return f"'{name}' is JSON text that is not a list of {{role, content}} objects"
    if not isinstance(v, list):
        return f"'{name}' is {kind(v)}, not a list of {{role, content}} objects"
    for k, m in enumerate(v):
        if not isinstance(m, dict) or "content" not in m:
            return f"'{name}[{k}]' is {kind(m)}, not a {{role, content}} object"
        if not isinstance(m["content"], str | list):
            return f"'{name}[{k}].content' is {kind(m['content'])}, not text"
        if "role" not in m or m["role"] == "":
            return f"'{name}[{k}]' has no role (who speaks: user, assistant, system)"
        if not isinstance(m["role"], str):
            return f"'{name}[{k}].role' is {kind(m['role'])}, not text"
    return None
