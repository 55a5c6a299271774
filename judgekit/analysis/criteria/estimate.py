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
      - name: arms differ little      # two conditions: |rate(arm=A) − rate(arm=B)| <= 0.10
        rubric: knowledge_leak
        label: target_leak
        compare: {column: arm, a: A, b: B}
        op: "<="
        threshold: 0.10
      - name: leak rate, all items    # no op/threshold: a descriptive row (reported, not judged)
        rubric: knowledge_leak
        label: target_leak

The rate is (items whose label is one of ``label``) / (rated items in the group); a sample judged
several times counts as the share of its ok trials with that label; abstentions and errors are
not in n. The pooled value is the rate over all items of the group; per-seed values are the rate
within each value of the ``per`` column, and their mean (``per_mean``, with a
95% interval over the per values bounded to [0, 1]: seeds are the replicates of an experiment) is reported beside the pooled rate. A
``compare`` criterion's value is |rate(a) − rate(b)|; its interval is the interval of |d| from
Newcombe's hybrid score interval of d = rate(a) − rate(b) (Newcombe 1998, method 10), which,
like Wilson's, treats the items as independent (the row's ``note`` says so: with several turns
or samples per conversation or prompt it is too narrow). A ``compare`` level no item has is an
error, not a FAIL. A criterion without ``op`` and ``threshold`` is ``DESCRIPTIVE``: reported with n and CI, never
counted as passing or failing. Unknown keys are errors (a typo is not a no-op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.criteria.certified import apply_criteria
from judgekit.analysis.criteria.spec import (
    CriteriaFile,
    Criterion,
    criterion_digest,
    criterion_mask,
    criterion_rubric,
    matches,
)
from judgekit.analysis.frames import label_shares
from judgekit.analysis.result import AnalysisResult, Table
from judgekit.analysis.trust import TrustContext, TrustReport
from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Rubric
from judgekit.stats.bounded import bounded_mean_interval
from judgekit.stats.intervals import abs_interval, wilson_interval
from judgekit.stats.ppi_core import norm_zero

#: the note of every ``compare`` row: what its interval assumes
NEWCOMBE_NOTE = ("Newcombe's interval treats the items as independent; turns or samples of one "
                 "conversation or prompt are not, so on such items it is too narrow")

#: the columns of the per-seed table besides the per column, and the working column
_PER_TABLE_COLUMNS = ("criterion", "n", "value", "ci_low", "ci_high", "passed", "_hit")

_OPS: dict[str, Callable[[float, float], Any]] = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.isclose,
}


def newcombe_difference(k1: float, n1: int, k2: float, n2: int) -> tuple[float, float, float]:
    """d = k1/n1 − k2/n2 and Newcombe's hybrid score 95% interval (method 10 of Newcombe 1998,
    Stat. Med. 17:873–890): with Wilson intervals (l_i, u_i) of each rate,
    L = d − √((p1 − l1)² + (u2 − p2)²), U = d + √((u1 − p1)² + (p2 − l2)²)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = (float(x) for x in wilson_interval(k1, n1))
    l2, u2 = (float(x) for x in wilson_interval(k2, n2))
    d = p1 - p2
    return d, d - float(np.hypot(p1 - l1, u2 - p2)), d + float(np.hypot(u1 - p1, p2 - l2))


def _figure(df: pd.DataFrame, c: Criterion) -> dict[str, Any]:
    """The criterion's figure on a group of items (``_hit`` per item): n, value, its interval,
    and for ``compare`` each condition's rate and n and the signed difference."""
    if c.compare is None:
        n = len(df)
        lo, hi = wilson_interval(df["_hit"].sum(), n)
        return {"n": n, "value": float(df["_hit"].mean()) if n else float("nan"),
                "ci_low": float(lo), "ci_high": float(hi)}
    col = df[c.compare.column]
    a, b = df[matches(col, c.compare.a)], df[matches(col, c.compare.b)]
    out: dict[str, Any] = {"n": len(a) + len(b), "rate_a": float(a["_hit"].mean()) if len(a) else float("nan"),
                           "n_a": len(a), "rate_b": float(b["_hit"].mean()) if len(b) else float("nan"),
                           "n_b": len(b), "difference": float("nan"), "value": float("nan"),
                           "ci_low": float("nan"), "ci_high": float("nan")}
    if len(a) and len(b):
        d, dlo, dhi = newcombe_difference(float(a["_hit"].sum()), len(a), float(b["_hit"].sum()), len(b))
        alo, ahi = abs_interval(dlo, dhi)
        out.update(difference=d, value=abs(d), ci_low=alo, ci_high=ahi)
    return out


def _check_levels(c: Criterion, items: pd.DataFrame, source: str) -> None:
    """One sentence naming ``source`` and the criterion when a ``compare`` level (``a`` or
    ``b``) is a value no item has in the compare column (a typo would otherwise be a FAIL)."""
    assert c.compare is not None
    col = items[c.compare.column]
    for side, level in (("a", c.compare.a), ("b", c.compare.b)):
        if not matches(col, level).any():
            seen = [excerpt(str(v)) for v in pd.unique(col.dropna())[:10]]
            raise JudgekitError(
                f"{source}: criterion {excerpt(c.name)}: compare {side}: {excerpt(level)} is not "
                f"a value of {excerpt(c.compare.column)} in any item (values: "
                f"{', '.join(seen) or 'none'}); fix 'compare'."
            )


def _mean_over(values: list[float]) -> tuple[float, float, float]:
    """Mean of the per values (rates, or |differences|, all in [0, 1]) and its 95% interval
    bounded to [0, 1] (:func:`judgekit.stats.bounded.bounded_mean_interval`: Hoeffding ∩
    empirical Bernstein; a t interval over 3 seeds leaves the range and assumes a normality it
    cannot check). NaN bounds with fewer than two values."""
    k = len(values)
    if not k:
        return float("nan"), float("nan"), float("nan")
    m = norm_zero(float(np.mean(values)))
    iv = bounded_mean_interval(values)
    if not iv.estimable:
        return m, float("nan"), float("nan")
    return m, iv.low, iv.high


def evaluate_criteria(
    spec: CriteriaFile,
    ratings: pd.DataFrame,
    items: pd.DataFrame,
    *,
    rater: str | None = None,
    trust: TrustContext | None = None,
    source: str = "criteria",
    by: Sequence[str] = (),
) -> tuple[AnalysisResult, bool]:
    """Evaluate every criterion; returns (result, all judged criteria passed).

    ``ratings``: long ratings (any rubrics and raters; each criterion picks its rubric and rater:
    the criterion's ``rater``, else the file's, else ``rater``). ``items``: ``item_id`` +
    metadata. Judge raters need a passing verdict per rubric (``trust``:
    :class:`~judgekit.analysis.trust.TrustContext`), unless ``trust.untrusted``; a judge whose
    verdict did not pass every check is trusted for a criterion whose rate its verdict certifies
    (its check, every primary check, the same definition as the gate read: ``criteria_digests``),
    and the figures of that criterion no certificate covers are left out
    (:mod:`judgekit.analysis.criteria.certified`). Tables: ``criteria`` (one row per criterion),
    ``per_seed``, and for each ``by`` column ``by_<column>`` (the criterion's figure per value,
    descriptive).
    """
    trust = trust or TrustContext()
    items = items.copy()
    items["item_id"] = items["item_id"].astype(str)
    ratings = ratings.copy()
    ratings["item_id"] = ratings["item_id"].astype(str)
    by = _checked_by(items, by)
    rows: list[dict[str, Any]] = []
    seed_rows: list[dict[str, Any]] = []
    by_rows: dict[str, list[dict[str, Any]]] = {col: [] for col in by}
    report = TrustReport()
    certified: dict[str, tuple[str, dict[str, Any]]] = {}  # criteria trusted on their certificate alone
    for c in spec.criteria:
        rubric, who, r = _criterion_ratings(c, spec, ratings, rater, source)
        one = trust.check(r, rubric, criteria={c.name: criterion_digest(c, source)})
        judge_key = f"{who} under {rubric.id}"
        if one.figures.get(judge_key) and judge_key in one.trusted:
            certified[c.name] = (judge_key, next(iter(one.figures[judge_key].values())))
        report = report.merge(one)
        row, per_rows, slice_rows = _evaluate(c, c.per if c.per is not None else spec.per, rubric,
                                              who, r, items, by, source)
        rows.append(row)
        seed_rows += per_rows
        for col in by:
            by_rows[col] += slice_rows[col]
    table = pd.DataFrame(rows)
    judged = table[table["result"] != "DESCRIPTIVE"]
    all_passed = bool((judged["result"] == "PASS").all())
    n_fail = int((judged["result"] == "FAIL").sum())
    tables = [
        Table("criteria", "Pre-registered criteria", table),
        Table("per_seed", "Criteria per value of the per column", pd.DataFrame(seed_rows)),
    ]
    tables += [Table(f"by_{col}", f"Criteria per {col} (descriptive)", pd.DataFrame(by_rows[col])) for col in by]
    result = AnalysisResult(
        kind="criteria",
        title="Experiment criteria",
        meta={"rater": rater or spec.rater, "rubric": ", ".join(sorted(set(table["rubric"]))),
              "trust": report.as_dict(), "passed": all_passed, "slices": by},
        definitions=dict(_DEFINITIONS),
        tables=tables,
        notes=[] if all_passed else [f"{n_fail} of {len(judged)} criteria FAIL."],
    )
    left_out = apply_criteria(result, certified, {c.name: c for c in spec.criteria},
                              untrusted=trust.untrusted)
    if not report.ok:
        result.stamp_untrusted(report.reason())
    if left_out:
        result.meta["passed"] = all_passed = False
    return result, all_passed


_DEFINITIONS = {
    "value": "share of rated items in the group whose label is one of the criterion's "
             "labels (a sample judged several times counts as the share of its trials); "
             "with compare, |rate(a) − rate(b)|",
    "pooled": "the rate over every matching item; CI: Wilson 95% (compare: Newcombe's hybrid "
              "score interval of the difference, as an interval of its absolute value; "
              "both treat the items as independent draws)",
    "per_values": "the rate within each value of the per column (e.g. each seed)",
    "per_mean": "mean of the per values, 95% interval bounded to [0, 1] (Hoeffding ∩ empirical Bernstein) over them (each seed one replicate)",
    "require": "pooled: the pooled value must pass; each: every per value must pass; "
               "both: both",
    "DESCRIPTIVE": "a criterion without op and threshold: reported, neither passes nor fails",
}


def _checked_by(items: pd.DataFrame, by: Sequence[str]) -> list[str]:
    """The ``--by`` columns once each: item columns whose names the tables do not use."""
    by = list(dict.fromkeys(by))
    for col in by:
        if col not in items.columns:
            raise JudgekitError(f"--by {col!r}: the items have no such column; they have: "
                                f"{', '.join(map(str, items.columns[:15]))}.")
        if col in _PER_TABLE_COLUMNS or col in ("rate_a", "rate_b", "n_a", "n_b", "difference"):
            raise JudgekitError(f"--by {col!r}: analyze criteria adds a column named {col!r} to its tables, "
                                "so the two would collide; use another column.")
    return by


def _criterion_ratings(c: Criterion, spec: CriteriaFile, ratings: pd.DataFrame,
                       rater: str | None, source: str) -> tuple[Rubric, str, pd.DataFrame]:
    """The criterion's rubric, its rater and that rater's ratings under the rubric."""
    rubric = criterion_rubric(c, source)
    who = c.rater or spec.rater or rater
    if who is None:
        raise JudgekitError(
            f"{source}: criterion {c.name!r} names no rater; add 'rater:' to the file or pass "
            "--judge RATER."
        )
    r = ratings[(ratings["rubric"] == rubric.id) & (ratings["rater_id"].astype(str) == who)]
    if "rubric_hash" in r.columns:
        r = r[r["rubric_hash"] == rubric.hash]
    if r.empty:
        raise JudgekitError(
            f"{source}: criterion {c.name!r}: rater {who!r} has no ratings under {rubric.ref}; "
            "import or judge them first, or fix the rater/rubric."
        )
    return rubric, who, r


def _check_columns(c: Criterion, items: pd.DataFrame, per: str | None, source: str) -> None:
    cmp_col = [c.compare.column] if c.compare else []
    for col in [*c.where, *([per] if per else []), *cmp_col]:
        if col not in items.columns:
            raise JudgekitError(
                f"{source}: criterion {c.name!r} uses column {col!r}, which the items do not "
                f"have; they have: {', '.join(map(str, items.columns[:15]))}."
            )
    if c.compare is not None:
        _check_levels(c, items, source)
    if per in _PER_TABLE_COLUMNS:
        raise JudgekitError(
            f"{source}: criterion {c.name!r}: per column {per!r} has the name of a column "
            "the per-seed table adds, so the two would collide; use another column (or "
            "re-import the items with this one renamed)."
        )


def _evaluate(c: Criterion, per: str | None, rubric: Rubric, who: str, r: pd.DataFrame,
              items: pd.DataFrame, by: list[str], source: str
              ) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The criterion's row of the ``criteria`` table, its rows of ``per_seed`` and its rows of
    each ``by_<col>`` table."""
    seed_rows: list[dict[str, Any]] = []
    by_rows: dict[str, list[dict[str, Any]]] = {col: [] for col in by}
    codes = list(dict.fromkeys(rubric.normalise(lab) or lab for lab in c.labels))  # (each once)
    shares = label_shares(r, rubric.codes)
    shares["_hit"] = shares[codes].sum(axis=1)
    _check_columns(c, items, per, source)
    cmp_col = [c.compare.column] if c.compare else []
    mask = criterion_mask(c, items, source=source)
    keep = list(dict.fromkeys(["item_id", *([per] if per else []), *cmp_col, *by]))
    df = items.loc[mask, keep].merge(shares[["item_id", "_hit"]], on="item_id", how="inner")
    fig = _figure(df, c)
    per_values: list[tuple[Any, int, float, bool]] = []
    if per:
        for key, grp in df.groupby(per, sort=True):
            f = _figure(grp, c)
            if f["value"] != f["value"]:
                continue  # a seed without both conditions has no figure
            good = _passes(c, f["value"])
            per_values.append((key, f["n"], f["value"], good))
            seed_rows.append({"criterion": c.name, per: key, "n": f["n"], "value": f["value"],
                              "ci_low": f["ci_low"], "ci_high": f["ci_high"],
                              "passed": None if c.descriptive else good})
    for col in by:
        for key, grp in df.groupby(col, sort=True, dropna=False):
            f = _figure(grp, c)
            by_rows[col].append({"criterion": c.name, col: key, "n": f["n"], "value": f["value"],
                                 "ci_low": f["ci_low"], "ci_high": f["ci_high"]})
    passed, reason = _decide(c, fig, per, per_values)
    pm, pm_lo, pm_hi = _mean_over([v for _, _, v, _ in per_values])
    row = {
        "criterion": c.name,
        "rubric": rubric.id,
        "rater": who,
        "label": ", ".join(codes),
        "where": ", ".join(f"{k}={v}" for k, v in c.where.items()) or "(all items)",
        "compare": f"|{c.compare.column}={c.compare.a} − {c.compare.column}={c.compare.b}|" if c.compare else "",
        "op": c.op or "",
        "threshold": c.threshold,
        "n": fig["n"],
        "value": fig["value"],
        "ci_low": fig["ci_low"],
        "ci_high": fig["ci_high"],
        "per": per or "",
        "per_values": "; ".join(f"{k}: {v:.3f} (n={m})" for k, m, v, _ in per_values),
        "per_mean": pm, "per_mean_ci_low": pm_lo, "per_mean_ci_high": pm_hi,
        "require": c.require,
        "result": "DESCRIPTIVE" if c.descriptive else "PASS" if passed else "FAIL",
        "reason": "" if c.descriptive else reason,
    }
    row["note"] = NEWCOMBE_NOTE if c.compare else ""
    if c.compare:
        row.update({k: fig[k] for k in ("rate_a", "n_a", "rate_b", "n_b", "difference")})
    return row, seed_rows, by_rows


def _passes(c: Criterion, v: float) -> bool:
    return bool(c.op is not None and c.threshold is not None and v == v and _OPS[c.op](v, c.threshold))


def _decide(c: Criterion, fig: dict[str, Any], per: str | None,
            per_values: list[tuple[Any, int, float, bool]]) -> tuple[bool, str]:
    """Whether the criterion passes as its ``require`` says, and why not when it cannot."""
    n, value = fig["n"], fig["value"]
    pooled_ok = bool(n and _passes(c, value))
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
    elif value != value:
        passed, reason = False, (f"no rated item with {c.compare.column} = {c.compare.a}" if c.compare
                                 and not fig["n_a"] else f"no rated item with {c.compare.column} = "
                                 f"{c.compare.b}" if c.compare else "undefined")
    elif c.min_n is not None and n < c.min_n:
        passed, reason = False, f"n = {n} < min_n {c.min_n}"
    elif c.require != "pooled" and not per:
        passed, reason = False, f"require: {c.require} needs a 'per' column"
    return passed, reason
