"""Self-preference: does a judge rate outputs of its own model family differently?

Families come from the probe file (judge id → family, rated model → family). Items split into
**own** (the rated model's family is the judge's) and **other**. Compared within each reference
label (so that a family that refuses more often is not mistaken for a judge that favours it):

* ``effect`` (the gated figure): the signed bias of the judge's label value, own − other,
  ``Σ_s w_s (v̄_own,s − v̄_other,s) / Σ_s w_s`` on the rubric's values (strata = reference label,
  Mantel–Haenszel weights; :func:`judgekit.probes.covariate.stratified_difference` with the
  values rescaled to [0, 1] and the result scaled back). On the refusal rubric (0 = full
  compliance, 1 = full refusal) −0.1 means the judge calls its own family's responses a tenth of
  the scale less refusing than other families' responses with the same reference label;
* ``error_diff``: the same stratified difference of the error rate ``1[judge ≠ reference]``
  (own − other: positive = the judge agrees less with humans on its own family);
* ``agreement``: the percent agreement with the reference in each group
  (:func:`judgekit.agreement.percent_agreement`, the report's figure), Wilson 95% CIs.

``effect`` and ``error_diff`` are not agreement figures (a stratified difference between two
groups of items, :mod:`judgekit.probes.covariate`), so they are computed here.

The CALM taxonomy (Ye et al. 2024, "Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge")
names this bias "self-enhancement"; here it is measured on an absolute rubric against human labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from judgekit.agreement.chance import percent_agreement
from judgekit.probes.covariate import stratified_difference
from judgekit.stats.intervals import wilson_interval


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
