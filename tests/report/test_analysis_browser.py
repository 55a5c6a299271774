"""The analysis pages render in a real headless browser, with their drift charts, without console
errors, and an UNTRUSTED run shows its stamp."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from judgekit.cli import main

pytest_plugins = ["tests.analysis_fixtures", "tests.report_fixtures"]

pytestmark = pytest.mark.browser


def _analyze(*args: object) -> None:
    r = CliRunner().invoke(main, ["analyze", *map(str, args), "--quiet"], catch_exceptions=False)
    assert r.exit_code == 0, r.output


def _ink_rows(png) -> int:
    """Rows of the screenshot that hold anything other than white (text, lines, colours)."""
    from tests.report_fixtures import decode_png

    _, _, rows = decode_png(png)
    return sum(1 for row in rows if any(b < 235 for b in row))


def test_calibration_page_renders_with_drift_charts(report_browser, synthetic_store, tmp_path):
    out = tmp_path / "cal"
    _analyze("calibration", "--judge", "judge-a", "--verdict", synthetic_store["restrictiveness"],
             "--harm-column", "severity", "--bootstrap", "100", "--store",
             synthetic_store["store"], "--out", out)
    page = out / "calibration.html"
    dom, console = report_browser.dump_dom(page)
    assert console == []
    assert "Drift(t | tier) — synth-drifting" in dom
    assert dom.count("<svg") >= 6
    # one line per model in the Drift(t) chart: three stroked paths after its title
    drift_chart = dom.split("Drift(t) = RCE_t − RCE_1, per model</title>", 1)[1].split("</svg>")[0]
    assert drift_chart.count("<path") == 3
    png, console = report_browser.screenshot(page, tmp_path / "cal.png")
    assert console == []
    assert _ink_rows(png) > 600  # of 2400: a page of text and charts, not a blank one


def test_untrusted_distribution_page_shows_the_stamp(report_browser, synthetic_store, tmp_path):
    out = tmp_path / "dist"
    _analyze("distribution", "--judge", "judge-b", "--rubric", "restrictiveness", "--untrusted",
             "--bootstrap", "20", "--store", synthetic_store["store"], "--out", out)
    dom, console = report_browser.dump_dom(out / "distribution.html")
    assert console == []
    assert 'class="stamp"' in dom and "UNTRUSTED: computed from judge ratings" in dom
