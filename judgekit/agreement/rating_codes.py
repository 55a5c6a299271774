"""The agreement report's input as integer codes: one items x raters matrix of label positions and
one of statuses, built once per report (issue 13: a lean agreement path).

* ``labels[i, r]``: the position of rater r's label for item i in the rubric's code list
  (0..V-1), ``-1`` when there is no label (no rating, an abstention or an error).
* ``status[i, r]``: :data:`NO_RATING` (0), ``ok`` (1), ``abstain`` (2), ``error`` (3), or
  :data:`OTHER_STATUS` (4) for any other text a non-store source may carry.
* Items are sorted by id and raters by id (the order of :func:`.unit_frames.label_frames`);
  ``kinds`` maps each rater to its kind in the order the raters first appear in the ratings
  (the order the report lists humans and judges in).
* ``trials[i, r]`` (from a store only): the stored trial of that cell's one rating, ``-1`` when
  there is none; None when some trial is outside 0..74 or the matrix came from a DataFrame. With
  it the matrix is every stored rating as it is, which the verdict's hashes are computed from
  (:func:`judgekit.verdict.hashes.matrix_hashes`), so the report and the gate read the ratings
  once for their figures and their hashes.

From a :class:`~judgekit.store.database.Store` the matrix comes from one scan of the ratings table that
returns two strings (the item ids, and four code characters per rating made by SQL ``CASE``
expressions over bound parameters: rater, label, status, trial), so no Python object is made per
rating but the item id. No pandas on this path (the gate uses it).
With more than 75 raters the rater ids are read as a third string and coded in Python.
A store whose ratings have several trials of one (item, rater), more than 75 labels,
an item or rater id holding a newline, or a label that is not one of the rubric's codes is read through
the DataFrame path instead (:func:`codes_from_frame`: trials collapsed to their majority, as
before). Both paths give the same matrices.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError

NO_RATING, OK, ABSTAIN, ERROR, OTHER_STATUS = 0, 1, 2, 3, 4
#: status text of each status code (``None``: no rating row)
STATUS_TEXT: tuple[str | None, ...] = (None, "ok", "abstain", "error", "other")
_STATUS = {"ok": OK, "abstain": ABSTAIN, "error": ERROR}
_MAX_CODES = 75  # one character per rater / label: chr(48) .. chr(122)


@dataclass(frozen=True)
class RatingCodes:
    """Items x raters label and status codes (see the module docstring)."""

    items: np.ndarray  # (N,) object: item ids, sorted
    raters: list[str]  # (R,) sorted
    kinds: dict[str, str]  # rater -> kind, in order of first appearance
    labels: np.ndarray  # (N, R) int64, -1 missing
    status: np.ndarray  # (N, R) int8
    n_ratings: int
    trials: np.ndarray | None = None  # (N, R) int64, -1 no rating; None: not known (module doc)

    @property
    def empty(self) -> bool:
        return self.n_ratings == 0

    def column(self, rater: str) -> int:
        return self.raters.index(rater)


def _empty() -> RatingCodes:
    return RatingCodes(np.zeros(0, dtype=object), [], {}, np.zeros((0, 0), dtype=np.int64),
                       np.zeros((0, 0), dtype=np.int8), 0)


def _assemble(item_ids: Any, rater_codes: np.ndarray, raters: list[str], kind_of: dict[str, str],
              label_codes: np.ndarray, status_codes: np.ndarray,
              only_items: Sequence[str] | None = None, trial_codes: np.ndarray | None = None) -> RatingCodes | None:
    """The matrices from one code per rating (storage order), keeping the ratings of
    ``only_items`` when given; None when an (item, rater) has more than one rating (trials: the
    caller collapses them)."""
    item_ids = list(item_ids)
    if only_items is not None:
        wanted = set(map(str, only_items))
        keep = np.fromiter(map(wanted.__contains__, item_ids), dtype=bool, count=len(item_ids))
        if not keep.any():
            return _empty()
        item_ids = [i for i, k in zip(item_ids, keep.tolist(), strict=True) if k]
        rater_codes, label_codes, status_codes = rater_codes[keep], label_codes[keep], status_codes[keep]
        trial_codes = None if trial_codes is None else trial_codes[keep]
    item_codes, items = factorize_sorted(item_ids)
    # raters sorted by id for the columns; kinds in order of first appearance
    present = np.flatnonzero(np.bincount(rater_codes, minlength=len(raters)))
    first = np.array([int(np.argmax(rater_codes == c)) for c in present], dtype=np.int64)
    order = [raters[int(present[i])] for i in np.argsort(first, kind="stable")]
    try:
        sorted_raters = sorted(raters[int(c)] for c in present)
    except TypeError:  # integer and text rater ids in one frame
        sorted_raters = sorted((raters[int(c)] for c in present), key=lambda r: (type(r).__name__, str(r)))
    col_of = np.full(len(raters), -1, dtype=np.int64)
    for c in present:
        col_of[int(c)] = sorted_raters.index(raters[int(c)])
    cols = col_of[rater_codes]
    n_items, n_raters = len(items), len(sorted_raters)
    cell = item_codes * n_raters + cols
    if cell.size and np.bincount(cell, minlength=n_items * n_raters).max() > 1:
        return None
    labels = np.full((n_items, n_raters), -1, dtype=np.int64)
    status = np.zeros((n_items, n_raters), dtype=np.int8)
    labels[item_codes, cols] = label_codes
    status[item_codes, cols] = status_codes
    trials = None
    if trial_codes is not None:
        trials = np.full((n_items, n_raters), -1, dtype=np.int64)
        trials[item_codes, cols] = trial_codes
    return RatingCodes(np.asarray(items, dtype=object), sorted_raters, {r: kind_of[r] for r in order},
                       labels, status, int(cell.size), trials)


def factorize_sorted(ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """``(codes, uniques)``: the distinct ``ids`` sorted, and each id's position among them (int64),
    as ``pandas.factorize(ids, sort=True)`` gives them. Runs of one id (the ratings of an item
    are mostly stored together) are coded once."""
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    change = np.fromiter(map(operator.ne, ids[1:], ids[:-1]), dtype=bool, count=n - 1)
    starts = np.concatenate([np.zeros(1, dtype=np.int64), np.flatnonzero(change) + 1])
    heads = [ids[k] for k in starts.tolist()]
    lengths = np.diff(np.append(starts, n))
    if all(map(operator.lt, heads[:-1], heads[1:])):  # stored in id order, each item once
        return np.repeat(np.arange(len(heads), dtype=np.int64), lengths), heads
    uniques = sorted(set(heads))
    pos = {x: k for k, x in enumerate(uniques)}
    head_codes = np.fromiter(map(pos.__getitem__, heads), dtype=np.int64, count=len(heads))
    return np.repeat(head_codes, lengths), uniques


def codes_from_frame(ratings: Any, codes: Sequence[str], only_items: Sequence[str] | None = None) -> RatingCodes:
    """:class:`RatingCodes` of a long ratings DataFrame (``item_id, rater_id, rater_kind, label,
    status`` and ``trial`` when a rater rated an item several times: trials are collapsed to
    their majority label, :func:`judgekit.agreement.trials.collapse_trials`)."""
    from judgekit.agreement.trials import collapse_trials

    if only_items is not None:
        ratings = ratings[ratings["item_id"].isin(set(map(str, only_items)))]
    if ratings.empty:
        return _empty()
    no_rater = ratings["rater_id"].isna().to_numpy()
    if no_rater.any():
        row = ratings.iloc[int(np.flatnonzero(no_rater)[0])]
        raise JudgekitError(f"Rating of item {str(row['item_id'])!r} has no rater_id; give every rating "
                            "the id of the rater who made it.")
    kinds = ratings.drop_duplicates("rater_id").set_index("rater_id")["rater_kind"]
    # rater ids as the frame has them (integers stay integers, as the per-item path kept them)
    kind_of = {r: str(k) for r, k in kinds.items()}
    raters = list(kind_of)
    rater_pos = {r: i for i, r in enumerate(raters)}

    def encode(frame: Any) -> RatingCodes | None:
        rater_codes = np.fromiter((rater_pos[r] for r in frame["rater_id"]), np.int64, len(frame))
        return _assemble(frame["item_id"].astype(str).tolist(), rater_codes, raters,
                         kind_of, _label_codes(frame, codes), _status_codes(frame["status"]))

    out = encode(ratings)
    if out is None:
        collapsed = collapse_trials(ratings)
        out = encode(collapsed)
        assert out is not None
        # the raters' order of first appearance is that of the ratings, not of the collapsed rows
        out = RatingCodes(out.items, out.raters, {r: kind_of[r] for r in raters if r in out.kinds},
                          out.labels, out.status, out.n_ratings)
    return out


def _label_codes(frame: Any, codes: Sequence[str]) -> np.ndarray:
    import pandas as pd

    pos = {c: i for i, c in enumerate(codes)}
    values = frame["label"].to_numpy(dtype=object)
    missing = pd.isna(values)
    out = np.fromiter((-1 if m else pos.get(v, -2) for v, m in zip(values, missing, strict=True)),
                      np.int64, len(values))
    bad = np.flatnonzero(out == -2)
    if bad.size:
        row = frame.iloc[int(bad[0])]
        raise JudgekitError(
            f"Rating of item {row['item_id']!r} by {row['rater_id']!r} has the label "
            f"{values[int(bad[0])]!r}, which is not one of the rubric's codes ({', '.join(codes)}); "
            "fix the label or compute agreement under the rubric it was given under."
        )
    return out


def _status_codes(status: Any) -> np.ndarray:
    import pandas as pd

    values = status.to_numpy(dtype=object)
    missing = pd.isna(values)
    return np.fromiter((NO_RATING if m else _STATUS.get(v, OTHER_STATUS)
                        for v, m in zip(values, missing, strict=True)), np.int8, len(values))


# ----------------------------------------------------------------------------- from a store
_RATERS_SQL = """
WITH RECURSIVE r(id) AS (
  SELECT min(rater_id) FROM ratings WHERE rubric = ?1 AND rubric_hash = ?2
  UNION ALL
  SELECT (SELECT min(rater_id) FROM ratings WHERE rubric = ?1 AND rubric_hash = ?2 AND rater_id > r.id)
  FROM r WHERE r.id IS NOT NULL
) SELECT id FROM r WHERE id IS NOT NULL
"""
_OTHER_RATINGS_SQL = (
    "SELECT EXISTS (SELECT 1 FROM ratings WHERE rubric < ?1) OR EXISTS (SELECT 1 FROM ratings WHERE rubric > ?1)"
    " OR EXISTS (SELECT 1 FROM ratings WHERE rubric = ?1 AND rubric_hash < ?2)"
    " OR EXISTS (SELECT 1 FROM ratings WHERE rubric = ?1 AND rubric_hash > ?2)"
)


_STALE_SQL = """
WITH RECURSIVE h(x) AS (
  SELECT min(rubric_hash) FROM ratings WHERE rubric = ?1
  UNION ALL
  SELECT (SELECT min(rubric_hash) FROM ratings WHERE rubric = ?1 AND rubric_hash > h.x) FROM h WHERE h.x IS NOT NULL
) SELECT x FROM h WHERE x IS NOT NULL AND x != ?2
"""


def stale_hashes(store: Any, rubric: Any) -> list[str]:
    """:meth:`judgekit.store.database.Store.stale_rubric_hashes` (the hashes of older edits of ``rubric``
    that have ratings, sorted) by one index seek per hash instead of a scan of the rubric's
    ratings."""
    return [h for (h,) in store.conn.execute(_STALE_SQL, (rubric.id, rubric.hash))]


def codes_from_store(store: Any, rubric: Any, *, variants: bool = False,
                     only_items: Sequence[str] | None = None) -> RatingCodes | None:
    """:class:`RatingCodes` of ``store``'s ratings under ``rubric`` (its current hash), read in one
    scan; None when the store needs the DataFrame path (see the module docstring)."""
    conn = store.conn
    key = (rubric.id, rubric.hash)
    raters = [r for (r,) in conn.execute(_RATERS_SQL, key)]
    codes = list(rubric.codes)
    if not raters:
        return _empty()
    if len(codes) > _MAX_CODES:
        return None
    kind_of = {r: conn.execute("SELECT rater_kind FROM ratings WHERE rubric = ? AND rubric_hash = ? "
                               "AND rater_id = ? LIMIT 1", (*key, r)).fetchone()[0] for r in raters}
    args: list[Any] = []
    # up to 75 raters: a code character each, made by SQL; more: the rater ids are read too
    # (one more string) and coded in Python, with no SQL variable per rater
    many = len(raters) > _MAX_CODES
    rater_case = "'0'" if many else "CASE rater_id " + " ".join("WHEN ? THEN ?" for _ in raters) + " END"
    for i, r in enumerate(raters if not many else ()):
        args += [r, chr(48 + i)]
    label_case = ("CASE WHEN label IS NULL THEN '0' " + " ".join("WHEN label = ? THEN ?" for _ in codes)
                  + " ELSE '/' END")
    for i, c in enumerate(codes):
        args += [c, chr(49 + i)]
    status_case = "CASE status WHEN 'ok' THEN '1' WHEN 'abstain' THEN '2' WHEN 'error' THEN '3' ELSE '4' END"
    trial_case = "CASE WHEN trial = 0 THEN '0' WHEN trial BETWEEN 1 AND 74 THEN char(48 + trial) ELSE '~' END"
    where = "rubric = ? AND rubric_hash = ?"
    args += list(key)
    if not variants:
        from judgekit.store.variants import variant_item_sql

        cond, more = variant_item_sql()
        where += f" AND {cond}"
        args += more
    # a full scan keeps storage order and, when the rubric holds most of the table, is faster
    # than the index; with other rubrics in the store the index finds the rows, sorted back
    (others,) = conn.execute(_OTHER_RATINGS_SQL, key).fetchone()
    rows = f"SELECT item_id, rater_id, label, status, trial FROM ratings NOT INDEXED WHERE {where}"
    if others:
        rows = f"SELECT item_id, rater_id, label, status, trial FROM ratings WHERE {where} ORDER BY rowid"
    rater_ids = ", group_concat(rater_id, char(10))" if many else ""
    sql = (f"SELECT count(*), group_concat(item_id, char(10)), "
           f"group_concat({rater_case} || {label_case} || {status_case} || {trial_case}, ''){rater_ids} FROM ({rows})")
    n, ids, cells, *who = conn.execute(sql, args).fetchone()
    if not n:
        return _empty()
    item_ids = ids.split("\n")
    packed = np.frombuffer(cells.encode("ascii"), dtype=np.uint8)
    if len(item_ids) != n or packed.size != 4 * n:
        return None  # an item id with a newline
    packed = packed.reshape(n, 4).astype(np.int64)
    if many:
        ids_of_raters = who[0].split("\n")
        if len(ids_of_raters) != n:
            return None  # a rater id with a newline
        rater_pos = {r: i for i, r in enumerate(raters)}
        packed[:, 0] = 48 + np.fromiter(map(rater_pos.__getitem__, ids_of_raters), dtype=np.int64, count=n)
    label_codes = packed[:, 1] - 49
    if (label_codes == 47 - 49).any():
        return None  # a label outside the rubric: the DataFrame path names it
    trial_codes = packed[:, 3] - 48
    return _assemble(item_ids, packed[:, 0] - 48, raters, kind_of, label_codes,
                     packed[:, 2].astype(np.int8) - 48, only_items,
                     None if (trial_codes == ord("~") - 48).any() else trial_codes)


def ok_labels(codes: RatingCodes, rater: str) -> np.ndarray:
    """``rater``'s label code per item of ``codes.items`` (N,), ``-1`` where it has no ``ok``
    rating (no rating, an abstention, an error, or trials that tie); all ``-1`` for a rater not in
    the matrix. What the probes and the alternative annotator test read of one rater."""
    if rater not in codes.raters:
        return np.full(len(codes.items), -1, dtype=np.int64)
    col = codes.column(rater)
    return np.where(codes.status[:, col] == OK, codes.labels[:, col], -1).astype(np.int64)
