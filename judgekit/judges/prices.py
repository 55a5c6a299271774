"""Token prices (data in ``prices.yaml`` beside this module), the cost of one call, and the
batch discount."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from judgekit.judges.base import Completion, Price

_PRICES = Path(__file__).with_name("prices.yaml")


@cache
def price_table() -> dict[str, dict[str, Price]]:
    """``{provider: {model: Price}}`` from the shipped table."""
    data = yaml.safe_load(_PRICES.read_text(encoding="utf-8")) or {}
    return {prov: {m: Price(**p) for m, p in models.items()} for prov, models in data.items()}


def lookup_price(provider: str, model: str) -> Price | None:
    """The price of ``model``: exact name, else the longest listed name it starts with."""
    table = price_table().get(provider, {})
    if model in table:
        return table[model]
    best = max((m for m in table if model.startswith(m)), key=len, default=None)
    return table[best] if best else None


def call_cost(price: Price | None, c: Completion) -> float:
    """USD for one call. ``input_tokens`` counts all input; cache reads and writes are priced apart."""
    if price is None:
        return 0.0
    cached = c.cached_tokens
    writes = c.cache_write_tokens
    plain = max(c.input_tokens - cached - writes, 0)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    return (
        plain * price.input
        + cached * cached_rate
        + writes * write_rate
        + c.output_tokens * price.output
    ) / 1_000_000


#: both providers bill batch requests at half the price
BATCH_DISCOUNT = 0.5


def discounted(price: Price | None) -> Price | None:
    """The price of a call sent through a provider's batch API."""
    if price is None:
        return None
    return Price(
        input=price.input * BATCH_DISCOUNT,
        output=price.output * BATCH_DISCOUNT,
        cached_input=None if price.cached_input is None else price.cached_input * BATCH_DISCOUNT,
        cache_write=None if price.cache_write is None else price.cache_write * BATCH_DISCOUNT,
    )
