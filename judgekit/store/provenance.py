"""Where a rating came from, and what of the items a verdict covers (issue 20 items 1 and 2).

**Provenance.** Every rating written since migration ``011_rating_provenance`` says where it came
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

**Content.** :func:`stale_content_hash`: an item a verdict covers whose stored text no longer
hashes to its stored ``content_hash`` (edited by another tool with the hash kept).

**Metadata.** :func:`meta_hashes`: per metadata column, a digest of its values on the items that
carry a human or reference rating under the rubric (the items a verdict covers), so a re-import
that moves those items to another slice, harm tier, model or conversation voids the verdict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from judgekit.store.schema import import_id as import_id  # with the ids, the bottom layer
from judgekit.store.schema import rows_provenance as rows_provenance

#: a rating's provenance as the gate and the analyses read it (see the module doc)
EFFECTIVE = ("CASE WHEN {a}call_key IS NOT NULL AND ({a}provenance IS NULL OR {a}provenance = 'panel')"
             " THEN 'panel' ELSE COALESCE({a}provenance, 'unrecorded') END")
PANEL = "panel"
#: what a verdict records for the panel group (its ratings are checked against their calls)
_PANEL_VALUE = "calls"


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
    unrecorded ones') digest of its ``item_id, trial, label, status`` rows in key order, and
    ``'panel'`` → :data:`_PANEL_VALUE` when it has panel ratings. (Each row's text is built by
    SQLite and the rows of a block hashed at once: a million ratings in about a second.)"""
    cond, args = under(rubric_pairs(rubric))
    if getattr(store, "is_postgres", False):  # its text cannot hold char(0): the rows built here
        cur = _RowsText(store.conn.execute(
            f"SELECT {EFFECTIVE.format(a='')}, item_id, trial, label, status FROM ratings"
            f" WHERE {cond} AND rater_id = ? ORDER BY item_id, trial", [*args, judge]))
    else:
        cur = store.conn.execute(
            f"SELECT {EFFECTIVE.format(a='')}, item_id || char(31) || trial || char(31)"
            " || COALESCE(label, char(0)) || char(31) || status FROM ratings"
            f" WHERE {cond} AND rater_id = ? ORDER BY item_id, trial", [*args, judge])
    hashes: dict[str, Any] = {}
    while block := cur.fetchmany(50_000):
        parts: dict[str, list[str]] = {}
        for group, text in block:
            parts.setdefault(group, []).append(text)
        for group, texts in parts.items():
            h = hashes.get(group)
            if h is None:
                h = hashes[group] = hashlib.sha256()
            h.update(("\n".join(texts) + "\n").encode())
    out = {g: hashes[g].hexdigest()[:16] for g in sorted(hashes)}
    if PANEL in out:
        out[PANEL] = _PANEL_VALUE
    return out


class _RowsText:
    """The rows ``(group, item_id, trial, label, status)`` of ``cursor`` as SQLite's text of
    :func:`provenance_digests` builds them (``\x1f`` between, a missing label ``\x00``)."""

    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def fetchmany(self, size: int) -> list[tuple[str, str]]:
        return [(g, f"{i}\x1f{t}\x1f{chr(0) if lab is None else lab}\x1f{st}")
                for g, i, t, lab, st in self.cursor.fetchmany(size)]


def _labelled_items_sql(store: Any, rubric: Any) -> tuple[str, list[Any]]:
    """``SELECT item_id FROM ratings ...``: the items with a human or reference rating under
    ``rubric`` (perturbed copies left out), by the rubric index and the human raters' ids (a seek
    per rater, not a scan of every judge rating)."""
    from types import SimpleNamespace

    from judgekit.store.digests import rater_kinds
    from judgekit.store.variants import variant_item_sql

    people: list[str] = []
    for rid, rhash in rubric_pairs(rubric):
        kinds = rater_kinds(store, SimpleNamespace(id=rid, hash=rhash))
        people += [r for r, k in kinds.items() if k in ("human", "reference") and r not in people]
    cond, args = under(rubric_pairs(rubric))
    vcond, vargs = variant_item_sql()
    return (f"SELECT item_id FROM ratings WHERE {cond} AND rater_id IN (SELECT value FROM json_each(?))"
            f" AND rater_kind IN ('human', 'reference') AND {vcond}", [*args, json.dumps(people), *vargs])


def labelled_items_sql(store: Any, rubric: Any) -> tuple[str, list[Any]]:
    """The public name of :func:`_labelled_items_sql` (the gate's provenance check reads it)."""
    return _labelled_items_sql(store, rubric)


def _labelled_meta(store: Any, rubric: Any) -> Iterator[tuple[str, str]]:
    """``(item_id, meta)`` of the items with a human or reference rating under ``rubric``, in id
    order (perturbed item copies left out)."""
    sub, args = _labelled_items_sql(store, rubric)
    cur = store.conn.execute(f"SELECT item_id, meta FROM items WHERE item_id IN ({sub}) ORDER BY item_id", args)
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


def stale_content_hash(store: Any, rubric: Any) -> str | None:
    """The first item (in id order) with a human or reference rating under ``rubric`` whose
    stored ``content_hash`` is not the hash of its stored text (prompt, messages, response): its
    text was edited by another tool with the hash kept, which ``items_hash`` alone cannot see.
    None when every one matches (issue 20 item 5)."""
    from judgekit.store.digests import BLOCK
    from judgekit.store.schema import item_content_hash

    sub, args = _labelled_items_sql(store, rubric)
    cur = store.conn.execute(
        f"SELECT item_id, prompt, messages, response, content_hash FROM items WHERE item_id IN ({sub})"
        " ORDER BY item_id", args)
    while block := cur.fetchmany(BLOCK):
        for item_id, prompt, messages, response, stored in block:
            if item_content_hash(prompt, messages, response) != stored:
                return str(item_id)
    return None
