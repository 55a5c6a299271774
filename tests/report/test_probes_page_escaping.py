"""The probes tables escape each cell once: a p-value below 0.001 reads ``< 0.001`` in the page,
never the literal ``&lt; 0.001``, and data text stays escaped."""

from __future__ import annotations

from judgekit.probes.bands import decide
from judgekit.report.probes import html_section


def _doc() -> dict:
    row = {"probe": "stability", "name": "min_stability", "by": "model", "key": "<b>m</b>", "n": 400,
           "estimate": 0.2, "se": 0.02, "detail": "all items", "upper": 1.0}
    rows = decide([row], mode="min", threshold=0.8, min_n=10)
    return {"rubric": "refusal", "reference": "gold", "min_items": 10,
            "judges": [{"judge": "j", "state": rows[0]["state"], "probes": rows}]}


def test_small_p_value_is_escaped_once():
    page = _doc()
    html = html_section(page)
    assert "&amp;lt; 0.001" not in html
    assert "<td>&lt; 0.001</td>" in html or ">&lt; 0.001<" in html
    assert "&lt;b&gt;m&lt;/b&gt;" in html and "<b>m</b>" not in html
