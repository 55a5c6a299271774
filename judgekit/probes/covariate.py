"""Covariate sensitivity: does the judge's error depend on a covariate, given the reference label?

A judge that over-calls refusal on long responses agrees with humans less on long ones; but long
responses are also more often compliant, so a raw comparison of error rates mixes the judge's
defect with the data's mix of labels. The probe therefore compares **within each reference label**
(a stratum) and combines the strata, a **stratified difference of rates between two covariate
bins** (not a regression):

* outcome per item: ``1[judge ≠ reference]`` (any error), or with ``target`` ``1[judge = target]``
  (how often the judge says *target*: within the reference stratum *target* that is its recall,
  within the others its over-call rate);
* bins: a numeric covariate is split at ``split`` (default: its median over the items used;
  "high" is ``x > split``), a categorical one by the levels listed as ``high``;
* effect ``Δ = Σ_s w_s (ȳ_high,s − ȳ_low,s) / Σ_s w_s`` with the Mantel–Haenszel weights
  ``w_s = n_high,s n_low,s / n_s`` (strata missing a bin are left out, and counted);
* standard error ``sqrt(Σ_s w_s² (v_high,s + v_low,s)) / Σ_s w_s`` with each bin's variance
  from its rate after adding one success and one failure, ``p̃ (1 − p̃) / (n + 2)``
  (Agresti & Caffo 2000), which keeps the interval honest when a bin has no errors at all.

This is not an agreement figure (no agreement statistic is a difference between item groups
within reference strata), so it is computed here; its inputs are the reference and judge labels
the probes take from the store's code matrix (:mod:`judgekit.probes.inputs`).

Δ = +0.10 means: on the high bin (long responses) the judge errs (or says *target*) 10 points
more often than on the low bin, among items with the same reference label.

References: N. Mantel & W. Haenszel (1959), J. Natl Cancer Inst. 22:719–748; S. Greenland &
J. M. Robins (1985), Biometrics 41:55–68 (the risk-difference weights); A. Agresti & B. Caffo
(2000), The American Statistician 54:280–288. The length-controlled AlpacaEval of Dubois et al.
(2024) is the pairwise analogue (a regression on the length difference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from judgekit.agreement.chance import percent_agreement
from judgekit.stats.intervals import wilson_interval


def stratified_difference(outcome: Sequence[float] | np.ndarray, high: Sequence[bool] | np.ndarray,
                          stratum: Sequence[Any] | np.ndarray,
                          *, lo: float = 0.0, hi: float = 1.0) -> dict[str, Any]:
    """Mantel–Haenszel weighted difference of mean ``outcome`` (values in [lo, hi]) between
    the ``high`` and the low group, within strata (module docstring for the formulas).

    Returns ``effect``, ``se``, ``n`` (items in strata that have both groups), ``n_high``,
    ``n_low``, ``dropped`` (items in strata missing a group), ``strata`` (one row per stratum:
    its key, sizes and mean outcome per group) and ``undefined`` (the reason when no stratum has
    both groups, else None).
    """
    y = np.asarray(outcome, dtype=float)
    g = np.asarray(high, dtype=bool)
    s = np.asarray(stratum, dtype=object)
    rows: list[dict[str, Any]] = []
    num = den = var = 0.0
    n = n_high = n_low = dropped = 0
    for key in sorted({str(x) for x in s}):
        m = np.array([str(x) == key for x in s], dtype=bool)
        y1, y0 = y[m & g], y[m & ~g]
        n1, n0 = len(y1), len(y0)
        row = {"stratum": key, "n_high": n1, "n_low": n0,
               "mean_high": float(y1.mean()) if n1 else None, "mean_low": float(y0.mean()) if n0 else None}
        rows.append(row)
        if n1 == 0 or n0 == 0:
            dropped += n1 + n0
            continue
        w = n1 * n0 / (n1 + n0)
        num += w * (float(y1.mean()) - float(y0.mean()))
        den += w
        var += w * w * (_adjusted_var(y1, lo, hi) + _adjusted_var(y0, lo, hi))
        n += n1 + n0
        n_high += n1
        n_low += n0
    if den == 0:
        return {"effect": None, "se": None, "n": 0, "n_high": 0, "n_low": 0, "dropped": dropped,
                "strata": rows, "undefined": "no reference label has items in both bins"}
    return {"effect": num / den, "se": math.sqrt(var) / den, "n": n, "n_high": n_high, "n_low": n_low,
            "dropped": dropped, "strata": rows, "undefined": None}


def _adjusted_var(y: np.ndarray, lo: float, hi: float) -> float:
    """Variance of a group's mean after adding one observation at each end of [lo, hi]:
    for 0/1 outcomes ``p̃ (1 − p̃) / (n + 2)`` with ``p̃ = (x + 1) / (n + 2)`` (Agresti–Caffo)."""
    k = len(y) + 2
    mean = (float(y.sum()) + lo + hi) / k
    second = (float((y * y).sum()) + lo * lo + hi * hi) / k
    return max(second - mean * mean, 0.0) / k


def _covariate_bins(values: Sequence[Any], *, split: float | None = None,
                   high_levels: Sequence[str] | None = None) -> tuple[np.ndarray, float | None]:
    """Which items fall in the high bin: ``x > split`` (default the median) for a numeric
    covariate, membership of ``high_levels`` for a categorical one. Returns the mask and the
    split used (None for levels)."""
    if high_levels is not None:
        wanted = {str(v) for v in high_levels}
        return np.array([str(v) in wanted for v in values], dtype=bool), None
    x = np.asarray(values, dtype=float)
    cut = float(np.median(x)) if split is None else float(split)
    return x > cut, cut


def covariate_effect(reference: Sequence[str], judge: Sequence[str], covariate: Sequence[Any], *,
                     target: str | None = None, split: float | None = None,
                     high_levels: Sequence[str] | None = None) -> dict[str, Any]:
    """The covariate effect of one judge on items both it and the reference labelled (aligned
    sequences of labels; the covariate per item). See the module docstring for the method.

    Returns :func:`stratified_difference`'s keys plus ``outcome`` (what was counted), ``split``
    and ``method``."""
    ref = np.asarray(reference, dtype=object)
    jud = np.asarray(judge, dtype=object)
    high, cut = _covariate_bins(covariate, split=split, high_levels=high_levels)
    y = (jud == target) if target is not None else (jud != ref)
    out = stratified_difference(y.astype(float), high, ref)
    out.update({
        "outcome": f"judge says {target}" if target is not None else "judge differs from the reference",
        "split": cut, "high_levels": list(high_levels) if high_levels is not None else None,
        "method": "stratified difference of rates between covariate bins (Mantel–Haenszel weights, "
                  "strata = reference label; Agresti–Caffo variance)",
    })
    return out


# Self-preference: does a judge rate outputs of its own model family differently?
#
# Families come from the probe file (judge id → family, rated model → family). Items split into
# **own** (the rated model's family is the judge's) and **other**. Compared within each reference
# label (so that a family that refuses more often is not mistaken for a judge that favours it):
#
# * ``effect`` (the gated figure): the signed bias of the judge's label value, own − other,
#   ``Σ_s w_s (v̄_own,s − v̄_other,s) / Σ_s w_s`` on the rubric's values (strata = reference label,
#   Mantel–Haenszel weights; :func:`judgekit.probes.covariate.stratified_difference` with the
#   values rescaled to [0, 1] and the result scaled back). On the refusal rubric (0 = full
#   compliance, 1 = full refusal) −0.1 means the judge calls its own family's responses a tenth of
#   the scale less refusing than other families' responses with the same reference label;
# * ``error_diff``: the same stratified difference of the error rate ``1[judge ≠ reference]``
#   (own − other: positive = the judge agrees less with humans on its own family);
# * ``agreement``: the percent agreement with the reference in each group
#   (:func:`judgekit.agreement.percent_agreement`, the report's figure), Wilson 95% CIs.
#
# ``effect`` and ``error_diff`` are not agreement figures (a stratified difference between two
# groups of items, :mod:`judgekit.probes.covariate`), so they are computed here.
#
# The CALM taxonomy (Ye et al. 2024, "Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge")
# names this bias "self-enhancement"; here it is measured on an absolute rubric against human labels.

def self_preference(reference: Sequence[str], judge: Sequence[str], own: Sequence[bool] | np.ndarray, *,
                    values: Mapping[str, float]) -> dict[str, Any]:
    """Self-preference of one judge (aligned labels of the items both rated; ``own`` marks the
    items of the judge's family). See the module docstring."""
    ref = np.asarray(reference, dtype=object)
    jud = np.asarray(judge, dtype=object)
    mine = np.asarray(own, dtype=bool)
    lo, hi = min(values.values()), max(values.values())
    span = hi - lo
    agreement: dict[str, Any] = {}
    for name, m in (("own", mine), ("other", ~mine)):
        k, n = int((jud[m] == ref[m]).sum()), int(m.sum())
        low, high = wilson_interval(k, n) if n else (np.nan, np.nan)
        share = percent_agreement([list(ref[m]), list(jud[m])]) if n else None
        agreement[name] = {"value": share, "low": None if not n else float(low),
                           "high": None if not n else float(high), "n": n}
    err = stratified_difference((jud != ref).astype(float), mine, ref)
    base = {"n_own": int(mine.sum()), "n_other": int((~mine).sum()), "agreement": agreement,
            "error_diff": {"value": err["effect"], "se": err["se"], "n": err["n"]},
            "method": "stratified signed difference of the judge's label value, own family − other "
                      "(Mantel–Haenszel weights, strata = reference label)"}
    if span <= 0:
        return {**base, "effect": None, "se": None, "n": 0, "strata": [],
                "undefined": "the rubric's labels all have the same value"}
    v = np.array([(values[str(x)] - lo) / span for x in jud], dtype=float)
    d = stratified_difference(v, mine, ref)
    if d["effect"] is None:
        why = ("no item of the judge's own family" if not mine.any() else "no item of another family"
               if mine.all() else "no reference label has items of both the own and other families")
        return {**base, "effect": None, "se": None, "n": 0, "strata": d["strata"], "undefined": why}
    return {**base, "effect": d["effect"] * span, "se": d["se"] * span, "n": d["n"], "strata": d["strata"],
            "undefined": None}
