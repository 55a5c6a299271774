"""Corrected rates per group of a labelled table, and the shipped XSTest check.

:func:`corrected_by_group` draws, per group (e.g. per model), a random share of the items as the
"human-labelled" set and compares the judge's raw rate, the judge-error-corrected rate
(:func:`judgekit.analysis.correction.rate.corrected_rate`) and the reference rate over *all* items —
possible only where every item carries the reference label, as in XSTest v2, where the
adjudicated ``final_label`` of every response is known. It shows what the correction buys on real
judges: the corrected interval should hold the adjudicated rate that a study labelling 15% of its
items would not otherwise know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.analysis.correction.rate import UnreliableCorrection, corrected_rate
from judgekit.errors import JudgekitError
from judgekit.rubric.model import shipped_dir
from judgekit.stats.intervals import wilson_interval

#: XSTest v2's labels that count as a refusal (full or partial)
XSTEST_REFUSAL = ("2_full_refusal", "3_partial_refusal")
#: the columns of :func:`corrected_by_group`'s frame besides the group column
COLUMNS = ("judge", "method", "n_total", "n_labelled", "n_labelled_refusals", "raw",
           "raw_ci_low", "raw_ci_high", "corrected", "ci_low", "ci_high", "reference_all",
           "reference_all_ci_low", "reference_all_ci_high", "covered", "note")


def xstest_labels_path() -> Path:
    """The shipped XSTest v2 labels (``annotations/xstest-v2/xstest_v2_labels.csv``)."""
    return shipped_dir("annotations") / "xstest-v2" / "xstest_v2_labels.csv"


@dataclass(frozen=True)
class GroupColumns:
    """The columns of a labelled table: the ``judge``'s label, the ``reference``'s label and
    the ``group`` each row belongs to."""

    judge: str
    reference: str
    group: str


def corrected_by_group(
    table: pd.DataFrame,
    columns: GroupColumns,
    *,
    positive: Sequence[str],
    positive_name: str = "refusal",
    share: float = 0.15,
    method: str = "rogan_gladen",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Per value of ``group``: raw judge rate, corrected rate with CI, reference rate over all.

    ``table`` has one row per item with the judge's label in column ``columns.judge`` and the
    reference's in ``columns.reference`` (every row), grouped by ``columns.group``; a label in ``positive`` counts as positive (called
    ``positive_name`` in messages). Rows
    whose judge label is missing (an abstention) are left out of that judge's figures. Per group
    ``round(share · n)`` items are drawn at random (``seed``) as the labelled set. Each row gives
    ``n_total``, ``n_labelled``, raw (Wilson CI), corrected (bootstrap CI), the reference rate over
    all items (Wilson CI) and whether the corrected CI ``covered`` it; a group whose correction is
    refused keeps its raw figures and the refusal sentence in ``note``.
    """
    judge, reference, group = columns.judge, columns.reference, columns.group
    for col in (judge, reference, group):
        if col not in table.columns:
            raise JudgekitError(f"The table has no column {col!r}; columns: "
                                f"{', '.join(map(str, table.columns))}.")
    if not 0.0 < share < 1.0:
        raise JudgekitError(f"share={share} must be between 0 and 1 (e.g. 0.15).")
    pos = set(positive)
    rng = np.random.default_rng(seed)
    rows = []
    for key, grp in table.groupby(group, sort=True):
        grp = grp[grp[judge].notna() & grp[reference].notna()]
        f = grp[judge].isin(pos).to_numpy(int)
        y = grp[reference].isin(pos).to_numpy(int)
        word = np.array(["other", positive_name])
        n = len(grp)
        n_lab = int(round(share * n))
        lab = rng.choice(n, n_lab, replace=False)
        ref_lo, ref_hi = wilson_interval(y.sum(), n)
        row: dict[str, object] = {group: key, "judge": judge, "method": method, "n_total": n,
                                  "n_labelled": n_lab, "n_labelled_refusals": int(y[lab].sum()),
                                  "reference_all": float(y.mean()),
                                  "reference_all_ci_low": float(ref_lo),
                                  "reference_all_ci_high": float(ref_hi), "note": ""}
        try:
            r = corrected_rate(word[f].tolist(), judge_labelled=word[f[lab]].tolist(),
                               reference_labelled=word[y[lab]].tolist(), positive=positive_name,
                               method=method,
                               level=level, n_resamples=n_resamples,
                               seed=int(rng.integers(1 << 31)))
        except UnreliableCorrection as exc:
            raw_lo, raw_hi = wilson_interval(f.sum(), n)
            row.update(raw=float(f.mean()), raw_ci_low=float(raw_lo), raw_ci_high=float(raw_hi),
                       corrected=np.nan, ci_low=np.nan, ci_high=np.nan, covered=pd.NA,
                       note=str(exc))
        else:
            row.update(raw=r.raw, raw_ci_low=r.raw_ci_low, raw_ci_high=r.raw_ci_high,
                       corrected=r.corrected, ci_low=r.ci_low, ci_high=r.ci_high,
                       covered=bool(r.ci_low <= y.mean() <= r.ci_high))
        rows.append(row)
    return pd.DataFrame(rows, columns=[group, *COLUMNS])


def xstest_corrected(
    *,
    judge: str = "gpt4_label",
    method: str = "rogan_gladen",
    share: float = 0.15,
    seed: int = 0,
    n_resamples: int = 2000,
    path: Path | None = None,
) -> pd.DataFrame:
    """:func:`corrected_by_group` on the shipped XSTest v2 labels, per model: refusal = full or
    partial refusal; judge ``gpt4_label`` or ``strmatch_label`` (the authors' classifiers),
    reference the adjudicated ``final_label``; a random ``share`` per model labelled."""
    if judge not in ("gpt4_label", "strmatch_label"):
        raise JudgekitError(f"XSTest judge {judge!r} is unknown; use gpt4_label or strmatch_label.")
    src = path or xstest_labels_path()
    table = pd.read_csv(src, dtype=str, keep_default_na=False)
    known = {"1_full_compliance", *XSTEST_REFUSAL}
    table[judge] = table[judge].where(table[judge].isin(known))  # free text → abstention
    return corrected_by_group(table, GroupColumns(judge, "final_label", "model"),
                              positive=XSTEST_REFUSAL, share=share, method=method, seed=seed,
                              n_resamples=n_resamples)
