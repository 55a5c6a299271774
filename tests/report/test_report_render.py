"""The judge report: what it says (verdict in words, figures), escaping, the three formats, files."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser

import pytest

from judgekit.errors import JudgekitError
from judgekit.report import render_report, write_report
from judgekit.report.escape import anchor, esc, fmt_fig, md_escape
from judgekit.report.html import page
from judgekit.report.summary import comparison, headline_metric, summarise

pytest_plugins = ["tests.report_fixtures"]


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


class Tags(HTMLParser):
    """Collects start tags and text, the way a browser's tokenizer sees the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Tags:
    p = Tags()
    p.feed(html)
    p.close()
    return p


# ----------------------------------------------------------------------------- escaping
def test_esc_and_md_escape():
    assert esc("<a href='x'>&\"</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&quot;&lt;/a&gt;"
    assert esc(None) == ""
    assert esc("nul\x00byte") == "nul\ufffdbyte"
    assert md_escape("a|b\n<script>*x*</script>") == "a\\|b \\<script\\>\\*x\\*\\</script\\>"
    # intraword underscores cannot make emphasis and stay; the others are escaped
    assert md_escape("string_match") == "string_match"
    assert md_escape("_x_ a__b") == "\\_x\\_ a\\_\\_b"


def test_anchor_is_safe_and_unique():
    a, b = anchor("item", "a:b"), anchor("item", "a;b")
    assert a != b  # same slug "a-b", different hash
    assert re.fullmatch(r"item-a-b-[0-9a-f]{6}", a)
    assert re.fullmatch(r"item-[0-9a-f]{6}", anchor("item", "<>"))


def test_fmt_fig():
    assert fmt_fig({"value": 0.8123, "low": 0.7, "high": 0.9, "n": 5, "undefined": None}) == "0.81 [0.70, 0.90]"
    assert fmt_fig({"value": None, "n": 5, "undefined": "one category"}) == "undefined (one category)"
    assert fmt_fig(None) == "—"
    assert fmt_fig({"value": float("nan"), "n": 1, "undefined": None}) == "undefined"


# ----------------------------------------------------------------------------- the content
def test_verdict_in_plain_words(agreement, verdict, extras):
    s = summarise(agreement, verdict, extras)
    assert s["verdict"]["headline"] == "1 of 2 judges trusted to score refusal@1: gpt4."
    by = {j["judge"]: j for j in s["judges"]}
    assert by["gpt4"]["status"] == "trusted"
    assert by["gpt4"]["sentence"] == "gpt4 is trusted to score refusal@1: all 2 checks passed."
    assert by["string_match"]["status"] == "not trusted"
    assert by["string_match"]["sentence"] == "string_match is NOT trusted to score refusal@1: 1 of 1 check failed."
    (failed,) = by["string_match"]["failed_checks"]
    assert failed["sentence"] == "min_kappa_lower_bound: 0.450, needs ≥ 0.600 (n = 100)"
    assert s["metric"] == "kappa" and by["gpt4"]["figure"]["value"] == 0.8
    assert by["gpt4"]["cost"]["cost_usd"] == 0.4321


def test_no_verdict_trusts_nobody(agreement):
    s = summarise(agreement, None)
    assert s["verdict"]["present"] is False and s["trusted"] == []
    assert s["verdict"]["headline"].startswith("No verdict was given")
    assert {j["status"] for j in s["judges"]} == {"not gated"}


def test_verdict_for_an_edited_rubric_does_not_apply(agreement, verdict):
    verdict["rubric_hash"] = "0000oldhash0"
    s = summarise(agreement, verdict)
    assert s["trusted"] == [] and s["verdict"]["applies"] is False and s["verdict"]["passed"] is False
    assert "0000oldhash0" in s["verdict"]["headline"] and "ae2d92b9446d" in s["verdict"]["headline"]
    assert {j["status"] for j in s["judges"]} == {"not trusted"}


def test_a_judge_changed_since_its_verdict_is_not_trusted(agreement, verdict, extras):
    # the verdict passed gpt4 with judge_hash "g1"; the store's gpt4 now has another spec
    s = summarise(agreement, verdict, {**extras, "judge_hashes": {"gpt4": "other", "string_match": "s1"}})
    by = {j["judge"]: j for j in s["judges"]}
    assert by["gpt4"]["status"] == "not trusted" and "changed since the verdict" in by["gpt4"]["sentence"]
    assert s["trusted"] == [] and s["verdict"]["headline"].startswith("No judge is trusted")
    same = summarise(agreement, verdict, {**extras, "judge_hashes": {"gpt4": "g1", "string_match": "s1"}})
    assert same["trusted"] == ["gpt4"]


def test_judge_missing_from_verdict_is_not_gated(agreement, verdict):
    verdict["judges"] = [verdict["judges"][0]]
    s = summarise(agreement, verdict)
    assert {j["judge"]: j["status"] for j in s["judges"]} == {"gpt4": "trusted", "string_match": "not gated"}


def test_headline_metric_follows_the_policy(agreement, verdict):
    verdict["policy"]["checks"]["metric"] = "ac1"
    assert headline_metric(agreement, verdict) == "ac1"
    assert headline_metric(agreement, None) == "kappa"
    assert headline_metric({**agreement, "level": "ordinal"}, None) == "alpha"


def test_check_direction():
    assert comparison({"name": "min_items", "rule": "point>="}) == "≥"
    assert comparison({"name": "max_error_rate", "rule": "ci<="}) == "≤"
    # the direction is the check's recorded rule, never guessed from its result
    assert comparison({"name": "per_slice[m=a]", "rule": "point>=", "figure": 0.3, "threshold": 0.5,
                       "passed": False}) == "≥"
    assert comparison({"name": "x", "figure": 0.3, "threshold": 0.5, "passed": True}) == ""
    assert comparison({"name": "x", "figure": 0.5, "threshold": 0.5, "passed": True}) == ""


# ----------------------------------------------------------------------------- HTML
def test_html_has_the_sections_and_no_script(agreement, verdict, extras, planted):
    html, _, _ = render_report(agreement, verdict, extras=extras, created_at="2026-11-30T12:00:00+00:00")
    p = parse(html)
    assert "script" not in p.tags and "img" not in p.tags  # nothing planted became an element
    text = " ".join(p.text)
    assert planted.text in text  # ... it is there, as text
    assert planted.key in text and planted.item in text
    assert "1 of 2 judges trusted to score refusal@1: gpt4." in text
    assert "0.450, needs ≥ 0.600 (n = 100)" in text
    assert "$0.4321" in text and "51,234" in text  # tokens and cost
    # the undefined κ of one slice is written as undefined with its reason, not as a number
    assert "every rater used one category" in p.text
    for heading in ("Verdict", "All judges at a glance", "Judge gpt4", "Judge string_match",
                    "Items behind the disagreements", "Provenance"):
        assert heading in p.text
    assert p.tags.count("svg") >= 1 + 2 * 3  # overview + per judge: heatmap, bars, intervals
    # every in-page link has a target, including the hostile item id
    for href in p.hrefs:
        assert href.startswith("#") and href[1:] in p.ids, href
    assert f"#{anchor('item', planted.item)}" in p.hrefs


def test_html_is_self_contained(agreement, verdict, extras):
    html, _, _ = render_report(agreement, verdict, extras=extras)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing remote
    assert "<link" not in html and "@import" not in html


def test_page_escapes_title_headings_and_stamp():
    out = page("<b>t</b>", [("<i>h</i>", "<p>safe body</p>")], subtitle="<u>s</u>", stamp="UNTRUSTED <x>")
    p = parse(out)
    assert p.tags.count("b") == 0 and p.tags.count("i") == 0 and p.tags.count("u") == 0
    assert "<b>t</b>" in p.text and "<i>h</i>" in p.text and "UNTRUSTED <x>" in p.text
    assert "p" in p.tags  # the section body is trusted HTML and kept


# ----------------------------------------------------------------------------- Markdown, JSON
def test_markdown_has_the_same_verdict_and_escapes(agreement, verdict, extras, planted):
    _, md, _ = render_report(agreement, verdict, extras=extras)
    assert "**1 of 2 judges trusted to score refusal@1: gpt4.**" in md
    assert "- **NOT TRUSTED** string_match is NOT trusted" in md
    assert "failed min_kappa_lower_bound: 0.450, needs ≥ 0.600 (n = 100)" in md
    assert planted.script not in md and "\\<script\\>" in md
    # every table row keeps its column count: a planted | cannot add a cell
    for block in re.split(r"\n\n", md):
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        if lines:
            counts = {len(re.findall(r"(?<!\\)\|", ln)) for ln in lines}
            assert len(counts) == 1, block


def test_json_is_strict_and_complete(agreement, verdict, extras, planted):
    agreement["slices"][0]["judges"]["gpt4"]["alpha_delta"] = float("nan")
    _, _, doc = render_report(agreement, verdict, extras=extras)
    text = json.dumps(doc, allow_nan=False)  # raises on NaN
    back = json.loads(text)
    assert back["rubric"] == "refusal@1" and back["trusted"] == ["gpt4"] and back["passed"] is False
    assert back["agreement"]["slices"][0]["judges"]["gpt4"]["alpha_delta"] is None
    assert back["verdict"]["policy_hash"] == "p0l1cyh4sh"
    assert back["extras"]["disagreements"][0]["response_excerpt"] == planted.text
    assert back["summary"]["judges"][1]["failed_checks"][0]["threshold"] == 0.6


# ----------------------------------------------------------------------------- files
def test_write_report_writes_three_files(tmp_path, agreement, verdict, extras):
    paths = write_report(tmp_path / "out", agreement, verdict, extras=extras)
    assert {k: p.name for k, p in paths.items()} == {"html": "report.html", "markdown": "report.md", "json": "report.json"}
    assert json.loads(paths["json"].read_text())["trusted"] == ["gpt4"]
    assert paths["html"].read_text().startswith("<!DOCTYPE html>")
    assert not [f for f in os.listdir(tmp_path / "out") if f.endswith(".tmp")]


def test_bad_input_leaves_the_previous_report(tmp_path, agreement, verdict):
    out = tmp_path / "out"
    paths = write_report(out, agreement, verdict)
    before = {k: p.read_bytes() for k, p in paths.items()}
    with pytest.raises(JudgekitError, match="agreement report must be"):
        write_report(out, {"rubric": "refusal@1"}, verdict)
    with pytest.raises(JudgekitError, match="verdict must be"):
        write_report(out, agreement, {"judges": "gpt4"})
    assert {k: p.read_bytes() for k, p in paths.items()} == before
    assert sorted(os.listdir(out)) == ["report.html", "report.json", "report.md"]


def test_out_must_be_a_folder(tmp_path, agreement):
    f = tmp_path / "x.txt"
    f.write_text("keep me")
    with pytest.raises(JudgekitError, match="is a file"):
        write_report(f, agreement, None)
    assert f.read_text() == "keep me"


def test_no_judges_no_extras(agreement):
    agreement["judges"] = []
    for s in agreement["slices"]:
        s["judges"] = {}
    html, md, doc = render_report(agreement, None)
    assert "No verdict was given" in html and "No verdict was given" in md and doc["trusted"] == []
