"""Plan before labelling: for each check of a gate policy, the human-labelled units needed to
decide it with 80% power, the smallest margin a given budget resolves, and the checks no budget
can decide (``judgekit plan POLICY.yaml``).

The plan reads a pilot: a store with the judge's ratings and some human labels (the gate's own
figures on it, :func:`judgekit.gate.run.run_gate` without recording a verdict). For each check:

* its spread per unit from the pilot: σ = (high − low) / (2z) · √n for a check with an interval on
  n units (bootstrap or Wilson; z = 1.96 for a 95% interval, 1.645 for a fidelity check's 90% one
  at α = 0.05), the estimate the interval's centre; a fidelity figure
  is planned for a judge that does not move it (difference 0; a pilot's per-cell estimate is too
  noisy to plan at) with the spread of its paired bootstrap interval, unless the pilot's interval
  already lies wholly beyond the margin ("likely UNTRUSTED": the units that show it);
* the units for 80% power at the policy's threshold (:func:`judgekit.stats.power.n_for_power`):
  "mean" (t interval) for agreement figures, "difference"/"within" (|d| ≤ margin, two one-sided
  tests) for fidelity figures — then re-planned by simulating the gate's own percentile-bootstrap
  rule on the pilot's per-conversation pseudo-values, every instance of the figure at once
  (:func:`judgekit.stats.power_sim.n_for_joint_certification`, :func:`_simulated`), the normal
  theory being optimistic for them — "proportion" (Wilson) for abstention and error rates — these count
  the judge's own calls, never human labels; a figure taken on a part of the labelled units (a
  model, a tier, a slice) is scaled to the whole sample by its share in the pilot;
* the smallest margin the ``budget`` resolves (:func:`judgekit.stats.power.smallest_margin`);
* :class:`~judgekit.stats.power.Undecidable` with the reason when the estimate sits on the
  threshold, the figure is undefined in the pilot, or only a second annotator can decide it.

``assume_kappa``: the κ assumed for the agreement floor instead of the pilot's estimate (its
spread still from the pilot). A sequential gate (``judgekit gate --sequential``) needs about
2.5–3× these single-look budgets for the same power.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from judgekit.gate.plan_designs import plan_designs
from judgekit.gate.plan_rows import PlanRow, summarise
from judgekit.stats.intervals import z_two_sided
from judgekit.stats.power import Undecidable, n_for_power, smallest_margin
from judgekit.stats.power_sim import SIM_MAX_N, n_for_joint_certification
from judgekit.verdict.check import Check, judge_checks

#: check kinds the plan does not size (their own tests or probes; `judgekit probe` reports them)
NOT_PLANNED = ("alt_test", "max_covariate_effect", "max_self_preference", "min_stability", "max_flip_rate",
               "max_label_drift", "min_class_recall", "max_abs_bias", "max_abs_bias_slice")


def _sigma(ci: list[float] | None, n: int, level: float = 0.95) -> float | None:
    """The spread per unit behind an interval at ``level`` of a figure on ``n`` units:
    σ = (high − low) / (2 z) · √n, z the normal quantile of the level (1.96 at 95%, 1.645 at the
    fidelity checks' default 90%)."""
    if ci is None or n <= 0 or ci[1] <= ci[0]:
        return None
    return (ci[1] - ci[0]) / (2 * z_two_sided(level)) * math.sqrt(n)


def _need(value: int | Undecidable) -> tuple[int | None, str | None]:
    return (None, value.reason) if isinstance(value, Undecidable) else (int(value), None)


def _margin(value: float | Undecidable) -> float | None:
    return None if isinstance(value, Undecidable) else float(value)


#: the agreement metrics ``--assume-kappa`` stands for (Cohen's κ and its weighted form)
KAPPA_METRICS = ("kappa", "weighted_kappa")


def _check_row(judge: str, ch: Check, total_n: int, budget: int | None, calls: dict[str, int],
               assume_kappa: float | None, humans: int) -> PlanRow | None:
    kind, rule, metric, name = ch.kind, ch.rule, ch.metric, ch.name
    if kind in NOT_PLANNED or kind == "analysis_fidelity":
        return None
    n, thr, ci = int(ch.n or 0), ch.threshold, ch.ci
    assert thr is not None  # every planned kind has its policy's threshold
    if kind == "min_items":
        return PlanRow(judge, name, "human-rated items", n, None, thr, int(thr))
    if kind == "one_provenance":  # no labels decide it (judgekit.gate.provenance): its sentence says what does
        return PlanRow(judge, name, "ratings of the judge", n, None, thr, None, ch.detail)
    if kind in ("max_abstention_rate", "max_error_rate", "min_coverage"):  # the judge's calls, not human labels
        unit = f"calls of {judge} (no human label)"
        p = float(ch.figure or 0.0)
        way = ">=" if kind == "min_coverage" else "<="
        need, why = _need(n_for_power(thr, p, kind="proportion", direction=way))
        m = (_margin(smallest_margin(budget, kind="proportion", threshold=thr, direction=way))
             if budget and 0 < thr < 1 else None)
        return PlanRow(judge, name, unit, n, p, thr, need, why, m)
    unit = "items rated by two or more humans" if kind == "within_human_noise" else "human-rated items"
    if kind == "within_human_noise" and humans < 2:
        return PlanRow(judge, name, unit, n, None, thr, None,
                       "only a second annotator can decide it (it compares the judge with each human against "
                       "the others' consensus)")
    if ch.figure is None or ci is None or ch.interval is None:
        return PlanRow(judge, name, unit, n, None, thr, None, f"the figure is undefined in the pilot ({ch.detail})")
    est = pilot_est = (ci[0] + ci[1]) / 2
    assumed = None
    if assume_kappa is not None and metric in KAPPA_METRICS:
        est, assumed = assume_kappa, "--assume-kappa"
    sd = _sigma(list(ci), n, ch.interval.level)
    if sd is None:  # no spread in the pilot: the floor decides it (optimistic for a small pilot)
        return PlanRow(judge, name, unit, n, est, thr, max(total_n, 2),
                       None if est != thr else "the estimate sits on the threshold")
    share = n / total_n if total_n and kind == "per_slice" else 1.0
    direction = "<=" if rule == "ci<=" else ">="
    need, why = _need(n_for_power(thr, est, kind="mean", direction=direction, sd=sd, bounds=None))
    if need is not None:
        need = math.ceil(need / share)
    m = _margin(smallest_margin(max(int(budget * share), 2), kind="mean", sd=sd)) if budget else None
    row = PlanRow(judge, name, unit, n, est, thr, need, why, m)
    if assumed is not None:
        row.assumed, row.pilot_estimate = assumed, pilot_est
    return row


def _figure_rows(judge: str, pairs: list[Any], spec: Any, budget: int | None, *, n_boot: int = 400,
                 seed: int = 0, secondary_figures: tuple[str, ...] = ()) -> list[PlanRow]:
    """One row per fidelity figure: the labelled conversations at which the gate's own rule
    certifies every instance of it with 80% power (:func:`_simulated`), at least the largest
    normal-theory need of an instance that cannot be simulated (each scaled to the whole labelled
    sample by its share of the units); and, with two or more primary (not ``secondary_figures``)
    figures planned at difference 0, one row for all of them together — the verdict is TRUSTED
    for the study's figures only when every one is certified, and 80% power for each is less for
    all (the same conversations decide them, so the joint rate is simulated, not multiplied)."""
    labelled: dict[str, int] = {}
    for p in pairs:
        model = str(p.key.get("model", ""))
        if "tier" not in p.key:
            labelled[model] = max(labelled.get(model, 0), p.n)
    total = sum(labelled.values()) or 1
    rows = []
    secondary = set(secondary_figures)
    together: dict[str, list[tuple[int, Any, float]]] = {}  # primary figure → its fair instances
    assured_of: dict[str, PlanRow] = {}
    for fig in spec.chosen:
        own = [p for p in pairs if p.figure == fig]
        margin = spec.margin(fig)
        fair: list[tuple[int, Any, float]] = []  # (need, instance, margin) of those planned at difference 0
        refute: tuple[int, Any] | None = None  # the quickest instance to show the judge moves the figure
        why = None
        at_budget: float | None = None
        unit = own[0].unit if own else "conversations"
        for p in own:
            if p.undefined is not None or p.diff is None:
                why = f"{p.name} is undefined in the pilot ({p.undefined or 'no difference'})"
                continue
            # a flat interval (the same difference in every resample, e.g. no disagreement in the
            # pilot) is no interval: the gate reads the point, and the pilot shows no spread
            low, high = (p.low, p.high) if p.low is not None and p.high is not None else (p.diff, p.diff)
            sd = _sigma([low, high], p.n, p.level)
            share = max(p.n, 1) / total
            # the pilot's own evidence that the judge moves the figure: its interval wholly beyond the
            # margin, on at least the gate's floor of units (a smaller cell's interval shows nothing)
            beyond = (low > margin or high < -margin) and p.n >= spec.min_units
            # planned for a judge that does not move the figure (θ = 0), with the pilot's spread: a
            # pilot's per-cell point estimate is too noisy to plan at
            theta = p.diff if beyond else 0.0
            if sd is None:  # no spread in the pilot: its floor decides it (optimistic for a small pilot)
                need, reason = spec.min_units, None
            else:
                need, reason = _need(n_for_power(margin, theta, kind="difference", direction="within", sd=sd,
                                                 bounds=None, level=spec.level))
            if need is None:
                why = f"{p.name}: {reason}"
                continue
            need = math.ceil(need / share)
            if beyond:
                if refute is None or need < refute[0]:
                    refute = (need, p)
            else:
                fair.append((need, p, margin))
            if budget and sd is not None:
                mb = _margin(smallest_margin(max(int(budget * share), 2), kind="difference", direction="within",
                                             sd=sd, theta_assumed=theta, level=spec.level))
                at_budget = None if mb is None else max(at_budget or 0.0, mb)
        if refute is not None:  # one instance beyond the margin decides the figure (UNTRUSTED for it)
            rows.append(PlanRow(judge, f"figure {fig} (likely UNTRUSTED)", unit, total, refute[1].diff, margin,
                                refute[0], None, at_budget))
        elif why is not None or not fair:
            rows.append(PlanRow(judge, f"figure {fig}", unit, total, None, margin, None,
                                why or "no labelled unit defines it in the pilot"))
        else:
            need, note = _simulated(fair, total, min_units=spec.min_units, n_boot=n_boot, seed=seed,
                                    level=spec.level)
            row = PlanRow(judge, f"figure {fig}", unit, total, 0.0, margin, need, None, at_budget, note)
            row.assumed = "planned for a judge that does not move the figure"
            row.pilot_estimate = max((float(t[1].diff) for t in fair), key=abs)
            rows.append(row)
            if fig not in secondary:
                together[fig] = fair
                assured_of[fig] = row

    def sim(fair: list[tuple[int, Any, float]], most: int, upper: float | None) -> tuple[int, str | None]:
        return _simulated(fair, total, min_units=spec.min_units, n_boot=n_boot, seed=seed, level=spec.level,
                          most=most, upper=upper)

    if len(together) >= 2:  # the verdict certifies the study's figures only when every one passes
        fair = [t for f in together.values() for t in _hardest_first(f)[:SIMULATED]]
        need, note = sim(fair, SIMULATED_TOGETHER, None)
        row = PlanRow(judge, f"figures {', '.join(together)} together", "conversations", total, 0.0, None,
                      need, None, None, note)
        row.need_assured = sim(fair, SIMULATED_TOGETHER, PILOT_UPPER)[0]
        rows.append(row)
    elif len(together) == 1:  # the one primary figure: its own row says the assured need too
        (fig, fair), = together.items()
        assured_of[fig].need_assured = sim(fair, SIMULATED, PILOT_UPPER)[0]
    return rows


def _hardest_first(fair: list[tuple[int, Any, float]]) -> list[tuple[int, Any, float]]:
    """The instances from the largest normal-theory need down."""
    return sorted(fair, key=lambda t: -t[0])


#: how many instances of a figure (the largest normal-theory needs) are simulated together
SIMULATED = 8
#: how many instances of the primary figures together are simulated (the hardest of each figure's)
SIMULATED_TOGETHER = 16
#: ``judgekit plan --assured`` plans at this upper confidence limit of the pilot's spread (Browne 1995)
PILOT_UPPER = 0.8


def pilot_upper(block: np.ndarray, upper: float = PILOT_UPPER) -> np.ndarray:
    """A pilot's per-conversation differences (K conversations × instances) with their spread
    raised to its ``upper`` confidence limit: each column's deviations from its mean times
    k = √((K − 1) / χ²_{1−upper}(K − 1)), the mean kept (k² = 1.40 for K = 19 at 0.8: about 1.4× the
    conversations).

    A plan made at a small pilot's own spread falls short of its power whenever that spread came
    out low (on the synthetic study, plans from 60-conversation pilots that happened to show few
    of the judge's slips certified the fair judge in as few as 47% of fresh studies; at this
    limit, 73% at worst: scripts/simulate_plan.py). Planning at the upper 80% confidence limit of
    the pilot's variance reaches the wanted power with probability about 0.8 over pilots (Browne,
    *On the use of a pilot sample for sample size determination*, Stat. Med. 14:1933, 1995;
    Kieser & Wassmer, Biom. J. 38:941, 1996)."""
    from scipy import stats

    k_units = block.shape[0]
    if k_units < 3:
        return block
    df = k_units - 1
    k = math.sqrt(df / float(stats.chi2.ppf(1.0 - upper, df)))
    mean = np.nanmean(block, axis=0) if np.isfinite(block).any() else np.zeros(block.shape[1])
    return np.asarray(mean[None, :] + k * (block - mean[None, :]))


def _simulated(fair: list[tuple[int, Any, float]], total: int, *, min_units: int, n_boot: int,
               seed: int, level: float = 0.95, most: int = SIMULATED,
               upper: float | None = None) -> tuple[int, str | None]:
    """The figure's need, by simulating the gate's own rule on every instance at once: the
    smallest number of labelled conversations at which ALL its instances (the gate certifies a
    figure when every check passes) have their percentile bootstrap interval (at ``level``)
    within ±margin (each instance's own: its values are divided by it, and the rule read at ±1,
    which certifies exactly the same studies) in ≥ 80% + one Monte-Carlo SE of simulated
    studies, each model's instances drawn from its conversations' pseudo-values recentred at 0, each model getting its share of the pilot's
    labelled conversations and at least ``min_units``
    (:func:`judgekit.stats.power_sim.n_for_joint_certification`). The ``most``
    instances with the largest normal-theory needs are simulated (the others, decided well before,
    barely move the joint rate and would only slow it down); the others and those without
    pseudo-values keep their normal-theory need (the figure's need is at least theirs).
    ``upper``: simulate at that upper confidence limit of the pilot's spread (:func:`pilot_upper`)."""
    by_model: dict[str, list[np.ndarray]] = {}
    needs = [0]
    fair = sorted(fair, key=lambda t: -t[0])
    worst = fair[0][0]
    for normal, _p, _m in fair[most:]:  # far from deciding the figure: their normal-theory need
        needs.append(normal)
    for normal, p, m in fair[:most]:
        u = np.asarray(p.extra.get("per_unit", []), dtype=float) / m
        col = by_model.setdefault(str(p.key.get("model", "")), [])
        if u.ndim != 1 or u.size < 2 or (col and len(col[0]) != u.size):
            needs.append(normal)
        else:
            col.append(u)
    blocks = [np.column_stack(c) for c in by_model.values() if c]
    if upper is not None:
        blocks = [pilot_upper(b, upper) for b in blocks]
    if not blocks:
        return worst, None
    shares = [min(len(b) / total, 1.0) for b in blocks]
    cap = min(SIM_MAX_N, 4 * worst + 100)
    sim = n_for_joint_certification(blocks, shares, 1.0, n_boot=n_boot, seed=seed, min_each=min_units,
                                    start=max(2, worst // 2), max_n=cap, level=level)
    if isinstance(sim, Undecidable):  # far beyond the normal theory: at least the cap
        return cap + 1, f"simulated: more than {cap:,} conversations (the gate's rule stays below 80% there)"
    instances = sum(b.shape[1] for b in blocks)
    which = f"all {instances}" if instances == len(fair) else f"the {instances} hardest of {len(fair)}"
    floor = max(math.ceil(min_units / s - 1e-9) for s in shares)  # min_units in every model
    if floor > sim.n:
        note = (f"simulated: {which} instances certified in {sim.rate:.0%} of {sim.reps} studies at the gate's "
                f"floor of {min_units} conversations per model, ±{sim.se:.1%}; that floor needs {floor:,}")
    else:
        note = (f"simulated: {which} instances certified in {sim.rate:.0%} of {sim.reps} studies of "
                f"{sim.n:,} conversations (at least {min_units} per model), ±{sim.se:.1%}")
    return max(sim.n, floor, *needs), note


def make_plan(store: Any, policy_path: str | Path, *, budget: int | None = None,
              assume_kappa: float | None = None, judge: str | None = None,
              assume_sd: float | None = None, assured: bool = False) -> dict[str, Any]:
    """The plan of a policy on a pilot store (module doc): ``{"rows": [PlanRow as dict], "lines":
    [one sentence per row], "budget": {"unit", "n", "items"}}`` — ``budget`` is the largest need
    over the checks that count human labels, in the unit of the figures (conversations) when the
    policy has ``analysis_fidelity``, else in human-rated items. ``judge``: plan for that judge of the policy only
    (the one you mean to certify); default every judge. ``assured``: the budget of the primary
    fidelity figures at the upper 80% confidence limit of the pilot's spread (:func:`pilot_upper`),
    not at its estimate."""
    from judgekit.gate.calls import own_calls
    from judgekit.gate.run import run_gate
    from judgekit.rubric.model import rubric_named_in
    from judgekit.verdict.policy import load_policy

    policy, _ = load_policy(policy_path)
    rubric = rubric_named_in(policy.rubric, f"Policy file {policy_path}")
    from judgekit.verdict.policy_rules import PEOPLE, reference_kinds

    if not any(k in PEOPLE for k in reference_kinds(store, rubric).values()):  # no pilot: assumed quality
        from judgekit.gate.plan_assumed import assumed_plan

        if assured:
            from judgekit.errors import JudgekitError

            raise JudgekitError(f"An assured plan is made at the upper confidence limit of a pilot's spread, and "
                                f"{store.path} has no human labels under {rubric.id} yet: import a pilot's labels, "
                                "or plan from assumed quality without assurance.")

        return assumed_plan(store, policy, policy_path, rubric, assume_kappa=assume_kappa, assume_sd=assume_sd,
                            budget=budget, judge=judge)
    if assume_kappa is not None and policy.checks.metric not in KAPPA_METRICS:
        from judgekit.errors import JudgekitError

        raise JudgekitError(f"--assume-kappa assumes a κ, and {policy_path} checks {policy.checks.metric}: drop "
                            "--assume-kappa (the plan uses the pilot's estimate).")
    verdict, report = run_gate(store, policy_path, record=False)
    calls = own_calls(store, rubric, list(policy.judges))
    humans = len(report.data.get("ceiling_raters") or report.data.get("humans") or [])
    pairs: dict[str, list[Any]] = {}
    if policy.checks.analysis_fidelity is not None:
        from judgekit.gate.fidelity import fidelity_results

        pairs = fidelity_results(store, policy, policy_path, rubric, report, per_unit=True)
    per = next((float(p.extra.get("items_per_unit") or 1.0) for ps in pairs.values() for p in ps), 1.0)
    item_budget = None if budget is None else (math.ceil(budget * per) if pairs else budget)
    study = sum(p.extra.get("units_total", 0) for ps in list(pairs.values())[:1] for p in ps
                if "tier" not in p.key and "turn" not in p.key and p.figure == ps[0].figure)
    rows: list[PlanRow] = []
    if judge is not None and judge not in policy.judges:
        from judgekit.errors import JudgekitError

        raise JudgekitError(f"--judge {judge!r} is not a judge of {policy_path} ({', '.join(policy.judges)}).")
    for j in verdict["judges"]:
        if judge is not None and j["judge"] != judge:
            continue
        checks = judge_checks(j)
        total_n = next((int(c.n or 0) for c in checks if c.kind == "min_items"), 0)
        for ch in checks:
            if ch.kind == "analysis_fidelity":
                continue
            row = _check_row(j["judge"], ch, total_n, item_budget, calls[j["judge"]], assume_kappa, humans)
            if row is not None:
                rows.append(row)
        if policy.checks.analysis_fidelity is not None:
            rows += _figure_rows(j["judge"], pairs.get(j["judge"], []), policy.checks.analysis_fidelity, budget,
                                 n_boot=min(max(int(policy.n_resamples), 200), 1000), seed=int(policy.seed),
                                 secondary_figures=tuple(policy.secondary))
    if pairs:
        have = _labelled_conversations(store, rubric, report, policy)
    else:
        have = max((r.pilot_n for r in rows if r.check == "min_items"), default=0)
    plan = summarise(rows, policy=policy, per=per, study=study, budget=budget, have=have, assured=assured)
    designs = plan_designs(store, rubric, [judge] if judge else list(policy.judges), panel=list(policy.judges),
                           budget=item_budget)
    plan["designs"] = [d.as_dict() for d in designs]
    plan["lines"][-1:-1] = [d.line() for d in designs]  # before the closing "Plan:" line
    return plan


def _labelled_conversations(store: Any, rubric: Any, report: Any, policy: Any) -> int:
    """The conversations (look-alikes included) with a label of the gate's reference: what the
    pilot already holds of the plan's budget."""
    ref = (report.data.get("reference") or {}).get("rater")
    humans = list(report.data.get("humans") or [])
    ids = [ref] if ref and ref != "consensus" else humans
    r = store.ratings(rubric=rubric, rater_ids=ids) if ids else store.ratings(rubric=rubric, rater_kind="human")
    items = store.items()
    spec = policy.checks.analysis_fidelity
    col = "conversation_id" if "conversation_id" in items.columns else (spec.prompt_column if spec else None)
    if col is None or col not in items.columns:
        return 0
    labelled = set(r["item_id"].astype(str))
    return int(items.loc[items["item_id"].astype(str).isin(labelled), col].nunique())


def read_plan_budget(path: str | Path) -> tuple[int, bool, str | None]:
    """``(items, whole_conversations, rubric)`` of a plan file ``judgekit plan --out`` wrote: the
    items to sample beyond the pilot (``more_items``; ``items`` in a plan without it), whether to
    draw whole conversations, and the policy's rubric (the pilot's labels are under it); anything
    else is one sentence naming the file and the key."""
    from judgekit.core.config import read_yaml_mapping
    from judgekit.errors import JudgekitError

    p = Path(path)
    data = read_yaml_mapping(p, what="Plan file", expect="the 'budget' `judgekit plan --out` writes")  # JSON is YAML
    b = data.get("budget")
    n = (b.get("more_items", b.get("items"))) if isinstance(b, dict) else None
    unit = b.get("unit") if isinstance(b, dict) else None
    if n == 0 and unit in ("conversations", "human-rated items"):
        raise JudgekitError(f"Plan file {p}: the pilot already holds the labels the plan needs (budget more_items "
                            "is 0); run `judgekit gate` on the store.")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or unit not in ("conversations", "human-rated items"):
        raise JudgekitError(f"Plan file {p}: 'budget' needs 'items' (a whole number >= 1) and 'unit' "
                            "('conversations' or 'human-rated items'); write it again with `judgekit plan --out`.")
    rubric = b.get("rubric") if isinstance(b, dict) else None
    return n, unit == "conversations", rubric if isinstance(rubric, str) and rubric else None
