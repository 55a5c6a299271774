"""Figures corrected for the judge's error, shared by every figure family.

A prevalence or a mean over all items, corrected for the judge's error measured on the items a
human (the reference) also rated: :func:`corrected_rate` (:mod:`~judgekit.analysis.correction.rate`:
Rogan–Gladen or PPI++), every class share at once (:mod:`~judgekit.analysis.correction.multiclass`),
intervals that resample clusters (:mod:`~judgekit.analysis.correction.clusters`), rates per group
and the shipped XSTest check (:mod:`~judgekit.analysis.correction.groups`), and the raw-vs-corrected
tables of ``--correct METHOD`` (:mod:`~judgekit.analysis.correction.tables`). ``--correct ppi``
reads the labelling design (:mod:`~judgekit.analysis.correction.design`), builds one table row per
figure (:mod:`~judgekit.analysis.correction.ppi_rows`) and attaches them to a result
(:mod:`~judgekit.analysis.correction.ppi_attach`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.analysis.correction.clusters import corrected_weighted_clustered
    from judgekit.analysis.correction.groups import xstest_corrected
    from judgekit.analysis.correction.multiclass import corrected_shares, corrected_weighted
    from judgekit.analysis.correction.rate import (
        CorrectedRate,
        UnreliableCorrection,
        corrected_rate,
    )

_LAZY = {
    "CorrectedRate": "rate",
    "UnreliableCorrection": "rate",
    "corrected_rate": "rate",
    "corrected_shares": "multiclass",
    "corrected_weighted": "multiclass",
    "corrected_weighted_clustered": "clusters",
    "xstest_corrected": "groups",
}

__all__ = ["CorrectedRate", "UnreliableCorrection", "corrected_rate", "corrected_shares",
           "corrected_weighted", "corrected_weighted_clustered", "xstest_corrected"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
