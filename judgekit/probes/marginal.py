"""Label-prior drift: is the judge's label distribution the reference's?

On the items both rated, the K × K table ``n_ij`` (reference label i, judge label j). A judge can
agree item by item fairly well and still call one label more often than the humans do; its
marginals then differ.

* **Stuart–Maxwell** test of marginal homogeneity (H0: ``p_i. = p_.i`` for every i): with
  ``d_i = n_i. − n_.i`` for i = 1..K−1 and ``S_ii = n_i. + n_.i − 2 n_ii``,
  ``S_ij = −(n_ij + n_ji)``, ``χ² = dᵀ S⁻¹ d`` on K − 1 degrees of freedom (Stuart 1955,
  Maxwell 1970). Labels nobody used on either side, and labels with no off-diagonal counts
  (perfectly agreed, ``d_i = 0``), are dropped first (they make S singular and add nothing).
* **Bowker** test of symmetry (H0: ``p_ij = p_ji``): ``χ² = Σ_{i<j} (n_ij − n_ji)² / (n_ij + n_ji)``
  over the pairs with ``n_ij + n_ji > 0``, degrees of freedom the number of such pairs (Bowker
  1948). Symmetry implies homogeneity; the converse does not hold (a judge that swaps labels in
  a cycle keeps the marginals).
* The effect with its CI is the trust report's nominal signed bias (:func:`judgekit.agreement.
  bias.signed_bias`): the difference of each label's share, judge − reference, and the largest
  in absolute value; the probe's null band is ``|share difference| <= margin``.

The statistics agree with statsmodels' ``SquareTable(table).homogeneity()`` and ``.symmetry()``
(the tests write the arithmetic out).

References: A. Stuart (1955), Biometrika 42:412–416; A. E. Maxwell (1970), Brit. J. Psychiatry
116:651–655; A. H. Bowker (1948), JASA 43:572–574.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _chi2_sf(x: float, df: int) -> float:
    from scipy.stats import chi2

    return float(chi2.sf(x, df))


def stuart_maxwell(table: Any) -> dict[str, Any]:
    """Stuart–Maxwell test of marginal homogeneity of a square table (rows: reference, columns:
    judge). Returns ``statistic``, ``df``, ``p`` (None with ``undefined`` when it cannot run)."""
    t = np.asarray(table, dtype=float)
    used = (t.sum(axis=0) + t.sum(axis=1)) > 0
    t = t[np.ix_(used, used)]
    if len(t) >= 2:
        # a label with no off-diagonal counts (perfectly agreed: d_i = 0, its row and column of S
        # are 0) adds nothing to χ² and makes S singular: drop it before inverting
        off = t - np.diag(np.diag(t))
        moving = (off.sum(axis=0) + off.sum(axis=1)) > 0
        if moving.sum() >= 2:
            t = t[np.ix_(moving, moving)]
        elif moving.sum() == 0:
            return {"statistic": 0.0, "df": len(t) - 1, "p": 1.0, "undefined": None}
    k = len(t)
    if k < 2:
        return {"statistic": None, "df": 0, "p": None, "undefined": "fewer than two labels were used"}
    rows, cols = t.sum(axis=1), t.sum(axis=0)
    d = (rows - cols)[:-1]
    s = -(t + t.T)
    np.fill_diagonal(s, rows + cols - 2 * np.diag(t))
    s = s[:-1, :-1]
    if abs(np.linalg.det(s)) < 1e-12:
        if np.allclose(d, 0):
            return {"statistic": 0.0, "df": k - 1, "p": 1.0, "undefined": None}
        return {"statistic": None, "df": k - 1, "p": None,
                "undefined": "the covariance of the marginal differences is singular"}
    stat = float(d @ np.linalg.solve(s, d))
    return {"statistic": stat, "df": k - 1, "p": _chi2_sf(stat, k - 1), "undefined": None}


def bowker(table: Any) -> dict[str, Any]:
    """Bowker's test of symmetry of a square table. Returns ``statistic``, ``df``, ``p``."""
    t = np.asarray(table, dtype=float)
    k = len(t)
    stat, df = 0.0, 0
    for i in range(k):
        for j in range(i + 1, k):
            s = t[i, j] + t[j, i]
            if s > 0:
                stat += (t[i, j] - t[j, i]) ** 2 / s
                df += 1
    if df == 0:
        return {"statistic": 0.0, "df": 0, "p": 1.0, "undefined": None}
    return {"statistic": stat, "df": df, "p": _chi2_sf(stat, df), "undefined": None}


def label_drift(reference: Any, judge: Any, *, codes: list[str], values: list[float],
                n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Label-prior drift of one judge: the two tests and the signed share differences (int code
    arrays over the same items, -1 missing; see the module docstring). The table is the agreement
    report's confusion matrix (:func:`judgekit.agreement.pattern_figures.confusion`) and the share
    differences its signed bias (:func:`judgekit.agreement.judge_figures.signed_bias`): no figure is
    computed here a second way."""
    from judgekit.agreement.judge_figures import signed_bias
    from judgekit.agreement.pattern_figures import confusion

    ref, jud = np.asarray(reference), np.asarray(judge)
    both = (ref >= 0) & (jud >= 0)
    v = len(codes)
    table = confusion(ref, jud, np.ones(len(ref), dtype=np.int64), v)
    bias = signed_bias(ref, jud, codes=codes, values=values, level="nominal", n_resamples=n_resamples,
                       confidence=0.95, seed=seed)
    return {"n": int(both.sum()), "table": table.tolist(), "stuart_maxwell": stuart_maxwell(table),
            "bowker": bowker(table), "share_diff": bias["share_diff"], "max_abs": bias["max_abs"]}
