"""The judge report in three formats: :func:`render_report` and :func:`write_report`.

One call renders the same content (:func:`judgekit.report.summary.summarise`) as a
self-contained HTML page, Markdown and JSON; :func:`write_report` writes ``report.html``,
``report.md`` and ``report.json`` into a folder, each atomically (temporary file + rename), and
only after all three rendered, so a failure leaves the previous report untouched.
"""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.core.atomic import new_temp_file
from judgekit.errors import JudgekitError
from judgekit.report.html import render_html
from judgekit.report.markdown import render_markdown
from judgekit.report.parts import ReportParts
from judgekit.report.summary import summarise

__all__ = [
    "SCHEMA_VERSION", "dumps", "render_report", "write_report",
]


def _check_inputs(agreement: Any, verdict: Any, extras: Any) -> None:
    if not isinstance(agreement, dict) or not isinstance(agreement.get("slices"), list):
        raise JudgekitError(
            "The agreement report must be the dict from agreement_report(...).to_dict() "
            "(with a 'slices' list); build it with `judgekit agree` or agreement_report()."
        )
    if verdict is not None and (not isinstance(verdict, dict) or not isinstance(verdict.get("judges", []), list)):
        raise JudgekitError(
            "The verdict must be the JSON object that `judgekit gate` writes (with a 'judges' list); "
            "pass the verdict.json file it wrote."
        )
    if extras is not None and not isinstance(extras, dict):
        raise JudgekitError("extras must be a dict with optional keys 'costs', 'disagreements', 'sampling'.")


def render_report(
    agreement: dict[str, Any],
    verdict: dict[str, Any] | None,
    *,
    extras: dict[str, Any] | None = None,
    created_at: str | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """Render the judge report: ``(html, markdown, json_document)``.

    Parameters
    ----------
    agreement : ``agreement_report(...).to_dict()``.
    verdict : the verdict dict (``verdict.json`` of ``judgekit gate``) or None (then the report
        says that no judge is trusted yet).
    extras : optional ``{"costs": {judge_id: {"calls", "input_tokens", "output_tokens",
        "cost_usd"}}, "disagreements": [{"item_id", "reference", "judge_id", "judge_label",
        "response_excerpt", ("prompt_excerpt", "humans")}], "sampling": any JSON}``;
        disagreements are shown in the order given (worst first).
    created_at : ISO time written into the report (default: now, UTC).

    Example::

        html, md, doc = render_report(agreement_report(store, rubric=r).to_dict(), verdict)
    """
    _check_inputs(agreement, verdict, extras)
    when = created_at or datetime.now(UTC).isoformat(timespec="seconds")
    summary = summarise(agreement, verdict, extras)
    parts = ReportParts(agreement, verdict, summary, extras or {}, when)
    html, md, doc = render_html(parts), render_markdown(parts), _report_json(parts)
    return html, md, doc


def write_report(
    out_dir: str | Path,
    agreement: dict[str, Any],
    verdict: dict[str, Any] | None,
    *,
    extras: dict[str, Any] | None = None,
    stem: str = "report",
    created_at: str | None = None,
) -> dict[str, Path]:
    """Write ``<stem>.html``, ``<stem>.md`` and ``<stem>.json`` into ``out_dir`` (created if missing).

    Returns ``{"html": path, "markdown": path, "json": path}``. Everything is rendered before
    anything is written, and each file is replaced atomically.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise JudgekitError(f"{out} is a file; --out needs a folder (it is created if missing).")
    html, md, doc = render_report(agreement, verdict, extras=extras, created_at=created_at)
    texts = {"html": (f"{stem}.html", html), "markdown": (f"{stem}.md", md), "json": (f"{stem}.json", dumps(doc))}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgekitError(f"Cannot create the report folder {out} ({exc.strerror}); choose another --out.") from None
    temps: dict[str, str] = {}
    try:
        for key, (name, text) in texts.items():
            fd, tmp = new_temp_file(out / name)
            temps[key] = tmp
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        paths = {}
        for key, (name, _) in texts.items():
            os.replace(temps[key], out / name)
            paths[key] = out / name
    except OSError as exc:
        raise JudgekitError(f"Cannot write the report into {out} ({exc.strerror}); choose another --out.") from None
    finally:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
    return paths


# The judge report as JSON: what the HTML and Markdown say, as data, for CI and scripts.
#
# The document holds the summary (the verdict in words, the headline figures per judge), the full
# agreement report and verdict it was built from, and the extras. It is strict JSON: NaN and
# infinities become ``null`` (``json.loads`` in any language reads it).


#: bumped when a key of the report JSON changes meaning or disappears.
SCHEMA_VERSION = 1


def _jsonable(obj: Any) -> Any:
    """``obj`` with NaN/inf → None, tuples → lists, numpy scalars → Python numbers, keys → str."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    item = getattr(obj, "item", None)  # numpy scalar
    if callable(item):
        try:
            return _jsonable(item())
        except (TypeError, ValueError):
            pass
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return str(obj)


def _report_json(parts: ReportParts) -> dict[str, Any]:
    """The report document (a JSON-ready dict)."""
    agreement, verdict, summary = parts.agreement, parts.verdict, parts.summary
    extras, created_at = parts.extras, parts.created_at
    return _jsonable(
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
    return json.dumps(_jsonable(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
