"""Escaping and formatting helpers shared by the HTML, SVG and Markdown renderers.

Every piece of text that reaches a report (model responses, annotator ids, slice keys taken from
item metadata, check details) passes through one of these functions: :func:`esc` for HTML and
SVG (text and attribute values alike), :func:`md_escape` for Markdown. Numbers go through
:func:`fmt_num` so that NaN, None and infinities never print as a number.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any, TypeGuard

_HTML_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&#x27;",
}
_HTML_RE = re.compile(r"[&<>\"']")
# Characters that are not allowed in XML 1.0 (an SVG inside HTML is parsed leniently, but a
# standalone .svg is XML): C0 controls except tab/newline/carriage return, and lone surrogates.
_XML_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# CommonMark lets a backslash escape any ASCII punctuation; these are the ones that can start
# markup inside a line (emphasis, links/images, raw HTML, table cells, code, strikethrough,
# entities). An underscore between two letters/digits can neither open nor close emphasis
# (CommonMark's flanking rules), so ``string_match`` stays readable in logs; any other underscore
# is escaped.
_MD_RE = re.compile(r"([\\`*\[\]<>|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# A value can start a line or follow a list marker ("- " + a note): there ``# x`` would be a
# heading, ``- x``, ``+ x`` or ``1. x`` a list, ``---``/``===`` a rule or a heading underline.
# A backslash before the marker keeps the character and drops its meaning.
_MD_BLOCK_START = re.compile(r"^(?:[#+=-](?=[\s#+=-]|$)|\d{1,9}[.)](?=\s|$))")
# C1 controls and DEL: not Markdown, but act on a terminal a .md file is printed on.
_MD_CTRL = re.compile(r"[\x7f-\x9f]")


def esc(text: Any) -> str:
    """Escape ``text`` for HTML/SVG element content and quoted attribute values.

    ``None`` becomes the empty string; anything else is ``str()``-ed first. Characters XML does
    not allow (NUL and other control characters) become U+FFFD, so the output is also valid in a
    standalone SVG file.

    >>> esc('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    if text is None:
        return ""
    s = _XML_BAD.sub("\ufffd", str(text))
    return _HTML_RE.sub(lambda m: _HTML_ESCAPES[m.group(0)], s)


def md_escape(text: Any, *, table: bool = True) -> str:
    """Escape ``text`` for Markdown so it renders as literal text, wherever it is put inline
    (a table cell, a heading, a list item, a sentence; even at the start of a line).

    Markup characters get a backslash (CommonMark), and so does a block marker at the start
    (``#``, ``-``, ``+``, ``=``, ``1.``); leading whitespace is dropped (it would make an indented
    code block), control characters become U+FFFD. With ``table`` (the default) line breaks
    become spaces, so a value stays in its table cell, heading or list item; without it they
    stay line breaks inside one paragraph (blank lines are dropped and every line is escaped as
    a line start), so text can never open a new block.

    >>> md_escape("a|b <i>x</i>")
    'a\\\\|b \\\\<i\\\\>x\\\\</i\\\\>'
    >>> md_escape("# not a heading")
    '\\\\# not a heading'
    """
    if text is None:
        return ""
    s = _MD_CTRL.sub("\ufffd", _XML_BAD.sub("\ufffd", str(text)))
    s = _MD_RE.sub(r"\\\1", s)
    if table:
        lines = [re.sub(r"\s*[\r\n]+\s*", " ", s)]
    else:
        lines = [ln for ln in re.split(r"\r\n|\r|\n", s) if ln.strip()]
    return "\n".join(_MD_BLOCK_START.sub(_escape_marker, ln.lstrip()) for ln in lines)


def _escape_marker(m: re.Match[str]) -> str:
    marker = m.group(0)
    return marker[:-1] + "\\" + marker[-1] if marker[0].isdigit() else "\\" + marker


def md_list(lines: Sequence[str]) -> list[str]:
    """Plain-text lines (e.g. :func:`judgekit.gate.run.explain`'s) as a Markdown list, each line
    escaped (:func:`md_escape`); an indented line becomes an item of the list item above.

    >>> md_list(["UNTRUSTED  j: 1 of 2 checks fail:", "    min_items: 3 vs threshold 10"])
    ['- UNTRUSTED  j: 1 of 2 checks fail:', '  - min_items: 3 vs threshold 10']
    """
    out: list[str] = []
    for line in lines:
        nested = bool(out) and line[:1].isspace()
        out.append(("  - " if nested else "- ") + md_escape(line))
    return out


def anchor(prefix: str, text: Any) -> str:
    """A stable, unique, HTML-safe id for ``text`` (e.g. an item id) under ``prefix``.

    Readable characters are kept; a short hash of the full text keeps two ids that differ only
    in dropped characters apart.

    >>> anchor("item", "llama2orig:v2-1")
    'item-llama2orig-v2-1-70672e'
    """
    raw = "" if text is None else str(text)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-")[:60]
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return f"{prefix}-{slug}-{digest}" if slug else f"{prefix}-{digest}"


def is_num(x: object) -> TypeGuard[float]:
    """True for a finite real number (not bool, not NaN, not None)."""
    if isinstance(x, bool) or x is None:
        return False
    try:
        return math.isfinite(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def fmt_num(x: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals, or an em dash when it is missing/undefined."""
    if not is_num(x):
        return "—"
    v = float(x)
    if v == 0:
        v = 0.0  # no "-0.00"
    s = f"{v:.{digits}f}"
    return "0." + "0" * digits if s.lstrip("-") == "0." + "0" * digits else s


def fmt_pct(x: Any, digits: int = 1) -> str:
    """A proportion in [0, 1] as a percentage, or an em dash."""
    if not is_num(x):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


def fmt_int(x: Any) -> str:
    """An integer with thousands separators, or an em dash."""
    if not is_num(x):
        return "—"
    return f"{int(x):,}"


def fmt_fig(f: dict[str, Any] | None, digits: int = 2) -> str:
    """A reported figure ``{"value","low","high","n","undefined"}`` as ``0.81 [0.78, 0.84]``.

    An undefined figure prints as ``undefined (reason)``; a missing one as an em dash.
    """
    if not f:
        return "—"
    v = f.get("value")
    if not is_num(v):
        reason = f.get("undefined")
        return f"undefined ({reason})" if reason else "undefined"
    s = fmt_num(v, digits)
    lo, hi = f.get("low"), f.get("high")
    if is_num(lo) and is_num(hi):
        s += f" [{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"
    return s


def excerpt(text: Any, limit: int = 280) -> str:
    """``text`` with whitespace collapsed, cut to ``limit`` characters with an ellipsis."""
    if text is None:
        return ""
    s = re.sub(r"\s+", " ", str(text)).strip()
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"
