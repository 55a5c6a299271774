"""Rendering analysis results: escaping of data text, JSON safety, Markdown chart links."""

from __future__ import annotations

import json

import pandas as pd

from judgekit.analysis.distribution.estimate import refusal_distribution
from judgekit.analysis.options import Resampling
from judgekit.report.analysis import to_html, to_json, to_markdown
from judgekit.rubric.model import load_rubric

pytest_plugins = ["tests.analysis_fixtures"]

REFUSAL = load_rubric("refusal")
EVIL = '<script>alert("x")</script></table>'


def _result():
    from tests.analysis_fixtures import ratings_frame

    items = pd.DataFrame({
        "item_id": [f"i{k}" for k in range(6)],
        "model": [EVIL] * 3 + ["plain|model"] * 3,
        "prompt_id": ["p", "p", "q"] * 2,
        "sample": [0, 1, 0] * 2,
        "turn": [1, 1, 2] * 2,
    })
    labels = ["full_refusal", "full_compliance", "partial_refusal"] * 2
    ratings = ratings_frame(list(zip(items["item_id"], labels, strict=True)), REFUSAL,
                            rater="ann", kind="human")
    return refusal_distribution(ratings, items, rubric=REFUSAL,
                                resampling=Resampling(n_resamples=20))


def test_data_text_is_escaped_in_html():
    html = to_html(_result())
    assert "<script>" not in html and "</table>" not in html.replace("</table></div>", "")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<svg" in html  # the charts are inline


def test_data_text_is_escaped_in_markdown():
    md = to_markdown(_result())
    assert "<script>" not in md
    assert "plain\\|model" in md  # a pipe cannot break a table row
    assert "](charts/distribution-rate_cdf.svg)" in md


def test_json_is_strict_json():
    data = to_json(_result())
    text = json.dumps(data, allow_nan=False)  # NaN would raise: they must be null
    back = json.loads(text)
    assert back["kind"] == "distribution" and back["trusted"] is True
    rows = back["tables"]["per_prompt"]["rows"]
    single = [r for r in rows if r["n_rated"] == 1]
    assert single and all(r["constant"] is None for r in single)


def test_file_names_are_safe_for_any_model_name():
    from judgekit.report.analysis import file_stem

    res = _result()
    assert file_stem(res, "drift_by_tier_../../etc/passwd") == "distribution-drift_by_tier_etc_passwd"
    assert file_stem(res, "drift_by_tier_openai/gpt-4.1") == "distribution-drift_by_tier_openai_gpt-4.1"
