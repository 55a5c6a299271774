"""Per-(item, rater) labels from ratings: judge trials collapsed to their majority, and the
majority (plurality) consensus of several humans."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def collapse_trials(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, rater): the majority ok label over trials.

    Columns ``item_id, rater_id, rater_kind, label, status``; status is ``ok`` when a majority
    label exists, ``abstain`` when the trials tie or none was parseable, ``error`` when every trial
    failed with an error.
    """
    import pandas as pd
    if ratings.empty:
        return pd.DataFrame(columns=["item_id", "rater_id", "rater_kind", "label", "status"])
    single = ratings.groupby(["item_id", "rater_id"], sort=False)["trial"].transform("size") == 1
    simple = ratings.loc[single, ["item_id", "rater_id", "rater_kind", "label", "status"]]
    multi = ratings.loc[~single]
    if multi.empty:
        return simple.reset_index(drop=True)
    keys = ["item_id", "rater_id"]
    groups = (
        multi.assign(_err=multi["status"].eq("error"))
        .groupby(keys, sort=False)
        .agg(rater_kind=("rater_kind", "first"), all_error=("_err", "all"))
        .reset_index()
    )
    ok = multi[multi["status"] == "ok"]
    counts = ok.groupby([*keys, "label"], sort=False).size().rename("n").reset_index()
    top = counts[counts["n"] == counts.groupby(keys)["n"].transform("max")]
    unique_top = top.groupby(keys)["label"].transform("size") == 1
    winners = top.loc[unique_top, [*keys, "label"]]
    out = groups.merge(winners, on=keys, how="left")
    has_label = out["label"].notna()
    out["status"] = np.where(has_label, "ok", np.where(out["all_error"], "error", "abstain"))
    out["label"] = out["label"].astype(object).where(has_label, None)
    out = out[["item_id", "rater_id", "rater_kind", "label", "status"]]
    return pd.concat([simple, out], ignore_index=True)


def consensus(humans: pd.DataFrame, codes: Sequence[str]) -> pd.Series:
    """Majority label across human columns per item; None where the humans tie or none rated."""
    import pandas as pd
    arr = humans.to_numpy(dtype=object)
    counts = np.stack([(arr == c).sum(axis=1) for c in codes], axis=1)  # (N, V)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    out = np.asarray(codes, dtype=object)[counts.argmax(axis=1)]
    out[(top == 0) | (n_top > 1)] = None
    return pd.Series(out, index=humans.index, dtype=object)
