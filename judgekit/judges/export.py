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


def calls_table(store: Store, *, judges: list[str] | None = None) -> pd.DataFrame:
    """Every stored judge call: key, judge, spec and parameters, item, trial, the raw completion,
    the parsed status/label/rationale or error, tokens, cost, latency and attempts."""
    sql = ("SELECT key, judge_id, spec, params, rubric, rubric_hash, item_id, item_hash, trial, raw,"
           " status, label, rationale, error, input_tokens, output_tokens, cached_tokens, cost_usd,"
           " latency_s, attempts, created_at FROM calls")
    args: list[Any] = []
    if judges:
        sql += f" WHERE judge_id IN ({','.join('?' * len(judges))})"
        args = list(judges)
    return pd.read_sql_query(sql + " ORDER BY created_at", store.conn, params=args)
