"""Which labelling design needs the fewest human labels for the same interval: ``judgekit plan``
compares, on the pilot, a uniform sample, a sample stratified by the judges' labels and an active
sample (``judgekit sample --active``), each corrected by PPI++, at one interval width.

From the pilot's human labels (taken as a uniform sample of the items) and the judge's rating
of every item:

* the figure: the judge's mean rubric value per item (ordinal and interval rubrics), or the
  share of its most common label (nominal);
* the PPI++ residual ``r = (Y − θ̂) − λ̂ (f − θ̂)`` on the labelled items, λ̂ = Cov(Y, f)/Var(f)
  clipped to [0, 1];
* per *cell* (the judge's label and each panel judge's, :func:`judgekit.annotation.active.label_cells`:
  the cells a later round of ``sample --active`` learns its error in) the mean of r² and its
  within-cell variance, each shrunk toward the pilot's overall figure with ``PRIOR`` pseudo-labels;
* the labels each design needs for the variance the target width asks
  (:func:`judgekit.stats.active.labels_for_variance`): **uniform** (π = n/N, each item's
  expected r² its cell's), **stratified** (proportional to the cells, stratified PPI: the
  within-cell variance; at least 2 labels per cell), **active** (π ∝ sqrt of the cell's r², floored at 0.2 × n/N: the
  cost-optimal rule, Angelopoulos et al. 2025).

The width is the one uniform sampling reaches with ``--budget`` labels, else ±0.05. The units are
items; the comparison is a planning figure (the pilot's cell errors are estimates), and the
bench (``bench/active_labels.py``) measures what the rule saves on data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.annotation.active import label_cells
from judgekit.stats.active import design_variance, labels_for_variance
from judgekit.stats.intervals import z_two_sided

#: pseudo-labels shrinking a cell's error toward the pilot's overall
PRIOR = 5.0
#: fewer pilot labels than this: no comparison
MIN_PILOT = 10
#: the width compared without a budget (±0.05)
DEFAULT_WIDTH = 0.10


@dataclass(frozen=True)
class DesignComparison:
    """The labels each design needs for one interval ``width`` on ``figure`` (None: not
    reachable with every item labelled), from ``pilot`` labels on ``items`` items."""

    judge: str
    figure: str
    width: float
    pilot: int
    items: int
    uniform: int | None
    stratified: int | None
    active: int | None

    def line(self) -> str:
        def part(name: str, n: int | None) -> str:
            if n is None:
                return f"{name} not reachable"
            if self.uniform is None or name == "uniform":
                return f"{name} {n:,}"
            return f"{name} {n:,} ({1 - n / self.uniform:+.0%} fewer)".replace("(+", "(")
        return (f"{self.judge}: labels for one 95% interval of width {self.width:.3f} on the "
                f"corrected {self.figure} (from {self.pilot:,} pilot labels on {self.items:,} "
                f"items): {part('uniform', self.uniform)}; "
                f"{part('stratified by the judges’ labels', self.stratified)}; "
                f"{part('active (sample --active, π ∝ √error)', self.active)}.")

    def as_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "figure": self.figure, "width": self.width,
                "pilot": self.pilot, "items": self.items, "uniform": self.uniform,
                "stratified": self.stratified, "active": self.active}


def _shrunk(x: pd.Series, cells: pd.Series, overall: float) -> pd.Series:
    g = x.groupby(cells.reindex(x.index))
    return (g.sum() + PRIOR * overall) / (g.size() + PRIOR)


def compare_designs(judge: str, f: pd.Series, y: pd.Series, cells: pd.Series, *, figure: str,
                    budget: int | None = None, level: float = 0.95) -> DesignComparison | None:
    """The comparison (module doc) from the judge's value ``f`` per item, the people's ``y`` on
    the pilot's items and each item's ``cells``; None with fewer than :data:`MIN_PILOT` pilot
    labels or no spread in them."""
    f = f.astype(float).dropna()
    y = y.astype(float).dropna()
    y = y[y.index.isin(f.index)]
    if len(y) < MIN_PILOT or float(y.var(ddof=1)) <= 0:
        return None
    fl = f.reindex(y.index)
    theta = float(y.mean())
    vf = float(fl.var(ddof=1))
    lam = min(max(float(np.cov(y, fl, ddof=1)[0, 1]) / vf, 0.0), 1.0) if vf > 0 else 0.0
    r = (y - theta) - lam * (fl - theta)
    c = cells.reindex(f.index).fillna("-").astype(str)
    r2 = r * r
    sq = _shrunk(r2, c, float(r2.mean()))
    mean_c = r.groupby(c.reindex(r.index)).transform("mean")
    within = (r - mean_c) ** 2
    wv = _shrunk(within, c, float(within.mean()))
    overall = float(r2.mean())
    e_all = c.map(sq).fillna(overall).to_numpy(float)
    w_all = c.map(wv).fillna(float(within.mean())).to_numpy(float)
    var_y = float(y.var(ddof=1))
    z = z_two_sided(level)
    n_all = len(f)
    if budget:
        target = design_variance(e_all, var_y, float(min(budget, n_all)), active=False)
    else:
        target = (DEFAULT_WIDTH / (2 * z)) ** 2
    width = 2 * z * float(np.sqrt(target))
    strat = labels_for_variance(w_all, var_y, target, active=False)
    if strat is not None:  # stratified PPI needs 2 labels in every stratum
        strat = max(strat, 2 * int(c.nunique()))
    return DesignComparison(
        judge, figure, width, len(y), n_all,
        labels_for_variance(e_all, var_y, target, active=False), strat,
        labels_for_variance(e_all, var_y, target, active=True))


def _per_item(r: pd.DataFrame, value: Any) -> pd.Series:
    r = r[r["status"].eq("ok")] if "status" in r.columns else r
    r = r[r["label"].notna()]
    v = pd.Series(np.asarray(value(r["label"]), dtype=float), index=r.index)
    return v.groupby(r["item_id"].astype(str)).mean()


def plan_designs(store: Any, rubric: Any, judges: list[str], *, panel: list[str],
                 budget: int | None) -> list[DesignComparison]:
    """:func:`compare_designs` for each of ``judges`` (the other judges of ``panel`` its panel)
    on the store's pilot: the judges' ratings and the human (or reference) labels under
    ``rubric``; ``budget`` in items."""
    judged = store.ratings(rubric=rubric, rater_kind="judge")
    human = store.ratings(rubric=rubric, rater_kind=["human", "reference"])
    out = []
    for j in judges:
        mine = judged[judged["rater_id"] == j]
        if mine.empty or human.empty:
            continue
        if rubric.level in ("ordinal", "interval"):
            figure, vals, top = "mean value", dict(rubric.values), None
        else:
            top = str(mine["label"].mode().iloc[0])
            figure, vals = f"share of {top!r}", {}

        def value(s: pd.Series, vals: dict[str, float] = vals, top: str | None = top
                  ) -> pd.Series:
            return s.map(vals) if top is None else (s.astype(str) == top).astype(float)
        cells = label_cells(judged, [j, *[k for k in panel if k != j]])
        res = compare_designs(j, _per_item(mine, value), _per_item(human, value), cells,
                              figure=figure, budget=budget)
        if res is not None:
            out.append(res)
    return out
