"""The rows of a plan (:mod:`judgekit.gate.plan`) and the budget they add up to."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from judgekit.stats.power import format_units
from judgekit.verdict.numbers import signed


@dataclass
class PlanRow:
    """One planned check (or fidelity figure): the units it counts, the pilot's n and estimate,
    the units needed for the wanted power (``need``; None when undecidable, with ``why``), and
    the smallest margin at the budget (None when not asked or not resolvable); ``note`` how a
    simulated need was measured."""

    judge: str
    check: str
    unit: str
    pilot_n: int
    estimate: float | None
    threshold: float | None
    need: int | None
    why: str | None = None
    margin_at_budget: float | None = None
    note: str | None = None
    #: the need at the upper 80% confidence limit of the pilot's spread (``judgekit plan --assured``)
    need_assured: int | None = None
    #: the estimate is a planning assumption, not the pilot's: what it is (``--assume-kappa``, …)
    #: and the pilot's own estimate beside it (for a figure, its largest difference)
    assumed: str | None = None
    pilot_estimate: float | None = None

    def line(self) -> str:
        if self.check == "min_items":
            return (f"{self.judge} min_items: {format_units(self.need or 0, self.unit)} (the policy's floor; the "
                    f"pilot has {self.pilot_n:,}).")
        est = "estimate undefined" if self.estimate is None else f"estimate {signed(self.estimate)}"
        if self.assumed is not None and self.estimate is not None:
            pilot = "" if self.pilot_estimate is None else (
                f", the pilot's {'largest difference' if self.check.startswith('figure') else 'estimate'} "
                f"{signed(self.pilot_estimate)}")
            est = f"assumed {signed(self.estimate)} ({self.assumed}){pilot}"
        head = f"{self.judge} {self.check} (pilot {self.pilot_n:,} {self.unit}, {est}"
        head += f", threshold {self.threshold:g})" if self.threshold is not None else ")"
        if self.need is None:
            return f"{head}: undecidable — {self.why}."
        out = f"{head}: {format_units(self.need, self.unit)} for 80% power"
        if self.note:
            out += f" ({self.note})"
        if self.need_assured is not None:
            out += (f"; {format_units(self.need_assured, self.unit)} at the upper 80% confidence limit of the "
                    "pilot's spread (`--assured`: a small pilot's spread comes out low about half the time)")
        if self.margin_at_budget is not None:
            out += f"; the budget resolves a margin of ±{self.margin_at_budget:.3f}"
        return out + "."


def _next(more: int, unit: str, items: int, have: int) -> str:
    """What to label next: the units beyond the pilot and the command that draws them."""
    what = (f"{more:,} more whole conversations (about {items:,} items)" if unit == "conversations"
            else f"{more:,} more human-rated items")
    return (f"Label next: {what} beyond the pilot's {have:,} — `judgekit sample --name main --from-plan PLAN.json` "
            "draws them (PLAN.json: this plan written with --out; add --by to stratify), then import their labels "
            "and run `judgekit gate`.")


def summarise(rows: list[PlanRow], *, policy: Any, per: float, study: int, budget: int | None,
              have: int, assured: bool = False) -> dict[str, Any]:
    """The plan from its rows: a need beyond the ``study`` is undecidable; ``secondary`` figures are
    left out of the budget; the budget is the largest need (in conversations when a row counts
    them, ``per`` items each; with ``assured``, a row's need at the upper confidence limit of the
    pilot's spread where it has one, at most the study), capped at ``budget``; ``have`` units are
    labelled already."""
    for r in rows:  # a need beyond the study: undecidable in it, with the reason
        if r.need is not None and r.unit == "conversations" and study and r.need > study:
            r.why = (f"cannot be decided with this study: needs about {r.need:,} conversations for 80% power, "
                     f"the study holds {study:,}")
            r.need = None
    secondary = {f"figure {f}" for f in policy.secondary}
    for r in rows:
        if r.check.split(" (")[0] in secondary:
            r.check += " (secondary: not in the budget)"
    human = [r for r in rows if "no human label" not in r.unit and r.need is not None
             and not r.check.endswith("(secondary: not in the budget)")]
    used_assured = beyond = False  # an assured need decides the budget; one is more than the study

    def want(r: PlanRow) -> int | None:
        nonlocal used_assured, beyond
        if not (assured and r.need_assured is not None):
            return r.need
        used_assured = True
        if study and r.need_assured > study:  # the whole study, and the line says it is not enough
            beyond = True
            return study
        return r.need_assured

    conv = [n for r in human if r.unit == "conversations" and (n := want(r)) is not None]
    items = [r.need for r in human if r.unit != "conversations" and r.need is not None]
    if conv:
        unit, n_plan = "conversations", max(conv + [math.ceil(i / per) for i in items])
        n_items = math.ceil(n_plan * per)
    else:
        unit, n_plan = "human-rated items", max(items, default=0)
        n_items = n_plan
    capped = budget is not None and n_plan > budget
    if capped:  # sample what you can afford; each check's line says what that budget resolves
        n_plan = int(budget or 0)
        n_items = math.ceil(n_plan * per) if unit == "conversations" else n_plan
    if unit != "conversations" and per != 1.0:
        have = int(have * per)
    more = max(n_plan - have, 0)
    plan_budget: dict[str, Any] = {"unit": unit, "n": n_plan, "items": n_items, "labelled": have, "more": more,
                                   "assured": used_assured,
                                   "more_items": math.ceil(more * (per if unit == "conversations" else 1)),
                                   "rubric": policy.rubric}
    undecidable = [r for r in rows if r.need is None]
    lines = [r.line() for r in rows]
    if more == 0 and not capped:  # nothing more to label: say so, never "0 … more than the pilot's"
        lines.append(f"Plan: the pilot's {format_units(have, unit)} already reach the {format_units(n_plan, unit)} "
                     "that decide every decidable check with 80% power: label none more and run `judgekit gate` on "
                     "them" + (f"; {len(undecidable)} checks no budget decides (listed above)" if undecidable else "")
                     + ".")
        return {"rows": [asdict(r) for r in rows], "lines": lines, "budget": plan_budget}
    if more == 0:  # capped at or below the pilot: nothing to sample within it
        lines.append(f"Plan: your --budget of {format_units(n_plan, unit)} is no more than the pilot's "
                     f"{format_units(have, unit)}, below what 80% power on every check needs (see the margins above): "
                     "label none more within it and run `judgekit gate` on them, or raise --budget"
                     + (f"; {len(undecidable)} checks no budget decides (listed above)" if undecidable else "") + ".")
        return {"rows": [asdict(r) for r in rows], "lines": lines, "budget": plan_budget}
    lines.append(f"Plan: label {format_units(n_plan, unit)} (about "
                 f"{format_units(n_items, 'items')}) "
                 + ("— your --budget, below what 80% power on every check needs (see the margins above) — "
                    if capped else "to decide every decidable check with 80% power"
                    + (" at the upper 80% confidence limit of the pilot's spread" if used_assured else "")
                    + (" (the whole study: at that limit it would need more)" if beyond else "") + " — ")
                 + f"{format_units(more, unit)} more than the pilot's {have:,}"
                 + (f"; {len(undecidable)} checks no budget decides (listed above)" if undecidable else "")
                 + ". A sequential gate needs about 2.5–3× this. " + _next(more, unit, plan_budget["more_items"], have))
    return {"rows": [asdict(r) for r in rows], "lines": lines, "budget": plan_budget}
