"""Self-contained HTML pages: the shared pieces of the judge report and the analysis pages.

:func:`page` wraps sections into one file that opens offline: CSS inline, charts inline SVG, no
JavaScript, no CDN, and a Content-Security-Policy that forbids scripts and remote loads, as a
second line of defence behind escaping (:func:`esc`) of every piece of data text. :func:`table`
builds the tables inside those sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit import __version__
from judgekit.report.escape import anchor, esc

__all__ = ["esc", "page", "table"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)

_CSS = """
:root { --ink:#1f2328; --muted:#57606a; --line:#d0d7de; --soft:#f6f8fa; --pass:#1a7f37;
  --pass-bg:#dafbe1; --fail:#cf222e; --fail-bg:#ffebe9; --none:#6e7781; --none-bg:#eaeef2;
  --warn-bg:#fff8c5; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 40px 0 10px; padding-top: 12px; border-top: 2px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
p { margin: 6px 0 10px; }
a { color: var(--accent); }
.sub { color: var(--muted); margin: 0 0 16px; }
nav.toc { font-size: 13px; color: var(--muted); margin: 8px 0 0; }
nav.toc a { margin-right: 12px; white-space: nowrap; }
.stamp { background: var(--fail); color: #fff; font-weight: 700; padding: 10px 14px; border-radius: 6px;
  margin: 12px 0; letter-spacing: .02em; }
.banner { border-radius: 8px; padding: 14px 18px; margin: 12px 0 8px; border: 1px solid var(--line); }
.banner.pass { background: var(--pass-bg); border-color: #4ac26b; }
.banner.fail { background: var(--fail-bg); border-color: #ff8182; }
.banner.none { background: var(--none-bg); }
.banner.mixed { background: var(--warn-bg); border-color: #d4a72c; }
.banner .big { font-size: 18px; font-weight: 650; margin: 0 0 6px; }
.banner ul { margin: 6px 0 0; padding-left: 20px; }
.banner li { margin: 4px 0; }
.checks { margin: 2px 0 0; padding-left: 18px; font-size: 14px; }
.pill { display: inline-block; font-size: 12px; font-weight: 700; padding: 1px 8px; border-radius: 999px;
  text-transform: uppercase; letter-spacing: .03em; vertical-align: 1px; white-space: nowrap; }
.pill.pass { background: var(--pass); color: #fff; }
.pill.fail { background: var(--fail); color: #fff; }
.pill.none { background: var(--none); color: #fff; }
.pill.warn { background: #9a6700; color: #fff; }
.note { background: var(--warn-bg); border-radius: 6px; padding: 8px 12px; font-size: 14px; margin: 8px 0; }
.note ul { margin: 0; padding-left: 18px; }
.muted { color: var(--muted); }
.small { font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 14px; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
th { min-width: 3.5em; }
tr.bad td { background: #fff5f5; }
tr.warn td { background: var(--warn-bg); }
td.text { max-width: 560px; overflow-wrap: anywhere; white-space: pre-wrap; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft);
  padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; margin: 8px 0; }
.charts > figure { margin: 0; flex: 1 1 420px; min-width: 0; }
figure { margin: 8px 0; }
figcaption { font-size: 13px; color: var(--muted); margin-top: 2px; }
.jk-chart { display: block; }
.item { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.item:target { outline: 3px solid var(--accent); }
tr:target td { background: #ddf4ff; }
footer { margin-top: 48px; color: var(--muted); font-size: 13px; }
@media print { h2 { break-before: auto; } .charts > figure { break-inside: avoid; }
  .scroll { overflow: visible; } table { font-size: 11px; } }
"""


def page(
    title: str,
    sections: list[tuple[str, str]],
    *,
    subtitle: str | None = None,
    stamp: str | None = None,
    csp: bool = True,
) -> str:
    """One self-contained HTML page: inline CSS, no JavaScript, no remote resource.

    Parameters
    ----------
    title : the page title (escaped here).
    sections : ``(heading, body)`` pairs; the heading is text (escaped here), the body is
        already-safe HTML (build it with :func:`esc`, :func:`table` and :mod:`judgekit.report.svg`).
        Each section gets an id from its heading and a link in the table of contents.
    subtitle : a line of text under the title (escaped).
    stamp : a red banner on top of the page (escaped), e.g. ``"UNTRUSTED: ..."`` when an
        analysis was forced to run on ratings from a judge without a passing verdict.
    csp : add a Content-Security-Policy that forbids every script and remote load.

    Example: ``page("Refusal rates", [("Per model", svg.bar_chart(...))])``.
    """
    ids = [anchor("s", h) for h, _ in sections]
    toc = " ".join(f'<a href="#{i}">{esc(h)}</a>' for i, (h, _) in zip(ids, sections, strict=True))
    meta_csp = f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">' if csp else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        meta_csp,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="judgekit {esc(__version__)}">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>{esc(title)}</h1>",
    ]
    if subtitle:
        parts.append(f'<p class="sub">{esc(subtitle)}</p>')
    if stamp:
        parts.append(f'<div class="stamp" role="alert">{esc(stamp)}</div>')
    if len(sections) > 1:
        parts.append(f'<nav class="toc" aria-label="contents">{toc}</nav>')
    for sid, (heading, body) in zip(ids, sections, strict=True):
        parts.append(f'<section id="{sid}"><h2>{esc(heading)}</h2>{body}</section>')
    parts.append(f'<footer>Made by judgekit {esc(__version__)}. This file is self-contained: it opens offline.</footer>')
    parts.append("</main></body></html>")
    return "\n".join(p for p in parts if p)


def _header_html(text: Any) -> str:
    """A column header, escaped, that may break after ``_`` and ``/`` as well as at spaces
    (``full_<wbr>compliance P``): long label names then wrap instead of widening the table."""
    return esc(text).replace("_", "_<wbr>").replace("/", "/<wbr>")


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    numeric: Sequence[int] = (),
    row_ids: Sequence[str | None] | None = None,
    row_classes: Sequence[str | None] | None = None,
    raw: Sequence[int] = (),
    text_cols: Sequence[int] = (),
    caption: str | None = None,
    table_id: str | None = None,
) -> str:
    """An HTML table. Cells are escaped unless their column index is in ``raw``.

    ``numeric`` columns are right-aligned; ``text_cols`` wrap long text (model responses).
    """
    num, rawset, textset = set(numeric), set(raw), set(text_cols)
    tid = f' id="{esc(table_id)}"' if table_id else ""
    out = [f'<div class="scroll"><table{tid}>']
    if caption:
        out.append(f"<caption class=\"small muted\">{esc(caption)}</caption>")
    if any(header):
        out.append("<thead><tr>" + "".join(
            f'<th{" class=num" if i in num else ""}>{_header_html(h)}</th>' for i, h in enumerate(header)) + "</tr></thead>")
    out.append("<tbody>")
    for k, row in enumerate(rows):
        rid = row_ids[k] if row_ids else None
        rcl = row_classes[k] if row_classes else None
        attrs = (f' id="{esc(rid)}"' if rid else "") + (f' class="{esc(rcl)}"' if rcl else "")
        cells = []
        for i, v in enumerate(row):
            cls = "num" if i in num else ("text" if i in textset else "")
            c = f' class="{cls}"' if cls else ""
            cells.append(f"<td{c}>{v if i in rawset else esc(v)}</td>")
        out.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)
