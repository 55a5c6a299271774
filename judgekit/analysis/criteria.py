"""Experiment criteria: pre-registered pass/fail checks over rated data, per seed and pooled.

A criteria file (YAML) lists named checks; each is the rate of a label within a group of items,
compared to a threshold — the way safety write-ups report their pre-registered criteria::

    rater: judge-a            # default rater for every criterion (or --judge on the CLI)
    per: seed                 # default column to evaluate per value (and pooled)
    criteria:
      - name: non-teach persona leak rate
        rubric: knowledge_leak
        label: target_leak            # or a list: [target_leak, distractor]
        where: {persona: non-teach}   # item metadata; a list value means "any of"
        op: "<="
        threshold: 0.15
        require: pooled               # pooled (default) | each (every seed) | both
        min_n: 50                     # optional: fewer rated items than this is a FAIL

The rate is (items whose label is one of ``label``) / (rated items in the group); a sample judged
several times counts as the share of its ok trials with that label; abstentions and errors are
not in n. The pooled value is the rate over all items of the group; per-seed values are the rate
within each value of the ``per`` column. Unknown keys are errors (a typo is not a no-op).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.criteria_spec import (
    CriteriaFile as CriteriaFile,
)
from judgekit.analysis.criteria_spec import (
    Criterion as Criterion,
)
from judgekit.analysis.criteria_spec import (
    criterion_mask as criterion_mask,
)
from judgekit.analysis.criteria_spec import (
    criterion_rubric,
    matches,
)
from judgekit.analysis.criteria_spec import (
    load_criteria as load_criteria,
)
from judgekit.analysis.criteria_spec import (
    parse_criteria as parse_criteria,
)
from judgekit.analysis.frames import label_shares
from judgekit.analysis.intervals import wilson_interval
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.analysis.trust import TrustReport, check_trust
from judgekit.errors import JudgekitError

#: the columns of the per-seed table besides the per column, and the working column
_PER_TABLE_COLUMNS = ("criterion", "n", "value", "passed", "_hit")

_OPS: dict[str, Callable[[float, float], Any]] = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.isclose,
}


def evaluate_criteria(
    spec: CriteriaFile,
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    *,
    rater: str | None = None,
    verdicts: Sequence[Any] = (),
    judge_hashes: Mapping[str, str] | None = None,
    untrusted: bool = False,
    store: Any = None,
    source: str = "criteria",
) -> tuple[AnalysisResult, bool]:
    """Evaluate every criterion; returns (result, all passed).

    ``ratings``: long ratings (any rubrics and raters; each criterion picks its rubric and rater:
    the criterion's ``rater``, else the file's, else ``rater``). ``items``: ``item_id`` +
    metadata. Judge raters need a passing verdict per rubric (``verdicts``; matching ``store``, the
    store the ratings came from, when given), unless ``untrusted``. Tables: ``criteria`` (one row per criterion) and ``per_seed``.
    """
    items = items.copy()
    items["item_id"] = items["item_id"].astype(str)
    ratings = ratings.copy()
    ratings["item_id"] = ratings["item_id"].astype(str)
    rows: list[dict[str, Any]] = []
    seed_rows: list[dict[str, Any]] = []
    trust = TrustReport()
    for c in spec.criteria:
        rubric = criterion_rubric(c, source)
        who = c.rater or spec.rater or rater
        if who is None:
            raise JudgekitError(
                f"{source}: criterion {c.name!r} names no rater; add 'rater:' to the file or pass "
                "--judge RATER."
            )
        per = c.per if c.per is not None else spec.per
        r = ratings[(ratings["rubric"] == rubric.id) & (ratings["rater_id"].astype(str) == who)]
        if "rubric_hash" in r.columns:
            r = r[r["rubric_hash"] == rubric.hash]
        if r.empty:
            raise JudgekitError(
                f"{source}: criterion {c.name!r}: rater {who!r} has no ratings under {rubric.ref}; "
                "import or judge them first, or fix the rater/rubric."
            )
        trust = trust.merge(check_trust(r, rubric, verdicts, judge_hashes=judge_hashes,
                                        untrusted=untrusted, store=store))
        codes = [rubric.normalise(lab) or lab for lab in c.labels]
        shares = label_shares(r, rubric.codes)
        shares["_hit"] = shares[codes].sum(axis=1)
        for col in [*c.where, *([per] if per else [])]:
            if col not in items.columns:
                raise JudgekitError(
                    f"{source}: criterion {c.name!r} uses column {col!r}, which the items do not "
                    f"have; they have: {', '.join(map(str, items.columns[:15]))}."
                )
        if per in _PER_TABLE_COLUMNS:
            raise JudgekitError(
                f"{source}: criterion {c.name!r}: per column {per!r} has the name of a column "
                "the per-seed table adds, so the two would collide; use another column (or "
                "re-import the items with this one renamed)."
            )
        mask = pd.Series(True, index=items.index)
        for col, value in c.where.items():
            mask &= matches(items[col], value)
        chosen = items.loc[mask, list(dict.fromkeys(["item_id", *([per] if per else [])]))]
        df = chosen.merge(shares[["item_id", "_hit"]], on="item_id", how="inner")
        n = len(df)
        value = float(df["_hit"].mean()) if n else float("nan")
        lo, hi = wilson_interval(df["_hit"].sum(), n)
        pooled_ok = bool(n and _OPS[c.op](value, c.threshold))
        per_values: list[tuple[Any, int, float, bool]] = []
        if per:
            for key, grp in df.groupby(per, sort=True):
                v = float(grp["_hit"].mean())
                ok = bool(_OPS[c.op](v, c.threshold))
                per_values.append((key, len(grp), v, ok))
                seed_rows.append({"criterion": c.name, per: key, "n": len(grp), "value": v,
                                  "passed": ok})
        each_ok = bool(per_values) and all(p[3] for p in per_values)
        if c.require == "pooled":
            passed = pooled_ok
        elif c.require == "each":
            passed = each_ok
        else:
            passed = pooled_ok and each_ok
        reason = ""
        if n == 0:
            passed, reason = False, "no rated item matches"
        elif c.min_n is not None and n < c.min_n:
            passed, reason = False, f"n = {n} < min_n {c.min_n}"
        elif c.require != "pooled" and not per:
            passed, reason = False, f"require: {c.require} needs a 'per' column"
        rows.append({
            "criterion": c.name,
            "rubric": rubric.id,
            "rater": who,
            "label": ", ".join(codes),
            "where": ", ".join(f"{k}={v}" for k, v in c.where.items()) or "(all items)",
            "op": c.op,
            "threshold": c.threshold,
            "n": n,
            "value": value,
            "ci_low": float(lo),
            "ci_high": float(hi),
            "per": per or "",
            "per_values": "; ".join(f"{k}: {v:.3f} (n={m})" for k, m, v, _ in per_values),
            "require": c.require,
            "result": "PASS" if passed else "FAIL",
            "reason": reason,
        })
    table = pd.DataFrame(rows)
    all_passed = bool((table["result"] == "PASS").all())
    result = AnalysisResult(
        kind="criteria",
        title="Experiment criteria",
        meta={"rater": rater or spec.rater, "rubric": ", ".join(sorted(set(table["rubric"]))),
              "trust": trust.as_dict(), "passed": all_passed},
        definitions={
            "value": "share of rated items in the group whose label is one of the criterion's "
                     "labels (a sample judged several times counts as the share of its trials)",
            "pooled": "the rate over every matching item; CI: Wilson 95%",
            "per_values": "the rate within each value of the per column (e.g. each seed)",
            "require": "pooled: the pooled value must pass; each: every per value must pass; "
                       "both: both",
        },
        tables=[
            Table("criteria", "Pre-registered criteria", table),
            Table("per_seed", "Criteria per value of the per column",
                  pd.DataFrame(seed_rows)),
        ],
        notes=[] if all_passed else [
            f"{int((table['result'] == 'FAIL').sum())} of {len(table)} criteria FAIL."
        ],
    )
    if not trust.ok:
        result.stamp_untrusted(trust.reason())
    return result, all_passed
