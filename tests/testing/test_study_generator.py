"""The synthetic study's generator (judgekit.testing.study) draws the same stream as it did when
its step was ``rng.choice([-1, 1])`` — so a seed gives the study it always gave — and its items'
columns are the documented ones."""

from __future__ import annotations

import numpy as np

from judgekit.testing.study import ITEM_COLUMNS, STEP, make_study


def test_step_draw_is_the_stream_of_choice_minus_one_one() -> None:
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    for i in range(5000):
        if i % 3 == 0:
            assert int(a.choice([-1, 1])) == STEP[int(b.integers(0, 2))]
        else:
            assert a.random() == b.random()  # and the draws after it stay in step


def test_items_columns_types_and_determinism() -> None:
    items, ratings = make_study(seed=4, conversations_per_tier=2, lookalikes=1)
    assert tuple(items.columns) == ITEM_COLUMNS
    assert len(items) == 3 * (5 * 2 + 1) * 6  # models × (tiers × conversations + look-alikes) × turns
    row = items.iloc[0]
    assert (row["item_id"], row["model"], row["turn"], row["sample"]) == ("m-steady/P100/t1",
                                                                          "m-steady", 1, 0)
    assert items["turn"].dtype.kind == "i" and items["benign_lookalike"].dtype == bool
    again_items, again_ratings = make_study(seed=4, conversations_per_tier=2, lookalikes=1)
    assert items.equals(again_items) and ratings.equals(again_ratings)
