"""``--correct ppi`` on an analysis result: the reference, the labelling design, the tables and
charts (what ``judgekit analyze ... --correct ppi`` calls; the CLI stays a thin layer).

Each function reads the reference's labels and the recorded labelling design from the store
(:mod:`judgekit.analysis.labelling_design`), builds the corrected-figure tables
(:mod:`~judgekit.analysis.calibration_ppi`, :mod:`~judgekit.analysis.distribution_ppi`,
:mod:`~judgekit.analysis.criteria_ppi`), appends them to the result (stamped UNTRUSTED when the
result is), with the design's description (and its warning, when the labels come from no
recorded design) in the notes, and, for calibration and distribution, charts drawing the raw
and the corrected figure side by side (solid: raw; dashed: corrected; each with its 95% CI).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from judgekit.analysis.calibration_ppi import (
    corrected_calibration,
    corrected_drift_by,
    paired_units,
)
from judgekit.analysis.criteria_ppi import corrected_criteria
from judgekit.analysis.criteria_spec import CriteriaFile
from judgekit.analysis.distribution_ppi import corrected_distribution
from judgekit.analysis.labelling_design import LabellingDesign, design_strata, find_sample
from judgekit.analysis.result import AnalysisResult, Chart, ChartPoint, Table
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric

DEFINITION = (
    "PPI++ (prediction-powered inference with the power-tuned λ; Angelopoulos, Bates, "
    "Fannjiang, Jordan & Zrnic 2023, Science 382:669; Angelopoulos, Duchi & Zrnic 2023, "
    "arXiv:2311.01453) with the conversation (or prompt) as the sampling unit; stratified PPI "
    "under a stratified labelling design (Fisch et al. 2024, arXiv:2406.04291); concordance by "
    "a cluster bootstrap. Raw = the judge over every unit (its interval: sampling noise only); "
    "human-only = the labelled units alone; effective labels = the labelled units the "
    "human-only figure would need for the corrected figure's precision.")


def labelling_design(store: Any, items: pd.DataFrame, reference: pd.DataFrame, *,
                     cluster_col: str, sample: str | None) -> LabellingDesign:
    """The design behind ``reference``'s labels (``--sample``, else the one recorded sample
    holding them, else none: a simple random sample with a warning)."""
    labelled = reference["item_id"].astype(str).unique().tolist()
    design, name = find_sample(store, labelled, sample)
    return design_strata(items, design, labelled=labelled, cluster_col=cluster_col, sample=name)


def _attach(result: AnalysisResult, tables: list[Table], design: LabellingDesign,
            reference: str, charts: Sequence[Chart] = ()) -> None:
    result.tables.extend(tables)
    result.charts.extend(charts)
    result.definitions["corrected (ppi)"] = f"{DEFINITION} Reference: {reference}."
    result.notes.append(f"Corrected figures (--correct ppi, reference {reference}): "
                        f"{design.description}.")
    if design.warning:
        result.notes.append(design.warning)
    result.meta["ppi"] = {"reference": reference, "sample": design.sample,
                          "stratified": design.strata is not None}
    if not result.trusted:
        result.stamp_untrusted(result.notes[0].split(": ", 1)[-1])


def _points(frame: pd.DataFrame, figure: str, group: str, x: str, value: str, lo: str,
            hi: str) -> dict[str, list[ChartPoint]]:
    out: dict[str, list[ChartPoint]] = {}
    for _, r in frame[frame["figure"] == figure].iterrows():
        why = "" if pd.notna(r[lo]) else (str(r["note"]) or "no interval")
        out.setdefault(str(r[group]), []).append(
            (r[x], r[value], r[lo], r[hi], int(r["n_labelled"]), why))
    return out


def raw_vs_corrected(key: str, title: str, frame: pd.DataFrame, figure: str, *, group: str,
                     x: str, y_label: str, unit: str, hline: float | None = None,
                     y_range: tuple[float, float] | None = None) -> Chart:
    """A chart of ``figure`` per ``group`` along ``x``: the judge's raw figure (solid) and the
    corrected one (dashed), each with its 95% interval."""
    return Chart(key, title, _points(frame, figure, group, x, "raw", "raw_ci_low", "raw_ci_high"),
                 x_label=x, y_label=y_label, y_range=y_range, hline=hline,
                 overlay=_points(frame, figure, group, x, "corrected", "ci_low", "ci_high"),
                 layers=("raw", "corrected"), n_label=f"labelled {unit}s",
                 ci_note=("95% intervals: raw = the judge's figure (sampling noise only); "
                          "corrected = PPI++ (the judge's error measured on the labelled "
                          f"{unit}s)"))


def add_ppi_calibration(result: AnalysisResult, store: Any, rubric: Rubric,
                        ratings: pd.DataFrame, reference: pd.DataFrame, reference_name: str,
                        items: pd.DataFrame, harm: pd.Series, *, sample: str | None,
                        model_col: str, prompt_col: str | None, lookalike_col: str,
                        include_lookalikes: bool, n_boot: int, seed: int,
                        by: Sequence[str] = ()) -> None:
    """Corrected C(t), RCE_t, Drift(t), Drift(t | tier), look-alike figures and Drift(t | col)
    for each ``by`` column on ``result``."""
    by = [c for c in by if c != model_col]
    units = paired_units(ratings, reference, items, harm, rubric, model_col=model_col,
                         prompt_col=prompt_col, lookalike_col=lookalike_col, by=by)
    cluster_col = str(result.meta.get("cluster") or "conversation_id")
    design = labelling_design(store, items, reference, cluster_col=cluster_col, sample=sample)
    unit = cluster_col.removesuffix("_id")
    tables = corrected_calibration(units, strata=design.strata,
                                   include_lookalikes=include_lookalikes, n_boot=max(n_boot, 1),
                                   seed=seed, unit=unit)
    if units["turn"].nunique() > 1:
        tables += [corrected_drift_by(units, col, strata=design.strata,
                                      include_lookalikes=include_lookalikes, unit=unit)
                   for col in by]
    charts = []
    for t in tables:
        if t.key == "ppi_by_turn":
            charts.append(raw_vs_corrected("ppi_drift_by_turn", "Drift(t): raw and corrected",
                                           t.frame, "Drift(t)", group="model", x="turn",
                                           y_label="Drift(t)", unit=unit, hline=0.0))
            charts.append(raw_vs_corrected("ppi_c_by_turn", "C(t): raw and corrected", t.frame,
                                           "C(t)", group="model", x="turn", y_label="C(t)",
                                           unit=unit, hline=0.5, y_range=(0.0, 1.0)))
        if t.key == "ppi_by_tier_turn":
            for model, g in t.frame.groupby("model", sort=True):
                g = g.assign(tier=g["tier"].map(lambda k: f"tier {k}"))
                charts.append(raw_vs_corrected(
                    f"ppi_drift_by_tier_{model}", f"Drift(t | tier) — {model}: raw and "
                    "corrected", g, "Drift(t | tier)", group="tier", x="turn",
                    y_label="Drift(t | tier)", unit=unit, hline=0.0))
    _attach(result, tables, design, reference_name, charts)


def add_ppi_distribution(result: AnalysisResult, store: Any, ratings: pd.DataFrame,
                         reference: pd.DataFrame, reference_name: str, items: pd.DataFrame, *,
                         indicator: Callable[[pd.Series], Any], codes: Sequence[str],
                         sample: str | None, model_col: str,
                         forms: tuple[pd.DataFrame, pd.DataFrame, Sequence[str]] | None = None
                         ) -> None:
    """Corrected refusal rates (per model, turn and prompt) and label shares on ``result``;
    ``forms`` = (the judge's and the reference's ratings under the form rubric, its codes)
    adds ``ppi_form_shares``, each form's corrected share."""
    ucols = list(result.meta.get("prompt_unit") or [])
    cluster_col = ucols[0] if ucols else "conversation_id"
    design = labelling_design(store, items, reference, cluster_col=cluster_col, sample=sample)
    tables = corrected_distribution(ratings, reference, items, indicator=indicator, codes=codes,
                                    model_col=model_col, cluster_col=cluster_col,
                                    prompt_cols=ucols, strata=design.strata)
    if forms is not None and len(forms[0]) and len(forms[1]):
        fs = corrected_distribution(forms[0], forms[1], items, indicator=indicator,
                                    codes=forms[2], model_col=model_col,
                                    cluster_col=cluster_col, strata=design.strata)
        for tb in fs:
            if tb.key == "ppi_shares":
                tables.append(Table("ppi_form_shares", "Corrected refusal-form shares per model",
                                    tb.frame, tb.description))
    charts = []
    rates = tables[0].frame
    by_turn = rates[rates["turn"].astype(str) != "all"]
    if len(by_turn):
        charts.append(raw_vs_corrected("ppi_rate_by_turn", "Refusal rate: raw and corrected",
                                       by_turn, "refusal rate", group="model", x="turn",
                                       y_label="refusal rate",
                                       unit=cluster_col.removesuffix("_id"),
                                       y_range=(0.0, 1.0)))
    _attach(result, tables, design, reference_name, charts)


def add_ppi_criteria(result: AnalysisResult, store: Any, spec: CriteriaFile,
                     ratings: pd.DataFrame, items: pd.DataFrame, *, rater: str | None,
                     reference: str | None, sample: str | None, source: str) -> None:
    """Each criterion's corrected rate (and comparison) on ``result``; the reference is
    ``reference``, else the store's one rater of kind ``reference``."""
    if reference is None:
        refs = sorted(ratings.loc[ratings["rater_kind"] == "reference", "rater_id"].astype(str)
                      .unique())
        if len(refs) != 1:
            raise JudgekitError(f"--correct needs the reference rater: the store has {len(refs)} "
                                "raters of kind reference; pass --reference RATER.")
        reference = refs[0]
    ref = ratings[ratings["rater_id"].astype(str) == reference]
    if ref.empty:
        raise JudgekitError(f"--reference {reference!r} has no ratings in the store; pass a "
                            "human or reference rater that labelled the items.")
    kinds = set(ref["rater_kind"].astype(str))
    if not kinds <= {"human", "reference"}:
        raise JudgekitError(f"--reference {reference!r} is a {sorted(kinds)[0]}, not a human or "
                            "reference rater; a judge's error measured against a judge corrects "
                            "nothing.")
    cluster_col = next((c for c in ("conversation_id", "prompt_id") if c in items.columns),
                       "item_id")
    design = labelling_design(store, items, ref, cluster_col=cluster_col, sample=sample)
    table = corrected_criteria(spec, ratings, ref, items, rater=rater, cluster_col=cluster_col,
                               strata=design.strata, source=source)
    _attach(result, [table], design, reference)
