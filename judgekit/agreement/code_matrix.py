"""The items x raters code matrix the gate computes its figures on, built once, without pandas on
a plain store: the same cells as :func:`judgekit.agreement.unit_frames.label_frames` gives the
agreement report (items in sorted id order, raters in sorted id order, judge trials collapsed to
their majority ok label; a tie between trials or no ok label is an abstention, every trial an
error is an error), as integer codes.

A label code is the label's position in the rubric's codes (0..V-1); a label the rubric does not
have (none from a checked import) gets a code from V on, so that it still counts as rated, as
the report's label frame has it, while its position (:attr:`GateMatrix.pos`) is missing.
Status codes: -1 no rating, 0 ok, 1 abstain, 2 error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.store.schema import MAX_SQL_VARIABLES

STATUSES = ("ok", "abstain", "error")


@dataclass
class GateMatrix:
    """Codes of one rubric's ratings: ``labels`` and ``status`` (N items, R raters) int64."""

    items: list[str]
    raters: list[str]
    kinds: dict[str, str]  #: rater id -> kind, in the order of each rater's first rating
    codes: list[str]  #: the rubric's codes, then labels it does not have
    n_codes: int  #: the rubric's own codes (V)
    labels: np.ndarray
    status: np.ndarray
    #: the trial of each cell's one rating (-1 none), when no cell has several (else None)
    trials: np.ndarray | None = None

    def col(self, rater: str) -> int:
        return self.raters.index(rater)

    def pos(self, codes: np.ndarray) -> np.ndarray:
        """Label codes as float positions in the rubric (NaN missing or not a rubric code)."""
        out = codes.astype(float)
        out[(codes < 0) | (codes >= self.n_codes)] = np.nan
        return out

    def texts(self, codes: np.ndarray) -> np.ndarray:
        """Label codes as the labels (object array, None missing)."""
        table = np.array([*self.codes, None], dtype=object)
        return table[np.where(codes < 0, len(self.codes), codes)]


def _is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def build_matrix(rows: Iterable[tuple[Any, Any, Any, Any, Any]], kinds: dict[str, str],
                 rubric_codes: Sequence[str]) -> GateMatrix:
    """The matrix of rating ``rows`` ``(item_id, rater_id, rater_kind, label, status)`` (any
    order; ``kinds`` in first-rating order)."""
    item_ix: dict[Any, int] = {}
    rater_ix: dict[Any, int] = {}
    code_ix: dict[Any, int] = {c: k for k, c in enumerate(rubric_codes)}
    codes = list(rubric_codes)
    it: list[int] = []
    ra: list[int] = []
    la: list[int] = []
    st: list[int] = []
    status_ix = {s: k for k, s in enumerate(STATUSES)}
    for item, rater, _kind, label, status in rows:
        it.append(item_ix.setdefault(item, len(item_ix)))
        ra.append(rater_ix.setdefault(rater, len(rater_ix)))
        if _is_missing(label):
            la.append(-1)
        else:
            c = code_ix.get(label)
            if c is None:
                c = code_ix[label] = len(codes)
                codes.append(label)
            la.append(c)
        s = status_ix.get(status)
        if s is None:
            raise JudgekitError(f"Rating of {item!r} by {rater!r} has status {status!r}, not ok, abstain or error.")
        st.append(s)
    return _assemble(item_ix, list(rater_ix), np.asarray(it, dtype=np.int64), np.asarray(ra, dtype=np.int64),
                     np.asarray(la, dtype=np.int64), np.asarray(st, dtype=np.int64), kinds, codes, len(rubric_codes))


def _assemble(item_ix: dict[Any, int], rater_list: list[Any], it: np.ndarray, ra: np.ndarray, lab: np.ndarray,
              sta: np.ndarray, kinds: dict[str, str], codes: list[str], n_codes: int,
              trial: np.ndarray | None = None) -> GateMatrix:
    """The matrix from per-rating codes: items in first-seen codes ``it`` (``item_ix``), raters
    ``ra`` indexing ``rater_list``; both re-coded in sorted id order."""
    items = sorted(item_ix)
    raters = sorted(rater_list)
    item_order = np.empty(len(items), dtype=np.int64)
    item_order[np.fromiter((item_ix[i] for i in items), dtype=np.int64, count=len(items))] = np.arange(len(items))
    where = {r: k for k, r in enumerate(raters)}
    rater_order = np.asarray([where[r] for r in rater_list], dtype=np.int64)
    i = item_order[it] if len(it) else np.zeros(0, dtype=np.int64)
    r = rater_order[ra] if len(ra) else np.zeros(0, dtype=np.int64)
    n, m = len(items), len(raters)
    cell = i * m + r
    labels = np.full(n * m, -1, dtype=np.int64)
    status = np.full(n * m, -1, dtype=np.int64)
    count = np.bincount(cell, minlength=n * m)
    trials: np.ndarray | None = None
    if count.max(initial=0) <= 1:
        labels[cell] = lab
        status[cell] = sta
        if trial is not None:
            trials = np.full(n * m, -1, dtype=np.int64)
            trials[cell] = trial
            trials = trials.reshape(n, m)
    else:
        _collapse(cell, lab, sta, count, len(codes), labels, status)
    return GateMatrix(items=[str(x) for x in items], raters=[str(x) for x in raters], kinds=kinds,
                      codes=codes, n_codes=n_codes, labels=labels.reshape(n, m), status=status.reshape(n, m),
                      trials=trials)


def _collapse(cell: np.ndarray, lab: np.ndarray, sta: np.ndarray, count: np.ndarray, n_codes: int,
              labels: np.ndarray, status: np.ndarray) -> None:
    """Several ratings of a cell (trials): the majority ok label (status ok); a tie or no ok
    label an abstention, every trial an error an error
    (:func:`judgekit.agreement.trials.collapse_trials`). Single ratings stay as they are."""
    single = count[cell] == 1
    labels[cell[single]] = lab[single]
    status[cell[single]] = sta[single]
    multi = ~single
    mc, ml, ms = cell[multi], lab[multi], sta[multi]
    cells, inverse = np.unique(mc, return_inverse=True)
    k = len(cells)
    ok = (ms == 0) & (ml >= 0)
    votes = np.zeros((k, max(n_codes, 1)), dtype=np.int64)
    np.add.at(votes, (inverse[ok], ml[ok]), 1)
    top = votes.max(axis=1)
    n_top = (votes == top[:, None]).sum(axis=1)
    won = (top > 0) & (n_top == 1)
    n_err = np.bincount(inverse, weights=(ms == 2).astype(float), minlength=k)
    n_all = np.bincount(inverse, minlength=k)
    labels[cells] = np.where(won, votes.argmax(axis=1), -1)
    status[cells] = np.where(won, 0, np.where(n_err == n_all, 2, 1))


def matrix_from_codes(codes: Any, rubric: Any, kinds: dict[str, str]) -> GateMatrix | None:
    """The gate's matrix of the raters ``kinds`` names (id -> kind, in first-rating order, as
    :func:`judgekit.store.digests.rater_kinds` gives them) from the agreement report's code matrix
    (:class:`judgekit.agreement.rating_codes.RatingCodes` read from a store), the same cells
    :func:`store_matrix`'s own read gives: the items any of those raters rated, in id order.
    None when ``codes`` does not hold every rating as stored (no trials column: several trials
    of a cell, a trial over 74, or read from a DataFrame) or misses one of the raters."""
    from judgekit.agreement.rating_codes import OTHER_STATUS

    raters = sorted(kinds)
    if codes.trials is None or not set(raters) <= set(codes.raters):
        return None
    cols = [codes.raters.index(r) for r in raters]
    # status codes: RatingCodes' 0 none, 1 ok, 2 abstain, 3 error -> -1, 0, 1, 2
    raw = codes.status[:, cols]
    if (raw == OTHER_STATUS).any():
        return None  # a status the store does not allow: the general path names it
    status = raw.astype(np.int64) - 1
    labels, trials = codes.labels[:, cols], codes.trials[:, cols]
    items = codes.items
    keep = (status >= 0).any(axis=1)
    if not keep.all():
        status, labels, trials, items = status[keep], labels[keep], trials[keep], items[keep]
    return GateMatrix(items=list(map(str, items.tolist())), raters=raters, kinds=dict(kinds), codes=list(rubric.codes),
                      n_codes=len(rubric.codes), labels=np.array(labels, dtype=np.int64),
                      status=status, trials=np.array(trials, dtype=np.int64))


def store_matrix(store: Any, rubric: Any, *, variants: bool, raters: Sequence[str] | None = None) -> GateMatrix:
    """The matrix of ``rubric``'s ratings in a plain store, read by SQL (perturbed item copies
    only with ``variants``, as :func:`judgekit.agreement.unit_frames.read_ratings`; only the
    ``raters`` given, if given): the label and status coded by SQLite, so Python sees an item id
    and a few small integers per rating. It is the agreement report's one scan
    (:func:`judgekit.agreement.rating_codes.codes_from_store`) when that holds every rating as
    stored (:func:`matrix_from_codes`) and every rater is asked for, else its own read (one scan,
    or one index read per rater when they are a small part of the table), trials collapsed."""
    from judgekit.agreement.rating_codes import codes_from_store
    from judgekit.store.digests import rater_kinds
    from judgekit.store.variants import variant_item_sql

    every = kinds = rater_kinds(store, rubric, variants=variants)
    if raters is not None:
        kinds = {r: k for r, k in kinds.items() if r in set(raters)}
    if kinds and len(kinds) == len(every):  # (a few raters of many: their own index reads below)
        shared = codes_from_store(store, rubric, variants=variants)
        mat = None if shared is None else matrix_from_codes(shared, rubric, kinds)
        if mat is not None:
            return mat
    base, args = "rubric = ? AND rubric_hash = ? AND rater_id = ?", [str(rubric.id), str(rubric.hash)]
    vcond, vargs = variant_item_sql() if not variants else ("1", [])
    conn = store.conn
    all_read = len(kinds) == len(every)  # every rater is read: no rater condition
    codes = list(rubric.codes)
    label_sql = ("CASE WHEN label IS NULL THEN -1 "
                 + " ".join(f"WHEN label = ? THEN {k}" for k in range(len(codes))) + " ELSE -2 END")
    status_sql = "CASE status " + " ".join(f"WHEN '{s}' THEN {k}" for k, s in enumerate(STATUSES)) + " ELSE -2 END"
    item_ix: dict[Any, int] = {}
    its, ras, las, sts, trials = [], [], [], [], []
    cols = f"item_id, {label_sql}, {status_sql}, trial"
    raters = list(kinds)  # (the ones asked for)
    some = ",".join("?" * len(raters))
    # one SQL variable per rater in a statement only while they fit SQLite's smallest limit
    # (schema.MAX_SQL_VARIABLES); past it the rater ids are read and coded in Python
    few = 2 * len(raters) + len(codes) + len(args) + len(vargs) <= MAX_SQL_VARIABLES
    rater_in, rater_args = ("", []) if all_read else (f" AND rater_id IN ({some})", raters)
    n_read = _count(conn, args, raters, all_read)
    (top,) = conn.execute("SELECT MAX(rowid) FROM ratings").fetchone()
    reads: list[tuple[str, list[Any], int | None]]
    rater_code: dict[Any, int] | None = None
    if raters and n_read * 3 > (top or 0) and not few:
        rater_code = {r: k for k, r in enumerate(raters)}
        reads = [(f"SELECT {cols}, rater_id FROM ratings WHERE +rubric = ? AND +rubric_hash = ? AND {vcond}",
                  [*codes, *args, *vargs], None)]
    elif raters and n_read * 3 > (top or 0):
        # most of the table is read: one scan in table order beats one index read per rater
        # (the "+" keeps SQLite off the rubric index)
        rater_sql = "CASE rater_id " + " ".join(f"WHEN ? THEN {k}" for k in range(len(raters))) + " ELSE -1 END"
        reads = [(f"SELECT {cols}, {rater_sql} FROM ratings WHERE +rubric = ? AND +rubric_hash = ? AND {vcond}"
                  f"{rater_in}", [*codes, *raters, *args, *vargs, *rater_args], None)]
    else:
        reads = [(f"SELECT {cols} FROM ratings WHERE {base} AND {vcond}", [*codes, *args, rater, *vargs], k)
                 for k, rater in enumerate(raters)]
    for sql, params, fixed in reads:
        cur = conn.execute(sql, params)
        while block := cur.fetchmany(50_000):
            if rater_code is not None:  # the rater ids as read: keep the raters asked for, coded
                block = [(*row[:4], rater_code[row[4]]) for row in block if row[4] in rater_code]
                if not block:
                    continue
            columns = list(zip(*block, strict=True))
            ids = columns[0]
            for x in dict.fromkeys(ids).keys() - item_ix.keys():
                item_ix[x] = len(item_ix)
            its.append(np.fromiter(map(item_ix.__getitem__, ids), dtype=np.int64, count=len(ids)))
            las.append(np.asarray(columns[1], dtype=np.int64))
            sts.append(np.asarray(columns[2], dtype=np.int64))
            trials.append(np.asarray(columns[3], dtype=np.int64))
            ras.append(np.full(len(ids), fixed, dtype=np.int64) if fixed is not None
                       else np.asarray(columns[4], dtype=np.int64))

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    lab, sta = cat(las), cat(sts)
    if (lab == -2).any() or (sta == -2).any():  # a label the rubric does not have: the general path
        chosen = set(raters)
        rows = conn.execute(f"SELECT item_id, rater_id, rater_kind, label, status FROM ratings WHERE rubric = ?"
                            f" AND rubric_hash = ? AND {vcond}", [*args, *vargs])
        return build_matrix((row for row in rows if row[1] in chosen), kinds, codes)
    return _assemble(item_ix, list(kinds), cat(its), cat(ras), lab, sta, kinds, codes, len(codes), cat(trials))


def _count(conn: Any, args: list[Any], raters: list[str], every: bool) -> int:
    """How many ratings under the rubric (``args``) the ``raters`` have (all of them: ``every``),
    with at most :data:`judgekit.store.schema.MAX_SQL_VARIABLES` variables a statement."""
    sql = "SELECT COUNT(*) FROM ratings WHERE rubric = ? AND rubric_hash = ?"
    if every:
        return int(conn.execute(sql, args).fetchone()[0])
    step = MAX_SQL_VARIABLES - len(args)
    return sum(int(conn.execute(f"{sql} AND rater_id IN ({','.join('?' * len(part))})", [*args, *part]).fetchone()[0])
               for part in (raters[k:k + step] for k in range(0, len(raters), step)))


def frame_matrix(ratings: Any, rubric: Any) -> GateMatrix:
    """The matrix of a long ratings DataFrame (another source, e.g. a store seen through a view)."""
    cols = [ratings[c].tolist() for c in ("item_id", "rater_id", "rater_kind", "label", "status")]
    kinds: dict[str, str] = {}
    for rater, kind in zip(cols[1], cols[2], strict=True):
        kinds.setdefault(str(rater), str(kind))
    return build_matrix(zip(*cols, strict=True), kinds, rubric.codes)
