"""The probe file of ``judgekit probe`` and the probe checks of a gate policy (strict YAML).

A probe file (YAML)::

    rubric: refusal
    judges: [gpt4, string_match]
    reference: final              # a human or reference rater, or consensus (majority of humans)
    by: [model]                   # slices; each probe and judge is one Holm family over them
    min_items: 30                 # a slice with fewer items is inconclusive (and not tested)
    families:                     # self-preference: whose outputs does each judge rate?
      column: model               # the item metadata column naming the rated model
      judges: {gpt4: openai}
      models: {gpt4: openai, llama2orig: meta, mistralinstruct: mistral}
    covariates:                   # covariate sensitivity, conditional on the reference label
      - column: response_chars    # an item metadata column, or response_length (computed)
        target: full_refusal      # optional: the rate of this label (default: any error)
        margin: 0.10              # null band |Δ| <= margin
    self_preference: {margin: 0.10}
    stability: {min_alpha: 0.8}   # judges with trials: null band α >= min_alpha (judges: [...]
                                  #   to name them; each needs trials: 2 or more)
    drift: {margin: 0.10}         # label-prior drift: null band |share difference| <= margin
    perturb:                      # probes that make calls (a panel variant per perturbation)
      panel: panel.yaml
      judges: [scripted-llm]
      variants: [label_order, padding]
      max_flip_rate: 0.10

Every key is optional except ``rubric`` and ``judges``; a probe runs when its key is given. The
gate policy's probe checks (``max_covariate_effect``, ``max_self_preference``, ``min_stability``,
``max_flip_rate``) are the models below; each carries what its probe needs, so a verdict records
everything its checks were computed from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.errors import JudgekitError
from judgekit.store.variants import VARIANTS
from judgekit.verdict.probe_policy import Binning, Families
from judgekit.verdict.probe_policy import MaxCovariateEffect as MaxCovariateEffect  # re-exported
from judgekit.verdict.probe_policy import MaxFlipRate as MaxFlipRate  # re-exported
from judgekit.verdict.probe_policy import MaxSelfPreference as MaxSelfPreference  # re-exported
from judgekit.verdict.probe_policy import MinStability as MinStability  # re-exported

#: the covariate computed from the item text rather than read from a metadata column
RESPONSE_LENGTH = "response_length"
#: the neutral padding appended to a response by the ``padding`` perturbation
DEFAULT_PADDING = ("\n\n(End of response. The text above is the complete reply; this note was added "
                   "after it and carries no content.)")


class Covariate(Binning):
    """One covariate probe, with its null band ``|Δ| <= margin``."""

    margin: float = Field(default=0.10, gt=0, le=1)


class SelfPreference(ConfigModel):
    margin: float = Field(default=0.10, gt=0, le=1)


class Stability(ConfigModel):
    """The stability probe: ``judges`` (default: the file's judges) must each have trials."""

    min_alpha: float = Field(default=0.8, ge=-1, le=1)
    judges: list[str] | None = Field(default=None, min_length=1)


class Drift(ConfigModel):
    margin: float = Field(default=0.10, gt=0, le=1)


class Perturb(ConfigModel):
    """The perturbation probes: which panel, which of its judges, which variants."""

    panel: str = Field(min_length=1)
    judges: list[str] | None = None
    variants: list[str] = Field(default_factory=lambda: list(VARIANTS), min_length=1)
    padding: str = DEFAULT_PADDING
    max_flip_rate: float = Field(default=0.10, gt=0, lt=1)

    @model_validator(mode="after")
    def _known(self) -> Perturb:
        for v in self.variants:
            if v not in VARIANTS:
                raise ValueError(f"variant {v!r} is not one judgekit knows; use {', '.join(VARIANTS)}")
        if len(set(self.variants)) != len(self.variants):
            raise ValueError("a variant is listed twice")
        if not self.padding.strip():
            raise ValueError("padding must contain text")
        return self


class ProbeFile(ConfigModel):
    """A probe file (see the module docstring)."""

    rubric: str
    judges: list[str] = Field(min_length=1)
    reference: str | None = None
    by: list[str] = Field(default_factory=list)
    min_items: int = Field(default=30, ge=2)
    n_resamples: int = Field(default=1000, ge=100)
    seed: int = 0
    families: Families | None = None
    covariates: list[Covariate] = Field(default_factory=list)
    self_preference: SelfPreference | None = None
    stability: Stability | None = None
    drift: Drift | None = None
    perturb: Perturb | None = None

    @model_validator(mode="after")
    def _needs(self) -> ProbeFile:
        if self.self_preference is not None and self.families is None:
            raise ValueError("self_preference needs families (the model family of each judge and rated model)")
        if len(set(self.judges)) != len(self.judges):
            raise ValueError("a judge is listed twice in judges")
        if self.families is not None and self.self_preference is None:
            raise ValueError("families is given but self_preference is not, so it would do nothing; add "
                             "self_preference: {margin: 0.10} or drop families")
        if not (self.covariates or self.self_preference or self.stability or self.drift or self.perturb):
            raise ValueError("the file asks for no probe, so nothing would be tested; add covariates, "
                             "self_preference, stability, drift or perturb")
        if self.stability is not None and self.stability.judges is not None:
            extra = [j for j in self.stability.judges if j not in self.judges]
            if extra:
                raise ValueError(f"stability.judges names {extra[0]!r}, which is not in judges; add it to "
                                 "judges or drop it")
        if self.perturb is not None and self.perturb.judges is not None:
            extra = [j for j in self.perturb.judges if j not in self.judges]
            if extra:
                raise ValueError(f"perturb.judges names {extra[0]!r}, which is not in judges (a perturbed judge "
                                 "nobody probes is asked for nothing); add it to judges or drop it")
        return self


def load_probe_file(path: str | Path) -> tuple[ProbeFile, dict[str, Any]]:
    """Read and validate a probe file: one sentence naming the file for every problem."""
    p = Path(path)
    raw = read_yaml_mapping(p, what="Probe file", expect="rubric, judges and the probes to run")
    try:
        return ProbeFile(**raw), raw
    except ValidationError as exc:
        raise JudgekitError(f"Probe file {p}: {first_error(exc)}.") from None


