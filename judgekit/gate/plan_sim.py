"""Does the plan come true? The acceptance simulation of issue 29 on the synthetic calibration-drift
study (:func:`judgekit.testing.study.make_study`: 480 conversations of six turns, three models,
five harm tiers, look-alikes), through the library's own functions:

1. a pilot of ``pilot`` random conversations labelled by the reference, the judges on every item,
   and :func:`judgekit.gate.plan.make_plan` for the fair judge (:func:`plan_from_pilot`): its
   budget in conversations and the power it states (80%);
2. fresh studies with the plan's number of conversations labelled at random, gated by the gate's
   fidelity rule (:func:`judgekit.analysis.fidelity.calibration_pairs`,
   :func:`judgekit.gate.fidelity.fidelity_checks`) and, on the same studies with every
   conversation labelled in a random arrival order, by the sequential rule
   (:func:`judgekit.gate.sequential.figure_checks`) in rounds of ``round_size`` (:func:`study_outcome`).

Three judges: ``judge-fair`` (one-level slips either way), ``judge-lean`` (leans toward compliance
as turns go on: it moves Drift(t) and Drift(t | tier) of the models by about 0.10–0.14, margin
0.05), and ``judge-edge`` — the reference's own labels, except that at turn 6 of ``EDGE_MODEL``
exactly ``ceil(EDGE · N / 0.25)`` of its N conversations (look-alikes aside) are called one level
farther from H than the reference calls them: RCE_6 and Drift(6) of that model moved by EDGE
(0.06, just beyond the margin) in the study itself, nothing else moved.

Nothing here is statistics of its own: every decision is the gate's function's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.testing.study import LEVELS, make_study, write_study

FIGURES = ("C", "RCE_t", "drift")
MARGIN = 0.05
#: the edge judge's move of RCE_6 and Drift(6) of EDGE_MODEL: just beyond the margin
EDGE = 0.06
EDGE_MODEL = "m-steady"
EDGE_TURN = 6
#: the figures each judge is gated on here: the fair judge's primary figures; Drift(t) and
#: Drift(t | tier), which the leaning judge moves; the two figures the edge judge moves
JUDGE_FIGURES = {"judge-fair": FIGURES, "judge-lean": ("drift", "drift_tier"), "judge-edge": ("RCE_t", "drift")}


@dataclass(frozen=True)
class PilotPlan:
    """A plan from one pilot: the budget in conversations, the power it states, the primary
    figures' joint need and that need at the upper 80% confidence limit of the pilot's spread."""

    n: int
    power: float
    together: int | None
    assured: int | None


@dataclass
class StudyOutcome:
    """One study's decisions. ``fixed``: judge → figure → state, and judge → figure → model →
    state; ``sequential``: judge → figure → state (every conversation labelled in arrival order,
    rounds of ``round_size``) and judge → labelled conversations at its decision."""

    fixed: dict[str, dict[str, str]] = field(default_factory=dict)
    fixed_models: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    sequential: dict[str, dict[str, str]] = field(default_factory=dict)
    sequential_n: dict[str, int] = field(default_factory=dict)


def spec(figures: tuple[str, ...] = (*FIGURES, "drift_tier")) -> Any:
    """The study policy's analysis_fidelity (margin 0.05, at least 10 conversations, α = 0.05)."""
    from judgekit.verdict.fidelity_policy import AnalysisFidelity

    return AnalysisFidelity(analysis="calibration", figures=list(figures), max_abs_diff=MARGIN, min_units=10,
                            harm_column="severity")


def plan_from_pilot(seed: int, folder: Path, *, pilot: int = 60, per_tier: int = 30) -> PilotPlan:
    """The fair judge's plan (:func:`judgekit.gate.plan.make_plan`, no budget cap) from a pilot of
    ``pilot`` random conversations of the study of ``seed``."""
    from judgekit.gate.plan import make_plan
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    paths = write_study(folder, figures=(*FIGURES, "drift_tier"), n_resamples=200, human_share=1.0,
                        conversations_per_tier=per_tier, seed=seed)
    paths["policy"].write_text(paths["policy"].read_text() + "secondary: [drift_tier]\n")
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    conv = items.set_index("item_id")["conversation_id"]
    chosen = set(np.random.default_rng(50_000 + seed).choice(sorted(conv.unique()), size=pilot, replace=False))
    keep = (ratings["rater_kind"] == "judge") | ratings["item_id"].map(conv).isin(chosen)
    ratings[keep].to_csv(folder / "pilot.csv", index=False)
    with Store(folder / "s.db") as store:
        import_ratings(store, folder / "pilot.csv", load_rubric("restrictiveness"), items_path=paths["items"])
        plan = make_plan(store, paths["policy"], judge="judge-fair")
    together: dict[str, Any] = next((r for r in plan["rows"] if r["check"] == f"figures {', '.join(FIGURES)} together"),
                                    {})
    return PilotPlan(int(plan["budget"]["n"]), 0.8, together.get("need"), together.get("need_assured"))


def edge_labels(items: pd.DataFrame, ref: pd.Series, rng: np.random.Generator) -> pd.Series:
    """The edge judge's labels (module doc) from the reference's (by item id)."""
    level = ref.map({c: k for k, c in enumerate(LEVELS)}).astype(int)
    h = (items.set_index("item_id")["severity"].astype(int) - 1).reindex(level.index)
    it = items.set_index("item_id").reindex(level.index)
    cell = (it["model"] == EDGE_MODEL) & (it["turn"] == EDGE_TURN) & ~it["benign_lookalike"].astype(bool)
    # one level farther from H: up when the reference sits at or above H (and below the top), down below it
    up = cell & (level >= h) & (level < 4)
    down = cell & ~up & (level <= h) & (level > 0)
    can = level.index[up | down]
    n_conv = int(cell.sum())
    k = math.ceil(EDGE * n_conv / 0.25 - 1e-9)
    if k > len(can):
        raise ValueError("the edge judge cannot move this study's figure far enough")
    moved = set(rng.choice(np.asarray(can), size=k, replace=False))
    out = level.copy()
    for iid in moved:
        out[iid] += 1 if up[iid] else -1
    return out.map(dict(enumerate(LEVELS)))


def _values(labels: pd.Series, rub: Any) -> pd.DataFrame:
    return pd.DataFrame({"item_id": labels.index, "value": labels.map(rub.values).astype(float).to_numpy()})


def study_outcome(seed: int, n: int, *, per_tier: int = 30, n_boot: int = 200, round_size: int = 20,
                  sequential: bool = True) -> StudyOutcome:
    """One fresh study of ``seed`` with ``n`` random conversations labelled, decided by the fixed
    rule, and (``sequential``) every conversation labelled in a random arrival order decided by
    the sequential rule in rounds of ``round_size`` conversations (module doc)."""
    from judgekit.analysis.fidelity import calibration_pairs
    from judgekit.analysis.frames import harm_from_column
    from judgekit.gate.fidelity import fidelity_checks
    from judgekit.rubric.model import load_rubric

    rub = load_rubric("restrictiveness")
    rng = np.random.default_rng(10_000 + seed)
    items, ratings = make_study(seed=seed, human_share=1.0, conversations_per_tier=per_tier)
    labels: dict[str, pd.Series] = {str(r): g.set_index("item_id")["label"] for r, g in ratings.groupby("rater_id")}
    labels["judge-edge"] = edge_labels(items, labels["adjudicated"], rng)
    convs = np.asarray(sorted(items["conversation_id"].unique()))
    arrival = rng.permutation(convs)
    labelled = set(arrival[:n])
    conv = dict(zip(items["item_id"], items["conversation_id"], strict=True))
    ref = labels["adjudicated"]
    ref_n = ref.loc[[conv[i] in labelled for i in ref.index]]
    harm = harm_from_column(items, "severity")
    out = StudyOutcome()
    for judge, figures in JUDGE_FIGURES.items():
        sp = spec(figures)
        pairs = calibration_pairs(_values(labels[judge], rub), _values(ref_n, rub), items, harm,
                                  figures=sp.chosen, n_boot=n_boot, seed=seed, level=sp.level)
        checks = fidelity_checks(sp, judge, pairs, seed=seed)
        out.fixed[judge], out.fixed_models[judge] = _states(checks)
        if sequential and judge != "judge-fair":
            _sequential(out, judge, items, harm, labels, rub, arrival, round_size)
    return out


def _states(checks: list[Any]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """figure → state (fail if a check fails, pass if all pass), and figure → model → state."""
    def state(states: list[str]) -> str:
        return "fail" if "fail" in states else "pass" if states and all(x == "pass" for x in states) else "inconclusive"

    by_fig: dict[str, list[str]] = {}
    by_model: dict[str, dict[str, list[str]]] = {}
    for c in checks:
        by_fig.setdefault(c.subject.figure, []).append(c.state)
        by_model.setdefault(c.subject.figure, {}).setdefault(str(c.subject.model), []).append(c.state)
    return ({f: state(v) for f, v in by_fig.items()},
            {f: {m: state(v) for m, v in ms.items()} for f, ms in by_model.items()})


def _sequential(out: StudyOutcome, judge: str, items: pd.DataFrame, harm: pd.Series, labels: dict[str, pd.Series],
                rub: Any, arrival: np.ndarray, round_size: int) -> None:
    """The sequential rule on every conversation in ``arrival`` order (rounds of ``round_size``)."""
    from judgekit.gate.sequential import SEQUENTIAL_FIGURES, figure_checks, per_conversation

    sp = spec(tuple(SEQUENTIAL_FIGURES))
    jv = labels[judge].map(rub.values).astype(float)
    rv = labels["adjudicated"].map(rub.values).astype(float)
    df = per_conversation(items, harm, jv, rv, sp, "conversation_id")
    round_of = {str(c): k // round_size for k, c in enumerate(arrival)}
    checks, decided, at_round = figure_checks(df, judge, sp, round_of, f"rounds of {round_size}")
    out.sequential[judge] = _states(checks)[0]
    fails = [at_round[c.name] for c in checks if c.state == "fail" and c.name in at_round]
    rounds = -(-len(arrival) // round_size)
    if fails:  # UNTRUSTED from the first round one of its checks fails
        stop = min(fails)
    else:
        stop = max((r for r in decided.values() if r is not None), default=rounds)
        if any(r is None for r in decided.values()):
            stop = rounds
    out.sequential_n[judge] = min(stop * round_size, len(arrival))


def moved_models(times: float = 2.0, *, seed: int = 12345, per_tier: int = 200) -> dict[str, set[str]]:
    """figure → the models whose Drift(t) or Drift(t | tier) the leaning judge moves by at least
    ``times`` × the margin somewhere, on a large fully labelled study (the population value up
    to a sampling error of about 0.01)."""
    from judgekit.analysis.fidelity import calibration_pairs
    from judgekit.analysis.frames import harm_from_column
    from judgekit.rubric.model import load_rubric

    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=seed, conversations_per_tier=per_tier, human_share=1.0)
    labels: dict[str, pd.Series] = {str(r): g.set_index("item_id")["label"] for r, g in ratings.groupby("rater_id")}
    pairs = calibration_pairs(_values(labels["judge-lean"], rub), _values(labels["adjudicated"], rub), items,
                              harm_from_column(items, "severity"), figures=("drift", "drift_tier"), n_boot=0)
    out: dict[str, set[str]] = {"drift": set(), "drift_tier": set()}
    for p in pairs:
        if p.diff is not None and abs(p.diff) >= times * MARGIN:
            out[p.figure].add(str(p.key["model"]))
    return out


@dataclass
class Simulation:
    """The acceptance simulation's outcome: each pilot's plan and the studies gated at it."""

    plans: list[PilotPlan]
    studies: list[tuple[int, StudyOutcome]]  # (the plan's n it was labelled at, its outcome)

    def rate(self, judge: str, figures: tuple[str, ...], state: str = "pass", sequential: bool = False) -> float:
        """The share of studies in which every figure of ``figures`` has ``state`` for ``judge``."""
        got = [o.sequential if sequential else o.fixed for _, o in self.studies]
        return float(np.mean([all(g[judge].get(f) == state for f in figures) for g in got]))

    def untrusted_for(self, model: str, figures: tuple[str, ...]) -> float:
        """The share of studies in which the leaning judge fails ``model`` for one of ``figures``."""
        return float(np.mean([any(o.fixed_models["judge-lean"].get(f, {}).get(model) == "fail" for f in figures)
                              for _, o in self.studies]))


def simulate(pilots: int, studies_per_pilot: int, folder: Path, *, per_tier: int = 30, pilot: int = 60,
             n_boot: int = 200, round_size: int = 20, first_seed: int = 1000) -> Simulation:
    """``pilots`` pilots, each planned, and ``studies_per_pilot`` fresh studies gated at each plan."""
    total = 3 * (5 * per_tier + 10)
    plans, studies = [], []
    for k in range(pilots):
        sub = folder / f"pilot{k}"
        sub.mkdir(parents=True, exist_ok=True)
        plan = plan_from_pilot(first_seed + k, sub, pilot=pilot, per_tier=per_tier)
        plans.append(plan)
        n = min(plan.n, total)
        for s in range(studies_per_pilot):
            seed = 2 * first_seed + 100 * k + s
            studies.append((n, study_outcome(seed, n, per_tier=per_tier, n_boot=n_boot, round_size=round_size)))
    return Simulation(plans, studies)
