"""The verdict's hashes from the gate's code matrix (:mod:`judgekit.gate_matrix`), when it holds
every rating as it is stored: the same values as :mod:`judgekit.gate_sql` computes by sorted SQL
fetches (and :func:`judgekit.verdict.store_hashes` checks a verdict with), without sorting the
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
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from judgekit.gate_matrix import STATUSES, GateMatrix
from judgekit.policy_rules import PEOPLE

_enc = json.encoder.encode_basestring_ascii  # json.dumps' encoder of a str (ensure_ascii=True)
_CHUNK = 50_000


def _digest(rows: Iterable[str]) -> str:
    """:func:`judgekit.hashing.digest` of a list whose elements' JSON texts are ``rows``."""
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


def matrix_hashes(store: Any, rubric: Any, mat: GateMatrix, judges: Sequence[str],
                  *, variants: bool) -> dict[str, Any] | None:
    """``{"items_hash", "human_ratings_hash", "judges": {judge: judge_ratings_hash}}`` from
    ``mat`` (read from ``store`` under ``rubric``, with ``variants`` as given), or None when the
    matrix cannot give them (module doc)."""
    from judgekit.gate_sql import plain_store

    if variants or mat.trials is None or not plain_store(store):
        return None
    people = [k for k, r in enumerate(mat.raters) if mat.kinds.get(r) in PEOPLE]
    item_j = [_enc(i) for i in mat.items]
    rater_j = [_enc(r) for r in mat.raters]
    status_j = [_enc(s) for s in STATUSES]
    label_j = [_enc(c) for c in mat.codes]
    trials = mat.trials
    hum_status = mat.status[:, people]
    labelled: np.ndarray = np.asarray((hum_status >= 0).any(axis=1))
    # human rows: every stored rating of a human or reference rater, in (item, rater) order
    ii, cc = np.nonzero(hum_status >= 0)
    cols = np.asarray(people, dtype=np.int64)[cc]
    labs = mat.labels[ii, cols].tolist()
    human = (f"[{item_j[i]}, {rater_j[c]}, \"{t}\", {label_j[lab] if lab >= 0 else 'NaN'}, {status_j[s]}]"
             for i, c, t, lab, s in zip(ii.tolist(), cols.tolist(), trials[ii, cols].tolist(), labs,
                                        mat.status[ii, cols].tolist(), strict=True))
    out: dict[str, Any] = {"human_ratings_hash": _digest(human), "items_hash": _items_hash(store, mat, labelled),
                           "judges": {}}
    for judge in judges:
        out["judges"][judge] = _judge_hash(store, rubric, mat, judge, labelled, item_j, label_j, status_j)
    return out


def _judge_hash(store: Any, rubric: Any, mat: GateMatrix, judge: str, labelled: np.ndarray, item_j: list[str],
                label_j: list[str], status_j: list[str]) -> str:
    from judgekit.gate_sql import judge_has_label

    missing = '"nan"' if judge_has_label(store, rubric, judge) else "null"
    if judge not in mat.raters:
        return _digest([])
    c = mat.raters.index(judge)
    assert mat.trials is not None
    (ii,) = np.nonzero((mat.status[:, c] >= 0) & labelled)
    rows = (f"[{item_j[i]}, {t}, {label_j[lab] if lab >= 0 else missing}, {status_j[s]}]"
            for i, t, lab, s in zip(ii.tolist(), mat.trials[ii, c].tolist(), mat.labels[ii, c].tolist(),
                                    mat.status[ii, c].tolist(), strict=True))
    return _digest(rows)


def _items_hash(store: Any, mat: GateMatrix, labelled: np.ndarray) -> str:
    """The sorted ``[item_id, content_hash]`` of the labelled items that are in the items table."""
    wanted = {mat.items[i] for i in np.nonzero(labelled)[0].tolist()}
    (top,) = store.conn.execute("SELECT MAX(rowid) FROM items").fetchone()
    if len(wanted) * 5 < (top or 0):  # a few labelled items among many: look them up by key
        from judgekit.gate_sql import items_hash_of

        return items_hash_of(store, sorted(wanted))
    pairs = sorted((i, h) for i, h in store.conn.execute("SELECT item_id, content_hash FROM items") if i in wanted)
    return _digest(f"[{_enc(i)}, {_enc(h)}]" for i, h in pairs)


def current_hashes(store: Any, rubric: Any, judge: str | None) -> tuple[dict[str, str], str | None] | None:
    """What :func:`judgekit.verdict.match_store` compares with a verdict, now: the store's
    ``items_hash`` and ``human_ratings_hash`` and (``judge`` given) that judge's
    ``judge_ratings_hash``, from a matrix of the human and reference raters and the judge only;
    None when the matrix cannot give them (module doc: the caller uses the SQL forms)."""
    from judgekit.gate_matrix import store_matrix
    from judgekit.gate_sql import plain_store, rater_kinds

    if not plain_store(store):
        return None
    chosen = [r for r, k in rater_kinds(store, rubric).items() if k in PEOPLE or r == judge]
    mat = store_matrix(store, rubric, variants=False, raters=chosen)
    got = matrix_hashes(store, rubric, mat, [judge] if judge is not None else [], variants=False)
    if got is None:
        return None
    return ({"items_hash": got["items_hash"], "human_ratings_hash": got["human_ratings_hash"]},
            None if judge is None else got["judges"][judge])
