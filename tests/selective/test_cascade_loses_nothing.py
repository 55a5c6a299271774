"""Selective judging loses no item: an item every judge of the cascade abstained or errored on is
escalated to people (and counts in calibration as an item the cascade does not keep)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit.rubric.model import load_rubric
from judgekit.selective.apply import apply_policy
from judgekit.selective.calibrate import calibrate_policy, read_calibration, write_calibration
from judgekit.selective.policy import SelectivePolicy
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")
CODES = list(REFUSAL.codes)


def _row(item, rater, kind, label, trial=0, status="ok"):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": REFUSAL.id,
            "rubric_hash": REFUSAL.hash, "label": label,
            "value": REFUSAL.values[label] if label else None, "trial": trial, "status": status,
            "rationale": None, "created_at": 0.0, "source": "test"}


def _store(path: Path) -> None:
    rows = []
    for i in range(60):  # labelled, judged confidently and rightly by both judges
        iid = f"i{i:02d}"
        rows.append(_row(iid, "final", "reference", CODES[i % 3]))
        rows += [_row(iid, j, "judge", CODES[i % 3], t) for j in ("a", "b") for t in range(2)]
    for i in range(60, 70):  # unlabelled, judged confidently
        rows += [_row(f"i{i:02d}", j, "judge", CODES[i % 3], t) for j in ("a", "b") for t in range(2)]
    for i in range(4):  # labelled: every judge abstained or errored
        rows.append(_row(f"x{i}", "final", "reference", CODES[i % 3]))
        rows += [_row(f"x{i}", "a", "judge", None, status="abstain"), _row(f"x{i}", "b", "judge", None, status="error")]
    for i in range(3):  # unlabelled: every judge abstained or errored
        rows += [_row(f"u{i}", "a", "judge", None, status="error"), _row(f"u{i}", "b", "judge", None, status="abstain")]
    items = sorted({r["item_id"] for r in rows})
    with Store(path) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": "p", "response": "r"}))
        s.put_ratings(pd.DataFrame(rows))


POLICY = SelectivePolicy(**{"rubric": "refusal", "reference": "final", "alpha": 0.1, "delta": 0.1,
                            "cascade": [{"judge": "a", "confidence": {"source": "trials"}},
                                        {"judge": "b", "confidence": {"source": "trials"}}]})


def test_items_no_judge_labelled_are_escalated(tmp_path):
    _store(tmp_path / "s.db")
    with Store(tmp_path / "s.db") as store:
        cal, _ = calibrate_policy(store, POLICY)
        # the 4 labelled items no judge labelled are calibrated (as not kept), not dropped
        assert cal.n_labelled == 64 and cal.n_new == 13
        write_calibration(tmp_path / "cal.json", cal)
        out = apply_policy(store, POLICY, read_calibration(tmp_path / "cal.json", POLICY))
    who = {a.item_id: a.judge for a in out}
    assert len(who) == 13
    assert {i for i, j in who.items() if j is None} >= {"u0", "u1", "u2"}
    assert all(who[f"u{i}"] is None for i in range(3))
