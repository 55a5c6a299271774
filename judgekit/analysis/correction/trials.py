"""One value per item from a rater's trials, by one declared rule, for every corrected figure.

A judge asked several times about one item gives several trials; they are the judge's, not the
model's samples. A 0/1 figure (a refusal rate) takes the **majority** of the item's ok trials, and
a tie abstains (the item counts as unrated) — the rule of ``analyze distribution``; a graded
figure (mean R) takes the mean of the ok trials' values; a share of categories (the forms of a
refusal) takes the **plurality** label of the ok trials, and a tie between the top labels abstains
(:func:`item_labels`) — the majority rule generalised to categories. Every table of a run that shows a figure
reads its items' values from here, so the figure has one value per run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: the rule, as the results state it
TRIAL_RULE = "majority of ok trials; a tie abstains"
#: the same rule for categories (a share per label), as the results state it
LABEL_RULE = "plurality label of ok trials; a tie between the top labels abstains"


def item_values(ratings: pd.DataFrame, value: Callable[[pd.Series], Any], *,
                majority: bool) -> pd.Series:
    """``item_id →`` the item's value over its ok trials (``status == "ok"`` with a label):
    ``value`` maps labels to numbers; ``majority`` (a 0/1 figure): 1 when most trials say 1, 0
    when most say 0, NaN on a tie; else the mean. Items with no ok trial are NaN."""
    r = ratings[["item_id", "label", "status"]].copy()
    r["item_id"] = r["item_id"].astype(str)
    ok = r["status"].eq("ok") & r["label"].notna()
    r["_x"] = np.where(ok, np.asarray(value(r["label"].where(ok, "")), dtype=float), np.nan)
    share = r.groupby("item_id", sort=False)["_x"].mean()
    if not majority:
        return share
    return pd.Series(np.where(share > 0.5, 1.0, np.where(share < 0.5, 0.0, np.nan)),
                     index=share.index)


def item_labels(ratings: pd.DataFrame, codes: Sequence[str]) -> pd.DataFrame:
    """Per item, its one label by :data:`LABEL_RULE`: ``item_id`` + one 0/1 column per code (1
    for the label most of its ok trials give). Items whose top labels tie, or with no ok trial
    with a code, are left out (unrated) — the frame :func:`judgekit.analysis.frames.label_shares`
    gives, with each item counted wholly once instead of split over its trials."""
    cols = [str(c) for c in codes]
    df = ratings.loc[ratings["status"].eq("ok") & ratings["label"].notna(), ["item_id", "label"]]
    df = df.assign(item_id=df["item_id"].astype(str), label=df["label"].astype(str))
    counts = df.groupby(["item_id", "label"]).size().unstack("label", fill_value=0)
    counts = counts.reindex(columns=cols, fill_value=0)
    top = counts.max(axis=1)
    at_top = counts.eq(top, axis=0)
    one = at_top.loc[top.gt(0) & at_top.sum(axis=1).eq(1)].astype(float)
    one.columns = cols
    one.index.name = "item_id"
    return one.reset_index()
