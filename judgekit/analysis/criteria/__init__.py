"""Experiment criteria: pre-registered pass/fail checks over rated data, per seed and pooled.

The criteria file is read by :mod:`~judgekit.analysis.criteria.spec` (:func:`load_criteria`,
:func:`parse_criteria`); :func:`evaluate_criteria` (:mod:`~judgekit.analysis.criteria.estimate`)
evaluates it, :mod:`~judgekit.analysis.criteria.certified` keeps the rates a verdict certifies,
and :mod:`~judgekit.analysis.criteria.corrected` adds each criterion corrected for the judge's
error (``--correct ppi``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.analysis.criteria.estimate import evaluate_criteria
    from judgekit.analysis.criteria.spec import (
        CriteriaFile,
        Criterion,
        load_criteria,
        parse_criteria,
    )

_LAZY = {
    "CriteriaFile": "spec",
    "Criterion": "spec",
    "evaluate_criteria": "estimate",
    "load_criteria": "spec",
    "parse_criteria": "spec",
}

__all__ = ["CriteriaFile", "Criterion", "evaluate_criteria", "load_criteria", "parse_criteria"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
