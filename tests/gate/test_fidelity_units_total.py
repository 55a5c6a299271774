"""A fidelity budget counts only the conversations that can enter the figure: no benign
look-alikes when the figure leaves them out, and per tier whatever the source of H."""

from __future__ import annotations

import pandas as pd

from judgekit.analysis.fidelity import FigurePair
from judgekit.gate.fidelity import units_total
from judgekit.verdict.fidelity_policy import AnalysisFidelity


def _items() -> pd.DataFrame:
    rows = []
    for c in range(10):  # conversations c0–c9 of model m: c0–c3 are benign look-alikes; tier 4 for c4–c9
        look = c < 4
        for t in (1, 2):
            rows.append({"item_id": f"c{c}/t{t}", "model": "m", "conversation_id": f"c{c}", "turn": t,
                         "prompt_id": f"p{c}", "benign_lookalike": look, "severity": 1 if look else 4})
    return pd.DataFrame(rows)


def _pair(**key: object) -> FigurePair:
    return FigurePair("calibration", "drift", {"model": "m", **key, "turn": 2}, 0.5, 0.5, 0.0, -0.1, 0.1, 2,
                      "conversations")


def test_look_alikes_are_not_counted_when_the_figure_leaves_them_out():
    spec = AnalysisFidelity(analysis="calibration", figures=["drift"], max_abs_diff=0.05, harm_column="severity")
    out = {"j": [_pair()]}
    units_total(out, _items(), spec)
    assert out["j"][0].extra["units_total"] == 6


def test_tier_cells_are_counted_when_h_comes_from_harm_ratings():
    spec = AnalysisFidelity(analysis="calibration", figures=["drift_tier"], max_abs_diff=0.05)
    items = _items()
    harm = pd.Series(((items["severity"] - 1) / 4).to_numpy(), index=items["item_id"].to_numpy())
    out = {"j": [_pair(tier=4)]}
    units_total(out, items, spec, harm)
    assert out["j"][0].extra["units_total"] == 6
