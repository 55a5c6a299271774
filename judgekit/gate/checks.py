"""The gate's checks: a policy's checks applied to the figures of each judge (:func:`evaluate`),
one builder per family of checks, each making typed checks (:class:`judgekit.verdict.check.Check`)
with their label budgets (:mod:`judgekit.gate.budget`). Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from judgekit.errors import JudgekitError
from judgekit.gate.budget import (
    alt_budget,
    beyond_study,
    judge_budget,
    label_budget,
    rate_budget,
    undecidable_budget,
)
from judgekit.stats.intervals import abs_interval
from judgekit.verdict.check import (
    DERIVED,
    Budget,
    Check,
    Interval,
    Subject,
    combine_states,
    interval_of,
    new_check,
    not_applied,
)
from judgekit.verdict.numbers import num, signed
from judgekit.verdict.policy import Policy
from judgekit.verdict.read import finite
from judgekit.verdict.schema import State

if TYPE_CHECKING:
    from judgekit.agreement.report import AgreementReport
    from judgekit.gate.figures import GateReport

#: what :func:`evaluate` reads: the full agreement report or the gate's own (:mod:`judgekit.gate.figures`)
Report = Union["AgreementReport", "GateReport"]

_LOO = ("percent_agreement", "kappa", "weighted_kappa")
_KAPPA_NAME = {"kappa": "Cohen κ", "weighted_kappa": "quadratic-weighted Cohen κ", "percent_agreement": "% agreement"}


@dataclass
class JudgeResult:
    """One judge's checks; its state follows from them, and an inconclusive judge's budget."""

    judge: str
    checks: list[Check]
    #: one sentence per check of the policy that cannot apply to this judge (:func:`not_applied`)
    not_applied: list[str] = field(default_factory=list)

    @property
    def state(self) -> State:
        return combine_states([ch.state for ch in self.checks])

    @property
    def budget(self) -> Budget | None:
        return judge_budget(self.judge, self.checks) if self.state == "inconclusive" else None


@dataclass(frozen=True)
class _Judge:
    """What every builder reads for one judge: the policy, the report, the judge's overall
    figures ``j`` and its metric ``m``, its own calls (``own``) and the items it rated that no
    human has labelled yet (``spare``: the most a budget can ask for)."""

    policy: Policy
    report: Any
    judge: str
    j: dict[str, Any]
    m: dict[str, Any]
    own: dict[str, int] | None
    spare: int | None

    @property
    def level(self) -> float:
        return float(self.report.data["confidence"])

    def boot(self, fig: dict[str, Any]) -> Interval | None:
        """The bootstrap interval of an agreement figure (``low``, ``high``) at the report's level."""
        return interval_of((fig.get("low"), fig.get("high")), "bootstrap", self.level)

    def check(self, kind: str, figure: Any, threshold: Any, n: int | None, detail: str, **more: Any) -> Check:
        more.setdefault("min_n", self.policy.checks.min_items)
        return new_check(kind, self.judge, figure, threshold, n, detail, **more)

    def budgeted(self, ch: Check, *, point: Any = None, available: Any = "spare") -> Check:
        """``ch`` with its label budget when it is inconclusive."""
        if ch.state != "inconclusive":
            return ch
        room = self.spare if available == "spare" else available
        return ch.with_budget(label_budget(ch, point=point, seed=self.policy.seed, available=room))


def _wilson(k: float, n: int) -> Interval | None:
    """Wilson 95% interval of a rate ``k / n`` (None when ``n`` is 0)."""
    from judgekit.stats.intervals import wilson_interval

    if not n:
        return None
    lo, hi = wilson_interval(k, n)
    return interval_of((finite(lo), finite(hi)), "wilson")


def _bias_figure(bias: dict[str, Any], level: float) -> tuple[float | None, Interval | None, str]:
    """The max_abs_bias figure of one judge and slice: |bias| (point), the interval of |bias|
    (the largest over labels for nominal rubrics) and a detail naming the figure."""
    top = bias["max_abs"]
    if top["value"] is None:
        return None, None, top.get("undefined") or "no bias figure"
    if top["of"] == "mean_diff":
        figs = {"": bias["mean_diff"]}
        what = f"mean signed difference judge − reference on the rubric's values {signed(top['signed'])}"
    else:
        figs = bias["share_diff"]
        what = (f"largest difference of a label's share judge − reference: {top['code']} "
                f"{signed(top['signed'])}")
    bounds = [abs_interval(f["low"], f["high"]) for f in figs.values()
              if f.get("low") is not None and f.get("high") is not None]
    if not bounds:
        return top["value"], None, what
    ci = (finite(max(b[0] for b in bounds)), finite(max(b[1] for b in bounds)))
    return top["value"], interval_of(ci, "bootstrap", level), what


def _fmt(x: Any) -> str:
    return num(x)


# ----------------------------------------------------------------------------- the builders
def _agreement(x: _Judge) -> list[Check]:
    c, m, n, metric = x.policy.checks, x.m, x.m["n"], x.policy.checks.metric
    out = []
    if c.min_items is not None:
        out.append(x.budgeted(x.check("min_items", n, c.min_items, n,
                                      f"{n} items rated by {x.judge} and the reference")))
    if c.min_value is not None:
        out.append(x.budgeted(x.check(
            "min_value", m["value"], c.min_value, n,
            m["undefined"] or f"{metric} against the reference (the point estimate decides)",
            interval=x.boot(m), metric=metric, undefined=m["undefined"])))
    if c.min_lower_bound is not None:
        conf = int(x.level * 100)
        out.append(x.budgeted(x.check(
            "min_lower_bound", m["low"], c.min_lower_bound, n,
            m["undefined"] or f"lower end of the {conf}% CI of {metric} (point estimate {_fmt(m['value'])})",
            interval=x.boot(m), metric=metric, undefined=m["undefined"]), point=m["value"]))
    return out


#: the prefix of a panel's derived raters (``panel:majority``), recomputed from its judges' ratings
def _rates(x: _Judge) -> list[Check]:
    """Abstention and error rates, on the judge's own calls when known (every item it rated);
    none for a derived rater (:func:`not_applied`)."""
    c, out = x.policy.checks, []
    if x.judge.startswith(DERIVED):  # a derived rater makes no calls (not_applied)
        return []
    for key, thr, word, kind in (("abstain", c.max_abstention_rate, "abstained", "max_abstention_rate"),
                                 ("error", c.max_error_rate, "failed", "max_error_rate")):
        if thr is None:
            continue
        if x.own is not None:
            k, n = x.own[key], x.own["calls"]
            where = f"{k} of {n} calls of {x.judge} {word} (all items it rated, human-labelled or not)"
        else:
            k, n = x.j[f"n_{key}"], x.j["n_items"]
            where = f"{k} of {n} items {word}"
        ch = x.check(kind, (k / n) if n else 0.0, thr, n, where, interval=_wilson(k, n),
                     unit=f"items judged by {x.judge} (no human label needed)")
        if ch.state == "inconclusive":
            ch = ch.with_budget(rate_budget(ch, k=k, unjudged=x.own["unjudged"] if x.own else 1,
                                            seed=x.policy.seed))
        out.append(ch)
    return out


def _coverage(x: _Judge) -> list[Check]:
    thr = x.policy.checks.min_coverage
    if thr is None:
        return []
    cov = x.j["coverage"]
    share = cov["share"]
    return [x.budgeted(x.check(
        "min_coverage", share["value"], thr, cov["in_scope"],
        f"rated {cov['rated']} of {cov['in_scope']} in-scope items (abstained {cov['abstained']}, "
        f"errored {cov['errored']}, not attempted {cov['not_attempted']})",
        interval=interval_of((share.get("low"), share.get("high")), "wilson"),
        unit=f"in-scope items judged by {x.judge} (no human label needed)"),
        # coverage is about the judge's calls: its budget asks for items judged, never human labels
        available=None if x.own is None else x.own["unjudged"])]


def _recall(x: _Judge) -> list[Check]:
    spec = x.policy.checks.min_class_recall
    if spec is None:
        return []
    cm = x.j["vs_reference"]["confusion"]
    total = sum(cm["support"].values())
    out = []
    for i, label in enumerate(cm["labels"]):
        support = cm["support"][label]
        if support < spec.min_support:
            continue
        ch = x.budgeted(x.check(
            "min_class_recall", cm["recall"][label], spec.min, support,
            f"share of the {support} reference '{label}' items the judge also calls '{label}'",
            interval=_wilson(cm["matrix"][i][i], support), min_n=None, subject=Subject(label=label)))
        out.append(_recall_in_items(x, ch, label, support, total))
    return out


def _recall_in_items(x: _Judge, ch: Check, label: str, support: int, total: int) -> Check:
    """A class-recall budget counts items with that reference label: said in human-rated items
    at the label's current share."""
    b = ch.budget
    if b is None or b.items is None or total <= support:
        return ch
    more = math.ceil(b.items * total / support)
    if x.spare is not None and more > x.spare:
        return ch.with_budget(beyond_study(ch.name, more, "human-rated items", x.spare, (
            f"it needs about {b.items:,} more items with the reference label '{label}', which is {support} of "
            f"{total} labelled items")))
    unit = f"items with the reference label '{label}'"
    return ch.with_budget(Budget(more, (
        f"{ch.name}: about {b.items} more {unit} (about {more} more human-rated items at its current share "
        f"{support} of {total}) would likely decide it (CI half-width ∝ 1/√n, confirmed by one simulation)."),
        {}, b.items, unit))


def _slices(report: Any, judge: str) -> list[dict[str, Any]]:
    return [s for s in report.data["slices"] if s["by"] is not None and judge in s["judges"]]


def _per_slice(x: _Judge) -> list[Check]:
    spec, metric = x.policy.checks.per_slice, x.policy.checks.metric
    if spec is None:
        return []
    out = []
    for s in _slices(x.report, x.judge):
        ms = s["judges"][x.judge]["vs_reference"][metric]
        out.append(x.budgeted(x.check(
            "per_slice", ms["value"], spec.min_value, ms["n"],
            ms["undefined"] or f"{metric} in slice {s['by']}={s['key']} (the point estimate decides)",
            interval=x.boot(ms), min_n=spec.min_items, subject=Subject(by=s["by"], key=str(s["key"])),
            undefined=ms["undefined"] or ("undefined" if ms["value"] is None else None)), available=None))
    return out


def _bias(x: _Judge) -> list[Check]:
    b = x.policy.checks.max_abs_bias
    if b is None:
        return []
    fv, iv, what = _bias_figure(x.j["bias"], x.level)
    out = [x.budgeted(x.check("max_abs_bias", fv, b.max, x.j["bias"]["n"], f"|bias| against the reference: {what}",
                              interval=iv))]
    for s in (_slices(x.report, x.judge) if b.per_slice else []):
        sb = s["judges"][x.judge]["bias"]
        fv, iv, what = _bias_figure(sb, x.level)
        out.append(x.budgeted(x.check(
            "max_abs_bias_slice", fv, b.max, sb["n"], f"|bias| in slice {s['by']}={s['key']}: {what}",
            interval=iv, min_n=b.min_items, subject=Subject(by=s["by"], key=str(s["key"])))))
    return out


def _noise(x: _Judge) -> list[Check]:
    """The judge against the leave-one-out consensus, beside each human against the same."""
    spec, metric = x.policy.checks.within_human_noise, x.policy.checks.metric
    if spec is None:
        return []
    lm = metric if metric in _LOO else "kappa"
    overall = x.report.slice(None, "all")
    loo = overall["human_ceiling"].get("loo") or {}
    mean = x.j.get("vs_loo", {}).get("mean", {})
    diff = (mean.get("difference") or {}).get(lm) or {}
    thr = round(-spec.margin, 6) + 0.0  # a margin of 0 is a threshold of 0, never -0.0
    unit = "items rated by two or more humans"
    if diff.get("value") is None:
        why = (loo.get("undefined") or diff.get("undefined")
               or "no leave-one-out comparison (need two humans on the same items)")
        # below checks.min_items it is inconclusive, as every overall check (derive_state)
        ch = x.budgeted(x.check("within_human_noise", None, thr, mean.get("n", 0),
                                f"no like-for-like human comparison: {why}", unit=unit, undefined=why),
                        available=None)
        n_hum = len(x.report.data.get("ceiling_raters") or x.report.data.get("humans") or [])
        if ch.state == "inconclusive" and n_hum < 2:
            ch = ch.with_budget(undecidable_budget("within_human_noise", (
                f"only a second annotator can decide it: it compares {x.judge} and each human with the "
                f"others' consensus on the same items, and {n_hum} human rated them; more items rated by "
                "one human do not help — have a second human rate some of the same items")))
        return [ch]
    jv = mean[lm]["value"]
    hv = mean["human_same_items"][lm]["value"]
    note = "" if lm == metric else f" ({metric} has no leave-one-out form; {lm} is used)"
    return [x.budgeted(x.check(
        "within_human_noise", diff["value"], thr, mean["n"],
        f"{_KAPPA_NAME[lm]} of the judge vs the leave-one-out consensus {_fmt(jv)} against each human vs "
        f"the same consensus {_fmt(hv)} on the same items (mean over {mean['n_humans']} humans): paired "
        f"difference {_fmt(diff['value'])}, must stay above −margin {spec.margin}{note}",
        interval=x.boot(diff), unit=unit), available=None if x.own is None else max(x.own["items"] - mean["n"], 0))]


def _alt(x: _Judge, res: Any) -> list[Check]:
    at = x.policy.checks.alt_test
    if at is None:
        return []
    if res is None or res.undefined_reason is not None:
        why = res.undefined_reason if res is not None else "not computed"
        ch = x.check("alt_test", None, at.min_winning_rate, res.n_units if res else 0,
                     f"alternative annotator test (ε={at.epsilon}, q={at.q}) cannot run: {why}")
        return [ch.with_budget(alt_budget(res, at.min_units_per_human))]
    won = sum(h.rejected for h in res.per_human)
    return [x.budgeted(x.check(
        "alt_test", finite(res.winning_rate), at.min_winning_rate, res.n_units,
        f"alternative annotator test (ε={at.epsilon}, q={at.q}): the judge wins against {won} of "
        f"{res.n_humans} humans, winning rate ω={_fmt(finite(res.winning_rate))}, advantage "
        f"probability ρ={_fmt(finite(res.advantage_probability))} (the test decides, no CI)"))]


def _probes(x: _Judge, checks: list[Check]) -> list[Check]:
    """The probe checks (:func:`judgekit.gate.probe_checks.gate_checks`), each open one with a budget."""
    return [ch if ch.budget is not None else x.budgeted(ch, available=None) for ch in checks]


def evaluate(policy: Policy, report: Report, alt: dict[str, Any] | None = None,
             probes: dict[str, list[Check]] | None = None, fidelity: dict[str, Any] | None = None,
             calls: dict[str, dict[str, int]] | None = None) -> list[JudgeResult]:
    """Apply the policy's checks to each judge in the report. Pure: no I/O.

    Each check's state follows by :func:`judgekit.verdict.check.derive_state`; an inconclusive
    check and judge carry a label budget (:mod:`judgekit.gate.budget`). ``alt`` maps each judge to
    its alt-test result; ``probes`` to its probe checks (:func:`judgekit.gate.probe_checks.gate_checks`);
    ``fidelity`` to its figure pairs (:func:`judgekit.gate.fidelity.fidelity_results`); ``calls`` to
    its own calls (:func:`judgekit.gate.calls.own_calls`): abstention and error rates are then
    decided on every item the judge rated, and label budgets never exceed the items it rated.
    """
    c = policy.checks
    overall = report.slice(None, "all")
    out = []
    for judge in policy.judges:
        j = overall["judges"][judge]
        m = j["vs_reference"].get(c.metric)
        if m is None:
            raise JudgekitError(
                f"Policy checks.metric {c.metric!r} does not apply to a {report.data['level']} rubric; "
                "use kappa, alpha, ac1 or percent_agreement."
            )
        own = (calls or {}).get(judge)
        x = _Judge(policy, report, judge, j, m, own, None if own is None else max(own["items"] - m["n"], 0))
        checks = [*_agreement(x), *_rates(x), *_coverage(x), *_recall(x), *_per_slice(x), *_bias(x),
                  *_noise(x), *_alt(x, (alt or {}).get(judge)), *_probes(x, (probes or {}).get(judge, []))]
        if c.analysis_fidelity is not None:
            from judgekit.gate.fidelity import fidelity_checks

            checks += fidelity_checks(c.analysis_fidelity, judge, (fidelity or {}).get(judge, []), seed=policy.seed)
        out.append(JudgeResult(judge, checks, not_applied(policy, judge)))
    return out
