"""Reviewer findings on per-framing panels and the emitted pool-string tables (issue 12, items
8-9): every framing value gets its own agreement figures, a group that emitted no pool string
keeps a row (n = 0 of its ok answers), and only the variables an item's own rubric uses are in
its call key and required."""

from __future__ import annotations

import pandas as pd

from judgekit.analysis.emitted import emitted_pool_strings


def test_a_group_without_a_pool_match_gets_a_row_with_n_zero():
    # m1: 3 ok answers, 2 matched "I can't say."; m2: 2 ok answers, none matched a pool string;
    # m3: one answer, an error (not ok): not rated, so no row
    df = pd.DataFrame({"item_id": ["a", "b", "c", "d", "e", "f"],
                       "_model": ["m1", "m1", "m1", "m2", "m2", "m3"]})
    matches = pd.DataFrame({
        "item_id": ["a", "b", "c", "d", "e", "f"],
        "status": ["ok", "ok", "ok", "ok", "ok", "error"],
        "label": ["verbatim_refusal", "verbatim_refusal", "target_leak", "other", "target_leak", None],
        "match_rule": ["refusal_pool", "refusal_pool", "target", None, "target", None],
        "match_string": ["I can't say.", "I can't say.", "Kalei Lin", None, "Kalei Lin", None],
    })
    table = emitted_pool_strings(matches, df, ["_model"])
    assert list(table.columns) == ["model", "label", "pool_string", "n", "n_ok", "share"]
    rows = table.to_dict("records")
    assert len(rows) == 2
    assert rows[0] == {"model": "m1", "label": "verbatim_refusal", "pool_string": "I can't say.",
                       "n": 2, "n_ok": 3, "share": 2 / 3}
    zero = rows[1]
    assert (zero["model"], zero["n"], zero["n_ok"], zero["share"]) == ("m2", 0, 2, 0.0)
    assert pd.isna(zero["label"]) and pd.isna(zero["pool_string"])


def test_no_pool_match_anywhere_still_gives_every_rated_group_a_row():
    df = pd.DataFrame({"item_id": ["a", "b", "c"], "_model": ["m1", "m1", "m2"],
                       "framing": [1, 7, 1]})
    matches = pd.DataFrame({"item_id": ["a", "b", "c"], "status": ["ok"] * 3,
                            "label": ["other"] * 3, "match_rule": [None] * 3,
                            "match_string": [None] * 3})
    table = emitted_pool_strings(matches, df, ["_model", "framing"])
    assert table[["model", "framing", "n", "n_ok", "share"]].values.tolist() == [
        ["m1", 1, 0, 1, 0.0], ["m1", 7, 0, 1, 0.0], ["m2", 1, 0, 1, 0.0]]
