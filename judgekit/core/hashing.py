"""Canonical digests: a short stable hash of JSON-able data, and of rating rows in any order —
what a verdict records of the rubric, the policy, the labelled items and the ratings."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def digest(obj: Any) -> str:
    """A short stable hash of JSON-able data (keys sorted)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def judge_hash(judge: str, spec: str | None, params: Any) -> str:
    """The identity hash a verdict records of a judge: the digest of its rater id, its redacted
    spec and the parameters that determine its answers (both None for imported labels)."""
    return digest([judge, spec, params])


def ratings_hash(ratings: pd.DataFrame) -> str:
    """Order-independent hash of rating rows (item, rater, trial, label, status)."""
    if ratings.empty:
        return digest([])
    cols = ["item_id", "rater_id", "trial", "label", "status"]
    rows = ratings[cols].astype(str).sort_values(cols).to_numpy().tolist()
    return digest(rows)
