"""The criteria file (YAML) of ``judgekit analyze criteria``: its schema, reading it strictly, and
which items a criterion is about (:func:`criterion_mask`). The evaluation is in
:mod:`judgekit.analysis.criteria.estimate`; this module does not depend on the verdict guard, so the gate's
analysis-fidelity check can read criteria too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from judgekit.analysis.frames import truthy
from judgekit.core.config import ConfigModel, describe_error, read_yaml_mapping
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric, load_rubric

Op = Literal["<=", "<", ">=", ">", "=="]
Scalar = str | int | float | bool


class Compare(ConfigModel):
    """``compare``: the criterion's figure is |rate(column = a) − rate(column = b)| among the
    items matching ``where`` (two conditions, e.g. two arms of an experiment)."""

    model_config = ConfigDict(frozen=True)

    column: str = Field(min_length=1)
    a: Scalar
    b: Scalar


class Criterion(ConfigModel):
    """One named check: rate of ``label`` under ``rubric`` among items matching ``where``
    (or, with ``compare``, the absolute difference of that rate between two conditions); without
    ``op`` and ``threshold`` a descriptive row that neither passes nor fails."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    rubric: str
    label: str | list[str]
    where: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    op: Op | None = None
    threshold: float | None = None
    compare: Compare | None = None
    per: str | None = None
    require: Literal["pooled", "each", "both"] = "pooled"
    rater: str | None = None
    min_n: int | None = Field(default=None, ge=1)

    @field_validator("label")
    @classmethod
    def _labels_not_empty(cls, v: str | list[str]) -> str | list[str]:
        if isinstance(v, list) and not v:
            raise ValueError("label must name at least one label code")
        return v

    @model_validator(mode="after")
    def _op_and_threshold(self) -> Criterion:
        if (self.op is None) != (self.threshold is None):
            raise ValueError("op and threshold go together: give both for a check, neither for a "
                             "descriptive row")
        if self.op is None and (self.require != "pooled" or self.min_n is not None):
            raise ValueError("a descriptive row (no op and threshold) has no require or min_n")
        return self

    @property
    def descriptive(self) -> bool:
        """No threshold: the row is reported, not judged."""
        return self.op is None

    @property
    def labels(self) -> list[str]:
        """The labels counted, each once (a label named twice is not counted twice)."""
        return [self.label] if isinstance(self.label, str) else list(dict.fromkeys(self.label))


class CriteriaFile(ConfigModel):
    """A criteria file: defaults (``rater``, ``per``) and the list of criteria."""

    model_config = ConfigDict(frozen=True)

    rater: str | None = None
    per: str | None = None
    criteria: list[Criterion] = Field(min_length=1)


def parse_criteria(data: Any, *, source: str = "criteria") -> CriteriaFile:
    """Validate a parsed criteria mapping; one :class:`JudgekitError` sentence on any problem."""
    if not isinstance(data, dict):
        raise JudgekitError(f"{source}: expected a mapping with a 'criteria' list at the top.")
    try:
        spec = CriteriaFile(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where, key = _loc(err["loc"], data)
        hint = ""
        if err["type"] == "extra_forbidden":
            import difflib

            fields = [*Criterion.model_fields, *Compare.model_fields, *CriteriaFile.model_fields]
            close = difflib.get_close_matches(str(err["loc"][-1]), fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise JudgekitError(f"{source}: {where}{describe_error(err, key)}{hint}.") from None
    names = [c.name for c in spec.criteria]
    dup = sorted(n for n, k in Counter(names).items() if k > 1)  # (names.count per name was N²)
    if dup:
        raise JudgekitError(f"{source}: criterion name {dup[0]!r} is used twice; names must be unique.")
    rubrics: dict[str, Rubric] = {}  # (each rubric read once, not once per criterion)
    for c in spec.criteria:
        rubric = criterion_rubric(c, source, rubrics)
        bad = [lab for lab in c.labels if rubric.normalise(lab) is None]
        if bad:
            raise JudgekitError(
                f"{source}: criterion {c.name!r}: label {bad[0]!r} is not a label of {rubric.id}; "
                f"use one of {', '.join(rubric.codes)}."
            )
    return spec


def _loc(loc: Sequence[Any], data: Mapping[str, Any]) -> tuple[str, str]:
    """(``"criterion 'leak rate' (criteria[1]): "``, ``"threshhold"``) for an error location."""
    parts = [str(p) for p in loc]
    if len(loc) >= 2 and loc[0] == "criteria" and isinstance(loc[1], int):
        crit = data.get("criteria")
        name = None
        if isinstance(crit, list) and loc[1] < len(crit) and isinstance(crit[loc[1]], dict):
            name = crit[loc[1]].get("name")
        label = f"criterion {name!r} (criteria[{loc[1]}])" if name else f"criteria[{loc[1]}]"
        return f"{label}: ", ".".join(parts[2:]) or "criteria"
    return "", ".".join(parts)


def criterion_rubric(c: Criterion, source: str, rubrics: dict[str, Rubric] | None = None) -> Rubric:
    """The rubric criterion ``c`` names; ``rubrics``: those already read (by the name or path as
    written), which a caller reading many criteria at once passes so that each is read once."""
    if rubrics is not None and c.rubric in rubrics:
        return rubrics[c.rubric]
    try:
        rubric = load_rubric(c.rubric)
    except JudgekitError as exc:
        raise JudgekitError(f"{source}: criterion {c.name!r}: {exc}") from None
    if rubrics is not None:
        rubrics[c.rubric] = rubric
    return rubric


def load_criteria(path: str | Path) -> CriteriaFile:
    """Read and validate a criteria YAML file."""
    p = Path(path)
    data = read_yaml_mapping(p, what="Criteria file", expect="a 'criteria' list")
    return parse_criteria(data, source=f"Criteria file {p}")


def matches(series: pd.Series, value: Scalar | list[Scalar]) -> pd.Series:
    if isinstance(value, list):
        out = pd.Series(False, index=series.index)
        for v in value:
            out |= matches(series, v)
        return out
    if isinstance(value, bool):
        return truthy(series) == value
    if isinstance(value, int | float):
        return pd.to_numeric(series, errors="coerce") == float(value)
    return series.astype(str) == str(value)


def criterion_mask(c: Criterion, items: pd.DataFrame, *, source: str = "criteria",
                   seen: dict[str, pd.Series] | None = None) -> pd.Series:
    """The items matching a criterion's ``where`` (a list value means any of); a column the
    items lack is one sentence naming ``source`` and the criterion. ``seen``: the matches of each
    column and value already computed on these ``items``, which a caller masking many criteria
    passes so that each is computed once."""
    mask = pd.Series(True, index=items.index)
    for col, value in c.where.items():
        if col not in items.columns:
            raise JudgekitError(
                f"{source}: criterion {c.name!r} uses column {col!r}, which the items do not "
                f"have; they have: {', '.join(map(str, items.columns[:15]))}."
            )
        if seen is None:
            mask &= matches(items[col], value)
        elif isinstance(value, list):  # any of, as :func:`matches` reads a list
            any_of = pd.Series(False, index=items.index)
            for v in value:
                any_of |= _seen_match(items[col], col, v, seen)
            mask &= any_of
        else:
            mask &= _seen_match(items[col], col, value, seen)
    return mask


def _seen_match(series: pd.Series, col: str, value: Scalar | list[Scalar], seen: dict[str, pd.Series]) -> pd.Series:
    """:func:`matches` of ``value`` in column ``col``, computed once per ``seen``."""
    key = json.dumps([col, value])  # (True, 1, 1.0 and "1" apart, as matches reads them)
    if key not in seen:
        seen[key] = matches(series, value)
    return seen[key]


def _canonical(value: Scalar | list[Scalar]) -> Any:
    """A ``where``/``compare`` value as :func:`matches` reads it: a boolean stays a boolean, a
    number is a float (``1`` and ``1.0`` match the same items), a string stays a string (``"1"``
    is compared as text); a list ("any of") is sorted and without repeats."""
    if isinstance(value, list):
        vals = {json.dumps(_canonical(v), sort_keys=True): _canonical(v) for v in value}
        return [vals[k] for k in sorted(vals)]
    if isinstance(value, bool | str):
        return value
    return float(value)


def _criterion_definition(c: Criterion, source: str = "criteria",
                          rubrics: dict[str, Rubric] | None = None) -> dict[str, Any]:
    """What defines a criterion's pooled rate, the figure a gate certifies: the rubric (id and
    content hash), the labels counted (their codes, sorted) and which items count (``where``;
    ``compare``, the two conditions of a difference). Left out, as they do not change which items
    or labels count: the name (the key it is recorded under), ``op``, ``threshold``, ``require``
    and ``min_n`` (how the figure is judged, not what it is), ``per`` (the per-seed rows, which no
    certificate covers) and ``rater`` (whose labels are used: the verdict is checked per judge)."""
    rubric = criterion_rubric(c, source, rubrics)
    return {
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "labels": sorted({rubric.normalise(lab) or lab for lab in c.labels}),
        "where": {col: _canonical(v) for col, v in sorted(c.where.items())},
        "compare": None if c.compare is None else {
            "column": c.compare.column, "a": _canonical(c.compare.a), "b": _canonical(c.compare.b)},
    }


def criterion_digest(c: Criterion, source: str = "criteria", rubrics: dict[str, Rubric] | None = None) -> str:
    """The digest of :func:`_criterion_definition` (canonical JSON, keys sorted): what a verdict
    records per gated criterion (``criteria_digests``) and ``judgekit analyze criteria`` compares
    before it trusts a judge for that criterion alone."""
    from judgekit.core.hashing import digest

    return digest(_criterion_definition(c, source, rubrics))
