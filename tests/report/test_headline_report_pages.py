"""The report pages lead with the like-for-like comparison: under a consensus of several humans the
judge against the consensus of the other humans beside the humans on the same items, each with its
n, in the HTML and Markdown overview tables."""

from __future__ import annotations

import pandas as pd

from judgekit.agreement.report import agreement_report
from judgekit.report import render_report
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")


def _agreement() -> dict:
    code = {"C": REFUSAL.codes[0], "R": REFUSAL.codes[2]}
    raters = {"h1": "RRRRRCCCCCRRRRRCCCCC", "h2": "RRRRRCCCCCCCRRRCCRRC", "j": "RRRRRCCCCCRRRRRCCCCC"}
    rows = [(f"i{k + 1}", r, "judge" if r == "j" else "human", code[ch])
            for r, s in raters.items() for k, ch in enumerate(s)]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["rubric"], df["rubric_hash"], df["status"], df["trial"] = REFUSAL.id, REFUSAL.hash, "ok", 0
    return agreement_report(df, rubric=REFUSAL, n_resamples=200).to_dict()


def test_pages_lead_with_the_leave_one_out_comparison_and_its_n():
    html, md, _ = render_report(_agreement(), None, created_at="2026-11-30T12:00:00+00:00")
    for text in (html, md):
        assert "vs the other humans&#x27; consensus (leave-one-out)" in text or \
            "vs the other humans' consensus (leave-one-out)" in text
        assert "humans on the same items" in text
        assert "· n 20" in text or ">n 20<" in text
        assert "· n 16" not in text  # the majority reference's easy items are not the headline
