"""Refusal as a distribution over samples: per-prompt refusal rates, their summaries per model
and slice, and the forms refusals take.

:func:`refusal_distribution` (:mod:`~judgekit.analysis.distribution.estimate`) is the analysis;
:mod:`~judgekit.analysis.distribution.refusal` says which labels count as a refusal (shared with
the gate's fidelity check), :mod:`~judgekit.analysis.distribution.exchangeability` how a
prompt's behaviour over its samples is stated, :mod:`~judgekit.analysis.distribution.emitted`
which refusal-pool strings were emitted, and :mod:`~judgekit.analysis.distribution.corrected`
the figures corrected for the judge's error (``--correct ppi``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.analysis.distribution.estimate import refusal_distribution
    from judgekit.analysis.distribution.refusal import DEFAULT_REFUSAL_CODES, refusal_definition

_LAZY = {
    "DEFAULT_REFUSAL_CODES": "refusal",
    "refusal_definition": "refusal",
    "refusal_distribution": "estimate",
}

__all__ = ["DEFAULT_REFUSAL_CODES", "refusal_definition", "refusal_distribution"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
