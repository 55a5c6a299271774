"""Cohen's kappa (two raters, optionally weighted) and Fleiss' kappa (many raters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement._matrix import UnitTable, unit_table
from judgekit.agreement.confusion import confusion_counts
from judgekit.errors import JudgekitError

KAPPA_WEIGHTS: tuple[str | None, ...] = (None, "linear", "quadratic")


def disagreement_weights(weights: str | None, n_labels: int, *, func: str) -> np.ndarray:
    """(V, V) disagreement weights over label positions: 0/1, ``|i - j|`` or ``(i - j)^2``."""
    i = np.arange(n_labels)
    diff = np.abs(i[:, None] - i[None, :]).astype(np.float64)
    if weights is None:
        return (diff > 0).astype(np.float64)
    if weights == "linear":
        return diff
    if weights == "quadratic":
        return diff**2
    raise JudgekitError(f"{func}: unknown weights {weights!r}; use None, 'linear' or 'quadratic'.")


def weighted_kappa(observed: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``1 - sum(W * O) / sum(W * E)`` for a stack of confusion matrices.

    ``observed`` (B, V, V) counts, ``weights`` (V, V) disagreement weights,
    ``E = outer(row sums, column sums) / n``. NaN where ``sum(W * E) == 0`` or n == 0.
    """
    n = observed.sum(axis=(1, 2))
    rows = observed.sum(axis=2)
    cols = observed.sum(axis=1)
    obs = np.einsum("bij,ij->b", observed, weights)
    expected = np.divide(
        np.einsum("bi,ij,bj->b", rows, weights, cols), n, out=np.zeros(n.shape), where=n > 0
    )
    defined = expected > 1e-12 * np.maximum(n, 1.0)
    return 1.0 - np.divide(obs, expected, out=np.full(n.shape, np.nan), where=defined)


def cohen_kappa(
    y1: Any,
    y2: Any,
    *,
    labels: Sequence[Any] | None = None,
    weights: str | None = None,
) -> float:
    """Cohen's kappa between two raters, optionally weighted for ordinal labels.

    ``kappa = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij`` where ``O`` is the (V, V) confusion
    matrix (see :func:`confusion_matrix`), ``E_ij = O_i. O_.j / n`` its chance expectation and
    ``w_ij`` is ``[i != j]``, ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic) over label
    positions. Equals :func:`sklearn.metrics.cohen_kappa_score`.

    Parameters
    ----------
    y1, y2 : array-like of shape (N,)
        Ratings of the same units in the same order. A unit where either is missing (None/NaN)
        is dropped.
    labels : sequence, optional
        The full, ordered label set (e.g. the rubric scale). Weighted kappa depends on how many
        labels lie between two ratings, so pass the whole scale even if some labels were never
        used. Default: the observed labels, sorted.
    weights : {None, "linear", "quadratic"}
        Disagreement weighting.

    Returns
    -------
    float
        Kappa, or NaN when undefined (no pair left, or both raters used one and the same label).

    References
    ----------
    J. Cohen (1960), A coefficient of agreement for nominal scales; J. Cohen (1968), Weighted
    kappa. Educational and Psychological Measurement 20 / Psychological Bulletin 70.

    Examples
    --------
    >>> cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
    0.5
    """
    matrix, cats = confusion_counts(y1, y2, labels, func="cohen_kappa")
    w = disagreement_weights(weights, len(cats), func="cohen_kappa")
    return float(weighted_kappa(matrix[None].astype(np.float64), w)[0])


def fleiss_from_table(table: UnitTable, w: np.ndarray) -> np.ndarray:
    """Fleiss' kappa for each row of unit weights ``w`` (B, P) -> (B,)."""
    counts = table.counts.astype(np.float64)
    m = counts.sum(axis=1)
    share = (counts * (counts - 1.0)).sum(axis=1) / (m * (m - 1.0))  # P_i, agreeing pairs
    units = w.sum(axis=1)
    p_bar = np.divide(w @ share, units, out=np.full(units.shape, np.nan), where=units > 0)
    marginals = w @ counts
    total = marginals.sum(axis=1, keepdims=True)
    p_j = np.divide(marginals, total, out=np.zeros_like(marginals), where=total > 0)
    p_e = (p_j * p_j).sum(axis=1)
    defined = (units > 0) & (p_e < 1.0 - 1e-12)
    return np.divide(p_bar - p_e, 1.0 - p_e, out=np.full(units.shape, np.nan), where=defined)


def fleiss_kappa(data: Any, *, categories: Sequence[Any] | None = None) -> float:
    """Fleiss' kappa for many raters: ``(P_bar - P_e) / (1 - P_e)``.

    ``P_i = sum_j n_ij (n_ij - 1) / (m_i (m_i - 1))`` is the share of agreeing rater pairs on
    unit i (``n_ij`` raters chose category j, ``m_i`` raters rated it), ``P_bar`` its mean over
    the units rated at least twice, ``p_j = sum_i n_ij / sum_i m_i`` and ``P_e = sum_j p_j^2``.
    With complete data this is exactly Fleiss (1971); with missing ratings each unit uses the
    raters it has, and units rated once are left out.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN. Rater identity does not matter to Fleiss' kappa.
    categories : sequence, optional
        The category list; every rating must be in it (unused categories add nothing).

    Returns
    -------
    float
        Kappa, or NaN when every rating is in one category or no unit was rated twice.

    References
    ----------
    J. L. Fleiss (1971). Measuring nominal scale agreement among many raters. Psychological
    Bulletin 76(5), 378-382.

    Examples
    --------
    >>> fleiss_kappa([["a", "a", "b", "b"], ["a", "b", "b", "b"]])  # = Scott's pi: 14/30
    0.4666666666666667
    """
    table = unit_table(data, categories, func="fleiss_kappa")
    return float(fleiss_from_table(table, table.freq[None, :].astype(np.float64))[0])
