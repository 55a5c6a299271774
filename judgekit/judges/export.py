"""The long ratings table joined with each judge call's usage (for ``judgekit export ratings``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgekit.judges.matches import MATCH_COLUMNS, attach_matches
from judgekit.store.calls import calls_frame, usage_frame
from judgekit.store.database import RATING_COLUMNS, Store

_CALL_COLUMNS = ["judge_spec", "input_tokens", "output_tokens", "cached_tokens", "cost_usd",
                "latency_s", "attempts"]


def ratings_with_calls(
    store: Store, *, rubric: Any = None, raters: list[str] | None = None
) -> pd.DataFrame:
    """Ratings (long format) plus the tokens, cost, latency and attempts of the call behind each
    judge rating: the call the rating was made from (its ``call_key``), or for ratings stored
    before call keys were recorded, the latest call of that judge for that item, trial and rubric
    hash; ``match_rule`` / ``match_string``: what fired in a rule judge's answer
    (:mod:`judgekit.judges.matches`). Cost is counted once: when several ratings come from one call (items with the same
    text, a renamed judge), the first carries the call's usage and the others carry zeros."""
    ratings = store.ratings(rubric=rubric, rater_ids=raters)
    if ratings.empty:
        return pd.DataFrame(columns=[*RATING_COLUMNS, *_CALL_COLUMNS, *MATCH_COLUMNS])
    keys = store.rating_call_keys()
    ratings = ratings.merge(keys, on=["item_id", "rater_id", "rubric", "rubric_hash", "trial"], how="left")
    calls = usage_frame(store)
    usage = list(_CALL_COLUMNS)
    by_key = calls.drop(columns=["rater_id", "item_id", "trial", "rubric_hash", "_t"]).set_index("call_key")
    keyed = ratings["call_key"].notna() & ratings["call_key"].isin(by_key.index)
    out = ratings.copy()
    for col in usage:
        out[col] = None
    if keyed.any():
        joined = by_key.reindex(ratings.loc[keyed, "call_key"])
        for col in usage:
            out.loc[keyed, col] = joined[col].to_numpy()
    legacy = ~keyed
    if legacy.any():
        latest = calls.sort_values("_t").drop_duplicates(
            ["rater_id", "item_id", "trial", "rubric_hash"], keep="last"
        )
        joined = ratings.loc[legacy, ["rater_id", "item_id", "trial", "rubric_hash"]].merge(
            latest, on=["rater_id", "item_id", "trial", "rubric_hash"], how="left"
        )
        for col in usage:
            out.loc[legacy, col] = joined[col].to_numpy()
        out.loc[legacy, "call_key"] = joined["call_key"].to_numpy()
    for col in usage:
        if col != "judge_spec":
            out[col] = pd.to_numeric(out[col], errors="coerce")
    # one call's usage counted once, on the first rating that came from it
    repeat = out["call_key"].notna() & out.duplicated("call_key", keep="first")
    for col in ("input_tokens", "output_tokens", "cached_tokens", "cost_usd"):
        out.loc[repeat, col] = 0
    # what fired in a rule judge's answer (rules:knowledge-leak: the pool string or keyword)
    out = attach_matches(store, out)
    return out[[*RATING_COLUMNS, *_CALL_COLUMNS, *MATCH_COLUMNS]]


def calls_table(store: Store, *, judges: list[str] | None = None) -> pd.DataFrame:
    """Every stored judge call: key, judge, spec and parameters, item, trial, the raw completion,
    the parsed status/label/rationale or error, tokens, cost, latency and attempts."""
    return calls_frame(store, judges=judges)
