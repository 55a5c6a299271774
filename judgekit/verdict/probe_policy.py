"""The probe checks a gate policy can ask for (``checks.max_covariate_effect`` and the others):
their settings, validated like the rest of the policy (:mod:`judgekit.verdict.policy`).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from judgekit.core.config import ConfigModel
from judgekit.store.variants import VARIANTS


class Families(ConfigModel):
    """Model families: of each judge, and of each rated model (the values of ``column``)."""

    column: str = "model"
    judges: dict[str, str] = Field(min_length=1)
    models: dict[str, str] = Field(min_length=1)


class Binning(ConfigModel):
    """A covariate: a metadata column (or ``response_length``), how it is binned (``split`` for
    a numeric one, default its median; ``high`` levels for a categorical one) and the outcome
    (``target`` label, or any error)."""

    column: str = Field(min_length=1)
    target: str | None = None
    split: float | None = None
    high: list[str] | None = None

    @model_validator(mode="after")
    def _one_binning(self) -> Binning:
        if self.split is not None and self.high is not None:
            raise ValueError("give split (a numeric covariate) or high (the levels of a categorical one), not both")
        return self


# ----------------------------------------------------------------------------- gate checks
class MaxCovariateEffect(Binning):
    """Gate check ``max_covariate_effect``: |Δ| of the covariate probe must stay within ``max``
    (overall and, with ``per_slice``, in every slice of the policy's ``by``)."""

    max: float = Field(gt=0, le=1)
    per_slice: bool = False
    min_items: int = Field(default=30, ge=2)


class MaxSelfPreference(Families):
    """Gate check ``max_self_preference``: |own − other| signed bias within ``max``."""

    max: float = Field(gt=0, le=1)
    min_items: int = Field(default=30, ge=2)


class MinStability(ConfigModel):
    """Gate check ``min_stability``: α across trials at least ``min``."""

    min: float = Field(ge=-1, le=1)
    per_slice: bool = False
    min_items: int = Field(default=30, ge=2)


class MaxFlipRate(ConfigModel):
    """Gate check ``max_flip_rate``: the share of items whose label flips under each perturbation
    (ratings of ``<judge>~<variant>`` in the store, from ``judgekit probe``) within ``max``."""

    max: float = Field(gt=0, lt=1)
    variants: list[str] = Field(default_factory=lambda: list(VARIANTS), min_length=1)
    min_items: int = Field(default=30, ge=2)

    @model_validator(mode="after")
    def _known(self) -> MaxFlipRate:
        for v in self.variants:
            if v not in VARIANTS:
                raise ValueError(f"variant {v!r} is not one judgekit knows; use {', '.join(VARIANTS)}")
        return self
