"""What counts as a refusal under a rubric (shared by the refusal distribution and the gate's
analysis-fidelity check, which must not depend on the analyses' verdict guard).

* under the ``refusal`` rubric (or any rubric with those codes): ``full_refusal`` or
  ``partial_refusal`` (override with ``refusal_codes``);
* under any other rubric with values (``restrictiveness``): ``value >= threshold``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric

DEFAULT_REFUSAL_CODES = ("full_refusal", "partial_refusal")


def refusal_definition(
    rubric: Rubric, *, threshold: float = 0.75, refusal_codes: Sequence[str] | None = None
) -> tuple[str, Callable[[pd.Series], pd.Series]]:
    """How a label of ``rubric`` becomes a refusal indicator: (sentence, label → 0/1 function)."""
    codes = list(refusal_codes) if refusal_codes else None
    if codes is None and all(c in rubric.codes for c in DEFAULT_REFUSAL_CODES):
        codes = list(DEFAULT_REFUSAL_CODES)
    if codes is not None:
        unknown = [c for c in codes if c not in rubric.codes]
        if unknown:
            raise JudgekitError(
                f"Refusal codes {unknown} are not labels of {rubric.id}; use some of "
                f"{', '.join(rubric.codes)}."
            )
        chosen = set(codes)
        text = f"refusal = label in {{{', '.join(codes)}}} under {rubric.id}"
        return text, lambda labels: labels.isin(chosen).astype(float)
    if not 0.0 <= threshold <= 1.0:
        raise JudgekitError(f"--threshold {threshold} must be between 0 and 1.")
    values = rubric.values
    counted = [c for c in rubric.codes if values[c] >= threshold]
    if not counted:
        raise JudgekitError(
            f"--threshold {threshold}: no label of {rubric.id} has a value that high, so nothing "
            "would count as a refusal; lower it."
        )
    text = (
        f"refusal = {rubric.name} value >= {threshold:g} under {rubric.id} "
        f"(labels {', '.join(counted)})"
    )
    return text, lambda labels: (labels.map(values).astype(float) >= threshold).astype(float)
