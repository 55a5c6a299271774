"""``--correct ppi`` on an analysis result: the reference, the labelling design, the tables and
charts (what ``judgekit analyze ... --correct ppi`` calls; the CLI stays a thin layer).

Each function reads the reference's labels and the recorded labelling design from the store
(:mod:`judgekit.analysis.correction.design`), builds the corrected-figure tables
(:mod:`~judgekit.analysis.calibration.corrected`, :mod:`~judgekit.analysis.distribution.corrected`,
:mod:`~judgekit.analysis.criteria.corrected`), appends them to the result (stamped UNTRUSTED when the
result is), with the design's description (and its warning, when the labels come from no
recorded design) in the notes, and, for calibration and distribution, charts drawing the raw
and the corrected figure side by side (solid: raw; dashed: corrected; each with its 95% CI).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from judgekit.analysis.correction.design import (
    LabellingDesign,
    Reference,
    design_strata,
    find_sample,
)
from judgekit.analysis.result import AnalysisResult, Chart, ChartPoint, Table
from judgekit.errors import JudgekitError

_DEFINITION = (
    "PPI++ (prediction-powered inference with the power-tuned λ; Angelopoulos, Bates, "
    "Fannjiang, Jordan & Zrnic 2023, Science 382:669; Angelopoulos, Duchi & Zrnic 2023, "
    "arXiv:2311.01453) with the conversation (or prompt) as the sampling unit; stratified PPI "
    "under a stratified labelling design (Fisch et al. 2024, arXiv:2406.04291); concordance by "
    "a cluster bootstrap. Raw = the judge over every unit (its interval: sampling noise only); "
    "human-only = the labelled units alone; effective labels = the labelled units the "
    "human-only figure would need for the corrected figure's precision.")


def labelling_design(reference: Reference, items: pd.DataFrame, *, cluster_col: str,
                     active: bool = False) -> LabellingDesign:
    """The design behind ``reference``'s labels (its ``sample``, else the one recorded sample
    holding them, else none: a simple random sample with a warning). An active sample is refused
    unless the caller corrects under it (``active``)."""
    labelled = reference.ratings["item_id"].astype(str).unique().tolist()
    design, name = find_sample(reference.store, labelled, reference.sample)
    out = design_strata(items, design, labelled=labelled, cluster_col=cluster_col, sample=name)
    if out.active is not None and not active:
        raise JudgekitError(f"sample {name!r} is an active design; these corrected figures do not "
                            "weight by its probabilities yet (use `analyze distribution` or "
                            "`analyze calibration`).")
    return out


#: what a raw-vs-corrected (``corrected*``) row takes from the corrected-figure row of its figure
_SHARED = ("raw", "raw_ci_low", "raw_ci_high", "corrected", "ci_low", "ci_high", "judge_error")


def _keys(frame: pd.DataFrame) -> list[str]:
    cols = [str(c) for c in frame.columns]
    return cols[:cols.index("figure")] if "figure" in cols else []


#: a corrected-figure row's counts and reference mean -> the ``corrected*`` row's column they fill
_OWN_N = (("n_units", "n_total"), ("n_units_labelled", "n_labelled"), ("human", "reference_labelled"))


def one_number(result: AnalysisResult, tables: Sequence[Table], *, unit: str = "item") -> None:
    """One figure, one number: a ``corrected*`` row of ``result`` (``--correct ppi``) whose
    figure a corrected-figure table of ``tables`` also holds (same figure, model and slice; the
    other keys ``all`` or absent) takes that row's figures, so under a stratified design too the
    two tables print one value and one interval (the stratified one). Every figure keeps its
    own n: the row also takes the units it was computed on (``n_total``, ``n_labelled``, and the
    reference's mean on the labelled ones), and ``n_unit`` says what they count: ``unit``, what
    the corrected-figure tables' ``n_units`` count (``prompt unit`` in calibration), for a taken
    row, ``item`` otherwise."""
    index: dict[tuple[str, ...], dict[Any, Any]] = {}
    for t in tables:
        keys = _keys(t.frame)
        for r in t.frame.to_dict("records"):
            own = tuple(f"{k}={r[k]}" for k in keys if str(r[k]) != "all")
            index.setdefault((str(r["figure"]), *sorted(own)), r)
    for t in result.tables:
        frame = t.frame
        if not (t.key == "corrected" or t.key.startswith("corrected_by_")) or frame.empty:
            continue
        if "method" not in frame.columns or not frame["method"].eq("ppi").all():
            continue
        keys = _keys(frame)
        units = ["item"] * len(frame)
        for j, (i, row) in enumerate(frame.iterrows()):
            hit = index.get((str(row["figure"]), *sorted(f"{k}={row[k]}" for k in keys)))
            if hit is not None:
                for col in _SHARED:
                    if col in frame.columns and col in hit:
                        frame.at[i, col] = hit[col]
                frame.at[i, "note"] = hit.get("note", "")
                if all(src in hit for src, _ in _OWN_N):
                    for src, col in _OWN_N:
                        frame.at[i, col] = hit[src]
                    units[j] = unit
        if "n_total" in frame.columns and "n_unit" not in frame.columns:
            frame.insert(list(frame.columns).index("n_total"), "n_unit", units)


def attach_ppi(result: AnalysisResult, tables: list[Table], design: LabellingDesign,
            reference: str, charts: Sequence[Chart] = (), *, unit: str = "item") -> None:
    """Append the corrected-figure ``tables`` (and ``charts``) to ``result`` with their notes,
    after :func:`one_number` (``unit``: what their ``n_units`` count)."""
    one_number(result, tables, unit=unit)
    result.tables.extend(tables)
    result.charts.extend(charts)
    result.definitions["corrected (ppi)"] = f"{_DEFINITION} Reference: {reference}."
    result.notes.append(f"Corrected figures (--correct ppi, reference {reference}): "
                        f"{design.description}.")
    if design.warning:
        result.notes.append(design.warning)
    result.meta["ppi"] = {"reference": reference, "sample": design.sample,
                          "stratified": design.strata is not None}
    if not result.trusted:
        result.stamp_untrusted()


def _points(frame: pd.DataFrame, figure: str, group: str, x: str, value: str, lo: str,
            hi: str) -> dict[str, list[ChartPoint]]:
    out: dict[str, list[ChartPoint]] = {}
    for _, r in frame[frame["figure"] == figure].iterrows():
        why = "" if pd.notna(r[lo]) else (str(r["note"]) or "no interval")
        out.setdefault(str(r[group]), []).append(
            (r[x], r[value], r[lo], r[hi], int(r["n_labelled"]), why))
    return out


def raw_vs_corrected(key: str, title: str, frame: pd.DataFrame, figure: str, *, group: str,
                     x: str, unit: str, hline: float | None = None,
                     y_range: tuple[float, float] | None = None) -> Chart:
    """A chart of ``figure`` per ``group`` along ``x``: the judge's raw figure (solid) and the
    corrected one (dashed), each with its 95% interval."""
    return Chart(key, title, _points(frame, figure, group, x, "raw", "raw_ci_low", "raw_ci_high"),
                 x_label=x, y_label=figure, y_range=y_range, hline=hline,
                 overlay=_points(frame, figure, group, x, "corrected", "ci_low", "ci_high"),
                 layers=("raw", "corrected"), n_label=f"labelled {unit}s",
                 ci_note=("95% intervals: raw = the judge's figure (sampling noise only); "
                          "corrected = PPI++ (the judge's error measured on the labelled "
                          f"{unit}s)"))
