"""Raw agreement, Gwet's AC1/AC2 and Brennan-Prediger, and why a coefficient may be undefined."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement._matrix import UnitTable, encode, rating_matrix, unit_table
from judgekit.agreement._rated import (
    RatedTable,
    category_shares,
    finish,
    observed_agreement,
    rated_table,
)
from judgekit.errors import JudgekitError


def agreement_weights(weights: Any, n_categories: int, *, func: str) -> np.ndarray:
    """(q, q) Gwet agreement weights over category positions k, l (1 on the diagonal).

    identity ``[k == l]``; linear ``1 - |k - l| / (q - 1)``; quadratic
    ``1 - (k - l)^2 / (q - 1)^2``; or a (q, q) array given by the caller.
    """
    q = n_categories
    if not isinstance(weights, str):
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (q, q):
            raise JudgekitError(
                f"{func}: a weight matrix must be {q} x {q} (one row per category), "
                f"got shape {w.shape}."
            )
        return w
    k = np.arange(q)
    diff = np.abs(k[:, None] - k[None, :]).astype(np.float64)
    span = max(q - 1, 1)
    if weights == "identity":
        return (diff == 0).astype(np.float64)
    if weights == "linear":
        return 1.0 - diff / span
    if weights == "quadratic":
        return 1.0 - (diff / span) ** 2
    raise JudgekitError(
        f"{func}: unknown weights {weights!r}; use 'identity', 'linear', 'quadratic' or a "
        "q x q matrix."
    )


def percent_from_table(table: UnitTable, w: np.ndarray) -> np.ndarray:
    """Mean share of agreeing rater pairs per unit, for each row of weights ``w`` (B, P)."""
    counts = table.counts.astype(np.float64)
    m = counts.sum(axis=1)
    share = (counts * (counts - 1.0)).sum(axis=1) / (m * (m - 1.0))
    units = w.sum(axis=1)
    return np.divide(w @ share, units, out=np.full(units.shape, np.nan), where=units > 0)


def gwet_from_table(table: RatedTable, w: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gwet's AC2 (AC1 for identity ``weights``) for each row of unit weights ``w`` (B, P)."""
    q = len(table.categories)
    if q < 2:
        return np.full(w.shape[0], np.nan)
    p_a = observed_agreement(table, w, weights)
    pi = category_shares(table, w)
    p_e = weights.sum() / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum(axis=1)
    return finish(p_a, p_e)


def bp_from_table(table: RatedTable, w: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Brennan-Prediger for each row of unit weights ``w`` (B, P): ``p_e = T_w / q^2``."""
    q = len(table.categories)
    if q < 2:
        return np.full(w.shape[0], np.nan)
    p_a = observed_agreement(table, w, weights)
    return finish(p_a, np.full(p_a.shape, weights.sum() / q**2))


def percent_agreement(data: Any) -> float:
    """Share of agreeing rater pairs, averaged over the units at least two raters rated.

    ``p_a = (1 / n') sum_i sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))`` where ``r_ik`` raters put
    unit i in category k, ``r_i`` raters rated it and ``n'`` units have ``r_i >= 2``. For two
    raters it is the share of units both rated on which they agree. Not chance-corrected.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.

    Returns
    -------
    float
        In [0, 1], or NaN when no unit was rated by two raters.

    References
    ----------
    K. L. Gwet (2014). Handbook of Inter-Rater Reliability, 4th ed., Advanced Analytics, ch. 2.

    Examples
    --------
    >>> percent_agreement([["a", "b", "a", None], ["a", "a", "a", "b"]])
    0.6666666666666666
    """
    table = unit_table(data, None, func="percent_agreement")
    return float(percent_from_table(table, table.freq[None, :].astype(np.float64))[0])


def gwet_ac2(
    data: Any, *, weights: Any = "linear", categories: Sequence[Any] | None = None
) -> float:
    """Gwet's AC2: chance-corrected weighted agreement for ordinal ratings, many raters.

    ``AC2 = (p_a - p_e) / (1 - p_e)`` with (Gwet 2014, multiple raters, missing ratings)

    - ``p_a = (1/n') sum_i sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` over the n' units rated
      by ``r_i >= 2`` raters, ``r*_ik = sum_l w_kl r_il``;
    - ``p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)``, ``T_w = sum_kl w_kl``,
      ``pi_k = (1/n) sum_i r_ik / r_i`` over the n units rated at least once.

    Weights are agreement weights over category positions: "identity" (then AC2 == AC1),
    "linear" ``1 - |k-l|/(q-1)``, "quadratic" ``1 - (k-l)^2/(q-1)^2``, or a (q, q) matrix.
    (irrCAC computes linear/quadratic weights from numeric category *values*; on an evenly
    spaced scale such as 1..5 that is the same.)

    Missing ratings follow Gwet's irrCAC (``gwet.ac1.raw``): a unit only one rater rated adds
    nothing to ``p_a`` but does enter ``pi_k``, and without ``categories`` q counts every rating
    seen. On irrCAC's ``cac.raw4raters`` (Gwet 2014, p. 120; one unit rated once) this gives the
    published linear AC2 0.859 (p_a 0.9394, p_e 0.5710) and quadratic 0.914.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.
    weights : {"identity", "linear", "quadratic"} or array of shape (q, q), default "linear"
    categories : sequence, optional
        The full ordered scale; q = len(categories). Pass it: q changes p_e, and weights depend
        on positions on the whole scale. Default: every rating seen, sorted.

    Returns
    -------
    float
        AC2, or NaN when no unit was rated twice or fewer than two categories exist. Unlike
        kappa and alpha, AC2 is defined (1.0) when everyone used the same single category of a
        scale of two or more.

    References
    ----------
    K. L. Gwet (2014). Handbook of Inter-Rater Reliability, 4th ed., Advanced Analytics,
    ch. 4-5; K. L. Gwet (2008), Br. J. Math. Stat. Psychol. 61, 29-48; irrCAC (R package),
    https://github.com/kgwet/irrCAC.

    Examples
    --------
    >>> round(gwet_ac2([[1, 2, 3, 3], [1, 3, 3, 2]], weights="quadratic", categories=[1, 2, 3]), 4)
    0.6667
    """
    table = rated_table(data, categories, func="gwet_ac2", ordered=True)
    w = agreement_weights(weights, len(table.categories), func="gwet_ac2")
    return float(gwet_from_table(table, table.freq[None, :].astype(np.float64), w)[0])


def gwet_ac1(data: Any, *, categories: Sequence[Any] | None = None) -> float:
    """Gwet's AC1: chance-corrected agreement for nominal ratings, many raters, missing data.

    ``AC1 = (p_a - p_e) / (1 - p_e)``, ``p_e = (1 / (q - 1)) sum_k pi_k (1 - pi_k)``; it is
    :func:`gwet_ac2` with identity weights (see there for ``p_a`` and ``pi_k``). For two raters
    with complete data, ``p_a`` is the share of agreeing units and ``pi_k`` the mean of the two
    raters' shares of category k.

    Missing ratings follow Gwet's irrCAC (``gwet.ac1.raw``): ``p_a`` averages over the units
    rated at least twice, ``pi_k`` over every unit rated at least once, so a unit only one rater
    saw moves the chance term. On irrCAC's ``cac.raw4raters`` (4 raters, 12 units, unit 12
    rated once) this gives the published AC1 0.77544 (p_a 9/11 = 0.8182, p_e 0.19032).

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.
    categories : sequence, optional
        The full category list; q = len(categories) enters p_e, so pass the rubric's labels.
        Default: every rating seen.

    Returns
    -------
    float
        AC1, or NaN when no unit was rated twice or fewer than two categories exist.

    References
    ----------
    K. L. Gwet (2008). Computing inter-rater reliability and its variance in the presence of
    high agreement. British Journal of Mathematical and Statistical Psychology 61, 29-48;
    irrCAC (R package), https://github.com/kgwet/irrCAC.

    Examples
    --------
    >>> round(gwet_ac1([["a", "a", "b", "b"], ["a", "b", "b", "b"]]), 4)
    0.5294
    """
    table = rated_table(data, categories, func="gwet_ac1")
    w = agreement_weights("identity", len(table.categories), func="gwet_ac1")
    return float(gwet_from_table(table, table.freq[None, :].astype(np.float64), w)[0])


def brennan_prediger(
    data: Any, *, weights: Any = "identity", categories: Sequence[Any] | None = None
) -> float:
    """Brennan-Prediger coefficient: agreement corrected for uniform chance, many raters.

    ``BP = (p_a - p_e) / (1 - p_e)`` with ``p_a`` as in :func:`gwet_ac2` (the units rated at
    least twice) and ``p_e = T_w / q^2`` (``T_w = sum_kl w_kl``; ``1 / q`` unweighted): chance
    is every rater picking one of the q categories uniformly at random, so q must be the full
    scale. Identity weights give the coefficient of Brennan & Prediger (1981), also known as
    Bennett's S or the free-marginal kappa; other weights as in :func:`gwet_ac2`.

    Follows Gwet's irrCAC (``bp.coeff.raw``): on ``cac.raw4raters`` BP is the published
    0.77273 (p_a 9/11, q = 5, p_e 0.2, BP = (9/11 - 1/5) / (4/5) = 17/22).

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.
    weights : {"identity", "linear", "quadratic"} or array of shape (q, q), default "identity"
    categories : sequence, optional
        The full category list (q = its length). Default: every rating seen; pass the rubric's
        labels, since an unused category changes p_e.

    Returns
    -------
    float
        BP, or NaN when no unit was rated twice or fewer than two categories exist.

    References
    ----------
    R. L. Brennan & D. J. Prediger (1981). Coefficient kappa: some uses, misuses, and
    alternatives. Educational and Psychological Measurement 41, 687-699; K. L. Gwet (2014),
    Handbook of Inter-Rater Reliability, 4th ed., ch. 2; irrCAC, https://github.com/kgwet/irrCAC.

    Examples
    --------
    >>> brennan_prediger([["a", "a", "b", "b"], ["a", "b", "b", "b"]])  # (3/4 - 1/2) / (1/2)
    0.5
    """
    ordered = not (isinstance(weights, str) and weights == "identity")
    table = rated_table(data, categories, func="brennan_prediger", ordered=ordered)
    w = agreement_weights(weights, len(table.categories), func="brennan_prediger")
    return float(bp_from_table(table, table.freq[None, :].astype(np.float64), w)[0])


# Chance from the pairable units only (a unit rated once never matters).
_PAIRED_CHANCE = {"krippendorff_alpha", "cohen_kappa", "scott_pi"}
# irrCAC: chance from the category shares of every rated unit; undefined if all share one label.
_RATED_CHANCE = {"fleiss_kappa", "conger_kappa"}
# Chance from q alone (Gwet, Brennan-Prediger): undefined with fewer than two categories.
_GWET = {"gwet_ac1", "gwet_ac2", "brennan_prediger"}
_STATISTICS = _PAIRED_CHANCE | _RATED_CHANCE | _GWET | {"percent_agreement"}


def undefined_reason(
    data: Any,
    *,
    categories: Sequence[Any] | None = None,
    statistic: str | Callable[..., float] = "krippendorff_alpha",
) -> str | None:
    """Why an agreement statistic of ``data`` is NaN, in a few words; ``None`` if it is defined.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        The same matrix given to the statistic (for Cohen's kappa: ``[y1, y2]``).
    categories : sequence, optional
        The category list given to the statistic.
    statistic : str or callable, default "krippendorff_alpha"
        Which statistic: "krippendorff_alpha", "cohen_kappa", "scott_pi" (undefined when every
        rating on units rated twice is the same, since expected disagreement is then 0),
        "fleiss_kappa", "conger_kappa" (the same, counting every rated unit, as irrCAC does),
        "gwet_ac1", "gwet_ac2", "brennan_prediger" (undefined with fewer than two categories)
        or "percent_agreement"; or the function itself.

    Returns
    -------
    str or None
        e.g. ``"no unit was rated by two raters"`` or ``"every rating is 'full_refusal'"``.

    Examples
    --------
    >>> undefined_reason([["yes", "yes"], ["yes", "yes"]])
    "every rating is 'yes'"
    """
    name = statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "")
    if name not in _STATISTICS:
        raise JudgekitError(
            f"undefined_reason: unknown statistic {statistic!r}; use one of "
            f"{', '.join(sorted(_STATISTICS))}."
        )
    arr = rating_matrix(data, func="undefined_reason")
    codes, cats = encode(arr, categories, func="undefined_reason", ordered=False)
    rated = codes >= 0
    pairable = rated.sum(axis=0) >= 2
    if not pairable.any():
        return "no rating at all" if not rated.any() else "no unit was rated by two raters"
    if name == "percent_agreement":
        return None
    if name in _GWET:
        if len(cats) >= 2:
            return None
        if categories is not None:
            return "the category list has fewer than two categories"
        return (
            f"every rating is {cats[0]!r} and no category list was given, so chance "
            "agreement is undefined; pass the rubric's categories"
        )
    if name in _RATED_CHANCE:
        used = np.unique(codes[rated])
        return None if used.size > 1 else f"every rating is {cats[int(used[0])]!r}"
    paired_codes = np.unique(codes[:, pairable][rated[:, pairable]])
    if paired_codes.size > 1:
        return None
    value = cats[int(paired_codes[0])]
    if np.unique(codes[rated]).size == 1:
        return f"every rating is {value!r}"
    return f"every rating on units rated by two or more raters is {value!r}"
