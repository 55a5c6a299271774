"""Horizontal overflow of a page in headless Chromium: every element wider than the viewport
(its box's right edge past the viewport's width) that is not inside a scroll box
(``overflow-x: auto|scroll``), as the reader would see it: cut off, or a page that scrolls sideways.

The report forbids scripts (Content-Security-Policy); the check copies the page without that
meta tag, appends a script that measures every element, and reads its answer from the DOM.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

MEASURE = r"""
<script>
(function () {
  function inScroll(el) {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX === 'auto' || s.overflowX === 'scroll') return true;
    }
    return false;
  }
  const W = document.documentElement.clientWidth, bad = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if ((r.right > W + 0.5 || r.left < -0.5) && !inScroll(el)) {
      bad.push({tag: el.tagName, right: Math.round(r.right), text: (el.textContent || '').slice(0, 80)});
    }
  }
  const scrolled = [];
  for (const el of document.querySelectorAll('body *')) {
    const s = getComputedStyle(el);
    if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
      let h = el.previousElementSibling;
      while (h && !/^H[1-6]$/.test(h.tagName)) h = h.previousElementSibling;
      const head = el.querySelector('tr');
      scrolled.push({heading: h ? h.textContent : '', header: head ? head.textContent.slice(0, 120) : ''});
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'jk-overflow';
  pre.textContent = JSON.stringify({width: W, page: document.documentElement.scrollWidth, bad: bad, scrolled: scrolled});
  document.body.appendChild(pre);
})();
</script>"""


def overflow(browser: Any, page: Path, out_dir: Path, width: int = 1024) -> dict[str, Any]:
    """``{"width", "page" (the document's scroll width), "bad": [{tag, right, text}],
    "scrolled": [{heading, header}]}`` of ``page`` at a viewport ``width`` px wide: ``bad`` the
    elements past the viewport outside any scroll box, ``scrolled`` the scroll boxes whose content
    is wider than the box (columns the reader must scroll to), with the nearest heading before
    each and its first row's text."""
    src = page.read_text(encoding="utf-8")
    src = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", src)
    assert "</body>" in src, f"{page} has no </body>"
    probe = out_dir / f"{page.parent.name}-{page.stem}-{width}.measure.html"
    probe.write_text(src.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    proc = browser.run(probe, "--dump-dom", f"--window-size={width},900")
    m = re.search(r'<pre id="jk-overflow">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"the measuring script did not run on {page}: {proc.stderr[-1500:]}"
    return json.loads(html.unescape(m.group(1)))
