"""Prices as data and the cost of a call (cache reads and writes priced apart)."""

from __future__ import annotations

import pytest

from judgekit.judges.base import Completion, JudgeContext, JudgeEntry, Price, build_judge
from judgekit.judges.prices import call_cost, lookup_price, price_table
from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import answer_schema, system_prompt


def test_table_loads_and_dated_models_match_their_family():
    table = price_table()
    assert {"anthropic", "openai"} <= set(table)
    assert lookup_price("anthropic", "claude-sonnet-4-5-20250929") == table["anthropic"]["claude-sonnet-4-5"]
    # the longest listed prefix wins: gpt-4o-mini is not priced as gpt-4o
    assert lookup_price("openai", "gpt-4o-mini-2024-07-18") == table["openai"]["gpt-4o-mini"]
    assert lookup_price("openai", "my-finetune") is None


def test_cost_prices_cache_reads_and_writes_apart():
    price = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    # 1,000 input tokens of which 600 cache reads and 200 cache writes, 100 output tokens:
    # 200 x 3 + 600 x 0.3 + 200 x 3.75 + 100 x 15 = 600 + 180 + 750 + 1500 = 3030 per million
    c = Completion(raw="x", input_tokens=1000, output_tokens=100, cached_tokens=600,
                   cache_write_tokens=200)
    assert call_cost(price, c) == pytest.approx(3030 / 1e6)
    # without a cached rate, cached tokens cost the input rate
    assert call_cost(Price(input=1.0, output=0.0), c) == pytest.approx(1000 / 1e6)
    assert call_cost(None, c) == 0.0


def test_entry_price_overrides_the_table_and_self_hosted_costs_nothing():
    rubric = load_rubric("refusal")
    ctx = JudgeContext(rubric=rubric, system=system_prompt(rubric), schema=answer_schema(rubric),
                       env={"OPENAI_API_KEY": "k"})
    own = build_judge(JudgeEntry(id="a", model="openai:gpt-4o", price=Price(input=1, output=2)), ctx)
    assert own.price == Price(input=1, output=2)
    table = build_judge(JudgeEntry(id="b", model="openai:gpt-4o"), ctx)
    assert table.price == price_table()["openai"]["gpt-4o"]
    hosted = build_judge(JudgeEntry(id="c", model="openai-compatible:http://127.0.0.1:9/v1#gpt-4o"), ctx)
    assert hosted.price is None
