"""A plan without a pilot (``judgekit plan --assume-kappa K [--assume-sd S]`` on a store with the
judge's ratings and no human label yet): the same rows as :mod:`judgekit.gate.plan`, from assumed
judge quality instead of a pilot's spread.

* the agreement floor (Cohen's κ only): :func:`judgekit.stats.power.n_for_kappa` at the assumed κ,
  with both raters' label shares taken from the judge's own labels (Fleiss, Cohen & Everitt 1969
  variance); other metrics need a pilot;
* abstention and error rates: the judge's own calls, whose rates need no human
  (:func:`judgekit.stats.power.n_for_power`, Wilson/score);
* a fidelity figure: a judge that does not move it (difference 0), per-conversation SD ``sd`` of
  the difference judge − reference, planned by simulating the gate's rule (percentile bootstrap
  interval within ±margin, :func:`judgekit.stats.power_sim.n_for_certification`) on an assumed
  distribution of that SD: 0 in 80% of conversations, ±sd/√0.2 in 10% each
  (:func:`judgekit.stats.power_sim.slip_distribution`; a normal of the same SD needs a few
  percent fewer); every instance of a figure (each model, each turn of a per-turn figure; the
  turns' differences independent) is simulated at once, since the gate certifies a figure only
  when all its checks pass (:func:`judgekit.stats.power_sim.n_for_joint_certification`);
  Drift(t | tier) is simulated for one cell and scaled by the number of model × tier cells;
* ``within_human_noise``, ``per_slice``: a pilot is needed (undecidable here, with that reason).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.gate.plan_rows import PlanRow, summarise
from judgekit.stats.power import Undecidable, n_for_kappa, n_for_power
from judgekit.stats.power_sim import (
    SIM_MAX_N,
    n_for_certification,
    n_for_joint_certification,
    slip_distribution,
)


def _need(v: int | Undecidable) -> tuple[int | None, str | None]:
    return (None, v.reason) if isinstance(v, Undecidable) else (int(v), None)


def assumed_plan(store: Any, policy: Any, policy_path: str | Path, rubric: Any, *, assume_kappa: float | None,
                 assume_sd: float | None, budget: int | None, judge: str | None) -> dict[str, Any]:
    """The plan from assumed judge quality (module doc)."""
    from judgekit.gate.calls import own_calls

    if assume_kappa is None:
        raise JudgekitError(f"The store holds no human label under {rubric.id} to plan from; label a small pilot "
                            "first, or give --assume-kappa (and --assume-sd for analysis_fidelity).")
    c = policy.checks
    spec = c.analysis_fidelity
    if spec is not None and assume_sd is None:
        raise JudgekitError("Without a pilot, analysis_fidelity needs --assume-sd: the per-conversation SD of the "
                            "difference judge − reference (a pilot of 30–60 conversations measures it).")
    judges = [judge] if judge else list(policy.judges)
    calls = own_calls(store, rubric, judges)
    items = store.items()
    rows: list[PlanRow] = []
    for j in judges:
        r = store.ratings(rubric=rubric, rater_ids=[j])
        ok = r[r["status"].eq("ok") & r["label"].notna()]
        shares = ok["label"].astype(str).value_counts(normalize=True)
        if c.min_items is not None:
            rows.append(PlanRow(j, "min_items", "human-rated items", 0, None, c.min_items, c.min_items))
        for name, thr in ((f"min_{c.metric}", c.min_value), (f"min_{c.metric}_lower_bound", c.min_lower_bound)):
            if thr is None:
                continue
            if c.metric != "kappa" or len(shares) < 2:
                rows.append(PlanRow(j, name, "human-rated items", 0, assume_kappa, thr, None,
                                    "without a pilot only Cohen's κ with two or more labels in use has a planning "
                                    "formula; label a small pilot"))
                continue
            need, why = _need(n_for_kappa(thr, assume_kappa, shares.to_numpy(float)))
            rows.append(PlanRow(j, name, "human-rated items", 0, assume_kappa, thr, need, why))
        for name, thr, key in (("max_abstention_rate", c.max_abstention_rate, "abstain"),
                               ("max_error_rate", c.max_error_rate, "error")):
            if thr is None:
                continue
            own = calls[j]
            p = own[key] / own["calls"] if own["calls"] else 0.0
            need, why = _need(n_for_power(thr, p, kind="proportion", direction="<="))
            rows.append(PlanRow(j, name, f"calls of {j} (no human label)", own["calls"], p, thr, need, why))
        for name, on in (("within_human_noise", c.within_human_noise), ("per_slice", c.per_slice)):
            if on is not None:
                rows.append(PlanRow(j, name, "human-rated items", 0, None, None, None,
                                    "its spread needs a pilot (and within_human_noise two annotators)"))
        if spec is not None:
            rows += _figures(j, items, spec, float(assume_sd or 0.0), seed=int(policy.seed),
                             study=_per_and_study(items, spec)[1])
    per, study = _per_and_study(items, spec)
    return summarise(rows, policy=policy, per=per, study=study, budget=budget, have=0)


def _per_and_study(items: Any, spec: Any) -> tuple[float, int]:
    col = "conversation_id" if "conversation_id" in items.columns else (spec.prompt_column if spec else None)
    if spec is None or col is None or col not in items.columns:
        return 1.0, 0
    n = int(items[col].nunique())
    return len(items) / max(n, 1), n


def _figures(judge: str, items: Any, spec: Any, sd: float, *, seed: int = 0, study: int = 0) -> list[PlanRow]:
    """One row per fidelity figure at difference 0 and the assumed SD: its normal-theory need,
    then simulated (module doc) — unless that need, the least the simulation would find (the
    normal theory is optimistic for this rule), is already more than the ``study`` holds: then
    the row says so without simulating (a large SD would otherwise simulate studies far beyond
    any data for minutes)."""
    models = int(items[spec.model_column].nunique()) if spec.model_column in items.columns else 1
    tiers = (int(items[spec.harm_column].nunique()) if spec.harm_column and spec.harm_column in items.columns
             else 5)
    turns = int(items[spec.turn_column].nunique()) if spec.turn_column in items.columns else 1
    values, probs = slip_distribution(sd)
    rows = []
    for fig in spec.chosen:
        margin = spec.margin(fig)
        need, why = _need(n_for_power(margin, 0.0, kind="difference", direction="within", sd=sd, bounds=None,
                                      level=spec.level))
        note = None
        cells = models * tiers if fig == "drift_tier" else models
        if need is not None and study and need * cells > study:  # beyond the study: no simulation decides it
            rows.append(PlanRow(judge, f"figure {fig}", "conversations", 0, 0.0, margin, math.ceil(need * cells),
                                None, note="normal theory; not simulated: already more than the study holds"))
            continue
        if need is not None and fig == "drift_tier":  # per model and tier cell, one cell simulated
            cap = max(2 * study // cells, need + 1) if study else SIM_MAX_N
            sim = n_for_certification(values, margin, probs=probs, seed=seed, start=need, level=spec.level, max_n=cap)
            if not isinstance(sim, Undecidable):
                need, note = sim.n, (f"simulated: {sim.rate:.0%} of {sim.reps} studies of {sim.n:,} conversations "
                                     f"per cell certified, ±{sim.se:.1%}")
            need = math.ceil(need * models * tiers)
        elif need is not None:  # every instance (model, turn) at once, independent across turns
            per_model = max(turns - 1, 1) if fig == "drift" else (turns if fig.endswith("_t") else 1)
            rng = np.random.default_rng(seed)
            blocks = [values[rng.choice(len(values), size=(4000, per_model), p=probs)] for _ in range(models)]
            most = 2 * study if study else None  # past twice the study, "more than the study" is the answer
            sim = n_for_joint_certification(blocks, [1 / models] * models, margin, seed=seed, start=need * models,
                                            min_each=spec.min_units, level=spec.level, max_n=most or SIM_MAX_N)
            if isinstance(sim, Undecidable) and most:
                need, note = most + 1, f"simulated: more than {most:,} conversations (the gate's rule stays below 80%)"
            elif isinstance(sim, Undecidable):
                need = math.ceil(need * models)
            else:
                need, note = sim.n, (f"simulated: all {models * per_model} instances certified in {sim.rate:.0%} "
                                     f"of {sim.reps} studies of {sim.n:,} conversations, ±{sim.se:.1%}")
        rows.append(PlanRow(judge, f"figure {fig}", "conversations", 0, 0.0, margin, need, why, note=note))
    return rows
