"""A judge's own figures against the reference and the humans in one slice, beside the
agreement coefficients: its coverage of the human-rated items, its per-class precision, recall
and F1, and its signed bias.

**Coverage**: how much of the human-rated part of a slice a judge actually rated.

A judge is validated on the items that carry a human judgement: the *in-scope* items of a slice
are those with a reference label or at least one human rating. Among them each item is, for a
judge, exactly one of: ``rated`` (an ok label; after trials are collapsed to their majority),
``abstained`` (no parseable answer, or trials that tie), ``errored`` (every trial failed) or
``not_attempted`` (no rating row at all). So ``rated + abstained + errored + not_attempted ==
in_scope``. ``share = rated / in_scope`` carries a Wilson score interval (E. B. Wilson (1927),
Probable inference, the law of succession, and statistical inference, JASA 22, 209-212), the
interval for a binomial proportion that keeps its coverage near 0 and 1 where the normal
approximation fails. ``rated_out_of_scope`` counts the judge's ok ratings on items no human or
reference rated (they are not validated by anything in the report).

A judge that rated 250 of 300 in-scope items reads ``rated 250, in_scope 300, share 0.833``,
never "250 of 250".

**Per class**: precision, recall and F1 of a judge against the reference, with intervals.

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

**Signed bias** of a judge against the reference, on the items both rated.

Agreement coefficients are blind to direction: a judge one level too strict on every item keeps
a high weighted κ. The signed bias says which way and how much.

* Ordinal/interval rubrics: ``mean_diff = (1/n) Σ_i (v(judge_i) − v(ref_i))``, the mean signed
  difference on the rubric's label values (``value`` in the rubric file, e.g. 0, 0.25, …, 1), so
  +0.05 means the judge rates 0.05 higher on the rubric's scale on average.
* Every rubric: ``share_diff[c] = p_judge(c) − p_ref(c)``, the difference between the share of
  items the judge and the reference put in label c (the two marginals of the confusion matrix on
  the items both rated; the shares each sum to 1, so the differences sum to 0).
* ``max_abs``: the figure a ``max_abs_bias`` check reads: for ordinal/interval rubrics
  ``|mean_diff|`` (``code`` None, ``of`` "mean_diff"); for nominal ones the largest
  ``|share_diff[c]|`` and its code (the first in rubric order on a tie). ``signed``, ``low`` and
  ``high`` are that figure's signed value and CI.

CIs: percentile bootstrap over items (Efron & Tibshirani 1993, ch. 13); an item's pattern is its
(reference, judge) confusion cell, so resamples are multinomial draws over at most V² cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement.figures import (
    fig,
    num,
    percentile_bounds,
    resample_weights,
    undefined_fig,
    wilson_fig,
)


def coverage(in_scope: np.ndarray, rated: np.ndarray, status: np.ndarray, *, confidence: float) -> dict[str, Any]:
    """Coverage of one judge on one slice.

    ``in_scope`` and ``rated`` are boolean arrays over the slice's items; ``status`` the judge's
    collapsed status per item (``"ok"``, ``"abstain"``, ``"error"``, or missing when it has no
    rating row).
    """
    in_scope = np.asarray(in_scope, dtype=bool)
    rated = np.asarray(rated, dtype=bool)
    status = np.asarray(status, dtype=object)
    n = int(in_scope.sum())
    n_rated = int((rated & in_scope).sum())
    abstained = int(((status == "abstain") & in_scope & ~rated).sum())
    errored = int(((status == "error") & in_scope & ~rated).sum())
    return {
        "in_scope": n,
        "rated": n_rated,
        "abstained": abstained,
        "errored": errored,
        "not_attempted": n - n_rated - abstained - errored,
        "rated_out_of_scope": int((rated & ~in_scope).sum()),
        "share": wilson_fig(n_rated, n, confidence, "no item of this slice carries a reference or human rating"),
    }


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


def signed_bias(
    reference: np.ndarray,
    judge: np.ndarray,
    *,
    codes: Sequence[str],
    values: Sequence[float],
    level: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """Signed bias of ``judge`` against ``reference`` (int code arrays over the same items, -1
    missing; codes index ``codes`` and ``values``)."""
    v = len(codes)
    reference, judge = np.asarray(reference), np.asarray(judge)
    both = (reference >= 0) & (judge >= 0)
    n = int(both.sum())
    numeric = level in ("ordinal", "interval")
    if n == 0:
        why = "no item was rated by both the judge and the reference"
        return {"n": 0, "mean_diff": undefined_fig(why) if numeric else None,
                "share_diff": {c: undefined_fig(why) for c in codes},
                "max_abs": {"value": None, "signed": None, "low": None, "high": None, "code": None,
                            "of": "mean_diff" if numeric else "share_diff", "n": 0, "undefined": why}}
    counts = np.bincount(reference[both] * v + judge[both], minlength=v * v)
    cells = np.flatnonzero(counts)
    ref_of, judge_of = cells // v, cells % v
    vals = np.asarray(values, dtype=float)
    # per cell: its signed value difference and its +1 / -1 contribution to each label's share
    diff = vals[judge_of] - vals[ref_of]
    share = (judge_of[:, None] == np.arange(v)).astype(float) - (ref_of[:, None] == np.arange(v)).astype(float)
    per_cell = np.hstack([diff[:, None], share]) / n  # (K, 1 + V)

    observed = np.einsum("k,kj->j", counts[cells].astype(float), per_cell)
    draws = [np.einsum("bk,kj->bj", w, per_cell) for w in resample_weights(counts[cells], n_resamples, seed, cost=per_cell.size)]
    lo, hi = percentile_bounds(np.vstack(draws), confidence) if draws else (np.full(1 + v, np.nan),) * 2
    figures = [fig(observed[i], (lo[i], hi[i]), n) for i in range(1 + v)]
    out: dict[str, Any] = {"n": n, "mean_diff": figures[0] if numeric else None,
                           "share_diff": dict(zip(codes, figures[1:], strict=True))}
    if numeric:
        top, code, of = figures[0], None, "mean_diff"
    else:
        pick = int(np.argmax(np.abs(np.round(observed[1:], 12))))
        top, code, of = figures[1 + pick], codes[pick], "share_diff"
    out["max_abs"] = {"value": num(abs(top["value"])), "signed": top["value"], "low": top["low"],
                      "high": top["high"], "code": code, "of": of, "n": n, "undefined": None}
    return out
