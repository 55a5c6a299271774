"""The long ratings table joined with each judge call's usage (for ``judgekit export ratings``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgekit.store import RATING_COLUMNS, Store

CALL_COLUMNS = ["judge_spec", "input_tokens", "output_tokens", "cached_tokens", "cost_usd",
                "latency_s", "attempts"]


def ratings_with_calls(
    store: Store, *, rubric: Any = None, raters: list[str] | None = None
) -> pd.DataFrame:
    """Ratings (long format) plus the tokens, cost, latency and attempts of the call behind each
    judge rating (the latest call of that judge for that item, trial and rubric hash). Cost is
    counted once: a rating reused from another judge id's cached call carries no cost."""
    ratings = store.ratings(rubric=rubric, rater_ids=raters)
    if ratings.empty:
        return pd.DataFrame(columns=[*RATING_COLUMNS, *CALL_COLUMNS])
    calls = pd.read_sql_query(
        "SELECT judge_id AS rater_id, item_id, trial, rubric_hash, spec AS judge_spec, input_tokens,"
        " output_tokens, cached_tokens, cost_usd, latency_s, attempts, created_at AS _t FROM calls",
        store.conn,
    )
    calls = calls.sort_values("_t").drop_duplicates(
        ["rater_id", "item_id", "trial", "rubric_hash"], keep="last"
    ).drop(columns="_t")
    out = ratings.merge(calls, on=["rater_id", "item_id", "trial", "rubric_hash"], how="left")
    return out[[*RATING_COLUMNS, *CALL_COLUMNS]]
