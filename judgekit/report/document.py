"""The judge report in three formats: :func:`render_report` and :func:`write_report`.

One call renders the same content (:func:`judgekit.report.summary.summarise`) as a
self-contained HTML page, Markdown and JSON; :func:`write_report` writes ``report.html``,
``report.md`` and ``report.json`` into a folder, each atomically (temporary file + rename), and
only after all three rendered, so a failure leaves the previous report untouched.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit.core.atomic import new_temp_file
from judgekit.errors import JudgekitError
from judgekit.report.html import render_html
from judgekit.report.jsonout import dumps, report_json
from judgekit.report.markdown import render_markdown
from judgekit.report.summary import summarise

__all__ = ["render_report", "write_report"]


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
    html = render_html(agreement, verdict, summary, extras=extras, created_at=when)
    md = render_markdown(agreement, verdict, summary, extras=extras, created_at=when)
    doc = report_json(agreement, verdict, summary, extras=extras, created_at=when)
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
