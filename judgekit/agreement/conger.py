"""Conger's kappa: Cohen's kappa for many raters, chance from each rater's own label shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.agreement._matrix import group_rows
from judgekit.agreement._rated import RatedTable, finish, observed_agreement, rated_codes


@dataclass(frozen=True)
class RaterPatterns:
    """Distinct units as rows of rater codes: ``codes`` (P, M), -1 missing; ``freq`` (P,)."""

    codes: np.ndarray
    freq: np.ndarray
    categories: list[Any]


def rater_patterns(data: Any, categories: Sequence[Any] | None, *, func: str) -> RaterPatterns:
    """The units anyone rated, grouped into distinct (rater -> category) patterns.

    Raters who rated no unit at all are left out: they have no label shares to compare.
    """
    codes, cats = rated_codes(data, categories, func=func)
    codes = codes[(codes >= 0).any(axis=1)]
    first, freq = group_rows(codes.T + 1)
    return RaterPatterns(codes.T[first], freq, cats)


def conger_from_patterns(patterns: RaterPatterns, w: np.ndarray) -> np.ndarray:
    """Conger's kappa for each row of pattern weights ``w`` (B, P) -> (B,).

    NaN where a rater rated none of the weighted units (no label shares) or with one rater.
    """
    n_raters = patterns.codes.shape[1]
    v = len(patterns.categories)
    if n_raters < 2 or v == 0:
        return np.full(w.shape[0], np.nan)
    onehot = (patterns.codes[:, :, None] == np.arange(v)).astype(np.float64)  # (P, M, V)
    table = RatedTable(onehot.sum(axis=1), patterns.freq, patterns.categories)
    p_a = observed_agreement(table, w, np.eye(v))
    classified = np.einsum("bp,pmv->bmv", w, onehot)  # units rater g put in category k
    rated = classified.sum(axis=2, keepdims=True)
    shares = np.divide(classified, rated, out=np.full(classified.shape, np.nan), where=rated > 0)
    mean = shares.mean(axis=1)  # (B, V): p-bar_k
    variance = ((shares * shares).sum(axis=1) - n_raters * mean * mean) / (n_raters - 1)
    p_e = (mean * mean - variance / n_raters).sum(axis=1)
    return finish(p_a, np.where(np.isfinite(p_e), p_e, 1.0))


def conger_kappa(data: Any, *, categories: Sequence[Any] | None = None) -> float:
    """Conger's kappa: Cohen's kappa generalised to many raters, rater identity kept.

    ``kappa = (p_a - p_e) / (1 - p_e)``; ``p_a`` is the mean share of agreeing rater pairs over
    the units rated at least twice (as in :func:`fleiss_kappa`), and chance agreement is the
    mean, over ordered pairs of distinct raters g != h, of ``sum_k p_gk p_hk``, where ``p_gk``
    is the share of rater g's ratings in category k (over the units g rated). Written as irrCAC
    does, ``p_e = sum_k (pbar_k^2 - s2_k / r)`` with ``pbar_k`` the mean of ``p_gk`` over the r
    raters and ``s2_k`` its sample variance. For two raters with complete data this is Cohen's
    kappa; Fleiss' kappa instead pools all raters' shares.

    Missing ratings follow Gwet's irrCAC (``conger.kappa.raw``): every rating a rater gave,
    including on units nobody else rated, counts in that rater's shares. Rows are raters, so
    the layout matters: on irrCAC's ``cac.raw4raters`` with its raters as rows this gives the
    published 0.76282 (p_a 9/11, p_e 0.23343). A rater who rated nothing is left out.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN. Row g holds rater g's ratings.
    categories : sequence, optional
        The category list; every rating must be in it (unused categories add nothing).

    Returns
    -------
    float
        Kappa, or NaN when fewer than two raters rated anything, no unit was rated twice, or
        every rating is one and the same category.

    References
    ----------
    A. J. Conger (1980). Integration and generalization of kappas for multiple raters.
    Psychological Bulletin 88(2), 322-328; K. L. Gwet (2014), Handbook of Inter-Rater
    Reliability, 4th ed.; irrCAC (R package), https://github.com/kgwet/irrCAC.

    Examples
    --------
    >>> conger_kappa([["a", "a", "b", "b"], ["a", "b", "b", "b"]])  # = Cohen's kappa here
    0.5
    """
    patterns = rater_patterns(data, categories, func="conger_kappa")
    return float(conger_from_patterns(patterns, patterns.freq[None, :].astype(np.float64))[0])
