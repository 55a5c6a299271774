"""Refusal analyses on trusted ratings: distributions over samples, calibration to harm, criteria.

Every analysis reads one rater's ratings; a judge's ratings need a matching passing verdict
(:mod:`judgekit.analysis.trust`), or the result is stamped UNTRUSTED when forced.

One subpackage per figure family — :mod:`~judgekit.analysis.distribution`,
:mod:`~judgekit.analysis.calibration`, :mod:`~judgekit.analysis.criteria` — each with its
estimator, its corrected version and its design handling, and the judge-error correction they
share (:mod:`~judgekit.analysis.correction`). The analyses are pure functions over DataFrames
returning an :class:`~judgekit.analysis.result.AnalysisResult`; :mod:`~judgekit.analysis.inputs`
reads their inputs from a store, :mod:`judgekit.report.analysis` writes the result's files and
:mod:`judgekit.report.analysis_terminal` prints its tables.
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
    from judgekit.analysis.criteria.estimate import evaluate_criteria
    from judgekit.analysis.criteria.spec import load_criteria, parse_criteria
    from judgekit.analysis.distribution.estimate import refusal_distribution
    from judgekit.analysis.frames import harm_from_column, harm_from_ratings
    from judgekit.analysis.overlay import overlay_charts
    from judgekit.analysis.result import AnalysisResult, Chart, Table

# Imported on first use: ``import judgekit.analysis`` loads neither numpy nor pandas. The
# calibration analysis is :func:`judgekit.analysis.calibration.calibration` (its name is the
# subpackage's, so it is not exported here).
_LAZY = {
    "AnalysisResult": "result",
    "Chart": "result",
    "CorrectedRate": "correction.rate",
    "Table": "result",
    "UnreliableCorrection": "correction.rate",
    "corrected_rate": "correction.rate",
    "corrected_shares": "correction.multiclass",
    "corrected_weighted": "correction.multiclass",
    "corrected_weighted_clustered": "correction.clusters",
    "evaluate_criteria": "criteria.estimate",
    "harm_from_column": "frames",
    "harm_from_ratings": "frames",
    "load_criteria": "criteria.spec",
    "overlay_charts": "overlay",
    "parse_criteria": "criteria.spec",
    "refusal_distribution": "distribution.estimate",
    "xstest_corrected": "correction.groups",
}

__all__ = [
    "AnalysisResult",
    "Chart",
    "CorrectedRate",
    "Table",
    "UnreliableCorrection",
    "corrected_rate",
    "corrected_shares",
    "corrected_weighted",
    "corrected_weighted_clustered",
    "evaluate_criteria",
    "harm_from_column",
    "harm_from_ratings",
    "load_criteria",
    "overlay_charts",
    "parse_criteria",
    "refusal_distribution",
    "xstest_corrected",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
