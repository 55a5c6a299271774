"""Where a rating came from, and what of the items a verdict covers (issue 20 items 1 and 2).

**Provenance.** Every rating written since migration ``010_rating_provenance`` says where it came
from (the ``provenance`` column): ``'panel'`` for a judge panel's rating (its call is
``call_key``; the ``calls`` table says which judge identity made it and what it answered), or
``'import:<id>'`` for the ratings of one import, the id being the input's digest
(:func:`judgekit.store.import_digest.input_digest`: the same file with the same options is the
same id) or, for ratings written through the API, a digest of the ratings themselves. A rating
that comes in again unchanged keeps its provenance (:func:`judgekit.store.bulk.merge_incoming`).
A rating written before the migration has none: with a call it counts as ``'panel'``, without one
as ``'unrecorded'`` (:data:`EFFECTIVE`).

The gate records, per judge, the **groups** of its ratings (:func:`provenance_digests`): each
import's digest of its ratings, and ``'panel'`` (a panel rating is checked against its call when
used, so judging new items after the gate is fine). An analysis then uses only the ratings of
those groups — a panel rating only when its call was made by the gated identity and answered what
the rating says (:func:`judgekit.store.calls.ratings_not_made_by`).

**Metadata.** :func:`meta_hashes`: per metadata column, a digest of its values on the items that
carry a human or reference rating under the rubric (the items a verdict covers), so a re-import
that moves those items to another slice, harm tier, model or conversation voids the verdict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

#: a rating's provenance as the gate and the analyses read it (see the module doc)
EFFECTIVE = ("CASE WHEN {a}call_key IS NOT NULL AND ({a}provenance IS NULL OR {a}provenance = 'panel')"
             " THEN 'panel' ELSE COALESCE({a}provenance, 'unrecorded') END")
PANEL = "panel"
#: what a verdict records for the panel group (its ratings are checked against their calls)
PANEL_VALUE = "calls"


def import_id(digest: str | None) -> str:
    """The provenance of the ratings of one import whose input digest is ``digest``."""
    return "import" if digest is None else f"import:{digest[:16]}"


def rows_provenance(cols: list[list[Any]]) -> str:
    """``import:`` and a digest of ratings written through the API (columns of
    :data:`judgekit.store.bulk.WRITE_COLUMNS`: item, rater, rubric, hash, label, trial, status)."""
    h = hashlib.sha256()
    for row in zip(cols[0], cols[1], cols[3], cols[4], cols[5], cols[7], cols[8], strict=True):
        h.update(json.dumps(row, default=str).encode())
    return f"import:{h.hexdigest()[:16]}"


def rubric_pairs(rubric: Any) -> list[tuple[str, str]]:
    """The (rubric id, hash) pairs ratings are stored under: a view's own and its full rubric's."""
    pairs = [(str(rubric.id), str(rubric.hash))]
    base = getattr(rubric, "base", None)
    if base is not None:
        pairs.append((str(base.id), str(base.hash)))
    return pairs


def under(pairs: list[tuple[str, str]], alias: str = "") -> tuple[str, list[str]]:
    """An SQL condition "the rating is under one of ``pairs``", and its arguments."""
    cond = " OR ".join(f"({alias}rubric = ? AND {alias}rubric_hash = ?)" for _ in pairs)
    return f"({cond})", [v for p in pairs for v in p]


def provenance_digests(store: Any, rubric: Any, judge: str) -> dict[str, str]:
    """``{group: digest}`` of ``judge``'s ratings under ``rubric``: each import's (or the
    unrecorded ones') digest of its ``[item_id, trial, label, status]`` rows in key order, and
    ``'panel'`` → :data:`PANEL_VALUE` when it has panel ratings."""
    conn = store.conn  # (a store seen through a view: its store's)
    cond, args = under(rubric_pairs(rubric))
    cur = conn.execute(
        f"SELECT {EFFECTIVE.format(a='')} AS g, item_id, trial, label, status FROM ratings"
        f" WHERE {cond} AND rater_id = ? ORDER BY g, item_id, trial", [*args, judge])
    out: dict[str, str] = {}
    h: Any = None
    group: str | None = None
    while block := cur.fetchmany(20_000):
        for g, item, trial, label, status in block:
            if g != group:
                if group is not None:
                    out[group] = h.hexdigest()[:16]
                group, h = g, hashlib.sha256()
            h.update(json.dumps([item, trial, label, status]).encode() + b"\n")
    if group is not None:
        out[group] = h.hexdigest()[:16]
    if PANEL in out:
        out[PANEL] = PANEL_VALUE
    return out


def _labelled_meta(store: Any, rubric: Any) -> Iterator[tuple[str, str]]:
    """``(item_id, meta)`` of the items with a human or reference rating under ``rubric``, in id
    order (perturbed item copies left out)."""
    from judgekit.store.variants import variant_item_sql

    conn = store.conn  # (a store seen through a view: its store's)
    cond, args = under(rubric_pairs(rubric))
    vcond, vargs = variant_item_sql()
    cur = conn.execute(
        "SELECT item_id, meta FROM items WHERE item_id IN (SELECT item_id FROM ratings WHERE"
        f" {cond} AND rater_kind IN ('human', 'reference') AND {vcond}) ORDER BY item_id",
        [*args, *vargs])
    while block := cur.fetchmany(20_000):
        yield from block


def meta_hashes(store: Any, rubric: Any) -> dict[str, str]:
    """``{metadata column: digest}``: for each column, a digest of ``[item_id, value as JSON]``
    over the items with a human or reference rating under ``rubric`` that have it, in id order."""
    hashes: dict[str, Any] = {}
    for item_id, meta in _labelled_meta(store, rubric):
        for key, value in json.loads(meta).items():
            h = hashes.get(key)
            if h is None:
                h = hashes[key] = hashlib.sha256()
            h.update(json.dumps([item_id, value], sort_keys=True).encode() + b"\n")
    return {k: hashes[k].hexdigest()[:16] for k in sorted(hashes)}
