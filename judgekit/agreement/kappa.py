"""Kappa family: Cohen's kappa and Scott's pi (two raters), Fleiss' kappa (many raters).

Conger's kappa (many raters, rater identity kept) is in :mod:`judgekit.agreement.conger`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.agreement._rated import (
    RatedTable,
    category_shares,
    finish,
    observed_agreement,
    rated_table,
)
from judgekit.agreement.confusion import confusion_counts
from judgekit.errors import JudgekitError


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


def scott_from_confusion(observed: np.ndarray) -> np.ndarray:
    """Scott's pi for a stack of (B, V, V) confusion matrices: ``(p_o - p_e) / (1 - p_e)``."""
    n = observed.sum(axis=(1, 2))
    safe = np.where(n > 0, n, 1.0)
    p_o = np.einsum("bii->b", observed) / safe
    pooled = (observed.sum(axis=2) + observed.sum(axis=1)) / (2.0 * safe[:, None])
    p_e = (pooled * pooled).sum(axis=1)
    defined = (n > 0) & (p_e < 1.0 - 1e-12)
    return np.divide(p_o - p_e, 1.0 - p_e, out=np.full(n.shape, np.nan), where=defined)


def scott_pi(y1: Any, y2: Any, *, labels: Sequence[Any] | None = None) -> float:
    """Scott's pi between two raters: chance from the raters' pooled label shares.

    ``pi = (p_o - p_e) / (1 - p_e)``, ``p_o = sum_k O_kk / n`` the share of agreeing pairs and
    ``p_e = sum_k ((O_k. + O_.k) / (2 n))^2``, where ``O`` is the (V, V) confusion matrix of
    the n units both raters rated. Unlike :func:`cohen_kappa`, chance assumes the two raters
    share one label distribution. Units where either rating is missing are dropped, as in
    irrCAC's ``scott2.table`` (on its ``cont3x3abstractors`` table pi = 0.7962397); to let
    units rated once enter the chance term, use ``fleiss_kappa([y1, y2])`` (irrCAC's
    ``fleiss.kappa.raw``), which equals Scott's pi on complete data.

    Parameters
    ----------
    y1, y2 : array-like of shape (N,)
        Ratings of the same units in the same order; None/NaN for missing.
    labels : sequence, optional
        The label set; every rating must be in it (unused labels add nothing).

    Returns
    -------
    float
        Pi, or NaN when no pair is left or every paired rating is one and the same label.

    References
    ----------
    W. A. Scott (1955). Reliability of content analysis: the case of nominal scale coding.
    Public Opinion Quarterly 19(3), 321-325; K. L. Gwet (2014), Handbook of Inter-Rater
    Reliability, 4th ed., ch. 2.

    Examples
    --------
    >>> scott_pi(["a", "a", "b", "b"], ["a", "b", "b", "b"])  # (3/4 - 34/64) / (1 - 34/64)
    0.4666666666666667
    """
    matrix, _ = confusion_counts(y1, y2, labels, func="scott_pi")
    return float(scott_from_confusion(matrix[None].astype(np.float64))[0])


def fleiss_from_table(table: RatedTable, w: np.ndarray) -> np.ndarray:
    """Fleiss' kappa for each row of unit weights ``w`` (B, P) -> (B,)."""
    identity = np.eye(len(table.categories))
    p_a = observed_agreement(table, w, identity)
    pi = category_shares(table, w)
    return finish(p_a, (pi * pi).sum(axis=1))


def fleiss_kappa(data: Any, *, categories: Sequence[Any] | None = None) -> float:
    """Fleiss' kappa for many raters: ``(P_bar - P_e) / (1 - P_e)``.

    ``P_i = sum_j n_ij (n_ij - 1) / (m_i (m_i - 1))`` is the share of agreeing rater pairs on
    unit i (``n_ij`` raters chose category j, ``m_i`` raters rated it) and ``P_bar`` its mean
    over the units rated at least twice; ``p_j = (1/n) sum_i n_ij / m_i`` averages over the n
    units rated at least once and ``P_e = sum_j p_j^2``. With complete data this is exactly
    Fleiss (1971) (``p_j = sum_i n_ij / (n m)``).

    Missing ratings follow Gwet's irrCAC (``fleiss.kappa.raw``; Gwet 2014, ch. 2): a unit only
    one rater rated adds nothing to ``P_bar`` but does enter ``p_j``. On irrCAC's
    ``cac.raw4raters`` (4 raters, 12 units, unit 12 rated once) this gives the published
    0.76117 (``P_bar`` = 9/11, ``P_e`` = 0.23872).

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
    Bulletin 76(5), 378-382; K. L. Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.;
    irrCAC (R package), https://github.com/kgwet/irrCAC.

    Examples
    --------
    >>> fleiss_kappa([["a", "a", "b", "b"], ["a", "b", "b", "b"]])  # = Scott's pi: 14/30
    0.4666666666666667
    """
    table = rated_table(data, categories, func="fleiss_kappa")
    return float(fleiss_from_table(table, table.freq[None, :].astype(np.float64))[0])
