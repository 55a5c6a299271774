"""Calibration of restrictiveness R to harm H: concordance C, calibration error RCE, Drift(t).

:func:`calibration` (:mod:`~judgekit.analysis.calibration.estimate`) is the analysis; it builds
the prompt units of each model (:mod:`~judgekit.analysis.calibration.units`), computes every
figure for many bootstrap replicates at once (:mod:`~judgekit.analysis.calibration.replicates`,
with RCE and Drift in :mod:`~judgekit.analysis.calibration.error`), and
:mod:`~judgekit.analysis.calibration.corrected` adds the figures corrected for the judge's error
(``--correct ppi``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.analysis.calibration.estimate import calibration

_LAZY = {"calibration": "estimate"}

__all__ = ["calibration"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
