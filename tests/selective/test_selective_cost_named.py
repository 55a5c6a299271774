"""The cost line of `escalate calibrate` names the judges without recorded calls, never every
judge of the cascade, and gives what the recorded ones cost; a judge no item reaches costs nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.selective.calibrate import cascade_costs
from judgekit.selective.judgments import Judgments
from judgekit.store.calls import CallRow, write_calls
from judgekit.store.database import Store

R = load_rubric("refusal")
C = list(R.codes)


def _row(item, rater, kind, label):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": R.id,
            "rubric_hash": R.hash, "label": label, "value": R.values[label], "trial": 0,
            "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


def _call(judge, item, usd):
    return CallRow(key=f"{judge}-{item}", judge_id=judge, spec="s", params="{}", rubric=R.id,
                   rubric_hash=R.hash, item_id=item, item_hash="h", trial=0, raw="r", status="ok",
                   label="full_refusal", rationale=None, error=None, cost_usd=usd)


def test_cost_line_names_only_the_judge_without_recorded_calls(tmp_path) -> None:
    items = [f"i{k:02d}" for k in range(60)]
    rows = [_row(i, "final", "reference", C[k % 3]) for k, i in enumerate(items)]
    rows += [_row(i, "imported", "judge", C[k % 3] if k % 2 else C[(k + 1) % 3]) for k, i in enumerate(items)]
    rows += [_row(i, "recorded", "judge", C[k % 3]) for k, i in enumerate(items)]
    db = tmp_path / "s.db"
    with Store(db) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": "p", "response": [f"r {i}" for i in items]}))
        s.put_ratings(pd.DataFrame(rows))
        write_calls(s, [_call("recorded", i, 0.002) for i in items])
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({
        "rubric": "refusal", "reference": "final", "alpha": 0.2, "delta": 0.2,
        "cascade": [{"judge": "imported", "confidence": {"source": "constant", "value": 1.0}},
                    {"judge": "recorded", "confidence": {"source": "constant", "value": 1.0}}]}))
    r = CliRunner().invoke(main, ["escalate", "calibrate", str(policy), "--out", str(tmp_path / "c.json"),
                                  "--store", str(db)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("Cost per kept label"))
    assert "unknown: imported has no recorded call" in line
    assert "recorded $0.002000 per item (60 recorded calls)" in line
    assert "recorded has" not in line and "recorded have" not in line


def test_judge_no_item_reaches_costs_nothing(tmp_path) -> None:
    items = ("x", "y")
    j = Judgments(("a", "b"), items, (("full_refusal",) * 2,) * 2, (np.ones(2), np.ones(2)), ("full_refusal",) * 2)
    with Store(tmp_path / "s.db") as store:
        write_calls(store, [_call("a", i, 0.01) for i in items])
        cost = cascade_costs(store, R.id, R.hash, j, [1.0, 0.0])  # a keeps every item: b is never asked
    assert cost["per_item"] == {"a": pytest.approx(0.01), "b": None}
    assert cost["per_kept_label"] == pytest.approx(0.01)


def test_judge_with_calls_but_no_label_is_not_said_to_have_no_calls(tmp_path) -> None:
    from judgekit.selective.calibrate import cost_sentence

    items = ("x", "y")
    j = Judgments(("a", "b"), items, ((None, None), ("full_refusal",) * 2),
                  (np.full(2, np.nan), np.ones(2)), ("full_refusal",) * 2)
    with Store(tmp_path / "s.db") as store:  # a's calls all failed: recorded, no label
        write_calls(store, [_call("a", i, 0.0) for i in items] + [_call("b", i, 0.01) for i in items])
        line = cost_sentence(cascade_costs(store, R.id, R.hash, j, [0.0, 1.0]))
    assert line == ("Cost per kept label: unknown: a made 2 recorded calls but labelled no item; "
                    "b $0.010000 per item (2 recorded calls).")
