"""The report in a real headless browser (Debian's chromium): it renders, logs no console error,
and planted markup in model text stays text.

Each negative check has a positive control, so it can fail: the same browser run on a page with a
real script does change the title and does log to the console.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from judgekit.report import write_report
from judgekit.report.escape import anchor
from judgekit.report.html import page

pytest_plugins = ["tests.report_fixtures"]
# the first test may install chromium with apt-get (a fresh CI machine): allow for the download
pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]


# short local names for the session-wide report_* fixtures
@pytest.fixture()
def agreement(report_agreement):
    return report_agreement


@pytest.fixture()
def verdict(report_verdict):
    return report_verdict


@pytest.fixture()
def extras(report_extras):
    return report_extras


@pytest.fixture()
def planted(report_planted):
    return report_planted


@pytest.fixture(scope="session")
def browser(report_browser):
    return report_browser


TITLE = "judgekit report — refusal@1"


def _strip_csp(html: str) -> str:
    """The report without its Content-Security-Policy: escaping alone must keep scripts out."""
    start = html.index('<meta http-equiv="Content-Security-Policy"')
    end = html.index(">", start) + 1
    return html[:start] + html[end:]


class Dom(HTMLParser):
    """Title, elements, and the cells of one table, from chromium's serialised DOM."""

    def __init__(self, table_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.table_id = table_id
        self.title = ""
        self.tags: list[str] = []
        self._in_title = False
        self._depth = 0  # > 0 while inside the table
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "title" and "svg" not in self.tags:  # the page's title, not a chart's tooltip
            self._in_title = True
        if tag == "table" and (self._depth or a.get("id") == self.table_id):
            self._depth += 1
        if self._depth and tag == "tr":
            self.rows.append([])
        if self._depth and tag == "td":
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag == "table" and self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._depth and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def test_browser_runs_scripts_and_reports_console_errors(browser, tmp_path):
    # positive control: without it, "the planted script did not run" could not fail
    p = tmp_path / "control.html"
    p.write_text("<!DOCTYPE html><title>orig</title><p>x</p><script>document.title='pwned';"
                 "throw new Error('boom')</script>", encoding="utf-8")
    dom, console = browser.dump_dom(p)
    assert "<title>pwned</title>" in dom
    assert any("Uncaught Error: boom" in ln for ln in console)


def test_csp_alone_blocks_an_inline_script_and_says_so(browser, tmp_path):
    p = tmp_path / "csp.html"
    p.write_text(page("orig", [("s", "<script>document.title='pwned'</script>")]), encoding="utf-8")
    dom, console = browser.dump_dom(p)
    assert "<title>orig</title>" in dom
    assert any("Content Security Policy" in ln for ln in console)


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-only"])
def test_planted_markup_stays_text(browser, tmp_path, agreement, verdict, extras, planted, csp):
    paths = write_report(tmp_path, agreement, verdict, extras=extras)
    html_path = paths["html"]
    if not csp:
        html_path.write_text(_strip_csp(html_path.read_text(encoding="utf-8")), encoding="utf-8")
    dom_text, console = browser.dump_dom(html_path)
    assert console == []  # no console error, no CSP violation: nothing tried to run
    dom = Dom(anchor("disagreements", "string_match"))
    dom.feed(dom_text)
    assert dom.title == TITLE  # the planted document.title=... never ran
    assert "script" not in dom.tags and "img" not in dom.tags
    # the planted </table></td></tr> did not close the table: one header row + one data row,
    # and the response cell holds the whole planted text
    assert len(dom.rows) == 2
    assert dom.rows[1][0] == "m1:7" and dom.rows[1][-1] == planted.text
    assert planted.key in dom_text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"')


def test_screenshot_is_not_blank_and_shows_the_verdict(browser, tmp_path, agreement, verdict, extras):
    from tests.report_fixtures import decode_png

    paths = write_report(tmp_path, agreement, verdict, extras=extras)
    shot, console = browser.screenshot(paths["html"], tmp_path / "shot.png", size="1280,1400")
    assert console == []
    width, height, rows = decode_png(shot)
    assert (width, height) == (1280, 1400)
    white = bytes((255, 255, 255))
    pixels = [r[i:i + 3] for r in rows[::4] for i in range(0, len(r), 12)]
    inked = sum(p != white for p in pixels) / len(pixels)
    assert inked > 0.05, f"only {inked:.1%} of the page is not white"
    assert len(set(pixels)) > 50  # text, charts and colours, not a flat page
    # the verdict banner is on screen: one judge trusted, one not -> the "mixed" yellow (#fff8c5)
    assert bytes((0xFF, 0xF8, 0xC5)) in set(pixels)


def test_xstest_report_renders(browser, tmp_path, report_cli, report_xstest_store, xstest_verdict):
    """The report of the shipped data with the real gate, end to end through the CLI."""
    from click.testing import CliRunner

    r = CliRunner().invoke(report_cli, ["report", "--store", str(report_xstest_store), "--rubric", "refusal",
                                        "--verdict", str(xstest_verdict), "--by", "model", "--out", str(tmp_path),
                                        "--resamples", "100"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    shot, console = browser.screenshot(Path(tmp_path / "report.html"), tmp_path / "xstest.png", size="1280,1000")
    assert console == []
    from tests.report_fixtures import decode_png

    _, _, rows = decode_png(shot)
    white = bytes((255, 255, 255))
    pixels = [r[i:i + 3] for r in rows[::4] for i in range(0, len(r), 12)]
    assert sum(p != white for p in pixels) / len(pixels) > 0.05
