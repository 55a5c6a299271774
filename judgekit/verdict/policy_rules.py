"""The rules a gate policy must follow to be able to trust a judge at all.

* **Something to pass**: ``checks`` has ``min_items`` and at least one check that compares the
  judge's labels with people's item by item (``min_value`` or ``min_lower_bound`` on the metric
  against the reference, ``alt_test``, ``within_human_noise``). A policy with only rates
  (abstention, errors, coverage), bias, or no checks at all would call a judge "TRUSTED" that
  agrees with nobody.
* **Each judge once**: a policy listing a judge twice would write a verdict that its own reader
  refuses.
* **A reference that is not a judge**: the reference a judge is scored against is a human or
  reference rater (or ``consensus``); a judge scored against a judge (or itself) proves nothing.

* **Thresholds a statistic can cross**: every threshold lies inside its statistic's range
  (:func:`range_problem`: κ, weighted κ, AC1 and α in [−1, 1], % agreement and rates in [0, 1],
  ``alt_test.min_winning_rate`` in (0, 1]), and none sits where the check can never fail (a
  ``min_value`` of −1 for κ, a ``max_error_rate`` of 1); ``min_items`` is at least
  :data:`MIN_ITEMS_FLOOR`; ``n_resamples`` at most :data:`MAX_RESAMPLES`.

The first three are rules of the policy alone (:func:`policy_problem`, applied by the
:class:`~judgekit.verdict.policy.Policy` model, so both ``judgekit gate`` and the verdict reader, which
rebuilds the policy a verdict records, apply them). The third needs the store
(:func:`check_reference`, applied by :func:`judgekit.verdict.policy.check_policy_raters` and, for the
reference a verdict records, by :func:`judgekit.verdict.log.check_against_store`).
"""

from __future__ import annotations

from typing import Any

from judgekit.errors import JudgekitError, excerpt

#: the fewest items a policy's ``checks.min_items`` may ask for (fewer cannot give an interval
#: that decides anything; a judge would pass on a handful of items)
MIN_ITEMS_FLOOR = 5
#: the most bootstrap resamples a policy may ask for (more only costs time: the Monte Carlo
#: error of a 95% bound is already below 0.005 at 10,000)
MAX_RESAMPLES = 100_000
#: the range of each agreement metric
METRIC_RANGES = {"kappa": (-1.0, 1.0), "weighted_kappa": (-1.0, 1.0), "alpha": (-1.0, 1.0),
                 "ac1": (-1.0, 1.0), "percent_agreement": (0.0, 1.0)}

#: rater kinds that may be a reference (or a policy's ``humans``)
PEOPLE = ("human", "reference")


def _num(x: float) -> str:
    return f"{x:g}"


def _range_problem(key: str, thr: float | None, stat: str, lo: float, hi: float, *,
                   direction: str) -> str | None:
    """A threshold must lie in the statistic's range [lo, hi] and must not sit at the end where its
    check can never fail: the lowest value for a ``>=`` check, the highest for a ``<=`` one."""
    if thr is None:
        return None
    if thr < lo or thr > hi:
        return (f"{key} {_num(thr)} is outside the range [{_num(lo)}, {_num(hi)}] of {stat}; give a "
                "threshold inside it")
    end, word, side = (lo, "lowest", "above") if direction == ">=" else (hi, "highest", "below")
    if thr == end:
        return (f"{key} {_num(thr)} is the {word} {stat} can be, so the check can never fail; give a "
                f"threshold {side} {_num(end)}")
    return None


def _minimum(key: str, thr: float | None, stat: str, lo: float, hi: float) -> str | None:
    return _range_problem(key, thr, stat, lo, hi, direction=">=")


def _maximum(key: str, thr: float | None, stat: str, lo: float, hi: float) -> str | None:
    return _range_problem(key, thr, stat, lo, hi, direction="<=")


def range_problem(policy: Any) -> str | None:
    """The first threshold of ``policy`` outside its statistic's range, or where its check can
    never fail, as a phrase naming the key and the fix (module doc), or None."""
    c = policy.checks
    metric = c.metric
    lo, hi = METRIC_RANGES[metric]
    n_res = getattr(policy, "n_resamples", None)
    if n_res is not None and n_res > MAX_RESAMPLES:
        return (f"n_resamples {n_res:,} is more than {MAX_RESAMPLES:,}, which would only cost time "
                "(10,000 already gives bounds to about 0.005); give at most 100000")
    if c.min_items is not None and c.min_items < MIN_ITEMS_FLOOR:
        return (f"checks.min_items {c.min_items} is below {MIN_ITEMS_FLOOR}, so a judge would pass on a "
                f"handful of items; give at least {MIN_ITEMS_FLOOR}")
    cands = [
        _minimum("checks.min_value", c.min_value, metric, lo, hi),
        _minimum("checks.min_lower_bound", c.min_lower_bound, metric, lo, hi),
        _maximum("checks.max_abstention_rate", c.max_abstention_rate, "a rate", 0.0, 1.0),
        _maximum("checks.max_error_rate", c.max_error_rate, "a rate", 0.0, 1.0),
        _minimum("checks.min_coverage", c.min_coverage, "a share", 0.0, 1.0),
    ]
    if c.min_class_recall is not None:
        cands.append(_minimum("checks.min_class_recall.min", c.min_class_recall.min, "a recall", 0.0, 1.0))
    if c.per_slice is not None:
        cands.append(_minimum("checks.per_slice.min_value", c.per_slice.min_value, metric, lo, hi))
    if c.within_human_noise is not None:
        # the paired difference judge − humans of a metric in [lo, hi] lies in [lo − hi, hi − lo]
        cands.append(_maximum("checks.within_human_noise.margin", c.within_human_noise.margin,
                              f"the difference of two {metric} values", 0.0, hi - lo))
    if c.alt_test is not None:
        cands.append(_minimum("checks.alt_test.min_winning_rate", c.alt_test.min_winning_rate,
                              "a winning rate", 0.0, 1.0))
    return next((p for p in cands if p is not None), None)


#: check kinds a policy may name ``secondary`` (reported, not blocking a figure); the agreement
#: floor (min_items, min_value, min_lower_bound) and the figures themselves are always primary
SECONDARY_KINDS = ("max_abstention_rate", "max_error_rate", "min_class_recall", "per_slice", "within_human_noise",
                   "min_coverage", "max_abs_bias", "max_abs_bias_slice", "alt_test", "max_covariate_effect",
                   "max_self_preference", "min_stability", "max_flip_rate")


def secondary_problem(policy: Any) -> str | None:
    """Why the policy's ``secondary`` is not allowed (a phrase), or None."""
    names = list(getattr(policy, "secondary", None) or [])
    c = policy.checks
    figures = list(c.analysis_fidelity.chosen) if getattr(c, "analysis_fidelity", None) is not None else []
    for name in names:
        if name not in SECONDARY_KINDS and name not in figures:
            return (f"secondary names {excerpt(name)}, which is neither a check kind that may be secondary nor a "
                    f"figure of analysis_fidelity; use some of {', '.join([*SECONDARY_KINDS, *figures])} (the "
                    "agreement floor is always primary)")
    floor = [k for k, on in (("min_value", c.min_value is not None), ("min_lower_bound", c.min_lower_bound is not None),
                             ("alt_test", c.alt_test is not None),
                             ("within_human_noise", c.within_human_noise is not None)) if on]
    if floor and all(k in names for k in floor):
        return ("secondary names every agreement check, so a figure would be certified for a judge that agrees "
                "with nobody; keep one of them primary")
    return None


def policy_problem(policy: Any) -> str | None:
    """The first rule (module doc) ``policy`` breaks, as a phrase naming the key and the fix, or
    None."""
    seen: set[str] = set()
    for judge in policy.judges:
        if judge in seen:
            return f"judges lists {excerpt(judge)} twice; name each judge once"
        seen.add(judge)
    c = policy.checks
    if (c.min_value is None and c.min_lower_bound is None and getattr(c, "alt_test", None) is None
            and getattr(c, "within_human_noise", None) is None):
        return ("checks has no agreement check, so any judge would pass; add min_value or "
                "min_lower_bound (the least agreement with the reference a trusted judge needs), "
                "alt_test or within_human_noise")
    if c.min_items is None:
        return ("checks has no min_items, so a judge would pass on a handful of items; add "
                "min_items (the fewest items the judge and the reference must both rate)")
    return range_problem(policy) or secondary_problem(policy)


def validate_policy(policy: Any) -> Any:
    """``policy`` unchanged, or ValueError with :func:`policy_problem` (for a pydantic validator)."""
    problem = policy_problem(policy)
    if problem is not None:
        raise ValueError(problem)
    return policy


def reference_kinds(store: Any, rubric: Any) -> dict[str, str]:
    """rater id → rater kind of every rater with ratings under ``rubric`` in ``store``."""
    from judgekit.store import digests

    if digests.plain_store(store):
        return digests.rater_kinds(store, rubric)
    ratings = store.ratings(rubric=rubric)
    return dict(zip(ratings["rater_id"].astype(str), ratings["rater_kind"].astype(str), strict=True))


def reference_problem(ref: str | None, kinds: dict[str, str]) -> str | None:
    """Why ``ref`` cannot be a reference (a phrase), or None: it must be ``consensus``, None (the
    default) or a rater whose kind is human or reference. A rater without ratings is not judged
    here (the caller says that in its own words)."""
    if ref is None or ref == "consensus" or ref not in kinds or kinds[ref] in PEOPLE:
        return None
    return (f"reference {excerpt(ref)} is a {kinds[ref]} rater, not a human or reference rater "
            "(a judge scored against a judge, or against itself, proves nothing)")


def people(kinds: dict[str, str]) -> str:
    """The human and reference raters of ``kinds``, comma-separated ('none' when there are none)."""
    return ", ".join(sorted(r for r, k in kinds.items() if k in PEOPLE)) or "none"


def check_reference(policy: Any, policy_path: Any, store: Any, rubric: Any) -> None:
    """One sentence naming the policy file unless its ``reference`` may be one (see
    :func:`reference_problem`)."""
    if policy.reference in (None, "consensus"):
        return
    kinds = reference_kinds(store, rubric)
    problem = reference_problem(policy.reference, kinds)
    if problem is not None:
        raise JudgekitError(
            f"Policy file {policy_path}: {problem}; fix 'reference' (use one of {people(kinds)} "
            "or 'consensus')."
        )
