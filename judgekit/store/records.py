"""The store's rows as pandas frames and back: the conversions :class:`~judgekit.store.database.Store` does
around its SQL (no SQL here).

Kept apart from :mod:`judgekit.store.database` so that opening a store does not import pandas; the store
imports this module inside the methods that take or return frames.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.store.schema import (
    ITEM_CORE,
    ItemRow,
    RatingRow,
    is_missing,
    item_content_hash,
    merged_texts,
)

#: item columns as returned by :meth:`Store.items`, before the metadata columns.
ITEM_COLUMNS = ["item_id", "prompt", "messages", "response", "content_hash"]


def _json_default(obj: object) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, pd.Timestamp):
        return obj.isoformat()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# ------------------------------------------------------------------- items
def item_rows(items: pd.DataFrame, stored: Mapping[str, ItemRow], *, now: float) -> list[ItemRow]:
    """Rows to write for ``items``, merged with the ``stored`` rows of the same ids.

    Metadata of an existing item is merged: columns given here overwrite, others stay; a missing
    prompt, messages or response keeps the stored one.
    """
    meta_cols = [c for c in items.columns if c not in ITEM_CORE]
    rows = []
    for rec in items.to_dict("records"):
        item_id = str(rec["item_id"])
        old = stored.get(item_id)
        meta = json.loads(old.meta) if old else {}
        for c in meta_cols:
            v = rec.get(c)
            if not is_missing(v):
                meta[c] = v
        prompt, messages, response = merged_texts(rec, old)
        rows.append(
            ItemRow(
                item_id=item_id,
                prompt=prompt,
                messages=messages,
                response=response,
                content_hash=item_content_hash(prompt, messages, response),
                meta=json.dumps(meta, default=_json_default, ensure_ascii=False, sort_keys=True),
                updated_at=now,
            )
        )
    return rows


def items_frame(rows: Sequence[ItemRow]) -> pd.DataFrame:
    """Items as a DataFrame: core columns, ``content_hash`` and one column per metadata key."""
    base = pd.DataFrame(
        [(r.item_id, r.prompt, r.messages, r.response, r.content_hash) for r in rows],
        columns=ITEM_COLUMNS,
    )
    metas = pd.DataFrame([json.loads(r.meta) for r in rows], index=base.index)
    if not metas.empty:
        metas = metas[[c for c in metas.columns if c not in base.columns]]
        base = pd.concat([base, metas], axis=1)
    if not base.empty:
        base["messages"] = [
            json.loads(m) if isinstance(m, str) else None for m in base["messages"]
        ]
    return base


# ----------------------------------------------------------------- ratings
def rating_rows(ratings: pd.DataFrame, *, now: float) -> list[RatingRow]:
    """Rows to write for a ratings frame; ``trial``, ``status``, ``rationale``, ``created_at``
    (``now``), ``source`` and ``value`` may be left out."""
    df = ratings.copy()
    for col, default in (
        ("trial", 0),
        ("status", "ok"),
        ("rationale", None),
        ("created_at", now),
        ("source", None),
        ("value", None),
    ):
        if col not in df.columns:
            df[col] = default
    missing = [c for c in ("item_id", "rater_id", "rater_kind", "rubric", "rubric_hash") if c not in df]
    if missing:
        raise JudgekitError(f"put_ratings: missing columns {missing}.")
    df = df.astype(object).where(pd.notna(df), None)
    return [
        RatingRow(
            item_id=str(r["item_id"]),
            rater_id=str(r["rater_id"]),
            rater_kind=r["rater_kind"],
            rubric=r["rubric"],
            rubric_hash=r["rubric_hash"],
            label=r["label"],
            value=None if r["value"] is None else float(r["value"]),
            trial=int(r["trial"]),
            status=r["status"],
            rationale=r["rationale"],
            created_at=float(r["created_at"]),
            source=r["source"],
        )
        for r in df.to_dict("records")
    ]


def rater_kinds(rows: Sequence[RatingRow]) -> dict[str, str]:
    """{rater_id: rater_kind} of ``rows``, sorted by rater id. A rater id names one rater: a
    human and a judge may not share it (one would silently replace the other's ratings)."""
    kinds: dict[str, list[str]] = {}
    for r in rows:
        ks = kinds.setdefault(r.rater_id, [])
        if r.rater_kind not in ks:
            ks.append(r.rater_kind)
    for rater in sorted(kinds):
        if len(kinds[rater]) > 1:
            raise JudgekitError(
                f"Rater {rater!r} appears as {' and '.join(sorted(map(str, kinds[rater])))}; give "
                "each rater one kind (rename one of them)."
            )
    return {rater: kinds[rater][0] for rater in sorted(kinds)}


def raters_table(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per rater of a ratings frame: kind, number of ratings, abstentions, errors."""
    if ratings.empty:
        return pd.DataFrame(columns=["rater_id", "rater_kind", "n", "abstain", "error"])
    return (
        ratings.assign(
            abstain=ratings["status"].eq("abstain"),
            error=ratings["status"].eq("error"),
        )
        .groupby(["rater_id", "rater_kind"], sort=False)
        .agg(n=("item_id", "size"), abstain=("abstain", "sum"), error=("error", "sum"))
        .reset_index()
    )
