"""Criteria corrected for the judge's error: each criterion's rate, and each comparison.

``judgekit analyze criteria --correct ppi`` adds the table built here (``ppi_criteria``), one
row per criterion (columns :data:`judgekit.analysis.correction.ppi_rows.ROW_COLUMNS`, after
``criterion``): the rate of the criterion's labels among its ``where`` items — raw (the judge
over every item), human-only (the labelled items) and PPI-corrected, each with n and its 95%
interval, the conversation (else the prompt) as the resampling unit. A ``compare`` criterion
gets three rows: rate(a), rate(b) and rate(a) − rate(b)
(:func:`judgekit.analysis.correction.ppi_rows.difference_row`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.correction.design import Reference
from judgekit.analysis.correction.ppi_attach import attach_ppi, labelling_design
from judgekit.analysis.correction.ppi_rows import ROW_COLUMNS, difference_row, mean_row
from judgekit.analysis.criteria.spec import (
    CriteriaFile,
    Criterion,
    criterion_mask,
    criterion_rubric,
    matches,
)
from judgekit.analysis.frames import label_shares
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.errors import JudgekitError


def corrected_criteria(
    spec: CriteriaFile,
    ratings: pd.DataFrame,
    reference: pd.DataFrame,
    items: pd.DataFrame,
    *,
    rater: str | None = None,
    cluster_col: str | None = None,
    strata: Mapping[str, str] | None = None,
    source: str = "criteria",
) -> Table:
    """The ``ppi_criteria`` table (module doc). ``ratings``: long ratings (the criteria's
    raters; each criterion reads its own, as :func:`judgekit.analysis.criteria.estimate.evaluate_criteria`
    does); ``reference``: the reference rater's long ratings (any rubrics); ``cluster_col``: the
    item column naming the conversation or prompt; ``strata``: cluster → stratum of the
    labelling design."""
    its = items.assign(item_id=items["item_id"].astype(str)).reset_index(drop=True)
    if cluster_col and cluster_col in its.columns:
        its["_c"] = [str(c) if c == c and c not in (None, "") else f"item:{i}"
                     for i, c in zip(its["item_id"], its[cluster_col], strict=True)]
        unit = cluster_col.removesuffix("_id")
    else:
        its["_c"] = its["item_id"]
        unit = "item"
    rows: list[dict[str, Any]] = []
    cache: dict[tuple[str, str], pd.DataFrame] = {}

    def shares(frame: pd.DataFrame, rubric_id: str, who: str | None, codes: tuple[str, ...]
               ) -> pd.DataFrame:
        """Label shares of ``frame``'s ratings under the rubric (of rater ``who``; None: the
        reference), computed once per (rater, rubric) — criteria often share both."""
        key = (who if who is not None else "\x1freference", rubric_id)
        if key not in cache:
            keep = frame["rubric"] == rubric_id
            if who is not None:
                keep &= frame["rater_id"].astype(str) == who
            part = frame[keep]
            cache[key] = (label_shares(part, codes).set_index("item_id") if len(part)
                          else pd.DataFrame(columns=list(codes), dtype=float))
        return cache[key]

    for c in spec.criteria:
        rubric = criterion_rubric(c, source)
        who = c.rater or spec.rater or rater
        if who is None:
            raise JudgekitError(f"{source}: criterion {c.name!r} names no rater; add 'rater:' "
                                "to the file or pass --judge RATER.")
        codes = list(dict.fromkeys(rubric.normalise(lab) or lab for lab in c.labels))

        rc = tuple(rubric.codes)
        f_hit = shares(ratings, rubric.id, who, rc)[codes].sum(axis=1)
        y_hit = shares(reference, rubric.id, None, rc)[codes].sum(axis=1)
        sel = its[criterion_mask(c, its, source=source)].copy()
        sel["_f"] = sel["item_id"].map(f_hit)
        sel["_y"] = sel["item_id"].map(y_hit)
        sel = sel[sel["_f"].notna()]

        rows += [{"criterion": c.name, **row} for row in _rows(c, sel, strata, unit)]
    return Table("ppi_criteria", "Corrected criteria: each rate, raw and corrected",
                 pd.DataFrame(rows, columns=["criterion", *ROW_COLUMNS]),
                 "Raw (the judge over every matching item), human-only (the labelled items) "
                 "and PPI-corrected rate, each with its 95% interval; n = labelled / all "
                 "resampling units.")


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
    if reference == "consensus":  # criteria span rubrics: write the majority as a rater per rubric
        raise JudgekitError("--reference consensus is not read by criteria; write the annotators' majority "
                            "as a reference with `judgekit adjudicate --rubric R --raters A,B --as NAME`.")
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
    design = labelling_design(Reference(ref, reference, store, sample), items, cluster_col=cluster_col)
    table = corrected_criteria(spec, ratings, ref, items, rater=rater, cluster_col=cluster_col,
                               strata=design.strata, source=source)
    attach_ppi(result, [table], design, reference)


def _arrays(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return g["_f"].to_numpy(float), g["_c"].to_numpy(), g["_y"].to_numpy(float)


def _rows(c: Criterion, sel: pd.DataFrame, strata: Mapping[str, str] | None,
          unit: str) -> list[dict[str, Any]]:
    """The criterion's rows: its rate, or with ``compare`` each condition's rate and their
    difference (``sel``: its items with the judge's ``_f`` and the reference's ``_y``)."""
    if c.compare is None:
        return [mean_row("rate", *_arrays(sel), strata=strata, unit=unit)]
    col = c.compare.column
    ga = sel[matches(sel[col], c.compare.a)]
    gb = sel[matches(sel[col], c.compare.b)]
    return [mean_row(f"rate({col}={c.compare.a})", *_arrays(ga), strata=strata, unit=unit),
            mean_row(f"rate({col}={c.compare.b})", *_arrays(gb), strata=strata, unit=unit),
            difference_row(f"rate({c.compare.a}) − rate({c.compare.b})", _arrays(ga),
                           _arrays(gb), strata=strata, unit=unit)]
