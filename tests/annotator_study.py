"""A small study of several human annotators and one judge j under the ``refusal`` rubric, shared by
the tests of adjudication and of the one-annotator warning: each human gives the item's truth with
probability 0.8, the judge with 0.85; annotator ``c`` skips every 4th item (two labels, which may tie)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

R = load_rubric("refusal")
C = list(R.codes)


def rating_row(item: str, rater: str, kind: str, label: str, trial: int = 0) -> dict:
    """One ok rating row of ``rater`` under the refusal rubric."""
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": R.id,
            "rubric_hash": R.hash, "label": label, "value": R.values[label], "trial": trial,
            "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


def annotator_rows(humans: tuple[str, ...], n: int, seed: int) -> list[dict]:
    """``humans`` annotators (``c``, when present, skips every 4th item) and one judge j on n items."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        item, truth = f"i{k:03d}", C[k % 3]
        for h in humans:
            if h == "c" and k % 4 == 0:
                continue
            rows.append(rating_row(item, h, "human", truth if rng.random() < 0.8 else C[(k + 1) % 3]))
        rows.append(rating_row(item, "j", "judge", truth if rng.random() < 0.85 else C[(k + 2) % 3]))
    return rows


def annotator_store(path: Path, rows: list[dict], model: Callable[[str], str]) -> str:
    """A store at ``path`` holding the rows' items (``model`` of each item id) and the rows."""
    items = sorted({r["item_id"] for r in rows})
    with Store(path) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": "p", "response": [f"r {i}" for i in items],
                                  "model": [model(i) for i in items]}))
        s.put_ratings(pd.DataFrame(rows))
    return str(path)
