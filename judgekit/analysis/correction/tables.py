"""Raw and judge-error-corrected figures side by side, as tables of an analysis result.

``judgekit analyze distribution --correct METHOD`` and ``analyze calibration --correct METHOD``
add the table built here: per model (and per model and slice, e.g. turn) the judge's raw figure
over all the items it rated, and the figure corrected for the judge's error measured on the items
the reference also rated — each with its n and its 95% CI. The figure is the refusal rate
(distribution: the share of samples whose label counts as refusal) or the mean restrictiveness R
(calibration). Corrections are :func:`judgekit.analysis.correction.multiclass.corrected_weighted`:
``rogan_gladen`` corrects through the judge's confusion matrix on the labelled items (every code
of the rubric, so a multi-class rubric is not collapsed first); ``ppi`` is PPI++ on the values with the
conversation (or prompt) as the unit — :func:`judgekit.analysis.correction.ppi_rows.mean_row`,
the estimator of the corrected-figure tables, so a figure in both has one value and one interval.

One label per item: an item judged several times counts with its most frequent ok label (ties:
the first in the rubric's order); items whose trials are all abstentions or errors are left out.
With ``ppi`` the item's value follows :mod:`judgekit.analysis.correction.trials` instead (a 0/1
figure: the majority of the ok trials, a tie abstains; mean R: the trials' mean), the rule of the
corrected-figure tables.
The corrected interval resamples clusters (conversations or prompts, ``cluster_col``) when
given, since the turns and samples of one conversation are not independent; otherwise items.
The raw interval then resamples the same clusters (the same draws), so the two intervals side
by side differ only by the judge's error, not by what they assume about the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.analysis.correction.clusters import corrected_weighted_clustered, raw_clustered
from judgekit.analysis.correction.design import Reference
from judgekit.analysis.correction.multiclass import corrected_weighted, raw_estimate
from judgekit.analysis.correction.ppi_rows import mean_row
from judgekit.analysis.correction.rate import UnreliableCorrection
from judgekit.analysis.correction.trials import item_values
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric

#: columns of a correction table besides the model and slice columns
CORRECTION_COLUMNS = ("figure", "method", "n_total", "n_labelled", "n_labelled_positive", "raw",
                      "raw_ci_low", "raw_ci_high", "corrected", "ci_low", "ci_high",
                      "judge_error", "reference_labelled", "note")


def _modal_labels(ratings: pd.DataFrame, rubric: Rubric) -> pd.Series:
    """``item_id → label``: each item's most frequent ok label (ties: rubric order)."""
    ok = ratings.loc[ratings["status"].eq("ok") & ratings["label"].notna(), ["item_id", "label"]]
    if ok.empty:
        return pd.Series(dtype=object, name="label")
    counts = pd.crosstab(ok["item_id"].astype(str), ok["label"])
    counts = counts.reindex(columns=[c for c in rubric.codes if c in counts.columns])
    return counts.idxmax(axis=1).rename("label")


def correction_tables(
    judge: pd.DataFrame,
    reference: Reference,
    items: pd.DataFrame,
    *,
    rubric: Rubric,
    weights: Mapping[str, float],
    figure: str,
    method: str,
    columns: ItemColumns | None = None,
    resampling: Resampling | None = None,
) -> list[Table]:
    """Tables ``corrected`` (per model) and ``corrected_by_<slice>`` (per model and each
    ``columns.by`` slice).

    ``judge`` / ``reference``: long ratings of the analysed judge and of the reference rater
    under ``rubric``; ``weights`` maps every code to its value in the ``figure`` (1/0 for a
    refusal rate, the rubric's values for mean R). A group whose correction is refused keeps its
    raw figure, NaN corrected, and the sentence saying why in ``note``. With ``columns.prompt``
    (an item column: the conversation or prompt) the interval resamples its clusters
    (:func:`judgekit.analysis.correction.clusters.corrected_weighted_clustered`); None resamples
    items.
    """
    columns = columns or ItemColumns()
    resampling = resampling or Resampling(n_resamples=2000)
    if method not in ("rogan_gladen", "ppi"):
        raise JudgekitError(f"--correct {method!r} is unknown; use rogan_gladen or ppi.")
    f = _modal_labels(judge, rubric)
    y = _modal_labels(reference.ratings, rubric)
    df = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    df = df.loc[df.index.intersection(f.index)].copy()
    df["_f"] = f
    df["_y"] = y.reindex(df.index)
    if method == "ppi":
        # one value per item by the declared trial rule (a 0/1 figure: majority, a tie abstains)
        binary = set(weights.values()) <= {0.0, 1.0}
        df["_fv"] = item_values(judge, lambda s: s.map(weights), majority=binary)
        df["_yv"] = item_values(reference.ratings, lambda s: s.map(weights),
                                majority=binary).reindex(df.index)
    df["_model"] = (df[columns.model].fillna("(none)").astype(str) if columns.model in df.columns
                    else "all")
    cluster_col = columns.prompt if columns.prompt is not None and columns.prompt in df.columns else None
    intervals = (f"both a bootstrap resampling {cluster_col}, each with its labelled and "
                 "unlabelled items, the same draws for raw and corrected" if cluster_col else
                 "raw: Wilson or normal, items as independent; corrected: bootstrap resampling "
                 "labelled and unlabelled items separately")
    desc = (f"{figure}: judge's raw figure over every item it rated vs corrected for its error on "
            f"the items {reference.name} also rated ({method}); 95% CIs ({intervals}).")
    group = _Group(figure, method, weights, cluster_col, resampling)
    tables = []
    for cols, key, title in [([], "corrected", f"{figure} per model, raw and corrected"),
                             *[([c], f"corrected_by_{c}", f"{figure} per model and {c}, raw and "
                                "corrected") for c in columns.by if c in df.columns]]:
        rows = []
        for gkey, grp in df.groupby(["_model", *cols], sort=True, dropna=False):
            gkey = gkey if isinstance(gkey, tuple) else (gkey,)
            row: dict[str, object] = dict(zip(["model", *cols], gkey, strict=True))
            row.update(group.row(grp))
            # the judge's miss, raw − corrected, in every rendering of the table
            miss = float(row["raw"]) - float(row["corrected"])  # type: ignore[arg-type]
            row["judge_error"] = miss if math.isfinite(miss) else float("nan")
            _no_zero_width(row)
            rows.append(row)
        frame = pd.DataFrame(rows, columns=["model", *cols, *CORRECTION_COLUMNS])
        tables.append(Table(key, title, frame, desc))
    return tables


@dataclass(frozen=True)
class _Group:
    """How one group's raw and corrected figure are computed."""

    figure: str
    method: str
    weights: Mapping[str, float]
    cluster_col: str | None
    resampling: Resampling

    def row(self, grp: pd.DataFrame) -> dict[str, object]:
        """The group's columns of :data:`CORRECTION_COLUMNS` (``_f``: the judge's labels,
        ``_y``: the reference's, NaN where it did not label)."""
        n, seed = self.resampling.n_resamples, self.resampling.seed
        weights, figure, method = self.weights, self.figure, self.method
        lab = grp[grp["_y"].notna()]
        row: dict[str, object] = dict(figure=figure, method=method, n_total=len(grp),
                                      n_labelled=len(lab), note="")
        ids = _cluster_ids(grp, self.cluster_col) if self.cluster_col is not None else []
        if method == "ppi":
            # one figure, one estimator: the cluster PPI++ of the corrected-figure tables
            row.update(_ppi_row(grp, figure, ids or [f"item:{i}" for i in grp.index]))
            return row
        try:
            if self.cluster_col is not None:
                r = corrected_weighted_clustered(
                    grp["_f"].tolist(), grp["_y"].where(grp["_y"].notna(), None).tolist(), ids,
                    weights=weights, name=figure, method=method, n_resamples=n, seed=seed)
            else:
                r = corrected_weighted(grp["_f"].tolist(), judge_labelled=lab["_f"].tolist(),
                                       reference_labelled=lab["_y"].tolist(),
                                       weights=weights, name=figure, method=method,
                                       n_resamples=n, seed=seed)
        except UnreliableCorrection as exc:
            values = grp["_f"].map(weights).to_numpy(float)
            if self.cluster_col is not None:
                raw, raw_lo, raw_hi = raw_clustered(values.tolist(), ids, n_resamples=n, seed=seed)
            else:
                raw, raw_lo, raw_hi = raw_estimate(values)
            row.update(raw=raw, raw_ci_low=raw_lo, raw_ci_high=raw_hi,
                       corrected=np.nan, ci_low=np.nan, ci_high=np.nan,
                       n_labelled_positive=pd.NA,
                       reference_labelled=(float(lab["_y"].map(weights).mean())
                                           if len(lab) else np.nan),
                       note=f"not corrected: {exc}")
        else:
            row.update(raw=r.raw, raw_ci_low=r.raw_ci_low, raw_ci_high=r.raw_ci_high,
                       corrected=r.corrected, ci_low=r.ci_low, ci_high=r.ci_high,
                       n_labelled_positive=(pd.NA if r.n_labelled_positive is None
                                            else r.n_labelled_positive),
                       reference_labelled=r.reference_labelled)
        return row


def _ppi_row(grp: pd.DataFrame, figure: str, clusters: list[str]) -> dict[str, object]:
    """A group's figure by PPI++ with the conversation (or prompt; else the item) as the unit:
    :func:`judgekit.analysis.correction.ppi_rows.mean_row`, the estimator of the corrected-figure
    tables (``ppi_*``), so a figure shown in both has one value and one interval."""
    f = grp["_fv"].to_numpy(float)
    y = grp["_yv"].to_numpy(float)
    r = mean_row(figure, f, np.asarray(clusters, dtype=object), y)
    lab = y[np.isfinite(y) & np.isfinite(f)]
    nan = float("nan")
    # n beside the value is its denominator: the items with a value by the trial rule (a tie
    # abstains), and of them those the reference labelled (with a value too)
    return dict(n_total=r["n_units"], n_labelled=r["n_units_labelled"],
                raw=r["raw"], raw_ci_low=r["raw_ci_low"], raw_ci_high=r["raw_ci_high"],
                corrected=r["corrected"], ci_low=r["ci_low"], ci_high=r["ci_high"],
                n_labelled_positive=pd.NA,
                reference_labelled=float(lab.mean()) if len(lab) else nan,
                note=(f"not corrected: {r['note'].split(': ', 1)[-1]}"
                      if not math.isfinite(r["corrected"]) else r["note"]))


def _no_zero_width(row: dict[str, object]) -> None:
    """A zero-width interval (0 of 2 labelled refusals and a judge that agrees: every
    resample gives 0) claims a certainty the sample does not give: the row keeps its figure
    without an interval and says why; ``-0.0`` is written ``0.0``."""
    for fig, lo, hi in (("raw", "raw_ci_low", "raw_ci_high"), ("corrected", "ci_low", "ci_high")):
        low, high = row.get(lo), row.get(hi)
        if isinstance(low, float) and isinstance(high, float) and low == high:
            row[lo] = row[hi] = np.nan
            if fig == "corrected":
                row["note"] = (str(row.get("note") or "") + " " if row.get("note") else "") + (
                    "no interval: the corrected figure does not vary over the resamples (too "
                    "few labelled items to show how much it could).")
    for k, v in row.items():
        if isinstance(v, float) and v == 0.0:
            row[k] = 0.0


def _cluster_ids(grp: pd.DataFrame, cluster_col: str) -> list[str]:
    """Each item's cluster (an item without one is its own cluster)."""
    return [str(c) if c == c and c is not None else f"item:{i}"
            for i, c in zip(grp.index, grp[cluster_col], strict=True)]


def add_correction(result: AnalysisResult, tables: list[Table], *, method: str,
                   reference_name: str) -> AnalysisResult:
    """Append ``tables`` to ``result`` (stamped UNTRUSTED like the rest when it is) and define
    the correction in its definitions."""
    result.tables.extend(tables)
    result.definitions["corrected"] = (
        f"{method}: " + ("the judge's label shares corrected through its confusion matrix "
                         "P(judge | reference) on the labelled items (Rogan & Gladen 1978; the "
                         "matrix method)" if method == "rogan_gladen" else
                         "prediction-powered inference, PPI++ power-tuned mean (Angelopoulos et "
                         "al. 2023; Angelopoulos, Duchi & Zrnic 2023)")
        + f"; reference {reference_name}; the labelled items must be a random sample"
    )
    result.meta["correction"] = {"method": method, "reference": reference_name}
    if not result.trusted:
        result.stamp_untrusted()
    return result
