"""Fixtures for the analysis tests (imported with ``pytest_plugins``).

``synthetic_store``: the shipped synthetic multi-turn data set imported into a session store and
gated with its two shipped policies by the real gate, so the verdicts are real verdicts.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
SYNTH = REPO / "annotations" / "synthetic-multiturn"


def load_generator() -> ModuleType:
    """The shipped generator script as a module."""
    spec = importlib.util.spec_from_file_location("synth_generate", SYNTH / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


def ratings_frame(
    rows: Iterable[tuple[Any, ...]],
    rubric: Any,
    *,
    rater: str = "judge-x",
    kind: str = "judge",
) -> pd.DataFrame:
    """Long ratings from ``(item_id, label[, trial[, status]])`` tuples (label None = no label)."""
    out = []
    for row in rows:
        item_id, label = row[0], row[1]
        trial = row[2] if len(row) > 2 else 0
        status = row[3] if len(row) > 3 else ("ok" if label is not None else "abstain")
        out.append({
            "item_id": str(item_id), "rater_id": rater, "rater_kind": kind,
            "rubric": rubric.id, "rubric_hash": rubric.hash, "label": label,
            "value": rubric.values.get(label) if label else None, "trial": trial,
            "status": status, "rationale": None, "created_at": 0.0, "source": "test",
        })
    return pd.DataFrame(out)


def passing_verdict(judge: str, rubric: Any, *, passed: bool = True) -> dict[str, Any]:
    """A verdict in the documented format (as `judgekit gate` writes it) for one judge: the
    current schema version, consistent (its checks' states follow from figure vs threshold), and not
    tied to any store (its hashes are placeholders: use it without ``store=``)."""
    from judgekit.verdict.check import Interval, check_json, new_check
    from judgekit.verdict.read import SCHEMA_VERSION, digest

    policy = {"rubric": rubric.id, "judges": [judge], "checks": {"min_items": 100, "min_lower_bound": 0.6}}
    items = check_json(new_check("min_items", judge, 300, 100, 300, "test", min_n=100))
    check = check_json(new_check("min_lower_bound", judge, 0.8 if passed else 0.3, 0.6, 300, "test", metric="kappa",
                                 min_n=100, interval=Interval(*([0.8, 0.9] if passed else [0.3, 0.5]), "bootstrap", 0.95)))
    return {
        "schema_version": SCHEMA_VERSION, "judgekit_version": "0.1.0",
        "created_at": "2026-11-30T00:00:00+00:00", "policy": policy, "policy_hash": digest(policy),
        "rubric": rubric.id, "rubric_hash": rubric.hash, "reference": "final", "items_hash": "x",
        "human_ratings_hash": "y", "passed": check["passed"], "state": check["state"],
        "judges": [{"judge": judge, "judge_hash": "h", "judge_ratings_hash": "r", "spec": None,
                    "params": None, "passed": check["passed"], "state": check["state"], "budget": None,
                    "checks": [items, check]}],
    }


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Store path and verdict paths for the shipped synthetic data set (read-only for tests)."""
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    root = tmp_path_factory.mktemp("synthetic")
    path = root / "judgekit.db"
    with Store(path) as store:
        import_ratings(store, SYNTH / "restrictiveness_ratings.csv", load_rubric("restrictiveness"),
                       items_path=SYNTH / "items.csv")
        import_ratings(store, SYNTH / "refusal_form_ratings.csv", load_rubric("refusal_form"))
        out = {"store": path}
        for name in ("restrictiveness", "refusal_form"):
            verdict, _ = run_gate(store, SYNTH / f"policy-{name}.yaml")
            vpath = root / f"verdict-{name}.json"
            vpath.write_text(json.dumps(verdict), encoding="utf-8")
            out[name] = vpath
    return out
