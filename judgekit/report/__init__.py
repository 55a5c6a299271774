"""Reports: the judge report (HTML, Markdown, JSON) and the chart/page primitives analyses use.

* :func:`render_report` / :func:`write_report` — the judge report from an agreement report and
  a verdict.
* :mod:`judgekit.report.svg` — inline-SVG charts (line, heatmap, interval, bar).
* :mod:`judgekit.report.page` — :func:`~judgekit.report.page.page`, a self-contained page around
  already-safe HTML sections, with :func:`~judgekit.report.page.table` and
  :func:`~judgekit.report.escape.esc` (the three are importable from :mod:`judgekit.report.html`
  too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.report.document import render_report, write_report

# Imported on first use: `import judgekit.report.escape` (the CLI's Markdown escaping) does not
# load the HTML, Markdown and JSON renderers.
_LAZY = {"render_report": "document", "write_report": "document"}

__all__ = ["render_report", "write_report"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
