"""Per-class precision, recall and F1 of a judge against the reference, with intervals.

From the (V, V) confusion matrix O on the items both rated (rows = reference, columns = judge),
for each label c: ``TP = O_cc``, ``support = Σ_j O_cj`` (reference count), ``predicted =
Σ_i O_ic`` (judge count) and

    precision = TP / predicted,   recall = TP / support,   F1 = 2 TP / (support + predicted)

(undefined, never 0, when the denominator is 0). Precision and recall are binomial proportions
given their denominators and carry Wilson score intervals (E. B. Wilson (1927), JASA 22,
209-212); F1 is not, and carries a percentile bootstrap interval over items (multinomial draws
over the confusion cells; Efron & Tibshirani 1993, ch. 13). ``macro_f1`` is the mean F1 over the
labels whose F1 is defined (they occur in the reference or the judge's answers), with a bootstrap
interval from the same resamples.

The positive class of a binary rubric (``positive``; None for a rubric with more than two
labels) is the label with the higher rubric ``value``, which in judgekit's rubrics is the
refusal side (value 1 = refusal, 0 = compliance); when both values are equal, the second listed
label. ``positive_class`` repeats that label's precision/recall/F1, the figures a paper's
"F1 / precision / recall" table reports for a binary classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement.figures import (
    fig,
    percentile_bounds,
    resample_weights,
    undefined_fig,
    wilson_fig,
)


def positive_code(codes: Sequence[str], values: Sequence[float]) -> str | None:
    """The positive (refusal-side) label of a binary rubric, None when it has more labels."""
    if len(codes) != 2:
        return None
    return codes[0] if values[0] > values[1] else codes[1]


def _f1(observed: np.ndarray) -> np.ndarray:
    """F1 per label of confusion stacks (B, V, V) -> (B, V); NaN where undefined."""
    tp = np.diagonal(observed, axis1=1, axis2=2)
    denom = observed.sum(axis=2) + observed.sum(axis=1)
    return np.divide(2 * tp, denom, out=np.full(tp.shape, np.nan), where=denom > 0)


def per_class(
    matrix: np.ndarray,
    codes: Sequence[str],
    values: Sequence[float],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """Per-class figures from the reference x judge confusion ``matrix`` (V, V) of counts."""
    matrix = np.asarray(matrix, dtype=np.int64)
    v = len(codes)
    n = int(matrix.sum())
    tp, support, predicted = np.diagonal(matrix), matrix.sum(axis=1), matrix.sum(axis=0)
    cells = np.flatnonzero(matrix.ravel())
    stats = []
    for w in resample_weights(matrix.ravel()[cells], n_resamples, seed, cost=v * v + cells.size):
        obs = np.zeros((w.shape[0], v * v))
        obs[:, cells] = w
        f1 = _f1(obs.reshape(-1, v, v))
        defined = np.isfinite(f1)
        macro = np.divide(np.where(defined, f1, 0.0).sum(axis=1), defined.sum(axis=1),
                          out=np.full(w.shape[0], np.nan), where=defined.any(axis=1))
        stats.append(np.hstack([f1, macro[:, None]]))
    lo, hi = percentile_bounds(np.vstack(stats), confidence) if stats else (np.full(v + 1, np.nan),) * 2
    f1_obs = _f1(matrix[None].astype(float))[0]
    classes: dict[str, Any] = {}
    for i, c in enumerate(codes):
        classes[c] = {
            "support": int(support[i]),
            "predicted": int(predicted[i]),
            "precision": wilson_fig(int(tp[i]), int(predicted[i]), confidence,
                                    f"the judge never said {c!r} on these items"),
            "recall": wilson_fig(int(tp[i]), int(support[i]), confidence,
                                 f"the reference never says {c!r} on these items"),
            "f1": (fig(f1_obs[i], (lo[i], hi[i]), n) if np.isfinite(f1_obs[i])
                   else undefined_fig(f"neither the judge nor the reference says {c!r} on these items", n)),
        }
    defined = np.isfinite(f1_obs)
    macro = (fig(float(f1_obs[defined].mean()), (lo[v], hi[v]), n) if defined.any()
             else undefined_fig("no item was rated by both the judge and the reference"))
    positive = positive_code(codes, values)
    return {"n": n, "positive": positive, "classes": classes, "macro_f1": macro,
            "positive_class": None if positive is None else {"code": positive, **classes[positive]}}
