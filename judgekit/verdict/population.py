"""The population a verdict certifies: which parts of the labelled items its checks are about.

A verdict's checks certify a judge (or one of its figures) on the items with human or reference
ratings as a whole, and on the cells its checks that compare it with the reference name: a slice
``by=key`` (``per_slice``, ``max_abs_bias_slice``; a probe's slice does not count, though a failing
probe there still refuses it) and a fidelity figure's cell (its ``model``, harm
``tier`` and ``turn``, in the columns of the policy's ``analysis_fidelity``). An analysis
restricted with ``--where COLUMN=VALUE[,VALUE]`` is about a part of the population: it is
certified for that part only when, for every value, the verdict has a check about that cell and
every such check passes (:func:`judge_covers`; a figure's own checks for :func:`figure_covers`).
The pooled certificate says nothing about ``model=mA`` alone or ``severity=4,5`` alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from judgekit.verdict.check import Check

#: the kinds of check that compare the judge with the reference in a cell, so cover it: a probe
#: about a slice (stability, self-preference, covariate effect, flips there) compares with no human
#: label and covers nothing, though a failing one still refuses the cell
_AGAINST_REFERENCE = ("per_slice", "max_abs_bias_slice", "analysis_fidelity")

#: an analysis's ``--where``: ``[(column, [value, ...]), ...]`` (every one must hold)
Population = Sequence[tuple[str, Sequence[str]]]


def phrase(population: Population) -> str:
    """``model=mA; severity=4,5``."""
    return "; ".join(f"{col}={','.join(vals)}" for col, vals in population)


def _same(a: Any, b: str) -> bool:
    """A recorded cell value and a ``--where`` value are the same as written, as a number, or as
    a boolean spelled as ``--where`` reads one (:func:`judgekit.analysis.slicing.where_mask`)."""
    if a is None:
        return False
    if str(a) == b:
        return True
    if str(a) in ("True", "False"):  # a boolean's slice key: --where selects it as true/yes/1 or false/no/0
        return b.strip().lower() in (("true", "yes", "1") if str(a) == "True" else ("false", "no", "0"))
    try:
        x, y = float(str(a)), float(b)
    except ValueError:
        return False
    return math.isfinite(x) and x == y


def _about(ch: Check, cell: dict[str, str], policy: Any) -> bool:
    """Whether check ``ch`` is about the cell ``cell`` (``{column: value}``, one per ``--where``):
    a slice of exactly those columns (crossed, ``by: [a+b]``, for two) with those values, or a
    fidelity figure's cell that has each of those values."""
    s = ch.subject
    if s.by is not None and s.key is not None:
        parts = [p.strip() for p in s.by.split("+")]
        keys = s.key.split(" / ") if len(parts) > 1 else [s.key]
        if (sorted(parts) == sorted(cell) and len(keys) == len(parts)
                and all(_same(k, cell[p]) for p, k in zip(parts, keys, strict=True))):
            return True
    spec = getattr(policy.checks, "analysis_fidelity", None)
    if ch.kind != "analysis_fidelity" or spec is None:
        return False
    cells = {col: v for col, v in ((spec.model_column, s.model), (spec.harm_column, s.tier),
                                   (spec.turn_column, s.turn)) if v is not None}
    return all(col in cells and _same(cells[col], value) for col, value in cell.items())


def _gap(checks: list[Check], population: Population, policy: Any) -> str | None:
    """Why ``checks`` do not cover ``population`` (a phrase), or None when they do. With several
    ``--where``, each crossed cell needs a check of its own: each model and each tier certified
    alone say nothing about one tier of one model."""
    columns = [column for column, _ in population]
    for values in itertools.product(*(vals for _, vals in population)):
        cell = dict(zip(columns, values, strict=True))
        name = ", ".join(f"{c}={v}" for c, v in cell.items())
        about = [ch for ch in checks if _about(ch, cell, policy)]
        if not any(ch.kind in _AGAINST_REFERENCE for ch in about):
            return f"no check of the verdict is about {name}"
        bad = next((ch for ch in about if ch.state != "pass"), None)
        if bad is not None:
            word = "fails" if bad.state == "fail" else "is inconclusive"
            return f"its check {bad.name} about {name} {word}"
    return None


def judge_covers(checks: list[Check], population: Population, policy: Any) -> str | None:
    """None when a judge's ``checks`` certify it on ``population``, else why not (a phrase)."""
    return _gap(checks, population, policy) if population else None


def figure_covers(checks: list[Check], figure: str, population: Population, policy: Any) -> str | None:
    """None when ``figure``'s own fidelity checks (a criterion's rate: its criterion's) certify it
    on ``population``, else why not (a phrase)."""
    if not population:
        return None
    if figure.startswith("rate(criterion=") and figure.endswith(")"):
        name = figure[len("rate(criterion="):-1]
        own = [ch for ch in checks if ch.kind == "analysis_fidelity" and ch.subject.criterion == name]
    else:
        own = [ch for ch in checks if ch.kind == "analysis_fidelity" and ch.subject.figure == figure]
    return _gap(own, population, policy)
