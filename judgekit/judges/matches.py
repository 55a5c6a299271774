"""What fired in a rule judge's answer: the structured ``match`` field a rule judge puts in its
answer (``rules:knowledge-leak``: which refusal-pool string or keyword decided the class), read
back from the stored call behind each rating (its ``call_key``).

The field lives in the stored answer (``calls.raw``), not in the rationale text, so a re-parse,
a renamed judge or a cached rerun keeps it: every rating points at the call it was made from.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from judgekit.store.calls import answered

#: the columns :func:`attach_matches` adds (None where nothing fired or the rater is no rule judge)
MATCH_COLUMNS = ["match_rule", "match_string"]


def _match_of(raw: str | None) -> dict[str, Any] | None:
    """The ``match`` object of a raw JSON answer, or None (no JSON object, no match field)."""
    if not raw or not raw.lstrip().startswith("{"):
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    match = obj.get("match") if isinstance(obj, dict) else None
    return match if isinstance(match, dict) else None


def attach_matches(store: Any, ratings: pd.DataFrame) -> pd.DataFrame:
    """``ratings`` (with a ``call_key`` column) plus :data:`MATCH_COLUMNS`: the rule (``refusal_pool``,
    ``target``, ``distractors``) and the string, as configured, that fired in the call's answer."""
    out = ratings.copy()
    for col in MATCH_COLUMNS:
        out[col] = None
    if out.empty or "call_key" not in out.columns:
        return out
    keys = [k for k in out["call_key"].dropna().astype(str).unique().tolist()]
    stored = answered(store, keys, raw=True)
    found: dict[str, tuple[Any, Any]] = {}
    for key, ans in stored.items():
        m = _match_of(ans.raw)
        if m is not None:
            found[key] = (m.get("rule"), m.get("string"))
    if found:
        # a rating whose answer is no longer ok (re-parsed to abstain) names nothing
        pairs = [found.get(k) if isinstance(k, str) and s == "ok" else None
                 for k, s in zip(out["call_key"], out["status"], strict=True)]
        out["match_rule"] = [p[0] if p else None for p in pairs]
        out["match_string"] = [p[1] if p else None for p in pairs]
    return out


__all__ = ["MATCH_COLUMNS", "attach_matches"]
