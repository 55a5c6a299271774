"""Every calibration figure of one model for many bootstrap replicates at once, and their CIs.

A replicate is a row of unit weights (the multiplicity of each unit's cluster in the resample);
each figure is a weighted count (``np.bincount``) — C from a weighted H × R contingency table,
RCE, the signed error and mean R per turn and per tier × turn — so a thousand replicates cost a
few array operations, not a thousand loops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.stats.concordance import concordance_from_counts, levels, pair_counts
from judgekit.stats.intervals import bootstrap_stat, percentile_ci


def weighted_sums(
    w: np.ndarray, cell: np.ndarray, n_cells: int, values: np.ndarray | None = None
) -> np.ndarray:
    """Per replicate, the sum of unit weights (times ``values``) per cell: ``(b, n_cells)``.

    ``w`` is ``(b, n_units)``; ``cell`` is ``(n_units,)`` with -1 for units outside every cell.
    """
    b = w.shape[0]
    keep = cell >= 0
    ww = w[:, keep] if values is None else w[:, keep] * values[keep][None, :]
    idx = (np.arange(b)[:, None] * n_cells + cell[keep][None, :]).ravel()
    return np.bincount(idx, weights=ww.ravel(), minlength=b * n_cells).reshape(b, n_cells)


@dataclass
class UnitLayout:
    """Index arrays of one model's units, fixed across replicates."""

    n_units: int
    turns: np.ndarray  # sorted turn values
    tiers: np.ndarray  # sorted tier values
    turn_idx: np.ndarray
    tier_turn_idx: np.ndarray
    h_idx: np.ndarray
    r_idx: np.ndarray
    n_h: int
    n_r: int
    err: np.ndarray  # per unit: mean |R − H| over samples
    signed: np.ndarray  # per unit: mean (R − H)
    r_mean: np.ndarray


def unit_layout(units: pd.DataFrame) -> UnitLayout:
    """The :class:`UnitLayout` of one model's units (rows of
    :func:`judgekit.analysis.calibration.units.build_units`)."""
    turns, turn_idx = np.unique(units["turn"].to_numpy(float), return_inverse=True)
    tiers, tier_idx = np.unique(units["tier"].to_numpy(int), return_inverse=True)
    hv, h_idx = levels(units["H"].to_numpy(float))
    rv, r_idx = levels(units["R"].to_numpy(float))
    return UnitLayout(
        n_units=len(units),
        turns=turns,
        tiers=tiers,
        turn_idx=turn_idx,
        tier_turn_idx=tier_idx * len(turns) + turn_idx,
        h_idx=h_idx,
        r_idx=r_idx,
        n_h=len(hv),
        n_r=len(rv),
        err=units["err"].to_numpy(float),
        signed=units["signed"].to_numpy(float),
        r_mean=units["R"].to_numpy(float),
    )


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` elementwise, NaN where ``den`` is 0 (a cell without units)."""
    return np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)


def replicate_figures(w: np.ndarray, lay: UnitLayout) -> dict[str, np.ndarray]:
    """Every calibration figure of one model for unit weights ``w`` of shape ``(b, n_units)``."""
    b = w.shape[0]
    n_t, n_tier = len(lay.turns), len(lay.tiers)
    n_hr = lay.n_h * lay.n_r
    hr = lay.h_idx * lay.n_r + lay.r_idx
    out: dict[str, np.ndarray] = {}
    # C over all units, and per turn, from weighted H × R tables
    table = weighted_sums(w, hr, n_hr).reshape(b, lay.n_h, lay.n_r)
    for k, v in concordance_from_counts(*pair_counts(table)).items():
        out[k] = v
    table_t = weighted_sums(w, lay.turn_idx * n_hr + hr, n_t * n_hr).reshape(b, n_t, lay.n_h, lay.n_r)
    for k, v in concordance_from_counts(*pair_counts(table_t)).items():
        out[f"{k}_t"] = v
    total = w.sum(axis=1)
    out["rce"] = ratio(w @ lay.err, total)
    out["signed"] = ratio(w @ lay.signed, total)
    den_t = weighted_sums(w, lay.turn_idx, n_t)
    out["n_t"] = den_t
    out["rce_t"] = ratio(weighted_sums(w, lay.turn_idx, n_t, lay.err), den_t)
    out["signed_t"] = ratio(weighted_sums(w, lay.turn_idx, n_t, lay.signed), den_t)
    out["r_t"] = ratio(weighted_sums(w, lay.turn_idx, n_t, lay.r_mean), den_t)
    out["drift_t"] = out["rce_t"] - out["rce_t"][:, :1]
    n_tt = n_tier * n_t
    den_tt = weighted_sums(w, lay.tier_turn_idx, n_tt)
    rce_tt = ratio(weighted_sums(w, lay.tier_turn_idx, n_tt, lay.err), den_tt).reshape(b, n_tier, n_t)
    out["n_tt"] = den_tt.reshape(b, n_tier, n_t)
    out["rce_tt"] = rce_tt
    out["signed_tt"] = ratio(
        weighted_sums(w, lay.tier_turn_idx, n_tt, lay.signed), den_tt
    ).reshape(b, n_tier, n_t)
    out["r_tt"] = ratio(weighted_sums(w, lay.tier_turn_idx, n_tt, lay.r_mean), den_tt).reshape(
        b, n_tier, n_t
    )
    out["drift_tt"] = rce_tt - rce_tt[:, :, :1]
    return out


def bootstrap_cis(
    stat: Callable[[np.ndarray], dict[str, np.ndarray]],
    clusters: np.ndarray,
    *,
    n_boot: int,
    seed: int,
    progress: Callable[[int], None] | None,
    level: float = 0.95,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Percentile CIs at ``level`` for every figure ``stat`` returns, from one set of cluster resamples."""
    shapes: dict[str, tuple[int, ...]] = {}

    def flat(w: np.ndarray) -> np.ndarray:
        d = stat(w)
        parts = []
        for k, v in d.items():
            shapes[k] = v.shape[1:]
            parts.append(v.reshape(v.shape[0], -1))
        return np.concatenate(parts, axis=1)

    reps = bootstrap_stat(flat, clusters, n_boot=n_boot, seed=seed, progress=progress)
    if reps.size == 0:
        return {}
    lo, hi = percentile_ci(reps, level=level)
    # a figure that does not vary over the resamples (Drift at the first turn, C of one
    # cluster, a share 0 in every cluster) would get a zero-width interval, claiming a
    # certainty the sample does not give: it has none (shown as "no CI")
    flat_ = ~(np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float) > 0)
    lo = np.where(flat_, np.nan, lo)
    hi = np.where(flat_, np.nan, hi)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    pos = 0
    for k, shape in shapes.items():
        size = int(np.prod(shape)) if shape else 1
        out[k] = (lo[pos : pos + size].reshape(shape), hi[pos : pos + size].reshape(shape))
        pos += size
    return out
