"""The inline-SVG chart primitives: well-formed, escaped, and drawing what they are given."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from judgekit.report import svg

NS = "{http://www.w3.org/2000/svg}"
EVIL = "<script>alert('x')</script> & \"q\" </svg>"


def parse(s: str) -> ET.Element:
    """Parse as XML: fails if any text broke out of its element."""
    assert s.startswith("<svg") and s.endswith("</svg>")
    return ET.fromstring(s)


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def all_text(root: ET.Element) -> str:
    return " ".join(root.itertext())


def floats(el: ET.Element, attr: str) -> float:
    return float(el.get(attr) or "nan")


# ----------------------------------------------------------------------------- nice_ticks
def test_nice_ticks_round_values():
    # range 1 over ~5 ticks: raw step 0.2 -> step 0.2
    assert svg.nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    # range 2 (-1..1), n=8: raw step 0.25 -> step 0.25
    assert svg.nice_ticks(-1, 1, 8) == [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    # range 130 over 5: raw 26 -> step 50 (1, 2, 2.5, 5 x 10): 0, 50, 100 cover [3, 133]? 150 needed
    assert svg.nice_ticks(3, 133) == [50.0, 100.0]
    assert svg.nice_ticks(5, 5) == [4.0, 4.5, 5.0, 5.5, 6.0]


# ----------------------------------------------------------------------------- line chart
def test_line_chart_escapes_every_text_and_is_well_formed():
    out = svg.line_chart({EVIL: [(1, 0.5), (2, 0.7)]}, title=EVIL, x_label=EVIL, y_label=EVIL)
    root = parse(out)
    assert "<script" not in out
    assert EVIL in all_text(root)  # the text survives, as text
    title = root.find(f"{NS}title")
    assert title is not None and title.text == EVIL


def test_line_chart_points_gaps_and_order():
    out = svg.line_chart(
        {"a": [(1, 0.2), (2, None), (3, 0.9), (4, 0.8)], "b": [(1, 0.5), (2, 0.5)]},
        title="t", x_label="turn", y_label="C", y_range=(0, 1), hline=0.5,
    )
    root = parse(out)
    circles = list(root.iter(f"{NS}circle"))
    # a: 3 finite points, b: 2 -> 5 markers; the missing point is not drawn at 0
    assert len(circles) == 5
    # a's line breaks at the gap: a 1-point segment draws no path, so paths are a[3..4] and b
    assert len(list(root.iter(f"{NS}path"))) == 2
    a = [c for c in circles if "a: " in "".join(c.itertext())]
    by_x = sorted(a, key=lambda c: floats(c, "cx"))
    # y up is screen y down: 0.9 sits higher (smaller cy) than 0.2
    assert floats(by_x[1], "cy") < floats(by_x[0], "cy")
    assert "a" in texts(root) and "b" in texts(root)  # legend
    assert any(el.get("stroke-dasharray") for el in root.iter(f"{NS}line"))  # hline


def test_line_chart_with_no_data_says_so():
    root = parse(svg.line_chart({}, title="empty", x_label="x", y_label="y"))
    assert "no data to draw" in texts(root)
    root = parse(svg.line_chart({"a": [(1, float("nan"))]}, title="nan", x_label="x", y_label="y"))
    assert "no data to draw" in texts(root)
    assert not list(root.iter(f"{NS}circle"))


# ----------------------------------------------------------------------------- heatmap
def test_heatmap_writes_counts_and_row_totals():
    m = [[50, 2, 3], [4, 6, 2], [1, 0, 30]]
    labels = ["comply", EVIL, "refuse"]
    root = parse(svg.heatmap(m, row_labels=labels, col_labels=labels, title="t"))
    t = texts(root)
    for v in (50, 2, 3, 4, 6, 1, 0, 30):
        assert str(v) in t
    # row totals 55, 12, 31 and row shares, e.g. 50/55 = 91%
    assert {"55", "12", "31"} <= set(t)
    assert "91%" in t and "0%" in t
    # a long label is clipped on the chart, its full text kept as the tooltip before it
    assert any(x == EVIL + EVIL[:23] + "…" for x in t)
    assert EVIL in all_text(root)
    cells = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(cells) == 9


def test_heatmap_shading_follows_row_share():
    root = parse(svg.heatmap([[9, 1], [0, 0]], row_labels=["a", "b"], col_labels=["a", "b"], title="t"))
    cells = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    fills = [c.get("fill") or "" for c in cells]
    # 90% of row a is darker than 10%; an empty row stays white
    def lum(h: str) -> int:
        return sum(int(h[i:i + 2], 16) for i in (1, 3, 5))
    assert lum(fills[0]) < lum(fills[1])
    assert fills[2] == fills[3] == "#ffffff"


def test_heatmap_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="2x2 but got 3 row labels"):
        svg.heatmap([[1, 2], [3, 4]], row_labels=["a", "b", "c"], col_labels=["a", "b"], title="t")


# ----------------------------------------------------------------------------- interval chart
def _row(label, value, low, high, n=100, ceiling=None):
    return {"label": label, "value": value, "low": low, "high": high, "n": n, "ceiling": ceiling}


def test_interval_chart_positions_ceiling_thresholds_and_undefined():
    rows = [_row("all", 0.8, 0.7, 0.9, 2239, 0.95), _row("low", 0.2, 0.1, 0.3), _row(EVIL, None, None, None, 5)]
    out = svg.interval_chart(rows, title="kappa", x_range=(0, 1), reference_lines={"gate <min>": 0.6})
    root = parse(out)
    dots = [c for c in root.iter(f"{NS}circle") if c.find(f"{NS}title") is not None]
    assert len(dots) == 2  # the undefined row has no dot
    assert floats(dots[0], "cx") > floats(dots[1], "cx")  # 0.8 right of 0.2
    diamonds = list(root.iter(f"{NS}polygon"))
    assert len(diamonds) == 2  # the ceiling of row 1 + its legend mark
    t = texts(root)
    assert "0.80 [0.70, 0.90]" in t and "2,239" in t
    assert "undefined" in t
    assert "gate <min> = 0.60" in t
    thr = [ln for ln in root.iter(f"{NS}line") if ln.find(f"{NS}title") is not None]
    assert len(thr) == 1
    # the threshold line sits between the two dots (0.2 < 0.6 < 0.8)
    assert floats(dots[1], "cx") < floats(thr[0], "x1") < floats(dots[0], "cx")
    assert EVIL in all_text(root)


def test_interval_chart_clamps_out_of_range_and_rejects_bad_range():
    root = parse(svg.interval_chart([_row("neg", -0.5, -0.6, -0.4)], title="t", x_range=(0, 1)))
    assert "◀" in texts(root)
    with pytest.raises(ValueError, match="low < high"):
        svg.interval_chart([], title="t", x_range=(1, 0))


# ----------------------------------------------------------------------------- bar chart
def test_bar_chart_groups_series_and_percentages():
    groups: dict[str, dict[str, float | None]] = {"full_refusal": {"judge": 0.30, "humans": 0.22}, "full_compliance": {"judge": 0.7, "humans": None},
              EVIL: {"judge": 0.0}}
    root = parse(svg.bar_chart(groups, title="labels"))
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(bars) == 4  # the None value draws no bar
    t = texts(root)
    assert {"30%", "22%", "70%", "0%"} <= set(t)
    assert "judge" in t and "humans" in t
    tall = {("".join(b.itertext())): floats(b, "height") for b in bars}
    assert tall["full_refusal — judge: 30%"] > tall["full_refusal — humans: 22%"]
    assert math.isclose(tall["full_compliance — judge: 70%"] / tall["full_refusal — judge: 30%"], 7 / 3, rel_tol=0.02)
    assert EVIL in all_text(root)


def test_bar_chart_plain_numbers_when_not_shares():
    root = parse(svg.bar_chart({"a": {"x": 12.5}, "b": {"x": 3}}, title="counts"))
    assert "12.50" in texts(root)
    assert not any(re.fullmatch(r"\d+%", t) for t in texts(root))
