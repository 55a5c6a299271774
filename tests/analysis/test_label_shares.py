"""label_shares: per item, the share of its ok trials giving each code (counted by hand here), the
same table pandas' crosstab gives (the implementation it replaced, for speed)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgekit.analysis.frames import label_shares
from judgekit.testing.study import LEVELS, make_study


def test_shares_by_hand() -> None:
    r = pd.DataFrame({"item_id": [3, 1, 2, 3, 1, 1, 2],
                      "label": ["a", "b", "a", "a", "c", None, "b"],
                      "status": ["ok", "ok", "ok", "ok", "ok", "ok", "error"]})
    got = label_shares(r, ["a", "b", "c", "d"]).set_index("item_id")
    assert list(got.index) == ["1", "2", "3"] and list(got.columns) == ["a", "b", "c", "d"]
    # item 1: b, c (the None trial is not ok); item 2: a (its b is an error); item 3: a, a
    assert got.loc["1"].tolist() == [0.0, 0.5, 0.5, 0.0]
    assert got.loc["2"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert got.loc["3"].tolist() == [1.0, 0.0, 0.0, 0.0]
    # codes none of whose labels an item got: NaN shares (no ok trial among the codes counted)
    none = label_shares(r, ["zzz"]).set_index("item_id")
    assert all(math.isnan(v) for v in none["zzz"])


def test_same_table_as_crosstab() -> None:
    _, r = make_study(seed=1, conversations_per_tier=3, lookalikes=2)
    r = r.assign(status=np.where(np.arange(len(r)) % 7 == 0, "error", "ok"),
                 label=r["label"].where(np.arange(len(r)) % 5 != 0))
    for codes in (LEVELS, LEVELS[:2], ("zzz",)):
        ok = r[r["status"].eq("ok") & r["label"].notna()]
        counts = pd.crosstab(ok["item_id"].astype(str), ok["label"]).reindex(
            columns=list(codes), fill_value=0)
        want = counts.div(counts.sum(axis=1).replace(0, np.nan), axis=0)
        want.columns = [str(c) for c in want.columns]
        pd.testing.assert_frame_equal(label_shares(r, codes), want.reset_index(),
                                      check_exact=True)
    assert len(label_shares(r.iloc[:0], LEVELS)) == 0
