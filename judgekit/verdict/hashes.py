"""The verdict's hashes from the store's code matrix (:mod:`judgekit.agreement.rating_codes`), when it holds
every rating as it is stored: the same values as :mod:`judgekit.store.digests` computes by sorted SQL
fetches (and :func:`judgekit.verdict.read.store_hashes` checks a verdict with), without sorting the
ratings again.

That is the case when no rater rated an item twice under the rubric (no trials to collapse, so
each cell is one stored rating, with its trial) and no perturbed item copy is in the matrix: the
matrix is then the stored ratings in (item id, rater id) order, which is the hashes' order — the
human rows sort on (item, rater, trial) and a judge's on (item, trial), each unique. Each row's
JSON text is built from the items', raters', labels' and statuses' JSON strings (the encoder
``json.dumps`` itself uses), joined as ``json.dumps`` joins a list. Otherwise (trials, views,
variants) the SQL forms are used.
"""

from __future__ import annotations

import hashlib
import json.encoder
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement.rating_codes import OTHER_STATUS, RatingCodes
from judgekit.verdict.policy_rules import PEOPLE

STATUSES = ("ok", "abstain", "error")
_enc = json.encoder.encode_basestring_ascii  # json.dumps' encoder of a str (ensure_ascii=True)
_CHUNK = 50_000
_BLOCK = 100_000  # rows joined at a time by _digest_rows


def _digest(rows: Iterable[str]) -> str:
    """:func:`judgekit.core.hashing.digest` of a list whose elements' JSON texts are ``rows``."""
    h = hashlib.sha256(b"[")
    chunk: list[str] = []
    first = True
    for row in rows:
        chunk.append(row)
        if len(chunk) == _CHUNK:
            h.update(((", " if not first else "") + ", ".join(chunk)).encode())
            chunk, first = [], False
    if chunk:
        h.update(((", " if not first else "") + ", ".join(chunk)).encode())
    h.update(b"]")
    return h.hexdigest()[:16]


def _digest_rows(heads: np.ndarray, inverse: np.ndarray, tails: list[str]) -> str:
    """:func:`_digest` of the rows ``heads[k] + tails[inverse[k]]`` (``heads`` an object array of
    str): each row is its item's JSON text and the JSON text of the rest of the row, of which a
    matrix has only a few distinct ones, so the rows are joined block by block without a
    Python-level loop per row."""
    h = hashlib.sha256(b"[")
    table = np.array(tails, dtype=object)
    for start in range(0, len(inverse), _BLOCK):
        rows = heads[start:start + _BLOCK] + table[inverse[start:start + _BLOCK]]
        h.update(((", " if start else "") + ", ".join(rows.tolist())).encode())
    h.update(b"]")
    return h.hexdigest()[:16]


def _distinct(parts: tuple[np.ndarray, ...]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """``(inverse, distinct)``: the distinct rows of the integer columns ``parts`` (as tuples, in
    sorted order) and each row's index among them."""
    n = len(parts[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    lows = [int(p.min()) for p in parts]
    sizes = [int(p.max()) - low + 1 for p, low in zip(parts, lows, strict=True)]
    if math.prod(sizes) < 2**62:  # one int64 per row (mixed radix): a fast unique
        key = np.zeros(n, dtype=np.int64)
        for p, low, size in zip(parts, lows, sizes, strict=True):
            key = key * size + (p - low)
        keys, inverse = np.unique(key, return_inverse=True)
        distinct = []
        for k in keys.tolist():
            values = []
            for low, size in zip(reversed(lows), reversed(sizes), strict=True):
                k, v = divmod(k, size)
                values.append(v + low)
            distinct.append(tuple(reversed(values)))
        return inverse.reshape(-1), distinct
    rows, inverse = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
    return inverse.reshape(-1), [tuple(r) for r in rows.tolist()]


def matrix_hashes(store: Any, rubric: Any, codes: RatingCodes, judges: Sequence[str],
                  *, variants: bool) -> dict[str, Any] | None:
    """``{"items_hash", "human_ratings_hash", "judges": {judge: judge_ratings_hash}}`` from
    ``codes`` (the code matrix read from ``store`` under ``rubric``, with ``variants`` as given:
    :func:`judgekit.agreement.report.read_codes`), or None when the matrix cannot give them
    (module doc)."""
    from judgekit.store.digests import plain_store

    if variants or codes.trials is None or not plain_store(store) or (codes.status == OTHER_STATUS).any():
        return None
    mat = _Cells(codes)
    people = [k for k, r in enumerate(mat.raters) if mat.kinds.get(r) in PEOPLE]
    item_j = np.array([_enc(i) for i in mat.items], dtype=object)
    rater_j = [_enc(r) for r in mat.raters]
    status_j = [_enc(s) for s in STATUSES]
    label_j = [_enc(c) for c in rubric.codes]
    trials = mat.trials
    hum_status = mat.status[:, people]
    labelled: np.ndarray = np.asarray((hum_status >= 0).any(axis=1))
    # human rows: every stored rating of a human or reference rater, in (item, rater) order;
    # after the item, a row is one of a few (rater, trial, label, status)
    ii, cc = np.nonzero(hum_status >= 0)
    cols = np.asarray(people, dtype=np.int64)[cc]
    inverse, distinct = _distinct((cols, trials[ii, cols], mat.labels[ii, cols], mat.status[ii, cols]))
    tails = [f", {rater_j[c]}, \"{t}\", {label_j[lab] if lab >= 0 else 'NaN'}, {status_j[st]}]"
             for c, t, lab, st in distinct]
    out: dict[str, Any] = {"human_ratings_hash": _digest_rows("[" + item_j[ii], inverse, tails),
                           "items_hash": _items_hash(store, mat, labelled, item_j), "judges": {}}
    for judge in judges:
        out["judges"][judge] = _judge_hash(store, rubric, mat, judge, labelled, item_j, label_j, status_j)
    return out


class _Cells:
    """A :class:`RatingCodes` read with every stored rating as it is (``trials`` known), as the
    hashes index it: item ids as str, status -1 no rating, 0 ok, 1 abstain, 2 error."""

    def __init__(self, codes: RatingCodes) -> None:
        assert codes.trials is not None
        self.items: list[str] = [str(i) for i in codes.items.tolist()]
        self.raters, self.kinds, self.labels, self.trials = codes.raters, codes.kinds, codes.labels, codes.trials
        self.status = codes.status.astype(np.int64) - 1


def _judge_hash(store: Any, rubric: Any, mat: _Cells, judge: str, labelled: np.ndarray, item_j: np.ndarray,
                label_j: list[str], status_j: list[str]) -> str:
    from judgekit.store.digests import judge_has_label

    missing = '"nan"' if judge_has_label(store, rubric, judge) else "null"
    if judge not in mat.raters:
        return _digest([])
    c = mat.raters.index(judge)
    assert mat.trials is not None
    (ii,) = np.nonzero((mat.status[:, c] >= 0) & labelled)
    inverse, distinct = _distinct((mat.trials[ii, c], mat.labels[ii, c], mat.status[ii, c]))
    tails = [f", {t}, {label_j[lab] if lab >= 0 else missing}, {status_j[st]}]" for t, lab, st in distinct]
    return _digest_rows("[" + item_j[ii], inverse, tails)


def _items_hash(store: Any, mat: _Cells, labelled: np.ndarray, item_j: np.ndarray) -> str:
    """The sorted ``[item_id, content_hash]`` of the labelled items that are in the items table
    (``item_j``: the matrix's items' JSON texts)."""
    (rows,) = np.nonzero(labelled)
    (top,) = store.conn.execute("SELECT MAX(rowid) FROM items").fetchone()
    wanted = mat.items if len(rows) == len(mat.items) else [mat.items[i] for i in rows.tolist()]
    if len(rows) * 5 < (top or 0):  # a few labelled items among many: look them up by key
        from judgekit.store.digests import items_hash_of

        return items_hash_of(store, wanted)
    # every item, in id order, as two strings; when they are the labelled items (the usual
    # case) the rows are the items' JSON texts and their hashes', joined without a loop
    n, ids, hashes = store.conn.execute(
        "SELECT count(*), group_concat(item_id, char(10)), group_concat(content_hash, char(10))"
        " FROM (SELECT item_id, content_hash FROM items ORDER BY item_id)").fetchone()
    if n and ids.split("\n") == wanted:
        hash_j = np.array([_enc(h) for h in hashes.split("\n")], dtype=object)
        if len(hash_j) == n:
            return _digest_rows("[" + item_j[rows] + ", " + hash_j, np.zeros(n, dtype=np.int64), ["]"])
    content = dict(store.conn.execute("SELECT item_id, content_hash FROM items"))
    found = [(item_j[i], content[mat.items[i]]) for i in rows.tolist() if mat.items[i] in content]
    return _digest(f"[{j}, {_enc(h)}]" for j, h in found)


def current_hashes(store: Any, rubric: Any, judge: str | None,
                   codes: RatingCodes | None = None) -> tuple[dict[str, str], str | None] | None:
    """What :func:`judgekit.verdict.read.match_store` compares with a verdict, now: the store's
    ``items_hash`` and ``human_ratings_hash`` and (``judge`` given) that judge's
    ``judge_ratings_hash``, from the store's code matrix; None when the matrix cannot give them
    (module doc: the caller uses the SQL forms).

    ``codes``: the store's ratings as :func:`judgekit.agreement.report.read_codes` read them for
    the agreement report (every item, no perturbed copies), so they are not read again; else
    they are read here (:func:`judgekit.agreement.rating_codes.codes_from_store`, one scan)."""
    from judgekit.agreement.rating_codes import codes_from_store
    from judgekit.store.digests import plain_store

    if not plain_store(store):
        return None
    if codes is None:
        codes = codes_from_store(store, rubric)
    if codes is None:
        return None
    got = matrix_hashes(store, rubric, codes, [judge] if judge is not None else [], variants=False)
    if got is None:
        return None
    return ({"items_hash": got["items_hash"], "human_ratings_hash": got["human_ratings_hash"]},
            None if judge is None else got["judges"][judge])
