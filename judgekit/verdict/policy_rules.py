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

The first two are rules of the policy alone (:func:`policy_problem`, applied by the
:class:`~judgekit.verdict.policy.Policy` model, so both ``judgekit gate`` and the verdict reader, which
rebuilds the policy a verdict records, apply them). The third needs the store
(:func:`check_reference`, applied by :func:`judgekit.verdict.policy.check_policy_raters` and, for the
reference a verdict records, by :func:`judgekit.verdict.log.check_against_store`).
"""

from __future__ import annotations

from typing import Any

from judgekit.errors import JudgekitError, excerpt

#: rater kinds that may be a reference (or a policy's ``humans``)
PEOPLE = ("human", "reference")


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
    return None


def validate_policy(policy: Any) -> Any:
    """``policy`` unchanged, or ValueError with :func:`policy_problem` (for a pydantic validator)."""
    problem = policy_problem(policy)
    if problem is not None:
        raise ValueError(problem)
    return policy


def reference_kinds(store: Any, rubric: Any) -> dict[str, str]:
    """rater id → rater kind of every rater with ratings under ``rubric`` in ``store``."""
    from judgekit.store import digests as gate_sql

    if gate_sql.plain_store(store):
        return gate_sql.rater_kinds(store, rubric)
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
