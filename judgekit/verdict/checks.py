"""The checks of a verdict: their kinds, the rule that gives each one's state, and the record
of one check (:func:`make_check`). The gate writes checks, the probes decide theirs with the
same rule, and a verdict read back is checked against it (:mod:`judgekit.verdict.read`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from judgekit.verdict.policy import Policy
from judgekit.verdict.schema import State

# ----------------------------------------------------------------------------- checks
METRICS = "kappa|weighted_kappa|alpha|ac1|percent_agreement"


#: check name pattern → (kind, rule); the rule is fixed by the kind, never read from the file:
#: ``point>=`` figure (the point estimate) >= threshold; ``ci>=`` the CI's low end >= threshold
#: passes, its high end below the threshold fails; ``ci<=`` the CI's high end <= threshold
#: passes, its low end above the threshold fails.
KINDS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"min_items"), "min_items", "point>="),
    (re.compile(rf"min_({METRICS})_lower_bound"), "min_lower_bound", "ci>="),
    (re.compile(rf"min_({METRICS})"), "min_value", "point>="),
    (re.compile(r"max_abstention_rate"), "max_abstention_rate", "ci<="),
    (re.compile(r"max_error_rate"), "max_error_rate", "ci<="),
    (re.compile(r"min_recall\[(.+)\]", re.DOTALL), "min_class_recall", "ci>="),
    (re.compile(r"per_slice\[(.+)\]", re.DOTALL), "per_slice", "point>="),
    (re.compile(r"within_human_noise"), "within_human_noise", "ci>="),
    (re.compile(r"min_coverage"), "min_coverage", "ci>="),
    (re.compile(r"max_abs_bias"), "max_abs_bias", "ci<="),
    (re.compile(r"max_abs_bias\[(.+)\]", re.DOTALL), "max_abs_bias_slice", "ci<="),
    (re.compile(r"alt_test"), "alt_test", "point>="),
    # the probes: intervals at each slice's Holm level (judgekit.probes.bands)
    (re.compile(r"max_covariate_effect\[(.+)\]", re.DOTALL), "max_covariate_effect", "ci<="),
    (re.compile(r"max_self_preference"), "max_self_preference", "ci<="),
    (re.compile(r"min_stability(\[.+\])?", re.DOTALL), "min_stability", "ci>="),
    (re.compile(r"max_flip_rate\[(.+)\]", re.DOTALL), "max_flip_rate", "ci<="),
    (re.compile(r"max_label_drift(\[.+\])?", re.DOTALL), "max_label_drift", "ci<="),
    (re.compile(r"analysis_fidelity\[(.+)\]", re.DOTALL), "analysis_fidelity", "ci<="),
]


PROBES = ("max_covariate_effect", "max_self_preference", "min_stability", "max_flip_rate")


#: kinds a policy asks for once per judge (class recall and slices depend on the data)
ONCE = ("min_items", "min_value", "min_lower_bound", "max_abstention_rate", "max_error_rate",
         "within_human_noise", "min_coverage", "max_abs_bias", "alt_test", *PROBES)


#: kinds whose missing figure means "not enough data to run it" (inconclusive), not "fail"
UNDEFINED_INCONCLUSIVE = ("alt_test", *PROBES, "max_label_drift", "analysis_fidelity")


#: kinds that an interval decides and a point estimate alone never does (judgekit.probes.bands)
NEEDS_INTERVAL = (*PROBES, "max_label_drift")


def check_kind(name: str) -> tuple[str, str, str | None] | None:
    """``(kind, rule, metric)`` of a check name as :func:`judgekit.gate.run.evaluate` makes them
    (``rule`` is ``"point>="``, ``"ci>="`` or ``"ci<="``), or None for a name the gate never
    writes."""
    for pattern, kind, rule in KINDS:
        m = pattern.fullmatch(name)
        if m:
            metric = m.group(1) if kind in ("min_value", "min_lower_bound") else None
            return kind, rule, metric
    return None


_FIDELITY = re.compile(r"analysis_fidelity\[([a-z_]+):([A-Za-z_]+)(\(.*\))?\]", re.DOTALL)


def fidelity_figure(name: str) -> str | None:
    """The figure of an ``analysis_fidelity`` check name (``analysis_fidelity[calibration:drift(model=m,
    turn=6)]`` → ``"drift"``), or None for another check."""
    m = _FIDELITY.fullmatch(name)
    return m.group(2) if m else None


def min_n_of(kind: str, policy: Policy) -> int | None:
    """The small-sample floor a check of ``kind`` gets under ``policy``: below it the check is
    inconclusive whatever its figure. Overall checks use the policy's ``checks.min_items``,
    per-slice checks their own ``min_items``; class recall has its ``min_support`` (classes
    below it are not checked)."""
    c = policy.checks
    if kind == "per_slice":
        return c.per_slice.min_items if c.per_slice else None
    if kind == "max_abs_bias_slice":
        return c.max_abs_bias.min_items if c.max_abs_bias else None
    if kind == "min_class_recall":
        return None
    if kind in PROBES:
        return getattr(c, kind).min_items if getattr(c, kind) is not None else None
    if kind == "analysis_fidelity":
        return c.analysis_fidelity.min_units if c.analysis_fidelity else None
    return c.min_items


def derive_state(name: str, figure: float | None, threshold: float | None,
                 ci: Sequence[float | None] | None = None, n: int | None = None,
                 min_n: int | None = None) -> State:
    """The state of a check, re-derived from what it records (the verdict is checked against
    this rule when read back):

    1. ``n`` below the floor ``min_n`` (:func:`min_n_of`): ``"inconclusive"`` (too few items to
       decide; more labels can), whatever the figure;
    2. no figure or no threshold: ``"fail"`` (the figure is undefined), except for the alt-test,
       which is ``"inconclusive"`` when too few humans or units qualify;
    3. ``point>=`` kinds (``min_items``, ``min_<metric>`` = ``min_value``, ``per_slice``,
       ``alt_test``): the point estimate decides, pass when figure >= threshold, else fail;
    4. ``ci>=`` kinds (lower-bound, class recall, coverage, within-human-noise): pass when the
       whole interval clears the threshold (low >= threshold), fail when the whole interval
       misses it (high < threshold), inconclusive otherwise;
    5. ``ci<=`` kinds (abstention, error rate, absolute bias): pass when high <= threshold,
       fail when low > threshold, inconclusive otherwise.

    A ``ci`` kind without an interval falls back to the point estimate, except the probes'
    (a probe row without an interval, e.g. a zero-width one, is ``"inconclusive"``).
    """
    kind = check_kind(name)
    if kind is None:
        raise ValueError(f"unknown check {name!r}")
    rule = kind[1]
    if min_n is not None and n is not None and n < min_n:
        return "inconclusive"
    if figure is None or threshold is None:
        return "inconclusive" if kind[0] in UNDEFINED_INCONCLUSIVE else "fail"
    if rule != "point>=" and (ci is None or ci[0] is None or ci[1] is None) and kind[0] in NEEDS_INTERVAL:
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


def interval_named(detail: str) -> str | None:
    """The interval a check's detail names, as a label: ``"90% CI"`` from ``"[90% CI +0.01, …]"``,
    ``"90% confidence sequence"`` from ``"anytime-valid 90% confidence sequence"`` (fidelity checks,
    whose level is 1 − 2α), or None."""
    m = re.search(r"(\d+(?:\.\d+)?%) (CI|confidence sequence)\b", detail or "")
    return None if m is None else f"{m.group(1)} {m.group(2)}"


def make_check(name: str, figure: Any, threshold: Any, n: int | None, detail: str,
               ci: Sequence[float | None] | None = None, *, min_n: int | None = None,
               budget: dict[str, Any] | None = None) -> dict[str, Any]:
    """One check of a verdict: its state follows from what it records (:func:`derive_state`).
    ``min_n`` is the small-sample floor (:func:`min_n_of`); a check below it says so in its
    detail. ``budget`` (label budget, only for an inconclusive check) is added by the gate."""
    interval = None
    if ci is not None and ci[0] is not None and ci[1] is not None:
        interval = [float(ci[0]), float(ci[1])]
    state = derive_state(name, figure, threshold, interval, n, min_n)
    if min_n is not None and n is not None and n < min_n:
        detail = f"SMALL SAMPLE: n={n} is below min_items {min_n}; {detail}"
    return {"name": name, "state": state, "passed": state == "pass", "figure": figure,
            "threshold": threshold, "ci": interval, "n": n, "detail": detail,
            "budget": budget if state == "inconclusive" else None}
