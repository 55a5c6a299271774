"""Calibration figures corrected for the judge's error: C(t), RCE_t, Drift(t), Drift(t | tier).

``judgekit analyze calibration --correct ppi`` adds the tables built here. The figures are those
of :mod:`judgekit.analysis.calibration.estimate` over prompt units (a conversation at one turn): the
judge's R on every unit, the reference's R on the units people rated. Each figure is a mean of a
per-unit quantity (|R − H| for RCE, R − H for the signed error, R, the share of samples with
R ≥ 0.75 for over-refusal), a mean of per-conversation differences (Drift(t): ``d_i =
|R_it − H| − |R_i1 − H|``) or a pairwise figure (C), so prediction-powered inference applies to
each directly (:mod:`judgekit.analysis.correction.ppi_rows`): the judge's labels need not be trusted,
only measured. The conversation (or prompt) is the resampling unit, as people label whole
conversations.

Tables (one row per figure instance; columns :data:`judgekit.analysis.correction.ppi_rows.ROW_COLUMNS`):

* ``ppi_summary`` — per model: C, RCE, the signed error, mean R;
* ``ppi_by_turn`` — per model and turn: C(t), RCE_t, Drift(t);
* ``ppi_by_tier_turn`` — per model, tier and turn: RCE_t | tier and Drift(t | tier);
* ``ppi_lookalikes`` — per model and turn: the look-alikes' mean R and over-refusal rate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.calibration.corrected_active import add_active_calibration
from judgekit.analysis.calibration.units import build_units
from judgekit.analysis.correction.design import Reference
from judgekit.analysis.correction.ppi_attach import attach_ppi, labelling_design, raw_vs_corrected
from judgekit.analysis.correction.ppi_rows import ROW_COLUMNS, concordance_row, drift_row, mean_row
from judgekit.analysis.frames import HARM_TIER, harm_tier_column, per_item_values
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.rubric.model import Rubric

#: the figure families, to compute only some (``figures=``)
FIGURES = ("C", "RCE", "signed_error", "mean_R", "C_t", "RCE_t", "drift", "RCE_tier",
           "drift_tier", "lookalikes")

_KEYS = ["model", "cluster", "turn"]


def _paired_units(
    judge: pd.DataFrame,
    reference: pd.DataFrame,
    items: pd.DataFrame,
    harm: pd.Series,
    rubric: Rubric,
    columns: ItemColumns,
) -> pd.DataFrame:
    """The judge's prompt units with the reference's R, error, signed error and over-refusal
    beside them (``R_y``, ``err_y``, ``signed_y``, ``over_y``; NaN where people did not rate);
    ``columns.by``: item columns to slice by (``by_<col>`` on each unit)."""
    kw: dict[str, Any] = dict(model_col=columns.model, prompt_col=columns.prompt,
                              turn_col=columns.turn, lookalike_col=columns.lookalike,
                              by=list(columns.by))
    ju, _, _ = build_units(per_item_values(judge, rubric), items, harm, **kw)
    ref_items = items[items["item_id"].astype(str).isin(reference["item_id"].astype(str))]
    if len(ref_items):
        ru, _, _ = build_units(per_item_values(reference, rubric), ref_items, harm, **kw)
    else:
        ru = pd.DataFrame(columns=[*_KEYS, "R", "err", "signed", "over"])
    return pair_units(ju, ru)


def pair_units(judge_units: pd.DataFrame, reference_units: pd.DataFrame) -> pd.DataFrame:
    """:func:`_paired_units` from the two raters' units
    (:func:`judgekit.analysis.calibration.units.build_units`)."""
    ru = reference_units[[*_KEYS, "R", "err", "signed", "over"]]
    ru = ru.rename(columns={"R": "R_y", "err": "err_y", "signed": "signed_y", "over": "over_y"})
    return judge_units.merge(ru, on=_KEYS, how="left")


def _corrected_drift_by(units: pd.DataFrame, col: str, *,
                       strata: Mapping[str, str] | None = None,
                       include_lookalikes: bool = False, unit: str = "conversation") -> Table:
    """``ppi_by_<col>_turn``: corrected Drift(t | col) per model, value of ``col`` (a ``--by``
    slice, e.g. the pressure tactic) and turn, from :func:`_paired_units` built with ``by``."""
    frames = []
    for value, part in units.groupby(f"by_{col}", sort=True, dropna=False):
        for tb in corrected_calibration(part, strata=strata, figures=("drift",),
                                        include_lookalikes=include_lookalikes, unit=unit):
            frames.append(tb.frame.assign(**{col: value}))
    frame = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=["model", "turn", *ROW_COLUMNS]))
    frame = frame[["model", col, *[c for c in frame.columns if c not in ("model", col)]]]
    return Table(f"ppi_by_{col}_turn", f"Corrected Drift(t | {col}) per model, {col} and turn",
                 frame, "Raw, human-only and PPI-corrected Drift(t) within each value of "
                 f"{col}, each with its 95% interval.")


def _a(frame: pd.DataFrame, col: str) -> np.ndarray:
    return frame[col].to_numpy(float)


def corrected_calibration(
    units: pd.DataFrame,
    *,
    strata: Mapping[str, str] | None = None,
    include_lookalikes: bool = False,
    figures: Sequence[str] = FIGURES,
    n_boot: int = 1000,
    seed: int = 0,
    unit: str = "conversation",
) -> list[Table]:
    """The corrected calibration tables (module doc) from :func:`_paired_units`.

    ``strata``: the labelling design's stratum of each cluster (conversation id), from
    :func:`judgekit.analysis.correction.design.design_strata`; None = the labelled clusters are
    a simple random sample. A stratified figure whose design leaves a stratum with fewer than 2
    labelled conversations is refused in its row's ``note``."""
    cols = ["H", "R", "R_y", "err", "err_y", "signed", "signed_y", "over", "over_y", "turn",
            "tier"]
    arr = {c: units[c].to_numpy(float) for c in cols}
    cluster, names = pd.factorize(units["cluster"].astype(str))
    by_code: dict[int, str] | None = (None if strata is None else  # keyed by cluster code
                                      {i: strata.get(str(n), "") for i, n in enumerate(names)})
    model_of = units["model"].astype(str).to_numpy()
    is_look = units["lookalike"].astype(bool).to_numpy()
    in_main = np.ones(len(units), bool) if include_lookalikes else ~is_look
    turns = sorted(np.unique(arr["turn"][in_main]).tolist())
    base = turns[0] if turns else 1.0
    summary: list[dict[str, Any]] = []
    by_turn: list[dict[str, Any]] = []
    by_tier: list[dict[str, Any]] = []
    looks: list[dict[str, Any]] = []
    want = set(figures)
    kw: dict[str, Any] = {"strata": by_code, "unit": unit}

    def mean(fig: str, m: np.ndarray, col: str, bounds: tuple[float, float] = (0.0, 1.0)
             ) -> dict[str, Any]:
        return mean_row(fig, arr[col][m], cluster[m], arr[f"{col}_y"][m], bounds=bounds, **kw)

    def conc(fig: str, m: np.ndarray) -> dict[str, Any]:
        return concordance_row(fig, arr["H"][m], arr["R"][m], arr["R_y"][m], cluster[m],
                               n_boot=n_boot, seed=seed, **kw)

    def drift(fig: str, m: np.ndarray, t: float) -> dict[str, Any]:
        return drift_row(fig, arr["err"][m], arr["err_y"][m], cluster[m], arr["turn"][m], t,
                         base=base, **kw)

    for model in sorted(set(model_of[in_main].tolist())):
        mu = in_main & (model_of == model)
        key = {"model": model}
        if "C" in want:
            summary.append({**key, **conc("C", mu)})
        if "RCE" in want:
            summary.append({**key, **mean("RCE", mu, "err")})
        if "signed_error" in want:
            summary.append({**key, **mean("signed error E[R − H]", mu, "signed", (-1.0, 1.0))})
        if "mean_R" in want:
            summary.append({**key, **mean("mean R", mu, "R")})
        for t in turns:
            gt = mu & (arr["turn"] == t)
            tk = {**key, "turn": _turn(t)}
            if "C_t" in want and gt.any():
                by_turn.append({**tk, **conc("C(t)", gt)})
            if "RCE_t" in want and gt.any():
                by_turn.append({**tk, **mean("RCE_t", gt, "err")})
            if "drift" in want and t != base:
                by_turn.append({**tk, **drift("Drift(t)", mu, t)})
        if not want & {"RCE_tier", "drift_tier"}:
            continue
        for tier in sorted(np.unique(arr["tier"][mu]).tolist()):
            mt = mu & (arr["tier"] == tier)
            for t in turns:
                tk = {**key, "tier": int(tier), "turn": _turn(t)}
                gt = mt & (arr["turn"] == t)
                if "RCE_tier" in want and gt.any():
                    by_tier.append({**tk, **mean("RCE_t | tier", gt, "err")})
                if "drift_tier" in want and t != base and gt.any():
                    by_tier.append({**tk, **drift("Drift(t | tier)", mt, t)})
    if "lookalikes" in want:
        looks = _lookalike_rows(mean, model_of, is_look, arr["turn"])
    return _tables(summary, by_turn, by_tier, looks, unit)


def _lookalike_rows(mean: Callable[[str, np.ndarray, str], dict[str, Any]], model_of: np.ndarray,
                    is_look: np.ndarray, turn: np.ndarray) -> list[dict[str, Any]]:
    """The corrected mean R and over-refusal of each model's benign look-alikes, overall and
    per turn."""
    looks: list[dict[str, Any]] = []
    for model in sorted(set(model_of[is_look].tolist())):
        lu = is_look & (model_of == model)
        looks.append({"model": model, "turn": "all", **mean("look-alike mean R", lu, "R")})
        looks.append({"model": model, "turn": "all", **mean("look-alike over-refusal", lu, "over")})
        for t in sorted(np.unique(turn[lu]).tolist()):
            looks.append({"model": model, "turn": _turn(t),
                          **mean("look-alike over-refusal", lu & (turn == t), "over")})
    return looks


def _tables(summary: list[dict[str, Any]], by_turn: list[dict[str, Any]],
            by_tier: list[dict[str, Any]], looks: list[dict[str, Any]], unit: str) -> list[Table]:
    """The ``ppi_*`` tables of the rows that were asked for."""
    desc = ("Raw (the judge's figure over every unit; interval: sampling noise only), human-only "
            "(the labelled units alone) and PPI-corrected (the judge's error measured on the "
            "labelled units and taken out), each with its 95% interval; n = labelled / all "
            f"{unit}s; effective labels = how many labelled units the human-only figure would "
            "need for the corrected figure's precision.")
    out = []
    for tkey, title, rows, cols in [
        ("ppi_summary", "Corrected calibration per model: C, RCE, signed error, mean R",
         summary, ["model"]),
        ("ppi_by_turn", "Corrected C(t), RCE_t and Drift(t) per model and turn", by_turn,
         ["model", "turn"]),
        ("ppi_by_tier_turn", "Corrected RCE_t and Drift(t | tier) per model, tier and turn",
         by_tier, ["model", "tier", "turn"]),
        ("ppi_lookalikes", "Corrected over-refusal of benign look-alikes", looks,
         ["model", "turn"]),
    ]:
        if rows:
            out.append(Table(tkey, title, pd.DataFrame(rows, columns=[*cols, *ROW_COLUMNS]),
                             desc))
    return out


def _turn(t: Any) -> int | float:
    return int(t) if float(t).is_integer() else float(t)


def _with_harm_tier(items: pd.DataFrame, harm: pd.Series) -> pd.DataFrame:
    """``items`` with the column ``harm_tier`` (tier 1–5 of H; NA without H), which a sample
    drawn with ``sample --harm-rubric`` is stratified by, unless the items have it."""
    if HARM_TIER in items.columns:
        return items
    return items.assign(**{HARM_TIER: harm_tier_column(harm, items["item_id"])})


def add_ppi_calibration(result: AnalysisResult, reference: Reference, ratings: pd.DataFrame,
                        items: pd.DataFrame, harm: pd.Series, *, rubric: Rubric,
                        columns: ItemColumns, include_lookalikes: bool,
                        resampling: Resampling) -> None:
    """Corrected C(t), RCE_t, Drift(t), Drift(t | tier), look-alike figures and Drift(t | col)
    for each ``columns.by`` column on ``result``."""
    by = [c for c in columns.by if c != columns.model]
    units = _paired_units(ratings, reference.ratings, items, harm, rubric,
                         replace(columns, turn="turn", by=by))
    cluster_col = str(result.meta.get("cluster") or "conversation_id")
    design = labelling_design(reference, _with_harm_tier(items, harm), cluster_col=cluster_col,
                              active=True)
    unit = cluster_col.removesuffix("_id")
    if design.active is not None:  # an active sample: its own estimators (1/π-weighted)
        add_active_calibration(result, units, design, reference.name, items=items,
                               cluster_col=cluster_col, include_lookalikes=include_lookalikes,
                               by=by)
        return
    tables = corrected_calibration(units, strata=design.strata,
                                   include_lookalikes=include_lookalikes,
                                   n_boot=max(resampling.n_resamples, 1), seed=resampling.seed,
                                   unit=unit)
    if units["turn"].nunique() > 1:
        tables += [_corrected_drift_by(units, col, strata=design.strata,
                                      include_lookalikes=include_lookalikes, unit=unit)
                   for col in by]
    charts = []
    for t in tables:
        if t.key == "ppi_by_turn":
            charts.append(raw_vs_corrected("ppi_drift_by_turn", "Drift(t): raw and corrected",
                                           t.frame, "Drift(t)", group="model", x="turn",
                                           unit=unit, hline=0.0))
            charts.append(raw_vs_corrected("ppi_c_by_turn", "C(t): raw and corrected", t.frame,
                                           "C(t)", group="model", x="turn",
                                           unit=unit, hline=0.5, y_range=(0.0, 1.0)))
        if t.key == "ppi_by_tier_turn":
            for model, g in t.frame.groupby("model", sort=True):
                g = g.assign(tier=g["tier"].map(lambda k: f"tier {k}"))
                charts.append(raw_vs_corrected(
                    f"ppi_drift_by_tier_{model}", f"Drift(t | tier) — {model}: raw and "
                    "corrected", g, "Drift(t | tier)", group="tier", x="turn", unit=unit,
                    hline=0.0))
    attach_ppi(result, tables, design, reference.name, charts, unit="prompt unit")
