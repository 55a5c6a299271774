"""Calibration figures corrected under an active labelling design (``judgekit sample --active``):
RCE, the signed error and mean R per model, RCE_t and Drift(t) per model and turn, RCE_t | tier
and Drift(t | tier), Drift(t | col) for each ``--by`` column — what ``judgekit analyze calibration --correct ppi`` prints when the
reference's labels come from an active sample.

Each figure is the mean of a per-unit quantity over prompt units (a conversation at one turn:
|R − H|, R − H, R) or of a per-conversation difference (Drift(t): ``d_i = |R_it − H| −
|R_i,base − H|``), estimated by the inverse-probability-weighted PPI++ of
:func:`judgekit.analysis.correction.active.active_mean_row` with the conversation as the unit of
the draw: each labelled conversation weighted by 1/its recorded probability, every figure a
domain estimate over the conversations it touches (a model, a turn, a tier).

Not under an active design: the concordance C and C(t) (a pairwise figure, estimated by a
cluster bootstrap that does not weight by the design) and the look-alike figures; they are left
out, and the result's notes say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.correction.active import ActiveRead, active_mean_row, read_active
from judgekit.analysis.correction.design import LabellingDesign
from judgekit.analysis.correction.ppi_attach import attach_ppi, raw_vs_corrected
from judgekit.analysis.correction.ppi_rows import ROW_COLUMNS
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.stats.ppi import turn_difference
from judgekit.stats.ppi_core import DRIFT_RANGE, UNIT_RANGE

#: what is left out under an active design, for the result's notes
LEFT_OUT = ("Under the active labelling design the concordance C and C(t) and the look-alike "
            "figures are left out: their estimators do not weight by the design's "
            "probabilities.")

_DESC = ("Raw (the judge's figure over every unit), human-only (the labelled conversations "
         "alone, each weighted by 1/its recorded probability) and corrected (PPI++ under the "
         "active design: Zrnic & Candès 2024), each with its 95% interval; n = labelled / all "
         "{unit}s; effective labels = how many uniformly drawn {unit}s the human-only figure "
         "would need for the corrected figure's precision; expected labels = the design's "
         "budget; uniform labels = the labelled {unit}s a uniform design would need for the "
         "same interval width.")


def _turn(t: Any) -> int | float:
    return int(t) if float(t).is_integer() else float(t)


def _drift_row(fig: str, arr: dict[str, np.ndarray], cl: np.ndarray, m: np.ndarray, t: float,
               base: float, read: ActiveRead, unit: str) -> dict[str, Any]:
    """Drift(t) on the units ``m``: the mean over conversations of ``d_i = e_it − e_i,base``."""
    turn = arr["turn"][m]  # float turns, compared by value
    ids, d_f = turn_difference(arr["err"][m], cl[m], turn, t, base)  # type: ignore[arg-type]
    ids_y, d_y = turn_difference(arr["err_y"][m], cl[m], turn, t, base)  # type: ignore[arg-type]
    y = pd.Series(d_y, index=ids_y).reindex(ids).to_numpy(float)
    return active_mean_row(fig, d_f, ids, y, read, bounds=DRIFT_RANGE, unit=unit)


def active_drift_by(units: pd.DataFrame, read: ActiveRead, col: str, *,
                    include_lookalikes: bool = False, unit: str = "conversation") -> Table:
    """``ppi_by_<col>_turn`` under the active design: Drift(t | col) per model, value of the
    ``--by`` column ``col`` (the units' ``by_<col>``) and turn."""
    u = units if include_lookalikes else units[~units["lookalike"].astype(bool)]
    cl = u["cluster"].astype(str).to_numpy()
    arr = {c: u[c].to_numpy(float) for c in ("err", "err_y", "turn")}
    turns = sorted(np.unique(arr["turn"]).tolist())
    model_of = u["model"].astype(str).to_numpy()
    value_of = u[f"by_{col}"].astype(str).to_numpy()
    rows = [{"model": model, col: value, "turn": _turn(t),
             **_drift_row(f"Drift(t | {col})", arr, cl, (model_of == model) & (value_of == value),
                          t, turns[0], read, unit)}
            for model in sorted(set(model_of.tolist()))
            for value in sorted(set(value_of[model_of == model].tolist()))
            for t in turns[1:]]
    frame = pd.DataFrame(rows, columns=["model", col, "turn", *ROW_COLUMNS, "expected_labels",
                                        "uniform_labels"])
    return Table(f"ppi_by_{col}_turn", f"Corrected Drift(t | {col}) per model, {col} and turn "
                 "(active design)", frame, _DESC.format(unit=unit))


def active_calibration_tables(units: pd.DataFrame, read: ActiveRead, *,
                              include_lookalikes: bool = False,
                              unit: str = "conversation") -> list[Table]:
    """``ppi_summary``, ``ppi_by_turn`` and ``ppi_by_tier_turn`` under the active design
    ``read`` (its clusters the units' ``cluster``), from the paired prompt units of
    :func:`judgekit.analysis.calibration.corrected.pair_units` (``err``/``err_y``,
    ``signed``/``signed_y``, ``R``/``R_y``, ``model``, ``turn``, ``tier``, ``lookalike``)."""
    u = units if include_lookalikes else units[~units["lookalike"].astype(bool)]
    cl = u["cluster"].astype(str).to_numpy()
    arr = {c: u[c].to_numpy(float) for c in ("err", "err_y", "signed", "signed_y", "R", "R_y",
                                              "turn", "tier")}
    model_of = u["model"].astype(str).to_numpy()
    turns = sorted(np.unique(arr["turn"]).tolist())
    base = turns[0] if turns else 1.0

    def mean(fig: str, m: np.ndarray, col: str, bounds: tuple[float, float] = UNIT_RANGE
             ) -> dict[str, Any]:
        return active_mean_row(fig, arr[col][m], cl[m], arr[f"{col}_y"][m], read,
                               bounds=bounds, unit=unit)

    def drift(fig: str, m: np.ndarray, t: float) -> dict[str, Any]:
        return _drift_row(fig, arr, cl, m, t, base, read, unit)

    summary: list[dict[str, Any]] = []
    by_turn: list[dict[str, Any]] = []
    by_tier: list[dict[str, Any]] = []
    for model in sorted(set(model_of.tolist())):
        mu = model_of == model
        key = {"model": model}
        summary += [{**key, **mean("RCE", mu, "err")},
                    {**key, **mean("signed error E[R − H]", mu, "signed", DRIFT_RANGE)},
                    {**key, **mean("mean R", mu, "R")}]
        for t in turns:
            tk = {**key, "turn": _turn(t)}
            by_turn.append({**tk, **mean("RCE_t", mu & (arr["turn"] == t), "err")})
            if t != base:
                by_turn.append({**tk, **drift("Drift(t)", mu, t)})
        for tier in sorted(np.unique(arr["tier"][mu]).tolist()):
            mt = mu & (arr["tier"] == tier)
            for t in turns:
                gt = mt & (arr["turn"] == t)
                if not gt.any():
                    continue
                tk = {**key, "tier": int(tier), "turn": _turn(t)}
                by_tier.append({**tk, **mean("RCE_t | tier", gt, "err")})
                if t != base:
                    by_tier.append({**tk, **drift("Drift(t | tier)", mt, t)})
    cols = [*ROW_COLUMNS, "expected_labels", "uniform_labels"]
    desc = _DESC.format(unit=unit)
    return [Table(k, title, pd.DataFrame(rows, columns=[*keys, *cols]), desc)
            for k, title, rows, keys in [
                ("ppi_summary", "Corrected calibration per model (active design): RCE, signed "
                 "error, mean R", summary, ["model"]),
                ("ppi_by_turn", "Corrected RCE_t and Drift(t) per model and turn (active design)",
                 by_turn, ["model", "turn"]),
                ("ppi_by_tier_turn", "Corrected RCE_t and Drift(t | tier) per model, tier and "
                 "turn (active design)", by_tier, ["model", "tier", "turn"])]
            if rows]


def add_active_calibration(result: AnalysisResult, units: pd.DataFrame, design: LabellingDesign,
                           reference: str, *, items: pd.DataFrame, cluster_col: str,
                           include_lookalikes: bool, by: Sequence[str] = ()) -> None:
    """``analyze calibration --correct ppi`` on an active sample (``design.active``): the
    tables of :func:`active_calibration_tables`, Drift(t | col) for each ``--by`` column
    (:func:`active_drift_by`, with more than one turn) and the Drift(t) chart on ``result``."""
    assert design.active is not None
    unit = cluster_col.removesuffix("_id")
    read = read_active(items, design.active, cluster_col)
    tables = active_calibration_tables(units, read, include_lookalikes=include_lookalikes,
                                       unit=unit)
    if units["turn"].nunique() > 1:
        tables += [active_drift_by(units, read, col, include_lookalikes=include_lookalikes,
                                   unit=unit) for col in by]
    charts = [raw_vs_corrected("ppi_drift_by_turn", "Drift(t): raw and corrected (active "
                               "design)", t.frame, "Drift(t)", group="model", x="turn",
                               unit=unit, hline=0.0)
              for t in tables if t.key == "ppi_by_turn"]
    result.notes.append(LEFT_OUT)
    unweighted = [t for t in result.tables
                  if t.key == "corrected" or t.key.startswith("corrected_by_")]
    if unweighted:
        result.tables[:] = [t for t in result.tables if t not in unweighted]
        result.notes.append("The unweighted corrected tables are left out: the labels come "
                            "from an active design, which only the weighted tables correct for.")
    attach_ppi(result, tables, design, reference, charts, unit="prompt unit")
