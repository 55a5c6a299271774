"""Render an :class:`~judgekit.analysis.result.AnalysisResult` as JSON, Markdown, HTML and SVG.

Pure string building (the CLI writes the files). Every piece of data text goes through the
report module's escaping (``esc`` for HTML/SVG, ``md_escape`` for Markdown); charts are inline
SVG from :func:`judgekit.report.svg.line_chart`, so the HTML page opens offline.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit import __version__
from judgekit.analysis.columns import display_table
from judgekit.analysis.result import UNTRUSTED, AnalysisResult, Chart, Table
from judgekit.errors import JudgekitError

#: rows of a table shown in the HTML page and Markdown; the JSON and CSV files hold all rows.
_MAX_ROWS = 300


def file_stem(result: AnalysisResult, key: str) -> str:
    """A safe file name stem for a table or chart (keys may hold model names like ``a/b``)."""
    slug = re.sub(r"[^A-Za-z0-9.-]", "_", key)
    slug = re.sub(r"_+", "_", re.sub(r"\.{2,}", "_", slug)).strip("._") or "x"
    return f"{result.kind}-{slug}"


def _file_stems(result: AnalysisResult, keys: list[str]) -> dict[str, str]:
    """A distinct :func:`file_stem` per key: two keys that slug alike (models ``a/b`` and
    ``a_b``) get a short hash of the key appended, so one file never overwrites another."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for key in keys:
        stem = file_stem(result, key)
        if stem in used:
            stem = f"{stem}-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
        used.add(stem)
        out[key] = stem
    return out


def _chart_stems(result: AnalysisResult) -> dict[str, str]:
    """Chart key → file stem of its SVG (``charts/<stem>.svg``)."""
    return _file_stems(result, [c.key for c in result.charts])


def _clean(v: Any) -> Any:
    """A JSON-safe scalar: numpy → Python, NaN/NA → None."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    return v


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-safe dicts."""
    return [{str(k): _clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def to_json(result: AnalysisResult, *, created_at: str | None = None) -> dict[str, Any]:
    """The whole result as one JSON-serialisable dict (every table with all its rows)."""
    return {
        "judgekit_version": __version__,
        "created_at": created_at or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "kind": result.kind,
        "title": result.title,
        "trusted": result.trusted,
        "meta": _clean(result.meta),
        "definitions": result.definitions,
        "notes": result.notes,
        "tables": {
            t.key: {"title": t.title, "description": t.description, "rows": records(t.frame)}
            for t in result.tables
        },
        "charts": {
            c.key: {
                "title": c.title,
                "x_label": c.x_label,
                "y_label": c.y_label,
                "point_fields": list(_POINT_FIELDS),
                "series": _json_points(c.series),
                "overlay": _json_points(c.overlay),
                "layers": list(c.layers) if c.layers else None,
                "n_label": c.n_label,
            }
            for c in result.charts
        },
    }


#: what each element of a chart point in the JSON is.
_POINT_FIELDS = ("x", "y", "low", "high", "n", "undefined")


def _json_points(series: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[list[Any]]]:
    """Chart points as ``[x, y, low, high, n, undefined]`` lists (missing elements null)."""
    width = len(_POINT_FIELDS)
    return {str(k): [[_clean(v) for v in (list(p) + [None] * width)[:width]] for p in pts]
            for k, pts in series.items()}


def _cell(v: Any) -> str:
    v = _clean(v)
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) >= 5e-4 else "0.000"
    return str(v)


def _untrusted_note(result: AnalysisResult) -> str:
    """The note that says why ``result`` is untrusted, from its ``untrusted_reason`` field."""
    return f"{UNTRUSTED}: {result.untrusted_reason}"


def to_markdown(result: AnalysisResult, *, chart_dir: str | None = "charts") -> str:
    """Markdown for papers and CI logs: definitions, notes, tables, links to the chart SVGs."""
    from judgekit.report.escape import md_escape

    out = [f"# {md_escape(result.title)}", ""]
    if not result.trusted:
        out += [f"> **{UNTRUSTED}**: {md_escape(_untrusted_note(result))}", ""]
    out += ["## Definitions", ""]
    out += [f"- **{md_escape(k)}**: {md_escape(v)}" for k, v in result.definitions.items()]
    out.append("")
    if result.notes:
        out += ["## Notes", ""]
        out += [f"- {md_escape(n)}" for n in result.notes]
        out.append("")
    for t in result.tables:
        out += [f"## {md_escape(t.title)}", ""]
        if t.description:
            out += [md_escape(t.description, table=False), ""]
        out += _md_table(t)
        out.append("")
    if chart_dir is not None and result.charts:
        out += ["## Charts", ""]
        stems = _chart_stems(result)
        for c in result.charts:
            out += [f"![{md_escape(c.title)}]({chart_dir}/{stems[c.key]}.svg)", "",
                    md_escape(chart_caption(c, result), table=False), ""]
        out.append("")
    return "\n".join(out)


def _md_table(t: Table) -> list[str]:
    from judgekit.report.escape import md_escape

    frame = t.frame
    if frame.empty:
        return ["(no rows)"]
    heads, cells, numeric = display_table(frame.head(_MAX_ROWS))
    num = set(numeric)
    head = "| " + " | ".join(md_escape(c) for c in heads) + " |"
    sep = "|" + "|".join("---:" if i in num else "---" for i in range(len(heads))) + "|"
    rows = ["| " + " | ".join(md_escape(_cell(v)) for v in row) + " |" for row in cells]
    tail = [f"({len(frame) - _MAX_ROWS} more rows in the JSON and CSV files)"] if len(frame) > _MAX_ROWS else []
    return [head, sep, *rows, *tail]


def _csv_frame(result: AnalysisResult, t: Table) -> pd.DataFrame:
    """The frame written to a table's CSV file. A CSV has no title to stamp, so when the result
    is untrusted every row carries the stamp in a first column ``stamp`` = ``UNTRUSTED``: a
    figure copied or loaded from the file keeps it."""
    if result.trusted:
        return t.frame
    out = t.frame.copy()
    out.insert(0, "stamp", UNTRUSTED, allow_duplicates=True)
    return out


def chart_svg(chart: Chart) -> str:
    """One chart as an SVG string (the one place analysis code draws): its lines, their 95%
    CIs, and the overlay layer when the chart has one."""
    from judgekit.report.svg import LineStyle, line_chart

    return line_chart(
        chart.series,
        title=chart.title,
        x_label=chart.x_label,
        y_label=chart.y_label,
        y_range=chart.y_range,
        hline=chart.hline,
        overlay=chart.overlay,
        layers=chart.layers,
        style=LineStyle(n_label=chart.n_label),
    )


def chart_caption(chart: Chart, result: AnalysisResult) -> str:
    """What a chart's marks are, in words: the interval (``ci_note``, else the result's
    definition of its CI), how many points have none and why, the overlay's layers."""
    from judgekit.report.svg.points import to_points

    note = chart.ci_note or result.definitions.get("CI") or result.definitions.get("interval") or ""
    pts = [p for layer in (chart.series, chart.overlay) for v in layer.values() for p in to_points(v)
           if p.y is not None]
    missing = [p for p in pts if not p.has_ci]
    if pts and len(missing) == len(pts):
        why = sorted({p.undefined for p in missing if p.undefined})
        parts = ["No 95% CI is drawn" + (f": {'; '.join(why)}." if why else " (none was computed).")]
    else:
        parts = ["Band or bars: 95% CI" + (f" ({note})." if note else ".")]
    if missing and len(missing) < len(pts):
        why = sorted({p.undefined for p in missing if p.undefined})
        parts.append(f"{len(missing)} of {len(pts)} points have no CI (hollow marker)"
                     + (f": {'; '.join(why)}." if why else "."))
    if chart.overlay and chart.layers:
        parts.append(f"Solid lines, round markers: {chart.layers[0]}; dashed, square markers: "
                     f"{chart.layers[1]}.")
    parts.append(f"Each point's value, CI and n ({chart.n_label}) are in the tables below.")
    return " ".join(parts)


def to_html(result: AnalysisResult) -> str:
    """A self-contained HTML page: stamp, definitions, notes, charts, then the tables."""
    from judgekit.report.html import esc, page, table

    def table_section(t: Table) -> tuple[str, str]:
        frame = t.frame
        body = []
        if t.description:
            body.append(f"<p>{esc(t.description)}</p>")
        if frame.empty:
            body.append("<p><em>no rows</em></p>")
        else:
            heads, cells, numeric = display_table(frame.head(_MAX_ROWS))
            rows = [[_cell(v) for v in row] for row in cells]
            body.append(table(heads, rows, numeric=numeric))
            if len(frame) > _MAX_ROWS:
                body.append(f"<p class=\"small muted\">{len(frame) - _MAX_ROWS} more rows in the "
                            "JSON and CSV files.</p>")
        return t.title, "".join(body)

    notes = [n for n in result.notes if result.trusted or n != _untrusted_note(result)]
    note_box = ('<div class="note"><ul>' + "".join(f"<li>{esc(n)}</li>" for n in notes)
                + "</ul></div>") if notes else ""
    sections: list[tuple[str, str]] = []
    if result.tables:
        head, body = table_section(result.tables[0])
        sections.append((head, note_box + body))
    elif note_box:
        sections.append(("Notes", note_box))
    if result.charts:
        heading = "Charts" if result.trusted else f"{UNTRUSTED} — Charts"
        sections.append((heading, "".join(
            f"<figure>{chart_svg(c)}<figcaption>{esc(chart_caption(c, result))}</figcaption></figure>"
            for c in result.charts)))
    sections.extend(table_section(t) for t in result.tables[1:])
    about = ["<dl>"]
    for k, v in result.definitions.items():
        about.append(f"<dt><strong>{esc(k)}</strong></dt><dd>{esc(v)}</dd>")
    about.append("</dl>")
    sections.append(("What the figures mean", "".join(about)))
    meta = result.meta
    subtitle = f"rater {meta.get('rater', '?')} · {meta.get('rubric', '?')} · judgekit {__version__}"
    stamp = None if result.trusted else _untrusted_note(result)
    return page(result.title, sections, subtitle=subtitle, stamp=stamp)


# --------------------------------------------------------------------------- writing
def write_results(result: AnalysisResult, out_dir: Path) -> list[Path]:
    """Write ``result`` into ``out_dir``: ``<kind>.json``, ``.md``, ``.html``, one SVG per chart
    under ``charts/`` and one CSV per table. Returns the paths written.

    Everything is rendered before the first file is written, and each file is replaced
    atomically, so a failure leaves the folder as it was, not half written.
    """
    from judgekit.io.tables import write_table, write_text_atomic
    from judgekit.report.analysis import (
        _chart_stems,
        _csv_frame,
        _file_stems,
        chart_svg,
        to_html,
        to_json,
        to_markdown,
    )

    if out_dir.exists() and not out_dir.is_dir():
        raise JudgekitError(f"--out {out_dir} is a file; name a folder.")
    texts = {
        f"{result.kind}.json": json.dumps(to_json(result), indent=1, ensure_ascii=False),
        f"{result.kind}.md": to_markdown(result),
        f"{result.kind}.html": to_html(result),
    }
    stems = _chart_stems(result)
    for c in result.charts:
        texts[f"charts/{stems[c.key]}.svg"] = chart_svg(c)
    written = [write_text_atomic(out_dir / name, text) for name, text in texts.items()]
    table_stems = _file_stems(result, [t.key for t in result.tables])
    for t in result.tables:
        written.append(write_table(_csv_frame(result, t), out_dir / f"{table_stems[t.key]}.csv"))
    return written
