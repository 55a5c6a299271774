"""Stability: does a judge asked the same item again give the same label?

For a judge with several trials per item (a panel judge's ``trials``), over the items with at
least two ``ok`` trials:

* ``alpha``: Krippendorff's α with the trials as raters (nominal for nominal rubrics, interval on
  the rubric's values otherwise), ``α = 1 − D_o / D_e`` from the coincidences: with ``n_uc`` the
  trials of unit u in label c and ``m_u = Σ_c n_uc``,
  ``D_o = (1/n) Σ_u Σ_{c,c'} n_uc n_uc' δ²_cc' / (m_u − 1)`` and
  ``D_e = Σ_{c,c'} n_c n_c' δ²_cc' / (n (n − 1))`` (Krippendorff 2011); its standard error is the
  spread of a bootstrap over items (Efron & Tibshirani 1993), its interval normal; the se is
  floored, when no item flips (every resample gives α = 1, se 0), at ``(1 − α_w) / 1.96`` with
  ``α_w = 1 − f_high · max δ² / D_e``, the α that the Wilson 95% upper bound ``f_high`` on the flip
  share still allows (``D_o <= f · max δ²``), so a judge with no flips on 39 items is not certain
  (f_high = 9%);
* ``flip_share``: the share of those items whose trials do not all agree, Wilson 95% CI, with the
  flipped items listed (id and the label of each trial).

α = 1 is a judge that never changes its mind; the probe's null band is ``alpha >= min``.

α and its resamples are computed by the agreement package's α (:mod:`judgekit.agreement.alpha`:
``alpha_from_counts`` for nominal, ``prepare_alpha`` on the values for interval), the one
implementation; the input is different from the agreement report's: the trials of one judge as
raters, which the store's items x raters code matrix does not hold (it collapses trials to their
majority), so the probe reads the judge's ok ratings with their trials. ``alpha_bound`` (the
floor of the se) is the probe's own figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.agreement.alpha import alpha_from_counts, prepare_alpha
from judgekit.agreement.figures import resample_weights
from judgekit.stats.intervals import Z95, wilson_interval


def _delta2(codes: Sequence[str], values: Sequence[float] | None) -> np.ndarray:
    v = len(codes)
    if values is None:
        return 1.0 - np.eye(v)
    x = np.asarray(values, dtype=float)
    return (x[:, None] - x[None, :]) ** 2


def _alpha_input(counts: np.ndarray, values: Sequence[float] | None) -> Any:
    """Krippendorff's α of the units x labels ``counts`` (every unit rated twice or more) as the
    agreement package computes it (:func:`judgekit.agreement.alpha.alpha_from_counts` for nominal,
    :func:`judgekit.agreement.alpha.prepare_alpha` on the labels' values for interval), ready to
    ``evaluate`` unit weights (B x units)."""
    if values is None:
        return alpha_from_counts(counts.astype(np.int64), np.ones(len(counts), dtype=np.int64), level="nominal")
    x = np.asarray(values, dtype=float)
    width = int(counts.sum(axis=1).max())
    table = np.full((width, len(counts)), np.nan)  # trials x units: each unit's values, then NaN
    for u, row in enumerate(counts.astype(np.int64)):
        vals = np.repeat(x, row)
        table[: len(vals), u] = vals
    return prepare_alpha(table, level="interval")


def stability(labels: pd.DataFrame, *, codes: Sequence[str], values: Sequence[float] | None = None,
              n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Stability of one judge across trials. ``labels``: its ``ok`` ratings, columns
    ``item_id``, ``trial``, ``label``; ``values`` (the rubric's, in ``codes`` order) for an
    interval α, None for a nominal one. See the module docstring."""
    index = {c: i for i, c in enumerate(codes)}
    per_item = labels.sort_values(["item_id", "trial"]).groupby("item_id", sort=True)["label"].agg(list)
    per_item = per_item[per_item.map(len) >= 2]
    n = len(per_item)
    out: dict[str, Any] = {"n": n, "trials": int(per_item.map(len).max()) if n else 0,
                           "level": "nominal" if values is None else "interval"}
    if n == 0:
        return {**out, "alpha": None, "se": None, "flip_share": None, "flip_low": None, "flip_high": None,
                "flipped": [], "undefined": "no item has two ok trials of this judge (give it trials: 2 or more)"}
    counts = np.zeros((n, len(codes)))
    for u, labs in enumerate(per_item):
        for lab in labs:
            counts[u, index[str(lab)]] += 1
    d2 = _delta2(codes, values)
    prepared = _alpha_input(counts, values)
    alpha = float(prepared.evaluate(np.ones((1, n)))[0])
    reps = np.concatenate([prepared.evaluate(w.astype(np.float64))
                           for w in resample_weights(np.ones(n, dtype=np.int64), n_resamples, seed)])
    reps = reps[np.isfinite(reps)]
    se = float(reps.std(ddof=1)) if len(reps) > 1 else None
    flipped = [{"item_id": str(i), "labels": [str(x) for x in labs]}
               for i, labs in per_item.items() if len(set(labs)) > 1]
    k = len(flipped)
    lo, hi = wilson_interval(k, n)
    # a bootstrap over items cannot see flips that did not happen (0 flips: se 0, a zero-width
    # interval); then the se is the distance to the α the Wilson upper bound on the flip share
    # still allows: D_o <= flip share × max δ², so α >= 1 − flip_high × max δ² / D_e
    m = counts.sum(axis=1)
    big = counts.sum(axis=0)
    n_pair = float(m.sum())
    d_e = float(big @ d2 @ big) / (n_pair * (n_pair - 1))
    alpha_bound = None
    if d_e > 0 and not np.isnan(alpha):
        alpha_bound = 1.0 - float(hi) * float(d2.max()) / d_e
        if k == 0:
            floor = (alpha - alpha_bound) / Z95
            se = floor if se is None else max(se, floor)
    return {**out, "alpha": None if np.isnan(alpha) else alpha, "se": se,
            "flip_share": k / n, "flip_low": float(lo), "flip_high": float(hi), "flipped": flipped,
            "alpha_bound": alpha_bound,
            "undefined": None if not np.isnan(alpha) else
            "α is undefined: every trial of every item has the same label (no expected disagreement)"}
