"""The gate's probe checks: the bias probes (:mod:`judgekit.probes`) run for the judges a
policy names, with the label budget of each inconclusive one (:mod:`judgekit.gate.budget`).
"""

from __future__ import annotations

from typing import Any

from judgekit.gate.budget import probe_budget
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
from judgekit.verdict.check import Check, read_check


def gate_checks(store: Any, policy: Any, rubric: Rubric, where: str,
                codes: Any = None) -> dict[str, list[Check]]:
    """The probe checks of a gate policy, per judge (empty when the policy asks for none);
    ``codes``: the store's code matrix the gate read (without perturbed item copies), else read
    here. A check no human label decides carries the budget that says what does."""
    c = policy.checks
    if not any((c.max_covariate_effect, c.max_self_preference, c.min_stability, c.max_flip_rate)):
        return {}
    ctx = Context(store, rubric, policy.judges, policy.reference, policy.by, where,
                  policy.n_resamples, policy.seed, codes=codes)
    out: dict[str, list[Check]] = {}
    for judge in policy.judges:
        checks: list[Check] = []

        def add(rows: list[dict[str, Any]], judge: str = judge, checks: list[Check] = checks, **why: bool) -> None:
            for r in rows:
                ch = read_check(r["check"], judge)
                if ch.state == "inconclusive":
                    ch = ch.with_budget(probe_budget(ch, seed=policy.seed, **why))
                checks.append(ch)

        if (cov := c.max_covariate_effect) is not None:
            checks += [read_check(r["check"], judge) for r in covariate_rows(
                ctx, judge, cov, cov.max, cov.min_items, "checks.max_covariate_effect", per_slice=cov.per_slice)]
        if (sp := c.max_self_preference) is not None:
            if judge == policy.judges[0]:
                check_families(ctx, sp, policy.judges, "checks.max_self_preference")
            found = self_preference_rows(ctx, judge, sp, sp.max, sp.min_items, "checks.max_self_preference")
            if found:
                checks += [read_check(r["check"], judge) for r in found]
            else:
                add([_no_family(judge, sp.max, sp.min_items)], no_family=True)
        if (st := c.min_stability) is not None:
            add(stability_rows(ctx, judge, st.min, st.min_items, per_slice=st.per_slice),
                no_trials=not has_trials(ctx, judge))
        if (fr := c.max_flip_rate) is not None:
            add(flip_rows(ctx, judge, fr.variants, fr.max, fr.min_items))
        out[judge] = checks
    return out


def _no_family(judge: str, maximum: float, min_n: int) -> dict[str, Any]:
    row = {"probe": "self_preference", "by": None, "key": None, "n": 0, "estimate": None, "se": None,
           "detail": f"self-preference: judge {judge} has no family in checks.max_self_preference.judges"}
    return decide([row], mode="abs", threshold=maximum, min_n=min_n)[0]
