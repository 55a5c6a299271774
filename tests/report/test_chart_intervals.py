"""Charts a reader can trust: every line chart point carries its 95% CI (band or whiskers) and n,
a missing CI says why, two layers can be overlaid, and analysis tables show intervals as one
readable column."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest

from judgekit.analysis.columns import ci_columns, display_table, interval_text, points
from judgekit.analysis.result import AnalysisResult, Chart, Table
from judgekit.report import svg
from judgekit.report.analysis import chart_caption, chart_svg, to_html, to_json, to_markdown

NS = "{http://www.w3.org/2000/svg}"


def parse(s: str) -> ET.Element:
    assert s.startswith("<svg") and s.endswith("</svg>")
    return ET.fromstring(s)


def tips(root: ET.Element) -> list[str]:
    return [t.text or "" for el in root.iter() for t in el.findall(f"{NS}title") if el.tag != f"{NS}svg"]


def ys_of_polygon(el: ET.Element) -> list[float]:
    return [float(p.split(",")[1]) for p in (el.get("points") or "").split()]


# ----------------------------------------------------------------------------- the SVG layer
def test_band_spans_the_interval_of_each_point():
    # y axis fixed to [0, 1]: a point's screen y is linear in its value, so the band's upper
    # edge at x=1 must sit at the screen y of 0.9 and its lower edge at that of 0.7.
    out = svg.line_chart({"m": [(1, 0.8, 0.7, 0.9, 40), (2, 0.6, 0.5, 0.7, 38)]}, title="C(t)",
                         x_label="turn", y_label="C", y_range=(0, 1))
    root = parse(out)
    bands = [p for p in root.iter(f"{NS}polygon") if p.get("class") == "ci-band"]
    assert len(bands) == 1
    circles = {round(float(c.get("cy") or 0), 1): c for c in root.iter(f"{NS}circle") if c.find(f"{NS}title") is not None}
    assert len(circles) == 2
    # screen y of value v: top + h * (1 - v); recover top and h from the two markers (0.8, 0.6)
    (y08, y06) = sorted(circles)[0], sorted(circles)[1]
    h = (y06 - y08) / 0.2
    top = y08 - h * 0.2
    ys = ys_of_polygon(bands[0])
    # points: upper at x1 (0.9), upper at x2 (0.7), lower at x2 (0.5), lower at x1 (0.7)
    expected = [top + h * (1 - v) for v in (0.9, 0.7, 0.5, 0.7)]
    assert np.allclose(ys, expected, atol=0.11)
    # n and the interval are in the tooltip
    t = tips(root)
    assert "m: x = 1, 0.800 [0.700, 0.900], n = 40" in t
    assert "95% CI" in "".join(root.itertext())


def test_many_lines_get_whiskers_and_missing_ci_says_why():
    series = {f"tier {k}": [(1, 0.0, 0.0, 0.0, 10), (2, 0.1 * k, 0.1 * k - 0.05, 0.1 * k + 0.05, 9)]
              for k in range(1, 4)}
    series["tier 4"] = [(1, 0.0, 0.0, 0.0, 5), (2, 0.2, None, None, 1, "one conversation only")]
    root = parse(svg.line_chart(series, title="Drift(t | tier)", x_label="turn", y_label="Drift"))
    assert not [p for p in root.iter(f"{NS}polygon") if p.get("class") == "ci-band"]
    whiskers = [ln for ln in root.iter(f"{NS}line") if ln.get("class") == "ci-whisker"]
    assert len(whiskers) == 7  # 4 lines x 2 points, less the one without an interval
    # the lines are dodged apart, so no two bars share an x (4 at turn 1, 3 at turn 2)
    assert len({ln.get("x1") for ln in whiskers}) == 7
    hollow = [c for c in root.iter(f"{NS}circle") if c.get("fill") == "#ffffff" and c.find(f"{NS}title") is not None]
    assert len(hollow) == 1
    title = hollow[0].find(f"{NS}title")
    assert title is not None and title.text == "tier 4: x = 2, 0.200, no 95% CI: one conversation only, n = 1"
    assert "no 95% CI (see tooltip)" in "".join(root.itertext())


def test_overlay_is_dashed_same_colour_and_named():
    raw = {"model-a": [(1, 0.30, 0.25, 0.35, 100), (2, 0.40, 0.34, 0.46, 100)]}
    corrected = {"model-a": [(1, 0.22, 0.15, 0.29, 100), (2, 0.31, 0.22, 0.40, 100)]}
    root = parse(svg.line_chart(raw, overlay=corrected, layers=("raw", "corrected"), title="refusal rate",
                                x_label="turn", y_label="rate", y_range=(0, 1)))
    paths = list(root.iter(f"{NS}path"))
    assert len(paths) == 2
    solid = [p for p in paths if not p.get("stroke-dasharray")]
    dashed = [p for p in paths if p.get("stroke-dasharray")]
    assert len(solid) == len(dashed) == 1
    assert solid[0].get("stroke") == dashed[0].get("stroke")  # one colour per model
    squares = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert [r.find(f"{NS}title").text for r in squares] == [  # type: ignore[union-attr]
        "model-a: x = 1, 0.220 [0.150, 0.290], n = 100", "model-a: x = 2, 0.310 [0.220, 0.400], n = 100"]
    text = "".join(root.itertext())
    assert "raw: solid, ●" in text and "corrected: dashed, ■" in text
    # two lines: bands for both layers
    assert len([p for p in root.iter(f"{NS}polygon") if p.get("class") == "ci-band"]) == 2


def test_y_axis_makes_room_for_the_intervals():
    # without a fixed range the axis covers the CI bounds, not only the estimates: were the axis
    # [0.1, 0.2], both lower bounds (-0.3, -0.2) would be clamped to the same bottom edge
    root = parse(svg.line_chart({"m": [(1, 0.1, -0.3, 0.5), (2, 0.2, -0.2, 0.6)]}, title="t",
                                x_label="x", y_label="y"))
    band = next(p for p in root.iter(f"{NS}polygon") if p.get("class") == "ci-band")
    up1, up2, lo2, lo1 = ys_of_polygon(band)
    # distinct screen ys, in the order of the values: 0.6 highest, -0.3 lowest, equal steps
    assert up2 < up1 < lo2 < lo1
    assert abs((lo1 - lo2) - (up1 - up2)) < 0.11  # 0.1 apart each, on one linear scale


def test_escaping_in_overlay_names_and_reasons():
    evil = "<script>x</script>"
    out = svg.line_chart({evil: [(1, 0.5, None, None, 3, evil)]}, overlay={evil: [(1, 0.4)]},
                         layers=(evil, evil), title="t", x_label="x", y_label="y")
    assert "<script>" not in out
    parse(out)


# ----------------------------------------------------------------------------- columns
def test_interval_text_and_ci_columns():
    assert interval_text(0.93, 0.91, 0.95, 2) == "0.93 [0.91, 0.95]"
    assert interval_text(0.9312, 0.9087, 0.95, 3) == "0.931 [0.909, 0.950]"
    assert interval_text(0.93, float("nan"), None) == "0.930 (no CI)"
    assert interval_text(None, 0.1, 0.2) == "—"
    f = pd.DataFrame(columns=["model", "mean_rate", "ci_low", "ci_high", "pooled_rate", "share_not_constant",
                              "not_constant_ci_low", "not_constant_ci_high"])
    assert ci_columns(f, "mean_rate") == ("ci_low", "ci_high")
    assert ci_columns(f, "pooled_rate") is None  # no interval: samples of a prompt are not independent
    assert ci_columns(f, "share_not_constant") == ("not_constant_ci_low", "not_constant_ci_high")
    # a bare ci_low belongs to mean_rate only, not to a later "value" column in the same frame
    assert ci_columns(f.assign(value=[]), "value") is None


def test_display_table_folds_intervals_into_readable_columns():
    frame = pd.DataFrame({"model": ["a", "b"], "n_units": [40, 38], "C": [0.93, np.nan],
                          "C_ci_low": [0.91, np.nan], "C_ci_high": [0.95, np.nan],
                          "RCE": [0.1234, 0.2], "RCE_ci_low": [0.1, np.nan], "RCE_ci_high": [0.15, np.nan]})
    heads, rows, numeric = display_table(frame)
    assert heads == ["model", "prompt units", "C [95% CI]", "RCE [95% CI]"]
    assert rows == [["a", 40, "0.930 [0.910, 0.950]", "0.123 [0.100, 0.150]"],
                    ["b", 38, "—", "0.200 (no CI)"]]
    assert numeric == [1, 2, 3]


def _result() -> AnalysisResult:
    frame = pd.DataFrame({"model": ["m", "m"], "turn": [1, 2], "n_units": [30, 30], "C": [0.9, 0.8],
                          "C_ci_low": [0.85, np.nan], "C_ci_high": [0.95, np.nan]})
    chart = Chart("c_by_turn", "C(t)", points(frame, "model", "C"), x_label="turn", y_label="C",
                  y_range=(0.0, 1.0), overlay={"m": [(1, 0.85, 0.8, 0.9, 12), (2, 0.7, 0.6, 0.8, 12)]},
                  layers=("judge", "reference, labelled items"), n_label="conversations")
    return AnalysisResult(kind="calibration", title="t", definitions={"CI": "bootstrap over conversations"},
                          tables=[Table("by_turn", "C(t)", frame)], charts=[chart])


def test_points_carry_interval_n_and_reason():
    res = _result()
    pts = res.charts[0].series["m"]
    assert pts == [(1.0, 0.9, 0.85, 0.95, 30, None), (2.0, 0.8, None, None, 30, "no bootstrap interval (no resample defined it, or none were drawn)")]


def test_pages_show_intervals_caption_and_json_points():
    res = _result()
    md = to_markdown(res)
    assert "| model | turn | prompt units | C \\[95% CI\\] |" in md
    assert "| m | 1 | 30 | 0.900 \\[0.850, 0.950\\] |" in md
    assert "C_ci_low" not in md
    cap = chart_caption(res.charts[0], res)
    assert cap.startswith("Band or bars: 95% CI (bootstrap over conversations).")
    assert "1 of 4 points have no CI (hollow marker): no bootstrap interval (no resample defined it, or none were drawn)." in cap
    assert "dashed, square markers: reference, labelled items." in cap
    html = to_html(res)
    assert "<figcaption>Band or bars: 95% CI" in html and "C_ci_high" not in html
    assert "0.900 [0.850, 0.950]" in html
    j = to_json(res)["charts"]["c_by_turn"]
    assert j["point_fields"] == ["x", "y", "low", "high", "n", "undefined"]
    assert j["series"]["m"][0] == [1.0, 0.9, 0.85, 0.95, 30, None]
    assert j["overlay"]["m"][1] == [2.0, 0.7, 0.6, 0.8, 12, None]
    assert j["layers"] == ["judge", "reference, labelled items"]
    # the CSV/JSON table keeps the machine-readable columns
    assert "C_ci_low" in to_json(res)["tables"]["by_turn"]["rows"][0]
    svg_out = chart_svg(res.charts[0])
    assert svg_out.count('stroke-dasharray="6 4"') >= 1 and "conversations = 12" in svg_out


def test_untrusted_stamp_stays_on_charts_with_intervals():
    res = _result().stamp_untrusted("no verdict")
    html = to_html(res)
    assert "UNTRUSTED — C(t)" in chart_svg(res.charts[0])
    assert "UNTRUSTED — Charts" in html


def test_caption_of_a_chart_without_any_interval_says_so():
    res = _result()
    chart = Chart("x", "x", {"m": [(1, 0.5, None, None, 3, "n_boot = 0: no resamples")]}, x_label="t", y_label="y")
    assert chart_caption(chart, res) == ("No 95% CI is drawn: n_boot = 0: no resamples. Each point's value, "
                                         "CI and n (n) are in the tables below.")
    assert "Hover" not in chart_caption(chart, res)  # no hover hint in static output


def test_overlay_charts_pairs_charts_by_key():
    from judgekit.analysis.overlay import overlay_charts

    raw = [Chart("c_by_turn", "C(t)", {"m": [(1, 0.9, 0.8, 1.0, 10)]}, x_label="turn", y_label="C"),
           Chart("only_raw", "R", {"m": [(1, 0.2)]}, x_label="turn", y_label="R")]
    corrected = [Chart("c_by_turn", "C(t)", {"m": [(1, 0.7, 0.5, 0.9, 10)]}, x_label="turn", y_label="C")]
    out = overlay_charts(raw, corrected, ("raw", "corrected"))
    assert [c.key for c in out] == ["c_by_turn", "only_raw"]
    assert out[0].title == "C(t) — raw vs corrected" and out[0].layers == ("raw", "corrected")
    assert out[0].overlay == {"m": [(1, 0.7, 0.5, 0.9, 10)]}
    assert out[1].overlay == {} and out[1].layers is None
    assert raw[0].overlay == {}  # copies, the inputs are unchanged
    root = parse(chart_svg(out[0]))
    assert len([r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]) == 1  # the square
    with pytest.raises(ValueError, match="layers must be two names"):
        overlay_charts(raw, corrected, ("raw",))  # type: ignore[arg-type]


def test_correction_tables_fold_raw_and_corrected_intervals():
    # the columns of judgekit.analysis.correction.tables: raw with raw_ci_*, corrected with ci_*
    frame = pd.DataFrame({"model": ["a"], "n_total": [500], "n_labelled": [75], "raw": [0.30],
                          "raw_ci_low": [0.26], "raw_ci_high": [0.34], "corrected": [0.22],
                          "ci_low": [0.15], "ci_high": [0.29]})
    heads, rows, _ = display_table(frame)
    assert heads == ["model", "n", "labelled", "raw (judge only) [95% CI]", "corrected [95% CI]"]
    assert rows == [["a", 500, 75, "0.300 [0.260, 0.340]", "0.220 [0.150, 0.290]"]]


def _bars_by_series(root: ET.Element) -> dict[str, list[tuple[float, float, float]]]:
    """Per series (its ``<g data-series>``): each bar as (x, cap left, cap right)."""
    out: dict[str, list[tuple[float, float, float]]] = {}
    for g in root.iter(f"{NS}g"):
        name = g.get("data-series")
        if name is None:
            continue
        caps = [ln for ln in g.iter(f"{NS}line") if ln.get("class") == "ci-cap"]
        for ln in g.iter(f"{NS}line"):
            if ln.get("class") != "ci-whisker":
                continue
            x = float(ln.get("x1") or "nan")
            # the two caps of this bar are centred on its x
            mine = [c for c in caps if abs((float(c.get("x1") or 0) + float(c.get("x2") or 0)) / 2 - x) < 0.11]
            assert len(mine) >= 2
            out.setdefault(name, []).append((x, float(mine[0].get("x1") or 0), float(mine[0].get("x2") or 0)))
    return out


@pytest.mark.parametrize("n_series", [2, 3, 5, 8])
def test_bars_of_several_series_at_one_turn_stand_side_by_side(n_series):
    # n judges with nearly the same figure and interval at each of 6 turns (the per-turn chart of
    # a five-judge panel): drawn at the turn's x, their bars and markers would cover each other.
    series = {f"judge-{j}": [(t, 0.70 + 0.001 * j, 0.58, 0.82, 40) for t in range(1, 7)] for j in range(n_series)}
    root = parse(svg.line_chart(series, title="kappa per turn", x_label="turn", y_label="kappa",
                                y_range=(0, 1), style=svg.LineStyle(ci="whiskers")))
    bars = _bars_by_series(root)
    assert sorted(bars) == sorted(series)
    assert all(len(b) == 6 for b in bars.values())
    for t in range(6):
        at_turn = sorted((bars[name][t] for name in series), key=lambda b: b[0])
        xs = [b[0] for b in at_turn]
        assert len(set(xs)) == n_series  # no two series share an x at one turn
        for left, right in pairwise(at_turn):
            assert left[2] < right[1]  # neighbouring caps do not touch
            if n_series <= 5:  # up to five judges: room for a marker (r 3.5, stroke 1.5) between bars
                assert right[0] - left[0] >= 8.5
    # the groups of two neighbouring turns stay apart: the last bar of a turn left of the first of the next
    for t in range(5):
        assert max(bars[n][t][2] for n in series) < min(bars[n][t + 1][1] for n in series)
    # the legend names every series
    text = "".join(root.itertext())
    assert all(name in text for name in series)


def test_a_lonely_interval_under_band_style_is_dodged_too():
    # two lines (band style), each with one interval no band can show (its neighbours have none):
    # the two bars at x = 2 are drawn as whiskers and must not share an x
    series = {"a": [(1, 0.5), (2, 0.6, 0.5, 0.7, 20), (3, 0.55)],
              "b": [(1, 0.52), (2, 0.61, 0.51, 0.71, 20), (3, 0.56)]}
    root = parse(svg.line_chart(series, title="t", x_label="turn", y_label="y", y_range=(0, 1)))
    bars = _bars_by_series(root)
    assert len(bars["a"]) == len(bars["b"]) == 1
    assert bars["a"][0][2] < bars["b"][0][1]
