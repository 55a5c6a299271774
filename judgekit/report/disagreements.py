"""The report's worst disagreements from the agreement report's code matrix
(:class:`judgekit.agreement.rating_codes.RatingCodes`), without reading the ratings again.

The same list as :func:`judgekit.report.collect.worst_disagreements` computes from the ratings
(see there for the order: the largest distance between the two labels' rubric values first,
then the items where the most humans agree with the reference, then a hash of the item id): the
labels are the ``ok`` ratings (trials already collapsed to their majority), the reference is the
adjudicated rater's label or the humans' majority (None on a tie). Only the items that can still
reach the top ``per_judge`` have their id hashed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from judgekit.agreement.rating_codes import OK, RatingCodes
from judgekit.agreement.report import consensus_codes
from judgekit.rubric.model import Rubric


def worst_from_codes(codes: RatingCodes, rubric: Rubric, agreement: dict[str, Any], *,
                     per_judge: int) -> list[dict[str, Any]]:
    """Entries ``item_id, judge_id, judge_label, reference, humans, distance`` (no excerpts)."""
    if codes.empty or per_judge <= 0:
        return []
    judges = [str(j) for j in agreement.get("judges") or []]
    humans = [str(h) for h in agreement.get("humans") or []]
    ref_rater = (agreement.get("reference") or {}).get("rater")
    ok = codes.status == OK
    labels = np.where(ok, codes.labels, -1)
    with_ok = {r for i, r in enumerate(codes.raters) if ok[:, i].any()}  # the pivot's columns
    hcols = [h for h in humans if h in with_ok]
    hidx = [codes.column(h) for h in hcols]
    if ref_rater:
        if ref_rater not in with_ok:
            return []
        ref = labels[:, codes.column(ref_rater)]
    elif hcols:
        ref = consensus_codes(labels[:, hidx], len(rubric.codes))
    else:
        return []
    names = np.array(rubric.codes, dtype=object)
    values = np.array([float(rubric.values[c]) for c in rubric.codes])
    out: list[dict[str, Any]] = []
    for j in judges:
        if j not in with_ok:
            continue
        judge = labels[:, codes.column(j)]
        rows = np.flatnonzero((judge >= 0) & (ref >= 0) & (judge != ref))
        if rows.size == 0:
            continue
        distance = np.abs(values[judge[rows]] - values[ref[rows]])
        sure = ((labels[rows][:, hidx] == ref[rows, None]).sum(axis=1) if hidx
                else np.zeros(rows.size, dtype=np.int64))
        order = np.lexsort((-sure, -distance))  # distance, then sure, both descending
        if order.size > per_judge:
            # every item tied with the last one kept may still enter on its hash
            d, s = distance[order[per_judge - 1]], sure[order[per_judge - 1]]
            better = (distance > d) | ((distance == d) & (sure > s))
            order = np.flatnonzero(better | ((distance == d) & (sure == s)))
        spread = [hashlib.sha256(str(codes.items[rows[i]]).encode()).hexdigest() for i in order]
        ranked = sorted(range(order.size), key=lambda k: (-distance[order[k]], -sure[order[k]], spread[k]))
        for k in ranked[:per_judge]:
            r = int(rows[order[k]])
            hum = {h: str(names[labels[r, c]]) for h, c in zip(hcols, hidx, strict=True) if labels[r, c] >= 0}
            out.append({"item_id": str(codes.items[r]), "judge_id": j, "judge_label": str(names[judge[r]]),
                        "reference": str(names[ref[r]]), "humans": hum,
                        "distance": round(float(distance[order[k]]), 6)})
    return out
