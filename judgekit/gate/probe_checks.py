"""The gate's probe checks: the bias probes (:mod:`judgekit.probes`) run for the judges a
policy names, with the label budget of each inconclusive one (:mod:`judgekit.gate.budget`).
"""

from __future__ import annotations

from typing import Any

from judgekit.probes.bands import decide
from judgekit.probes.run import (
    Context,
    check_families,
    covariate_rows,
    flip_rows,
    has_trials,
    self_preference_rows,
    stability_rows,
)
from judgekit.rubric.model import Rubric


def gate_checks(store: Any, policy: Any, rubric: Rubric, where: str,
                codes: Any = None) -> dict[str, list[dict[str, Any]]]:
    """The probe checks of a gate policy, per judge (empty when the policy asks for none);
    ``codes``: the store's code matrix the gate read (without perturbed item copies), else read
    here."""
    c = policy.checks
    if not any((c.max_covariate_effect, c.max_self_preference, c.min_stability, c.max_flip_rate)):
        return {}
    ctx = Context(store, rubric, policy.judges, policy.reference, policy.by, where,
                  policy.n_resamples, policy.seed, codes=codes)
    from judgekit.gate.budget import probe_budget

    out: dict[str, list[dict[str, Any]]] = {}
    for judge in policy.judges:
        rows: list[dict[str, Any]] = []
        budget: dict[int, dict[str, Any]] = {}
        if (cov := c.max_covariate_effect) is not None:
            rows += covariate_rows(ctx, judge, cov, cov.max, cov.min_items, "checks.max_covariate_effect",
                                   per_slice=cov.per_slice)
        if (sp := c.max_self_preference) is not None:
            if judge == policy.judges[0]:
                check_families(ctx, sp, policy.judges, "checks.max_self_preference")
            found = self_preference_rows(ctx, judge, sp, sp.max, sp.min_items, "checks.max_self_preference")
            if not found:
                found = [_no_family(judge, sp.max, sp.min_items)]
                budget[len(rows)] = probe_budget(found[0]["check"], judge=judge, min_n=sp.min_items,
                                                 seed=policy.seed, no_family=True)
            rows += found
        if (st := c.min_stability) is not None:
            trials = has_trials(ctx, judge)
            for r in stability_rows(ctx, judge, st.min, st.min_items, per_slice=st.per_slice):
                budget[len(rows)] = probe_budget(r["check"], judge=judge, min_n=st.min_items, seed=policy.seed,
                                                 no_trials=not trials)
                rows.append(r)
        if (fr := c.max_flip_rate) is not None:
            for r in flip_rows(ctx, judge, fr.variants, fr.max, fr.min_items):
                budget[len(rows)] = probe_budget(r["check"], judge=judge, min_n=fr.min_items, seed=policy.seed)
                rows.append(r)
        checks = [r["check"] for r in rows]
        for i, b in budget.items():  # what decides a probe check that labels cannot (the gate keeps it)
            if checks[i]["state"] == "inconclusive":
                checks[i]["budget"] = b
        out[judge] = checks
    return out


def _no_family(judge: str, maximum: float, min_n: int) -> dict[str, Any]:
    row = {"name": "max_self_preference", "n": 0, "estimate": None, "se": None,
           "detail": f"self-preference: judge {judge} has no family in checks.max_self_preference.judges"}
    return decide([row], mode="abs", threshold=maximum, min_n=min_n)[0]
