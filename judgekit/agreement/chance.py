"""Raw agreement and Gwet's chance-corrected AC1/AC2, and why a coefficient may be undefined."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement._matrix import UnitTable, encode, rating_matrix, unit_table
from judgekit.errors import JudgekitError

AC2_WEIGHTS: tuple[str, ...] = ("identity", "linear", "quadratic")


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


def gwet_from_table(table: UnitTable, w: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gwet's AC2 (AC1 for identity ``weights``) for each row of unit weights ``w`` (B, P)."""
    counts = table.counts.astype(np.float64)
    q = counts.shape[1]
    m = counts.sum(axis=1)
    weighted = counts @ weights.T  # r*_ik = sum_l w_kl r_il
    share = (counts * (weighted - 1.0)).sum(axis=1) / (m * (m - 1.0))
    units = w.sum(axis=1)
    nan = np.full(units.shape, np.nan)
    if q < 2:
        return nan
    p_a = np.divide(w @ share, units, out=nan.copy(), where=units > 0)
    pi = np.divide(
        w @ (counts / m[:, None]),
        units[:, None],
        out=np.zeros((units.size, q)),
        where=units[:, None] > 0,
    )
    p_e = weights.sum() / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum(axis=1)
    defined = (units > 0) & (p_e < 1.0 - 1e-12)
    return np.divide(p_a - p_e, 1.0 - p_e, out=nan, where=defined)


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
      ``pi_k = (1/n') sum_i r_ik / r_i``.

    Weights are agreement weights over category positions: "identity" (then AC2 == AC1),
    "linear" ``1 - |k-l|/(q-1)``, "quadratic" ``1 - (k-l)^2/(q-1)^2``, or a (q, q) matrix.

    One deliberate difference from the handbook: ``pi_k`` averages over the units rated at least
    twice, not over every rated unit, so that a unit only one rater saw changes nothing. With
    complete data the two agree; on Gwet's 4-rater example (one unit rated once) the handbook's
    linear AC2 is 0.8587, this function's 0.8577.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.
    weights : {"identity", "linear", "quadratic"} or array of shape (q, q), default "linear"
    categories : sequence, optional
        The full ordered scale; q = len(categories). Pass it: q changes p_e, and weights depend
        on positions on the whole scale. Default: the ratings seen on pairable units, sorted.

    Returns
    -------
    float
        AC2, or NaN when no unit was rated twice or fewer than two categories exist. Unlike
        kappa and alpha, AC2 is defined (1.0) when everyone used the same single category of a
        scale of two or more.

    References
    ----------
    K. L. Gwet (2014). Handbook of Inter-Rater Reliability, 4th ed., Advanced Analytics,
    ch. 4-5; K. L. Gwet (2008), Br. J. Math. Stat. Psychol. 61, 29-48.

    Examples
    --------
    >>> round(gwet_ac2([[1, 2, 3, 3], [1, 3, 3, 2]], weights="quadratic", categories=[1, 2, 3]), 4)
    0.6667
    """
    table = unit_table(data, categories, func="gwet_ac2", ordered=True)
    w = agreement_weights(weights, len(table.categories), func="gwet_ac2")
    return float(gwet_from_table(table, table.freq[None, :].astype(np.float64), w)[0])


def gwet_ac1(data: Any, *, categories: Sequence[Any] | None = None) -> float:
    """Gwet's AC1: chance-corrected agreement for nominal ratings, many raters, missing data.

    ``AC1 = (p_a - p_e) / (1 - p_e)``, ``p_e = (1 / (q - 1)) sum_k pi_k (1 - pi_k)``; it is
    :func:`gwet_ac2` with identity weights (see there for ``p_a``, ``pi_k`` and the treatment of
    units rated once). For two raters with complete data, ``p_a`` is the share of agreeing units
    and ``pi_k`` the mean of the two raters' shares of category k.

    Parameters
    ----------
    data : array-like of shape (M raters, N units)
        Missing ratings as None/NaN.
    categories : sequence, optional
        The full category list; q = len(categories) enters p_e, so pass the rubric's labels.

    Returns
    -------
    float
        AC1, or NaN when no unit was rated twice or fewer than two categories exist.

    References
    ----------
    K. L. Gwet (2008). Computing inter-rater reliability and its variance in the presence of
    high agreement. British Journal of Mathematical and Statistical Psychology 61, 29-48.

    Examples
    --------
    >>> round(gwet_ac1([["a", "a", "b", "b"], ["a", "b", "b", "b"]]), 4)
    0.5294
    """
    table = unit_table(data, categories, func="gwet_ac1")
    w = agreement_weights("identity", len(table.categories), func="gwet_ac1")
    return float(gwet_from_table(table, table.freq[None, :].astype(np.float64), w)[0])


_CHANCE_CORRECTED = {"krippendorff_alpha", "cohen_kappa", "fleiss_kappa"}
_GWET = {"gwet_ac1", "gwet_ac2"}
_STATISTICS = _CHANCE_CORRECTED | _GWET | {"percent_agreement"}


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
        Which statistic: "krippendorff_alpha", "cohen_kappa", "fleiss_kappa" (undefined when
        every rating is the same, since expected disagreement is then 0), "gwet_ac1",
        "gwet_ac2" (undefined with fewer than two categories) or "percent_agreement"; or the
        function itself.

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
    paired_codes = np.unique(codes[:, pairable][rated[:, pairable]])
    if name in _GWET:
        if (len(cats) if categories is not None else paired_codes.size) >= 2:
            return None
        if categories is not None:
            return "the category list has fewer than two categories"
        return (
            f"every paired rating is {cats[int(paired_codes[0])]!r} and no category list was "
            "given, so chance agreement is undefined; pass the rubric's categories"
        )
    if paired_codes.size > 1:
        return None
    value = cats[int(paired_codes[0])]
    if np.unique(codes[rated]).size == 1:
        return f"every rating is {value!r}"
    return f"every rating on units rated by two or more raters is {value!r}"
