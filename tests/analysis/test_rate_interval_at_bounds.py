"""A rate of 0 (or 1) gets an exact Clopper–Pearson interval on its prompts, never "no CI": the
bootstrap cannot see events that did not happen."""

from __future__ import annotations

import pandas as pd
import pytest

from judgekit.analysis.calibration.estimate import calibration
from judgekit.analysis.frames import harm_from_column
from judgekit.analysis.options import Resampling
from judgekit.rubric.model import load_rubric
from tests.analysis_fixtures import ratings_frame

R_RUBRIC = load_rubric("restrictiveness")


def _study(n_look: int):
    items, ratings = [], []
    low = R_RUBRIC.codes[0]  # R = 0: never an over-refusal
    for c in range(n_look):
        for t in (1, 2):
            iid = f"l{c}/t{t}"
            items.append({"item_id": iid, "model": "m", "conversation_id": f"l{c}", "turn": t,
                          "severity": 1, "benign_lookalike": True})
            ratings.append((iid, low))
    for c in range(6):
        iid = f"c{c}/t1"
        items.append({"item_id": iid, "model": "m", "conversation_id": f"c{c}", "turn": 1,
                      "severity": 1 + 4 * (c % 2), "benign_lookalike": False})
        ratings.append((iid, R_RUBRIC.codes[-1 if c % 2 else 0]))
    items = pd.DataFrame(items)
    return ratings_frame(ratings, R_RUBRIC, rater="ann", kind="human"), items


def test_over_refusal_rate_of_zero_has_an_exact_interval():
    ratings, items = _study(20)
    res = calibration(ratings, items, harm_from_column(items, "severity"), rubric=R_RUBRIC,
                      resampling=Resampling(n_resamples=200))
    lk = res.table("lookalikes").iloc[0]
    assert lk["over_refusal_rate"] == 0.0
    # exact upper bound for 0 events in 20 prompts at 97.5% one-sided: 1 − 0.025^(1/20)
    assert lk["over_ci_low"] == 0.0
    assert lk["over_ci_high"] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-6)
    by_turn = res.table("lookalikes_by_turn").set_index("turn")
    assert by_turn.loc[2, "over_ci_high"] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-6)
