"""The judge report as JSON: what the HTML and Markdown say, as data, for CI and scripts.

The document holds the summary (the verdict in words, the headline figures per judge), the full
agreement report and verdict it was built from, and the extras. It is strict JSON: NaN and
infinities become ``null`` (``json.loads`` in any language reads it).
"""

from __future__ import annotations

import json
import math
from typing import Any

from judgekit import __version__

__all__ = ["SCHEMA_VERSION", "dumps", "jsonable", "report_json"]

#: bumped when a key of the report JSON changes meaning or disappears.
SCHEMA_VERSION = 1


def jsonable(obj: Any) -> Any:
    """``obj`` with NaN/inf → None, tuples → lists, numpy scalars → Python numbers, keys → str."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    item = getattr(obj, "item", None)  # numpy scalar
    if callable(item):
        try:
            return jsonable(item())
        except (TypeError, ValueError):
            pass
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return str(obj)


def report_json(
    agreement: dict[str, Any],
    verdict: dict[str, Any] | None,
    summary: dict[str, Any],
    *,
    extras: dict[str, Any] | None = None,
    created_at: str = "",
) -> dict[str, Any]:
    """The report document (a JSON-ready dict)."""
    return jsonable(
        {
            "judgekit_version": __version__,
            "report_schema": SCHEMA_VERSION,
            "created_at": created_at,
            "rubric": summary["rubric"],
            "rubric_hash": summary["rubric_hash"],
            "passed": summary["verdict"]["passed"],
            "trusted": summary["trusted"],
            "summary": summary,
            "agreement": agreement,
            "verdict": verdict,
            "extras": extras or {},
        }
    )


def dumps(doc: dict[str, Any]) -> str:
    """Strict, readable JSON text (UTF-8, indented, no NaN)."""
    return json.dumps(jsonable(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
