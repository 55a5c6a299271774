"""One value per item from a rater's trials, by one declared rule, for every corrected figure.

A judge asked several times about one item gives several trials; they are the judge's, not the
model's samples. A 0/1 figure (a refusal rate) takes the **majority** of the item's ok trials, and
a tie abstains (the item counts as unrated) — the rule of ``analyze distribution``; a graded
figure (mean R) takes the mean of the ok trials' values. Every table of a run that shows a figure
reads its items' values from here, so the figure has one value per run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

#: the rule, as the results state it
TRIAL_RULE = "majority of ok trials; a tie abstains"


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
