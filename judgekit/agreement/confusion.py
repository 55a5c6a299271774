"""Confusion matrix of a judge against a reference rater, with per-label precision and recall."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.agreement._matrix import to_native, two_raters


def confusion_counts(
    reference: Any, judge: Any, labels: Sequence[Any] | None, *, func: str
) -> tuple[np.ndarray, list[Any]]:
    """(V, V) int64 counts, rows = reference label, columns = judge label, pairs with a
    missing side dropped; and the label list that indexes them."""
    c1, c2, cats = two_raters(reference, judge, labels, func=func)
    v = len(cats)
    matrix = np.bincount(c1 * v + c2, minlength=v * v).reshape(v, v)
    return matrix, cats


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class ConfusionResult:
    """A confusion matrix and the per-label scores derived from it.

    ``matrix[i, j]`` counts units the reference put in ``labels[i]`` and the judge in
    ``labels[j]``. ``precision[l] = TP / (TP + FP)`` (column), ``recall[l] = TP / (TP + FN)``
    (row), ``f1[l] = 2 TP / (2 TP + FP + FN)``, ``support[l]`` = reference count (row sum). A
    ratio with a zero denominator is NaN: undefined, not zero.
    """

    labels: list[Any]
    matrix: np.ndarray
    precision: dict[Any, float]
    recall: dict[Any, float]
    f1: dict[Any, float]
    support: dict[Any, int]

    @property
    def n(self) -> int:
        """Number of units both sides rated."""
        return int(self.matrix.sum())

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: label keys as strings, NaN as ``None``."""
        return {
            "labels": [to_native(label) for label in self.labels],
            "matrix": self.matrix.tolist(),
            "precision": {str(k): _nan_to_none(v) for k, v in self.precision.items()},
            "recall": {str(k): _nan_to_none(v) for k, v in self.recall.items()},
            "f1": {str(k): _nan_to_none(v) for k, v in self.f1.items()},
            "support": {str(k): int(v) for k, v in self.support.items()},
        }


def confusion_matrix(reference: Any, judge: Any, *, labels: Sequence[Any] | None = None) -> ConfusionResult:
    """Confusion matrix of ``judge`` against ``reference`` over the full label set.

    Parameters
    ----------
    reference, judge : array-like of shape (N,)
        Ratings of the same N units in the same order; ``None``/NaN marks a missing rating and
        drops that unit.
    labels : sequence, optional
        Every label of the rubric, in display order. A rating outside it is an error. Default:
        the observed labels, sorted (as :func:`judgekit.agreement.kappa.cohen_kappa`) — pass the
        rubric's labels to keep a label nobody used as a row and a column of zeros.

    Returns
    -------
    ConfusionResult
        ``matrix`` of shape (V, V) (rows = reference, columns = judge) and per-label precision,
        recall, F1 and support.

    Examples
    --------
    >>> r = confusion_matrix(["a", "a", "b"], ["a", "b", "b"], labels=["a", "b"])
    >>> r.matrix.tolist(), r.precision["b"], r.recall["a"]
    ([[1, 1], [0, 1]], 0.5, 0.5)
    >>> confusion_matrix(["b", "a"], ["b", "b"]).labels
    ['a', 'b']
    """
    matrix, cats = confusion_counts(reference, judge, labels, func="confusion_matrix")
    return confusion_result(matrix, cats)


def confusion_result(matrix: np.ndarray, labels: Sequence[Any]) -> ConfusionResult:
    """:class:`ConfusionResult` of a (V, V) matrix of counts (rows = reference, columns = judge)
    over ``labels``: the per-label figures :func:`confusion_matrix` derives from its counts."""
    cats = list(labels)
    matrix = np.asarray(matrix, dtype=np.int64)
    tp = np.diag(matrix).astype(np.float64)
    predicted = matrix.sum(axis=0)
    actual = matrix.sum(axis=1)
    nan = np.full(tp.shape, np.nan)
    precision = np.divide(tp, predicted, out=nan.copy(), where=predicted > 0)
    recall = np.divide(tp, actual, out=nan.copy(), where=actual > 0)
    f1 = np.divide(2 * tp, predicted + actual, out=nan.copy(), where=(predicted + actual) > 0)
    return ConfusionResult(
        labels=cats,
        matrix=matrix,
        precision={c: float(x) for c, x in zip(cats, precision, strict=True)},
        recall={c: float(x) for c, x in zip(cats, recall, strict=True)},
        f1={c: float(x) for c, x in zip(cats, f1, strict=True)},
        support={c: int(x) for c, x in zip(cats, actual, strict=True)},
    )
