"""The disagreement tables promise prompt and response text only where the data has it."""

from __future__ import annotations

import pytest

from judgekit.report import render_report

pytest_plugins = ["tests.report_fixtures"]

PROMISE = "prompt and response are under"


def _html(agreement, verdict, extras) -> str:
    html, _, _ = render_report(agreement, verdict, extras=extras, created_at="2026-11-30T12:00:00+00:00")
    return html


def test_no_text_promised_when_the_items_have_none(report_agreement, report_verdict, report_extras):
    for d in report_extras["disagreements"]:
        d.pop("response_excerpt", None)
        d.pop("prompt_excerpt", None)
    html = _html(report_agreement, report_verdict, report_extras)
    assert PROMISE not in html
    assert "Items behind the disagreements" in html  # the items are still listed once, with their labels


@pytest.mark.parametrize("field", ["response_excerpt", "prompt_excerpt"])
def test_text_promised_when_the_items_have_it(report_agreement, report_verdict, report_extras, field):
    for d in report_extras["disagreements"]:
        d.pop("response_excerpt", None)
        d[field] = "some text"
    assert PROMISE in _html(report_agreement, report_verdict, report_extras)
