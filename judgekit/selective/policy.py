"""A selective-judging policy (``judgekit escalate calibrate POLICY.yaml``): a cascade of judges
ordered cheap -> strong, where each one's confidence comes from, the human labels to calibrate
on, the target agreement ``1 - alpha`` and the error ``delta``. See docs/selective.md.

Example::

    rubric: refusal
    reference: final              # the humans' labels: a reference or human rater, or consensus
    alpha: 0.15                   # on kept items, disagreement with the humans <= alpha ...
    delta: 0.05                   # ... with probability >= 1 - delta
    calibration: {fraction: 0.5, seed: 0}   # labelled items: this share calibrates, the rest checks
    cascade:
      - judge: string_match
        confidence: {source: by_label, values: {2_full_refusal: 1.0}, default: 0.0}
      - judge: gpt4
        confidence: {source: panel, with: [string_match]}
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.errors import JudgekitError

#: the reference that is the human raters' majority (ties left out), as ``agree``'s consensus
CONSENSUS = "consensus"
#: where a judgment's confidence comes from
_SOURCES = ("trials", "panel", "logprobs", "imported", "by_label", "constant")


class Confidence(ConfigModel):
    """How one judge's confidence in its label on an item is obtained.

    * ``trials``: share of the judge's own trials that gave its (modal) label;
    * ``panel``: share of the judges ``with`` (plus this judge) whose label equals this judge's;
    * ``logprobs``: the probability of the judge's answer from the provider's token
      log-probabilities, recorded with each call (judges with ``supports_logprobs``);
    * ``imported``: the confidence imported with each of the judge's ratings (a ``confidence``
      column of a long ratings file, :mod:`judgekit.store.rating_confidence`), e.g. a published
      judge's; as ``logprobs``, a trial without one makes the confidence NaN (never kept);
    * ``by_label``: a value per label (``values``; other labels get ``default``), e.g. "a refusal
      prefix matched" for a string-match judge;
    * ``constant``: ``value`` for every item (the judge is kept on all items or on none).
    """

    source: Literal["trials", "panel", "logprobs", "imported", "by_label", "constant"]
    with_: list[str] | None = Field(default=None, alias="with")
    values: dict[str, float] | None = None
    default: float = 0.0
    value: float | None = None

    @model_validator(mode="after")
    def _fits_source(self) -> Confidence:
        if self.source == "panel" and not self.with_:
            raise ValueError("source panel needs 'with': the other judges of the panel")
        if self.source != "panel" and self.with_ is not None:
            raise ValueError(f"'with' is only for source panel, not {self.source}")
        if self.source == "by_label" and not self.values:
            raise ValueError("source by_label needs 'values': a confidence per label")
        if self.source != "by_label" and self.values is not None:
            raise ValueError(f"'values' is only for source by_label, not {self.source}")
        if self.source == "constant" and self.value is None:
            raise ValueError("source constant needs 'value'")
        if self.source != "constant" and self.value is not None:
            raise ValueError(f"'value' is only for source constant, not {self.source}")
        numbers = [self.default, *(self.values or {}).values()]
        if self.value is not None:
            numbers.append(self.value)
        if any(not 0.0 <= v <= 1.0 for v in numbers):
            raise ValueError("confidence values must be between 0 and 1")
        return self


class Stage(ConfigModel):
    """One judge of the cascade."""

    judge: str = Field(min_length=1)
    confidence: Confidence


class Calibration(ConfigModel):
    """Which labelled items calibrate: a random ``fraction`` of the items with a ``reference``
    label (drawn with ``seed``); the other labelled items are held out to check the guarantee."""

    fraction: float = Field(default=1.0, gt=0.0, le=1.0)
    #: numpy's generators take seeds in [0, 2**32 - 1]; outside it the calibration would crash
    seed: int = Field(default=0, ge=0, le=2**32 - 1)


class SelectivePolicy(ConfigModel):
    """The policy file's model (see the module docstring)."""

    rubric: str = Field(min_length=1)
    reference: str = Field(min_length=1)
    alpha: float = Field(gt=0.0, lt=1.0)
    delta: float = Field(gt=0.0, lt=1.0)
    cascade: list[Stage] = Field(min_length=1)
    calibration: Calibration = Calibration()
    rule: Literal["fixed_sequence", "authors"] = "fixed_sequence"
    min_kept: int = Field(default=30, ge=1)

    @model_validator(mode="after")
    def _distinct(self) -> SelectivePolicy:
        names = [s.judge for s in self.cascade]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"judge {twice[0]!r} appears twice in the cascade")
        if self.reference in names:
            raise ValueError(f"the reference {self.reference!r} cannot be a judge of the cascade")
        for k, s in enumerate(self.cascade):
            panel = s.confidence.with_ or []
            if CONSENSUS in (s.judge, *panel):
                raise ValueError(f"cascade[{k}] ({s.judge}) names {CONSENSUS!r}, the human raters' majority; "
                                 "a cascade and its panels are judges")
            if s.judge in panel:
                raise ValueError(f"cascade[{k}] ({s.judge}) names itself in its panel 'with'; a "
                                 "panel is the other judges")
            if self.reference in panel:
                raise ValueError(f"cascade[{k}] ({s.judge}) reads its confidence from the reference "
                                 f"{self.reference!r}; a confidence may come from judges only")
        return self

    def judges(self) -> list[str]:
        """The cascade's judges, cheap first."""
        return [s.judge for s in self.cascade]

    def raters(self) -> list[str]:
        """Every rater the policy reads: the cascade, the panels' other judges, the reference."""
        out = self.judges()
        for s in self.cascade:
            out += [j for j in (s.confidence.with_ or []) if j not in out]
        return [*out, self.reference]


def load_selective_policy(path: str | Path) -> SelectivePolicy:
    """Read and validate a selective policy file; a problem is one sentence naming the file."""
    p = Path(path)
    raw = read_yaml_mapping(p, what="Selective policy", expect="rubric, reference, alpha, delta and cascade")
    try:
        return SelectivePolicy(**raw)
    except ValidationError as exc:
        raise JudgekitError(f"Selective policy {p}: {first_error(exc)}.") from None


__all__ = [ "CONSENSUS", "Calibration", "Confidence", "SelectivePolicy", "Stage", "load_selective_policy"]
