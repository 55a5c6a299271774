"""The ``analysis_fidelity`` gate check as a policy writes it (see :mod:`judgekit.gate.fidelity`).

Example (in a policy's ``checks``)::

    analysis_fidelity:
      analysis: calibration          # calibration | distribution | criteria
      figures: [C, RCE, drift, drift_tier]
      max_abs_diff: 0.05             # |figure(judge) − figure(reference)| must stay within this
      margins: {drift_tier: 0.1}     # optional: a figure's own margin (default max_abs_diff)
      alpha: 0.05                    # chance of certifying a figure off by more than its margin
      min_units: 10                  # fewer labelled conversations (prompts) behind a figure: inconclusive
      harm_column: severity          # calibration: H from this item column (default: human harm ratings)

Every figure each analysis has is in :data:`FIGURES`; the defaults when ``figures`` is left out
are :data:`DEFAULT_FIGURES`. Bounds: a margin below the figure's :data:`SPAN` (one that wide
certifies any judge), ``alpha`` in [:data:`MIN_ALPHA`, 0.25], ``min_units`` at most
:data:`MAX_MIN_UNITS` (the plan simulates studies of that size).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from judgekit.core.config import ConfigModel

#: figures of each analysis, in the order they are reported
FIGURES: dict[str, tuple[str, ...]] = {
    "calibration": ("C", "C_half", "RCE", "signed_error", "C_t", "RCE_t", "mean_R_t", "drift",
                    "drift_tier"),
    "distribution": ("refusal_rate", "refusal_rate_t", "share_not_constant"),
    "criteria": ("rate",),
}
#: the largest |figure(judge) − figure(reference)| a figure can show: a margin this wide or wider
#: certifies every judge, so a margin must stay below it (drift and the signed error range over
#: [−1, 1], the other figures over [0, 1])
SPAN: dict[str, float] = {f: 2.0 if f in ("signed_error", "drift", "drift_tier") else 1.0
                          for figs in FIGURES.values() for f in figs}
#: the smallest α a policy may ask: below it a (1 − 2α) bootstrap interval is the resamples' extremes
MIN_ALPHA = 0.001
#: the most labelled units a figure's floor may ask (the plan simulates studies of this size)
MAX_MIN_UNITS = 1_000
#: figures computed when a policy names none
DEFAULT_FIGURES: dict[str, tuple[str, ...]] = {
    "calibration": ("C", "RCE", "drift", "drift_tier"),
    "distribution": ("refusal_rate", "refusal_rate_t"),
    "criteria": ("rate",),
}


def check_figures(analysis: str, figures: Sequence[str]) -> list[str]:
    """``figures`` of ``analysis`` (its defaults when empty); a figure it does not have is a
    ValueError naming the ones it has."""
    if analysis not in FIGURES:
        raise ValueError(f"analysis {analysis!r} is not one of {', '.join(FIGURES)}")
    chosen = list(dict.fromkeys(figures)) or list(DEFAULT_FIGURES[analysis])
    bad = [f for f in chosen if f not in FIGURES[analysis]]
    if bad:
        raise ValueError(f"figure {bad[0]!r} is not a {analysis} figure; use some of "
                         f"{', '.join(FIGURES[analysis])}")
    return chosen


class AnalysisFidelity(ConfigModel):
    """``checks.analysis_fidelity``: the analysis's figures from the judge's labels and from the
    reference's, on the items the reference rated, may differ by at most ``max_abs_diff``; a
    figure with fewer than ``min_units`` labelled conversations (prompts) behind it is
    inconclusive. The other keys say how the analysis reads the items, as the options of
    ``judgekit analyze`` of the same name do.

    The check is an equivalence test, two one-sided tests (TOST; Schuirmann 1987, *J.
    Pharmacokinet. Biopharm.* 15:657; Wellek, *Testing Statistical Hypotheses of Equivalence*,
    2010, ch. 2): the figure is certified when the whole (1 − 2α) paired bootstrap interval of
    the difference d lies within ±margin — each one-sided test "d ≤ −margin" and "d ≥ margin"
    rejected at level α — so a figure whose true |d| exceeds its margin is certified with
    probability about ``alpha`` at most (the bootstrap interval's coverage: 5.5% ± 0.5% measured at
    the margin for α = 0.05). A cell where every labelled unit gives the same difference has no
    interval and is read on its point; docs/gate.md says when that stays within α (raise
    ``min_units``). ``alpha: 0.05`` reads the 90% interval, as bioequivalence does; ``alpha:
    0.025`` the 95% interval (stricter, and about 1.25× the labels for the same power)."""

    analysis: Literal["calibration", "distribution", "criteria"]
    figures: list[str] = Field(default_factory=list)
    max_abs_diff: float = Field(ge=0)
    #: a figure's own margin (figure → max |difference|); the others use ``max_abs_diff``
    margins: dict[str, float] = Field(default_factory=dict)
    #: the chance of certifying a figure off by more than its margin (each one-sided test's level)
    alpha: float = Field(default=0.05, ge=MIN_ALPHA, le=0.25)
    min_units: int = Field(default=10, ge=1, le=MAX_MIN_UNITS)
    harm_column: str | None = None
    harm_rubric: str = "harm_severity"
    harm_key: str | None = "prompt_id"
    model_column: str = "model"
    prompt_column: str | None = None
    turn_column: str = "turn"
    lookalike_column: str = "benign_lookalike"
    include_lookalikes: bool = False
    threshold: float = Field(default=0.75, ge=0, le=1)
    refusal_codes: list[str] | None = None
    #: the criteria file (``analysis: criteria``), relative to the policy file
    criteria: str | None = None

    @field_validator("figures")
    @classmethod
    def _no_empty(cls, v: list[str]) -> list[str]:
        if any(not f for f in v):
            raise ValueError("figures has an empty name")
        return v

    @model_validator(mode="after")
    def _known(self) -> AnalysisFidelity:
        chosen = check_figures(self.analysis, self.figures)
        for fig, margin in self.margins.items():
            if fig not in chosen:
                raise ValueError(f"margins names {fig!r}, which is not one of the figures checked "
                                 f"({', '.join(chosen)}); name a checked figure")
            if not margin >= 0 or margin != margin:
                raise ValueError(f"margins.{fig} {margin!r} is not a number >= 0")
            if margin >= SPAN[fig]:
                raise ValueError(f"margins.{fig} {margin:g} certifies any judge ({fig} differences never "
                                 f"exceed {SPAN[fig]:g}); use a margin below {SPAN[fig]:g}")
        plain = [f for f in chosen if f not in self.margins]
        span = min((SPAN[f] for f in plain), default=None)
        if span is not None and self.max_abs_diff >= span:
            raise ValueError(f"max_abs_diff {self.max_abs_diff:g} certifies any judge ("
                             f"{', '.join(f for f in plain if SPAN[f] == span)} differences never exceed "
                             f"{span:g}); use a margin below {span:g}")
        if (self.analysis == "criteria") != (self.criteria is not None):
            raise ValueError("criteria (the criteria file) is needed with analysis: criteria and only then")
        return self

    def margin(self, figure: str) -> float:
        """The margin of ``figure``: its own (``margins``) or ``max_abs_diff``."""
        return float(self.margins.get(figure, self.max_abs_diff))

    @property
    def level(self) -> float:
        """The confidence level of the interval the check reads: 1 − 2·``alpha`` (TOST)."""
        return 1.0 - 2.0 * self.alpha

    @property
    def chosen(self) -> list[str]:
        """The figures to compute (the defaults when none is named)."""
        return check_figures(self.analysis, self.figures)


#: the α a recorded policy without ``alpha`` was decided at: verdicts written before the key read
#: the whole 95% interval (a 2.5% one-sided test)
ALPHA_BEFORE_KEY = 0.025


def _fidelity_of(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The ``checks.analysis_fidelity`` mapping of a policy as written, or None."""
    checks = raw.get("checks")
    fid = checks.get("analysis_fidelity") if isinstance(checks, dict) else None
    return fid if isinstance(fid, dict) else None


def record_alpha(raw: dict[str, Any]) -> dict[str, Any]:
    """The policy as a verdict records it, with ``analysis_fidelity.alpha`` written out when the
    policy file leaves it to the default, so that the verdict says which interval its fidelity
    checks read (and a verdict without it is one written before the key: :func:`recorded_alpha`)."""
    fid = _fidelity_of(raw)
    if fid is None or "alpha" in fid:
        return raw
    default = AnalysisFidelity.model_fields["alpha"].default
    return {**raw, "checks": {**raw["checks"], "analysis_fidelity": {**fid, "alpha": default}}}


def recorded_alpha(raw: dict[str, Any]) -> float | None:
    """The α of a verdict's recorded policy's fidelity checks (None without the check): its
    ``alpha``, else :data:`ALPHA_BEFORE_KEY`."""
    fid = _fidelity_of(raw)
    if fid is None:
        return None
    a = fid.get("alpha", ALPHA_BEFORE_KEY)
    return float(a) if isinstance(a, int | float) and not isinstance(a, bool) else ALPHA_BEFORE_KEY
