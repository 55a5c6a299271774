"""One check of a verdict as a typed record (:class:`Check`): what it is (its kind, rule, metric,
judge and subject) and what it found (figure, threshold, interval, n and unit, floor, budget).

Its state follows from what it records by the one rule :func:`derive_state`; its display name
(``min_recall[refusal]``, ``per_slice[model=x]``,
``analysis_fidelity[calibration:drift(model=m, turn=6)]``) is rendered from its fields and never
read back. :func:`check_json` writes a check into a verdict and :func:`read_check` reads it back,
strictly (the verdict is untrusted input): the recorded name, rule and state must be what the
fields give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from judgekit.verdict.schema import State

if TYPE_CHECKING:
    from judgekit.verdict.policy import Policy

Rule = Literal["point>=", "ci>=", "ci<="]

#: kind → rule; the rule is fixed by the kind, never read from the file: ``point>=`` figure (the
#: point estimate) >= threshold; ``ci>=`` the interval's low end >= threshold passes, its high end
#: below the threshold fails; ``ci<=`` the high end <= threshold passes, the low end above it fails.
RULES: dict[str, Rule] = {
    "min_items": "point>=", "min_lower_bound": "ci>=", "min_value": "point>=",
    "max_abstention_rate": "ci<=", "max_error_rate": "ci<=", "min_class_recall": "ci>=",
    "per_slice": "point>=", "within_human_noise": "ci>=", "min_coverage": "ci>=", "max_abs_bias": "ci<=",
    "max_abs_bias_slice": "ci<=", "alt_test": "point>=",
    # the probes: intervals at each slice's Holm level (judgekit.probes.bands)
    "max_covariate_effect": "ci<=", "max_self_preference": "ci<=", "min_stability": "ci>=",
    "max_flip_rate": "ci<=", "max_label_drift": "ci<=", "analysis_fidelity": "ci<=",
    # every gated judge: 1 when its ratings come from one source (judgekit.gate.provenance), else 0
    "one_provenance": "point>=",
}

PROBES = ("max_covariate_effect", "max_self_preference", "min_stability", "max_flip_rate")

#: kinds a policy asks for once per judge (class recall and slices depend on the data)
ONCE = ("min_items", "min_value", "min_lower_bound", "max_abstention_rate", "max_error_rate",
        "within_human_noise", "min_coverage", "max_abs_bias", "alt_test", *PROBES)

#: kinds that an interval decides and a point estimate alone never does (judgekit.probes.bands)
NEEDS_INTERVAL = (*PROBES, "max_label_drift")


@dataclass(frozen=True)
class Interval:
    """A check's interval: its bounds, how it was made (``wilson``, ``bootstrap``, ``holm-normal``,
    ``confidence-sequence``; ``holm-…`` at a probe slice's Holm level) and its two-sided level."""

    low: float
    high: float
    method: str
    level: float

    def label(self) -> str:
        """``"95% CI"``, ``"98.33% interval"`` (a Holm level), ``"90% confidence sequence"``."""
        pct = f"{100 * self.level:.4g}%"
        if self.method == "confidence-sequence":
            return f"{pct} confidence sequence"
        return f"{100 * self.level:.2f}% interval" if self.method.startswith("holm") else f"{pct} CI"


@dataclass(frozen=True)
class Subject:
    """What a check is about beyond its kind: a slice (``by``/``key``), a class ``label``, a
    probe's ``column``/``target`` or ``variant``, or a fidelity figure's ``analysis``, ``figure``
    and cell (``cell`` is the figure instance as the analysis names it, with its ``model``,
    ``turn``, ``tier`` or ``criterion``)."""

    by: str | None = None
    key: str | None = None
    label: str | None = None
    column: str | None = None
    target: str | None = None
    variant: str | None = None
    analysis: str | None = None
    figure: str | None = None
    cell: str | None = None
    model: str | None = None
    turn: str | None = None
    tier: str | None = None
    criterion: str | None = None

    @property
    def slice(self) -> str | None:
        """``"by=key"`` of a sliced check, else None."""
        return None if self.by is None else f"{self.by}={self.key}"


@dataclass(frozen=True)
class Budget:
    """The label budget of an inconclusive check or judge: about how many more human-rated items
    (``items``; None when more labels would not decide it) and per slice, in one ``sentence``;
    ``need`` counts the same need in the check's own ``unit`` (conversations, items judged …)."""

    items: int | None
    sentence: str
    slices: dict[str, int] = field(default_factory=dict)
    need: int | None = None
    unit: str | None = None


@dataclass(frozen=True)
class Check:
    """One check of a verdict (module doc). ``state`` and ``name`` derive from the fields."""

    kind: str
    judge: str
    figure: float | None
    threshold: float | None
    n: int | None
    detail: str
    subject: Subject = Subject()
    interval: Interval | None = None
    metric: str | None = None
    unit: str = "human-rated items"
    min_n: int | None = None
    undefined: str | None = None
    budget: Budget | None = None

    @property
    def rule(self) -> Rule:
        return RULES[self.kind]

    @property
    def ci(self) -> tuple[float, float] | None:
        return None if self.interval is None else (self.interval.low, self.interval.high)

    @property
    def state(self) -> State:
        return derive_state(self.kind, self.figure, self.threshold, self.ci, self.n, self.min_n)

    @property
    def small(self) -> bool:
        """Whether n is below the small-sample floor."""
        return self.min_n is not None and self.n is not None and self.n < self.min_n

    @property
    def name(self) -> str:
        """The display name, rendered from the fields."""
        s, k = self.subject, self.kind
        named = {
            "min_value": lambda: f"min_{self.metric}",
            "min_lower_bound": lambda: f"min_{self.metric}_lower_bound",
            "min_class_recall": lambda: f"min_recall[{s.label}]",
            "per_slice": lambda: f"per_slice[{s.slice}]",
            "max_abs_bias_slice": lambda: f"max_abs_bias[{s.slice}]",
            "analysis_fidelity": lambda: f"analysis_fidelity[{s.analysis}:{s.cell}]",
        }
        if k in named:
            return named[k]()
        inner = s.variant if s.column is None else (s.column if s.target is None else f"{s.column}:{s.target}")
        parts = [p for p in (inner, s.slice) if p is not None]
        return k if not parts else f"{k}[{'|'.join(parts)}]"

    def with_budget(self, budget: Budget | None) -> Check:
        """This check with its label budget (kept only while it is inconclusive)."""
        return replace(self, budget=budget if self.state == "inconclusive" else None)


def derive_state(kind: str, figure: float | None, threshold: float | None,
                 ci: Sequence[float | None] | None = None, n: int | None = None,
                 min_n: int | None = None) -> State:
    """The state of a check of ``kind``, re-derived from what it records (a verdict is checked
    against this rule when read back):

    1. no figure or no threshold: ``"inconclusive"`` — the figure is undefined (the check's
       ``undefined`` says why, e.g. a κ on a slice holding one class), which is never a fail;
    2. ``n`` below the floor ``min_n``: ``"fail"`` when the interval lies wholly on the failing
       side of the threshold (the interval already accounts for the few items), else
       ``"inconclusive"`` (too few items to pass; more labels can decide it);
    3. ``point>=`` kinds: the point estimate decides, pass when figure >= threshold, else fail;
    4. ``ci>=`` kinds: pass when low >= threshold, fail when high < threshold, else inconclusive;
    5. ``ci<=`` kinds: pass when high <= threshold, fail when low > threshold, else inconclusive.

    A ``ci`` kind without an interval falls back to the point estimate, except the probes'
    (a probe row without an interval, e.g. a zero-width one, is ``"inconclusive"``).
    """
    rule = RULES[kind]
    if figure is None or threshold is None:
        return "inconclusive"
    missing = ci is None or ci[0] is None or ci[1] is None
    if min_n is not None and n is not None and n < min_n:
        if missing or ci is None:
            return "inconclusive"
        lo, hi = float(ci[0]), float(ci[1])  # type: ignore[arg-type]
        wholly_failing = lo > threshold if rule == "ci<=" else hi < threshold
        return "fail" if wholly_failing else "inconclusive"
    if rule != "point>=" and missing and kind in NEEDS_INTERVAL:
        return "inconclusive"
    if rule == "point>=" or ci is None or ci[0] is None or ci[1] is None:
        ok = figure >= threshold if rule != "ci<=" else figure <= threshold
        return "pass" if ok else "fail"
    lo, hi = float(ci[0]), float(ci[1])
    if rule == "ci>=":
        return "pass" if lo >= threshold else "fail" if hi < threshold else "inconclusive"
    return "pass" if hi <= threshold else "fail" if lo > threshold else "inconclusive"


def combine_states(states: Sequence[str]) -> State:
    """A judge's (or a verdict's) state from its checks' (judges'): fail if any fails, else
    inconclusive if any is inconclusive, else pass (also for none)."""
    if "fail" in states:
        return "fail"
    if "inconclusive" in states:
        return "inconclusive"
    return "pass"


def new_check(kind: str, judge: str, figure: Any, threshold: Any, n: int | None, detail: str, *,
              interval: Interval | None = None, floor: str = "min_items", **more: Any) -> Check:
    """A check as the gate makes one: a zero-width interval is dropped and the detail says the
    figure has no spread, with its n and the rule (the point decides; the probes' kinds, which an
    interval alone decides, keep theirs), an undefined figure says so with its reason, and a detail
    below the floor ``min_n`` (in ``more``) says so first (``SMALL SAMPLE: n=12 is below min_items 30``; ``floor`` names the policy key, a
    fidelity check's with its unit: ``"conversations is below min_units"``)."""
    if interval is not None and interval.low == interval.high and kind not in NEEDS_INTERVAL:
        # no spread (the same value in every resample): a zero-width interval is no interval
        detail = (f"{detail}; no spread: the same value in every resample on n={n}, so no interval — the point "
                  f"decides ({RULES[kind].replace('ci', 'point')} the threshold)")
        interval = None
    ch = Check(kind, judge, figure, threshold, n, detail, interval=interval, **more)
    if ch.figure is None and ch.undefined is not None:
        why = "" if ch.undefined in detail else f" ({ch.undefined})"
        ch = replace(ch, detail=f"{detail} — undefined{why}: not a fail")
    if ch.small:
        words = floor if " is below " in floor else f"is below {floor}"
        side = "below" if ch.rule != "ci<=" else "above"
        but = f", but its interval lies wholly {side} {ch.threshold:g}" if ch.state == "fail" and ch.threshold is not None else ""
        ch = replace(ch, detail=f"SMALL SAMPLE: n={n} {words} {ch.min_n}{but}; {ch.detail}")
    return ch


def interval_of(ci: Sequence[float | None] | None, method: str, level: float = 0.95) -> Interval | None:
    """An :class:`Interval` from ``[low, high]`` (None when either end is missing)."""
    if ci is None or ci[0] is None or ci[1] is None:
        return None
    return Interval(float(ci[0]), float(ci[1]), method, level)


# ----------------------------------------------------------------------------- the file
def budget_json(b: Budget | None) -> dict[str, Any] | None:
    """A budget (of a check or a judge) as a verdict records it."""
    return None if b is None else {"items": b.items, "slices": dict(b.slices), "sentence": b.sentence,
                                   "need": b.need, "unit": b.unit}


def check_json(ch: Check) -> dict[str, Any]:
    """The one writer: a check as a verdict records it (the display name, the state and passed
    are written for readers and checked on reading)."""
    iv = ch.interval
    return {"name": ch.name, "kind": ch.kind, "rule": ch.rule, "metric": ch.metric,
            "subject": {k: v for k, v in asdict(ch.subject).items() if v is not None},
            "state": ch.state, "passed": ch.state == "pass", "figure": ch.figure, "threshold": ch.threshold,
            "ci": None if iv is None else [iv.low, iv.high], "ci_method": None if iv is None else iv.method,
            "ci_level": None if iv is None else iv.level, "n": ch.n, "unit": ch.unit, "min_n": ch.min_n,
            "undefined": ch.undefined, "detail": ch.detail, "budget": budget_json(ch.budget)}


class CheckProblem(ValueError):
    """Why a recorded check is not one the gate wrote (a phrase, without the place); ``key`` the
    key of the check it is about, when one is."""

    def __init__(self, phrase: str, key: str | None = None) -> None:
        super().__init__(phrase)
        self.key = key


_SUBJECT = {f.name for f in fields(Subject)}
#: the fields of a fidelity figure's cell, in the order the analysis names them
_FIDELITY_CELL = ("criterion", "model", "tier", "turn")


def _read_budget(b: dict[str, Any] | None) -> Budget | None:
    """A recorded budget (already checked for shape by the verdict's schema)."""
    if b is None:
        return None
    return Budget(b["items"], b["sentence"], dict(b["slices"]), b.get("need"), b.get("unit"))


def read_check(data: Any, judge: str) -> Check:
    """The one reader: a recorded check as a :class:`Check` of ``judge``, strictly (the shape of
    :class:`judgekit.verdict.schema.CheckV4`: strict types, no unknown or missing keys). Raises
    :class:`CheckProblem` when it is not that shape or its recorded name, rule or interval is not
    what its fields give (its state is compared by the verdict's reader, which says why)."""
    from pydantic import ValidationError

    from judgekit.core.config import format_loc
    from judgekit.verdict.schema import CheckV4

    try:
        CheckV4.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CheckProblem(f"its {format_loc(err['loc'])} is not valid ({str(err['msg']).lower()})") from None
    kind = data["kind"]
    if kind not in RULES:
        raise CheckProblem(f"its kind {kind!r} is not a check `judgekit gate` makes")
    if data["rule"] != RULES[kind]:
        raise CheckProblem(f"its rule {data['rule']!r} is not the rule of {kind} ({RULES[kind]})")
    if set(data["subject"]) - _SUBJECT:
        raise CheckProblem(f"its subject has the unknown key {sorted(set(data['subject']) - _SUBJECT)[0]!r}")
    ci = data["ci"]
    if (ci is None) is not (data["ci_method"] is None) or (ci is None) is not (data["ci_level"] is None):
        raise CheckProblem("its interval has bounds without a method and level, or the other way round")
    if ci is not None and not ci[0] <= ci[1]:
        raise CheckProblem(f"[{ci[0]:g}, {ci[1]:g}] is not an interval (its low end is above its high end)", "ci")
    ch = Check(kind, judge, data["figure"], data["threshold"], data["n"], data["detail"],
               subject=Subject(**data["subject"]),
               interval=None if ci is None else Interval(ci[0], ci[1], data["ci_method"], data["ci_level"]),
               metric=data["metric"], unit=data["unit"], min_n=data["min_n"], undefined=data["undefined"],
               budget=_read_budget(data["budget"]))
    if ch.name != data["name"]:
        raise CheckProblem(f"its name is not {ch.name!r}, the name its kind and subject give")
    problem = _subject_problem(ch)
    if problem is not None:
        raise CheckProblem(problem, "subject")
    return ch


_SLICE = frozenset({"by", "key"})
#: the subject fields each kind may set (every other field stays null)
_SUBJECT_OF: dict[str, frozenset[str]] = {
    "analysis_fidelity": frozenset({"analysis", "figure", "cell", *_FIDELITY_CELL}),
    "min_class_recall": frozenset({"label"}),
    "per_slice": _SLICE, "max_abs_bias_slice": _SLICE,
    "max_covariate_effect": _SLICE | {"column", "target"}, "max_flip_rate": _SLICE | {"variant"},
    "max_self_preference": _SLICE, "min_stability": _SLICE, "max_label_drift": _SLICE,
}


def fidelity_cell(figure: str, subject: Subject) -> str:
    """A fidelity figure's cell as the analysis names it: ``drift(model=m, turn=6)`` — the figure
    and the set cell fields (:data:`_FIDELITY_CELL`, in that order)."""
    where = ", ".join(f"{k}={getattr(subject, k)}" for k in _FIDELITY_CELL if getattr(subject, k) is not None)
    return f"{figure}({where})" if where else figure


def _subject_problem(ch: Check) -> str | None:
    """Why a read check's subject is not one the gate writes for its kind, or None: only the fields
    of its kind are set, and a fidelity check's cell is the one its figure and cell fields give (the
    certificates read the figure, model and criterion: none may disagree with the cell)."""
    s = ch.subject
    extra = [f.name for f in fields(Subject) if getattr(s, f.name) is not None
             and f.name not in _SUBJECT_OF.get(ch.kind, frozenset())]
    if extra:
        return f"its subject sets {extra[0]!r}, which a {ch.kind} check does not have"
    if ch.kind != "analysis_fidelity":
        return None
    if s.analysis is None or s.figure is None:
        return "its subject names no analysis or figure"
    if s.cell != fidelity_cell(s.figure, s):
        return f"its cell {s.cell!r} is not {fidelity_cell(s.figure, s)!r}, what its figure and cell fields give"
    return None


def judge_checks(entry: dict[str, Any]) -> list[Check]:
    """The checks of a verdict's judge entry (read by :func:`read_check`)."""
    return [read_check(c, entry["judge"]) for c in entry["checks"]]


#: a derived rater's id starts with this (``panel:majority``): its labels are recomputed from its
#: panel's judges' ratings, and it makes no calls of its own
DERIVED = "panel:"

#: the kinds that count a rater's own calls, and so cannot apply to a derived rater
CALL_KINDS = ("max_abstention_rate", "max_error_rate")


def not_applied(policy: Policy, judge: str) -> list[str]:
    """The policy's checks that cannot apply to ``judge``, one sentence each: a derived rater
    (``panel:<method>``) makes no calls of its own, so it has no abstention or error rate. The gate
    records these sentences and the verdict reader requires exactly them."""
    if not judge.startswith(DERIVED):
        return []
    c = policy.checks
    return [f"{kind}: not applied — {judge} is a derived rater (recomputed from its panel's judges' "
            "ratings) and makes no calls of its own; the rate is its judges' (gate them by name)"
            for kind, thr in (("max_abstention_rate", c.max_abstention_rate), ("max_error_rate", c.max_error_rate))
            if thr is not None]
