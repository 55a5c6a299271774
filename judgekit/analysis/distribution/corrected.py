"""Distribution figures corrected for the judge's error: refusal rates and label (form) shares.

``judgekit analyze distribution --correct ppi`` adds the tables built here, one row per figure
(columns :data:`judgekit.analysis.correction.ppi_rows.ROW_COLUMNS`): the judge's raw figure, the
human-only figure on the labelled samples and the PPI-corrected figure, each with n and its 95%
interval (:mod:`judgekit.analysis.correction.ppi_rows`).

* ``ppi_rates`` — per model, and per model and turn: the refusal rate over samples (a sample
  judged several times counts as the share of its ok trials saying refusal); the conversation
  (else the prompt) is the resampling unit;
* ``ppi_shares`` — per model: the share of samples given each label of the rubric (the form
  shares, when the rubric is ``refusal_form``);
* ``ppi_per_prompt`` — per prompt unit with two or more samples: its refusal rate, the samples
  as units (exchangeable within the prompt, as the per-prompt Wilson interval assumes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgekit.analysis.correction.design import Reference
from judgekit.analysis.correction.ppi_attach import attach_ppi, labelling_design, raw_vs_corrected
from judgekit.analysis.correction.ppi_rows import ROW_COLUMNS, mean_row
from judgekit.analysis.correction.trials import LABEL_RULE, TRIAL_RULE, item_labels, item_values
from judgekit.analysis.result import AnalysisResult, Table


def _per_item(ratings: pd.DataFrame, indicator: Callable[[pd.Series], Any]) -> pd.Series:
    """``item_id →`` whether the majority of its ok trials say refusal (a tie abstains: NaN),
    the rule of the distribution's own tables (:mod:`judgekit.analysis.correction.trials`)."""
    return item_values(ratings, indicator, majority=True)


@dataclass(frozen=True)
class UnitColumns:
    """The item columns the corrected distribution reads: ``model``; ``cluster`` naming the
    conversation (or prompt; an item without one is its own cluster; None: every item is its
    own); ``prompt`` the prompt unit's columns (for ``ppi_per_prompt``); ``turn``."""

    model: str = "model"
    cluster: str | None = None
    prompt: Sequence[str] = ()
    turn: str = "turn"


def corrected_distribution(
    judge: pd.DataFrame,
    reference: pd.DataFrame,
    items: pd.DataFrame,
    *,
    indicator: Callable[[pd.Series], Any],
    codes: Sequence[str] = (),
    columns: UnitColumns = UnitColumns(),
    strata: Mapping[str, str] | None = None,
) -> list[Table]:
    """The corrected distribution tables (module doc). ``judge``/``reference``: long ratings
    of the judge and of the reference under the analysed rubric; ``indicator`` maps labels to
    refusal 0/1 (:func:`judgekit.analysis.distribution.refusal.refusal_definition`); ``codes`` the labels
    whose shares to correct; ``columns`` the item columns read (:class:`UnitColumns`);
    ``strata``: cluster → stratum of the labelling design."""
    model_col, cluster_col = columns.model, columns.cluster
    prompt_cols, turn_col = columns.prompt, columns.turn
    df = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    f = _per_item(judge, indicator)
    df = df.loc[df.index.intersection(f.index)].copy()
    df["_f"] = f
    df["_y"] = _per_item(reference, indicator).reindex(df.index)
    df["_model"] = df[model_col].astype(str) if model_col in df.columns else "all"
    if cluster_col and cluster_col in df.columns:
        df["_c"] = [str(c) if c == c and c not in (None, "") else f"item:{i}"
                    for i, c in zip(df.index, df[cluster_col], strict=True)]
        unit = cluster_col.removesuffix("_id")
    else:
        df["_c"] = df.index
        unit = "item"
    rows: list[dict[str, Any]] = []
    share_rows: list[dict[str, Any]] = []
    prompt_rows: list[dict[str, Any]] = []
    has_turn = turn_col in df.columns and df[turn_col].nunique() > 1

    def row(fig: str, g: pd.DataFrame, fcol: str = "_f", ycol: str = "_y",
            cl: str = "_c", u: str = unit, st: Mapping[str, str] | None = strata
            ) -> dict[str, Any]:
        return mean_row(fig, g[fcol].to_numpy(float), g[cl].to_numpy(), g[ycol].to_numpy(float),
                        strata=st, unit=u)

    if codes:
        fs = item_labels(judge, codes).set_index("item_id").reindex(df.index)
        ys = item_labels(reference, codes).set_index("item_id").reindex(df.index)
    for model, g in df.groupby("_model", sort=True):
        rows.append({"model": model, "turn": "all", **row("refusal rate", g)})
        if has_turn:
            for t, gt in g.groupby(turn_col, sort=True):
                rows.append({"model": model, "turn": t, **row("refusal rate", gt)})
        for code in codes:
            gg = g.assign(_fs=fs.loc[g.index, code], _ys=ys.loc[g.index, code])
            share_rows.append({"model": model, "label": code,
                               **row("share", gg, "_fs", "_ys")})
        if prompt_cols:
            for key, gp in g.groupby(list(prompt_cols), sort=True, dropna=False):
                if len(gp) < 2:
                    continue
                key = key if isinstance(key, tuple) else (key,)
                prompt_rows.append({"model": model, "prompt_unit": " / ".join(map(str, key)),
                                    **row("prompt refusal rate", gp.assign(_i=gp.index),
                                          cl="_i", u="sample", st=None)})
    desc = ("Raw (the judge's figure over every sample), human-only (the labelled samples) and "
            "PPI-corrected, each with its 95% interval; n = labelled / all resampling units.")
    out = [Table("ppi_rates", "Corrected refusal rate per model (and turn)",
                 pd.DataFrame(rows, columns=["model", "turn", *ROW_COLUMNS]),
                 f"{desc} A sample judged several times counts once, by the {TRIAL_RULE}.")]
    if share_rows:
        out.append(Table("ppi_shares", "Corrected label shares per model",
                         pd.DataFrame(share_rows, columns=["model", "label", *ROW_COLUMNS]),
                         f"{desc} A sample judged several times counts once, by the "
                         f"{LABEL_RULE}."))
    if prompt_rows:
        out.append(Table("ppi_per_prompt", "Corrected refusal rate per prompt unit",
                         pd.DataFrame(prompt_rows,
                                      columns=["model", "prompt_unit", *ROW_COLUMNS]), desc))
    return out


def add_ppi_distribution(result: AnalysisResult, reference: Reference, ratings: pd.DataFrame,
                         items: pd.DataFrame, *, indicator: Callable[[pd.Series], Any],
                         codes: Sequence[str], model_col: str,
                         forms: tuple[pd.DataFrame, pd.DataFrame, Sequence[str]] | None = None
                         ) -> None:
    """Corrected refusal rates (per model, turn and prompt) and label shares on ``result``;
    ``forms`` = (the judge's and the reference's ratings under the form rubric, its codes)
    adds ``ppi_form_shares``, each form's corrected share."""
    ucols = list(result.meta.get("prompt_unit") or [])
    cluster_col = ucols[0] if ucols else "conversation_id"
    design = labelling_design(reference, items, cluster_col=cluster_col, active=True)
    if design.active is not None:
        from judgekit.analysis.correction.active import add_active_rates
        add_active_rates(result, design, ratings, reference, items, indicator=indicator,
                         cluster_col=cluster_col, model_col=model_col)
        return
    tables = corrected_distribution(ratings, reference.ratings, items, indicator=indicator,
                                    codes=codes,
                                    columns=UnitColumns(model_col, cluster_col, ucols),
                                    strata=design.strata)
    if forms is not None and len(forms[0]) and len(forms[1]):
        fs = corrected_distribution(forms[0], forms[1], items, indicator=indicator,
                                    codes=forms[2],
                                    columns=UnitColumns(model_col, cluster_col),
                                    strata=design.strata)
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
                                       unit=cluster_col.removesuffix("_id"),
                                       y_range=(0.0, 1.0)))
    attach_ppi(result, tables, design, reference.name, charts)
