"""The judge's own calls: every rating it made under the gated rubric, on every item it rated
(human-labelled or not). Abstention and error rates are properties of the judge, not of its
agreement with people, so the gate decides them on all of its calls (:func:`own_calls`), and a
label budget for them asks for more items judged, never for human labels."""

from __future__ import annotations

from typing import Any


def own_calls(store: Any, rubric: Any, judges: list[str]) -> dict[str, dict[str, int]]:
    """judge → ``{"calls", "abstain", "error", "items", "unjudged"}``: its ratings (one per call,
    trials included; perturbed item copies left out), how many abstained or failed, the distinct
    items it rated, and the items of the store it has not rated yet. On a plain store by SQL
    (no pandas), else from ``store.ratings``."""
    from judgekit.store import digests

    if digests.plain_store(store):
        return _by_sql(store, rubric, judges)
    ids = store.item_ids() if hasattr(store, "item_ids") else list(store.items()["item_id"])
    out: dict[str, dict[str, int]] = {}
    for judge in judges:
        r = store.ratings(rubric=rubric, rater_ids=[judge])
        status = r["status"].astype(str)
        items = int(r["item_id"].astype(str).nunique())
        out[judge] = {"calls": len(r), "abstain": int((status == "abstain").sum()),
                      "error": int((status == "error").sum()), "items": items,
                      "unjudged": max(len(ids) - items, 0)}
    return out


def _by_sql(store: Any, rubric: Any, judges: list[str]) -> dict[str, dict[str, int]]:
    from judgekit.store.variants import variant_item_sql

    cond, vargs = variant_item_sql()
    (total,) = store.conn.execute(f"SELECT COUNT(*) FROM items WHERE {cond}", vargs).fetchone()
    out: dict[str, dict[str, int]] = {}
    for judge in judges:
        row = store.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(status = 'abstain'), 0), COALESCE(SUM(status = 'error'), 0), "
            f"COUNT(DISTINCT item_id) FROM ratings WHERE rubric = ? AND rubric_hash = ? AND rater_id = ? AND {cond}",
            [str(rubric.id), str(rubric.hash), judge, *vargs]).fetchone()
        calls, abstain, error, items = (int(x) for x in row)
        out[judge] = {"calls": calls, "abstain": abstain, "error": error, "items": items,
                      "unjudged": max(int(total) - items, 0)}
    return out
