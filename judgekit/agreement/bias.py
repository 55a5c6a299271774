"""Signed bias of a judge against the reference, on the items both rated.

Agreement coefficients are blind to direction: a judge one level too strict on every item keeps
a high weighted κ. The signed bias says which way and how much.

* Ordinal/interval rubrics: ``mean_diff = (1/n) Σ_i (v(judge_i) − v(ref_i))``, the mean signed
  difference on the rubric's label values (``value`` in the rubric file, e.g. 0, 0.25, …, 1), so
  +0.05 means the judge rates 0.05 higher on the rubric's scale on average.
* Every rubric: ``share_diff[c] = p_judge(c) − p_ref(c)``, the difference between the share of
  items the judge and the reference put in label c (the two marginals of the confusion matrix on
  the items both rated; the shares each sum to 1, so the differences sum to 0).
* ``max_abs``: the figure a ``max_abs_bias`` check reads: for ordinal/interval rubrics
  ``|mean_diff|`` (``code`` None, ``of`` "mean_diff"); for nominal ones the largest
  ``|share_diff[c]|`` and its code (the first in rubric order on a tie). ``signed``, ``low`` and
  ``high`` are that figure's signed value and CI.

CIs: percentile bootstrap over items (Efron & Tibshirani 1993, ch. 13); an item's pattern is its
(reference, judge) confusion cell, so resamples are multinomial draws over at most V² cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement.figures import fig, num, percentile_bounds, resample_weights, undefined_fig


def signed_bias(
    reference: np.ndarray,
    judge: np.ndarray,
    *,
    codes: Sequence[str],
    values: Sequence[float],
    level: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """Signed bias of ``judge`` against ``reference`` (int code arrays over the same items, -1
    missing; codes index ``codes`` and ``values``)."""
    v = len(codes)
    reference, judge = np.asarray(reference), np.asarray(judge)
    both = (reference >= 0) & (judge >= 0)
    n = int(both.sum())
    numeric = level in ("ordinal", "interval")
    if n == 0:
        why = "no item was rated by both the judge and the reference"
        return {"n": 0, "mean_diff": undefined_fig(why) if numeric else None,
                "share_diff": {c: undefined_fig(why) for c in codes},
                "max_abs": {"value": None, "signed": None, "low": None, "high": None, "code": None,
                            "of": "mean_diff" if numeric else "share_diff", "n": 0, "undefined": why}}
    counts = np.bincount(reference[both] * v + judge[both], minlength=v * v)
    cells = np.flatnonzero(counts)
    ref_of, judge_of = cells // v, cells % v
    vals = np.asarray(values, dtype=float)
    # per cell: its signed value difference and its +1 / -1 contribution to each label's share
    diff = vals[judge_of] - vals[ref_of]
    share = (judge_of[:, None] == np.arange(v)).astype(float) - (ref_of[:, None] == np.arange(v)).astype(float)
    per_cell = np.hstack([diff[:, None], share]) / n  # (K, 1 + V)

    observed = np.einsum("k,kj->j", counts[cells].astype(float), per_cell)
    draws = [np.einsum("bk,kj->bj", w, per_cell) for w in resample_weights(counts[cells], n_resamples, seed, cost=per_cell.size)]
    lo, hi = percentile_bounds(np.vstack(draws), confidence) if draws else (np.full(1 + v, np.nan),) * 2
    figures = [fig(observed[i], (lo[i], hi[i]), n) for i in range(1 + v)]
    out: dict[str, Any] = {"n": n, "mean_diff": figures[0] if numeric else None,
                           "share_diff": dict(zip(codes, figures[1:], strict=True))}
    if numeric:
        top, code, of = figures[0], None, "mean_diff"
    else:
        pick = int(np.argmax(np.abs(np.round(observed[1:], 12))))
        top, code, of = figures[1 + pick], codes[pick], "share_diff"
    out["max_abs"] = {"value": num(abs(top["value"])), "signed": top["value"], "low": top["low"],
                      "high": top["high"], "code": code, "of": of, "n": n, "undefined": None}
    return out
