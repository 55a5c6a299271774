"""Refusal analyses on trusted ratings: distributions over samples, calibration to harm, criteria.

Every analysis reads one rater's ratings; a judge's ratings need a matching passing verdict
(:mod:`judgekit.analysis.trust`), or the result is stamped UNTRUSTED when forced.

The analyses (:mod:`~judgekit.analysis.distribution`, :mod:`~judgekit.analysis.calibration`,
:mod:`~judgekit.analysis.criteria`) are pure functions over DataFrames returning an
:class:`~judgekit.analysis.result.AnalysisResult`; :mod:`~judgekit.analysis.inputs` reads their
inputs from a store and writes the result's files, :mod:`~judgekit.report.analysis` renders them
and :mod:`~judgekit.analysis.terminal` prints the summary tables.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgekit.analysis.corrected import CorrectedRate, corrected_rate
    from judgekit.analysis.corrected_multiclass import corrected_shares

__all__ = ["CorrectedRate", "corrected_rate", "corrected_shares"]

_LAZY = {
    "corrected_rate": "judgekit.analysis.corrected",
    "CorrectedRate": "judgekit.analysis.corrected",
    "corrected_shares": "judgekit.analysis.corrected_multiclass",
}


def __getattr__(name: str) -> Any:
    """``judgekit.analysis.corrected_rate`` etc., imported on first use (numpy stays unloaded
    until then)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    from judgekit.core.lazy import submodule

    return submodule(__name__, name)
