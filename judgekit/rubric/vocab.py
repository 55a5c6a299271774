"""A rubric's vocabulary fields beyond exact aliases: ``alias_patterns``, ``alias_ranges`` and
``views`` (their schemas and the rules they follow; :mod:`judgekit.rubric.model` applies them).

* ``alias_patterns`` — an ordered list of ``{pattern, code}``: a raw label that is no code or
  exact alias is matched against each regular expression in turn, case-insensitively, against
  the **whole** value (``re.fullmatch`` on the value with surrounding white space removed); the
  first that matches gives the code. ``Rating: \\[\\[10\\]\\]`` matches ``rating: [[10]]`` but
  not ``Rating: [[10]] because ...``. Patterns run on the ``regex`` engine (Python's ``re``
  syntax), which settles nested repetition such as ``(a+)+b`` in milliseconds where ``re`` would
  backtrack for ever, and every match is bounded by :data:`MATCH_TIMEOUT_S`: a pattern that
  exceeds it on one of :data:`_PROBE_VALUES` is refused when the rubric is loaded, and one that
  exceeds it on a value met later is refused then (one sentence naming the rubric file and the
  pattern), never waited for.
* ``alias_ranges`` — a list of ``{code}`` plus bounds, each written explicitly: a lower bound
  ``at_least`` (inclusive) or ``above`` (exclusive), an upper bound ``at_most`` (inclusive) or
  ``below`` (exclusive); one side may be left open. A number (or a text that is a number, such as
  a CSV cell ``7``) inside a range gets its code. Ranges may not overlap.
* ``views`` — named collapses of the rubric's codes into fewer codes (see
  :mod:`judgekit.rubric.views`): ``codes`` maps **every** rubric code to a view code, a view with
  two codes names its ``positive`` class, and ``aliases`` maps other spellings to view codes.

Order of :meth:`judgekit.rubric.model.Rubric.normalise`: codes and exact aliases, then the patterns,
then the ranges, then a number equal to a label's value. A rubric that sets none of these
fields has the hash it had before they existed (unset fields are left out of the hashed
content); a rubric's views are not part of its hash at all (they do not change what a
full-rubric label means), each view has a hash of its own.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from judgekit.core.config import ConfigModel
from judgekit.core.values import plain_number
from judgekit.errors import JudgekitError, excerpt

_CODE_RE = re.compile(r"^[a-z][a-z0-9_]*$")

#: the longest one match of an alias pattern against one value may take, in seconds (a value is
#: a label, at most a few KB: a pattern without nested repetition takes microseconds)
MATCH_TIMEOUT_S = 0.25
#: values every pattern is tried on when a rubric is loaded (long runs of one kind of character
#: with a mismatch at the end: what makes nested repetition backtrack), besides a run of each
#: letter or digit written in the pattern itself
_PROBE_VALUES = (
    "a" * 40 + "!", "A" * 40 + "!", "1" * 40 + "!", " " * 40 + "!", "_" * 40 + "!",
    " ".join(["word"] * 30) + "!", "a1 " * 30 + "!", "\n" * 40 + "!", "a" * 40, "1" * 40,
)

_SLOW = (
    "nested repetition such as (a+)+ or (a|aa)+ backtracks exponentially on some values; rewrite "
    "it without repeating a repeated group (e.g. a+b instead of (a+)+b)"
)


def _regex_module() -> Any:
    import regex  # the backtracking-safe engine with a time bound (a dependency)

    return regex


def _shown_pattern(pattern: str) -> str:
    """A pattern as written (not repr's doubled backslashes), excerpted, for a message."""
    from judgekit.core.console import clean

    return "'" + clean(pattern if len(pattern) <= 60 else pattern[:60] + "…") + "'"


def probe_values(pattern: str) -> list[str]:
    """The values a pattern is tried on when loaded: :data:`_PROBE_VALUES` and a run of each
    letter or digit the pattern names."""
    own = sorted({c for c in pattern if c.isalnum()})[:20]
    return [*_PROBE_VALUES, *(c * 40 + "!" for c in own)]


class AliasPattern(ConfigModel):
    """One entry of ``alias_patterns``: a regular expression and the code it maps to."""

    model_config = ConfigDict(frozen=True)

    pattern: str = Field(min_length=1)
    code: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            with warnings.catch_warnings():  # "possible nested set" and the like: not errors
                warnings.simplefilter("ignore")
                re.compile(v, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(
                f"{_shown_pattern(v)} is not a regular expression ({exc.msg} at position {exc.pos}); "
                "fix it (escape [ ] ( ) . * + ? with a backslash to match them literally)"
            ) from None
        regex = _regex_module()
        try:
            compiled = regex.compile(v, regex.IGNORECASE | regex.VERSION0)
        except regex.error as exc:
            raise ValueError(f"{_shown_pattern(v)} is not a regular expression judgekit can run "
                             f"({exc}); simplify it") from None
        for probe in probe_values(v):
            try:
                compiled.fullmatch(probe, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                raise ValueError(
                    f"{_shown_pattern(v)} takes longer than {MATCH_TIMEOUT_S:g} s to match the value "
                    f"{excerpt(probe, 20)} ({len(probe)} characters): {_SLOW}"
                ) from None
        return v

    @cached_property
    def regex(self) -> Any:
        """The compiled pattern (``regex`` engine, case-insensitive, Python ``re`` syntax)."""
        regex = _regex_module()
        return regex.compile(self.pattern, regex.IGNORECASE | regex.VERSION0)


def _bound(inclusive: float | None, exclusive: float | None, side: str) -> tuple[float, bool] | None:
    """(bound, inclusive) of a range's side given as an inclusive or an exclusive bound; None
    when that side is open; a ValueError naming the ``side`` when both are given."""
    if inclusive is not None and exclusive is not None:
        raise ValueError(f"give one {side}, not both")
    if inclusive is not None:
        return float(inclusive), True
    if exclusive is not None:
        return float(exclusive), False
    return None


class AliasRange(ConfigModel):
    """One entry of ``alias_ranges``: a code and explicit bounds (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    code: str
    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None
    below: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> AliasRange:
        lo, hi = self.low, self.high  # a side given both of its bounds is an error (_bound)
        if lo is None and hi is None:
            raise ValueError("a range needs a bound: at_least/above (lower) and/or at_most/below (upper)")
        if lo is not None and hi is not None:
            empty = lo[0] > hi[0] or (lo[0] == hi[0] and not (lo[1] and hi[1]))
            if empty:
                raise ValueError(f"the range {self.describe()} holds no number; fix its bounds")
        return self

    @property
    def low(self) -> tuple[float, bool] | None:
        """(lower bound, inclusive) or None when open."""
        return _bound(self.at_least, self.above, "lower bound, at_least (inclusive) or above (exclusive)")

    @property
    def high(self) -> tuple[float, bool] | None:
        """(upper bound, inclusive) or None when open."""
        return _bound(self.at_most, self.below, "upper bound, at_most (inclusive) or below (exclusive)")

    def contains(self, x: float) -> bool:
        lo, hi = self.low, self.high
        if lo is not None and (x < lo[0] or (x == lo[0] and not lo[1])):
            return False
        return not (hi is not None and (x > hi[0] or (x == hi[0] and not hi[1])))

    def describe(self) -> str:
        """The range in interval notation, e.g. ``[1, 7)``."""
        lo, hi = self.low, self.high
        left = "(-inf" if lo is None else f"{'[' if lo[1] else '('}{lo[0]:g}"
        right = "+inf)" if hi is None else f"{hi[0]:g}{']' if hi[1] else ')'}"
        return f"{left}, {right}"


def _overlap(a: AliasRange, b: AliasRange) -> bool:
    """Whether two ranges share a number."""
    def below_of(hi: tuple[float, bool] | None, lo: tuple[float, bool] | None) -> bool:
        # the range ending at ``hi`` lies wholly below the one starting at ``lo``
        if hi is None or lo is None:
            return False
        return hi[0] < lo[0] or (hi[0] == lo[0] and not (hi[1] and lo[1]))
    return not (below_of(a.high, b.low) or below_of(b.high, a.low))


class View(ConfigModel):
    """One entry of ``views``: how the rubric's codes collapse (see :mod:`judgekit.rubric.views`)."""

    model_config = ConfigDict(frozen=True)

    description: str = ""
    codes: dict[str, str]
    positive: str | None = None
    aliases: dict[str, str] = Field(default_factory=dict)

    @property
    def view_codes(self) -> list[str]:
        """The view's codes, in the order they first appear in the mapping."""
        return list(dict.fromkeys(self.codes.values()))


def check_vocab(codes: Sequence[str], patterns: Sequence[AliasPattern], ranges: Sequence[AliasRange],
                views: dict[str, View]) -> None:
    """Raise ValueError (a phrase naming the key) unless every pattern, range and view points to
    the rubric's ``codes``, ranges do not overlap, and each view maps every code."""
    known = ", ".join(codes)
    for i, p in enumerate(patterns):
        if p.code not in codes:
            raise ValueError(f"alias_patterns[{i}] maps to {excerpt(p.code)}, which is not a label code "
                             f"(codes: {known})")
    for i, r in enumerate(ranges):
        if r.code not in codes:
            raise ValueError(f"alias_ranges[{i}] maps to {excerpt(r.code)}, which is not a label code "
                             f"(codes: {known})")
        for j in range(i):
            if _overlap(ranges[j], r):
                raise ValueError(
                    f"alias_ranges[{j}] {ranges[j].describe()} and alias_ranges[{i}] {r.describe()} "
                    "overlap, so a number in both would have two codes; make them disjoint "
                    "(use below/above for an open end)"
                )
    for name, view in views.items():
        at = f"views.{name}"
        if not _CODE_RE.match(name):
            raise ValueError(f"view name {excerpt(name)} must be lower_snake_case (a-z, 0-9, _)")
        for code in view.codes:
            if code not in codes:
                raise ValueError(f"{at}.codes maps {excerpt(code)}, which is not a label code of the "
                                 f"rubric (codes: {known})")
        missing = [c for c in codes if c not in view.codes]
        if missing:
            raise ValueError(f"{at}.codes misses the rubric code {excerpt(missing[0])}; map every code "
                             f"({known}) to a view code")
        vcodes = view.view_codes
        for vc in vcodes:
            if not _CODE_RE.match(vc):
                raise ValueError(f"{at}.codes: the view code {excerpt(vc)} must be lower_snake_case "
                                 "(a-z, 0-9, _)")
        if len(vcodes) < 2:
            raise ValueError(f"{at} collapses every code into {excerpt(vcodes[0])}; a view needs at "
                             "least two codes")
        if len(vcodes) == 2 and view.positive is None:
            raise ValueError(f"{at} has two codes ({', '.join(vcodes)}) and so needs 'positive', the "
                             "class its precision/recall/F1 are about, e.g. positive: " + vcodes[-1])
        if view.positive is not None and len(vcodes) != 2:
            raise ValueError(f"{at}.positive is for a view of two codes; this one has {len(vcodes)} "
                             f"({', '.join(vcodes)}), so remove it")
        if view.positive is not None and view.positive not in vcodes:
            raise ValueError(f"{at}.positive {excerpt(view.positive)} is not one of its codes "
                             f"({', '.join(vcodes)})")
        for alias, vc in view.aliases.items():
            if vc not in vcodes:
                raise ValueError(f"{at}.aliases maps {excerpt(alias)} to {excerpt(vc)}, which is not "
                                 f"one of its codes ({', '.join(vcodes)})")


def match_pattern(patterns: Sequence[AliasPattern], text: str, source: str | None = None) -> str | None:
    """The code of the first pattern that matches the whole of ``text`` (stripped), or None.

    A match that takes longer than :data:`MATCH_TIMEOUT_S` raises :class:`JudgekitError` naming
    the rubric file ``source`` and the pattern (never waited for: see the module docstring)."""
    value = text.strip()
    for i, p in enumerate(patterns):
        try:
            if p.regex.fullmatch(value, timeout=MATCH_TIMEOUT_S):
                return p.code
        except TimeoutError:
            where = f"Rubric file {source}" if source else "The rubric"
            raise JudgekitError(
                f"{where}: alias_patterns[{i}] {_shown_pattern(p.pattern)} takes longer than "
                f"{MATCH_TIMEOUT_S:g} s to match the value {excerpt(value, 40)}: {_SLOW}."
            ) from None
    return None


def _as_number(raw: Any) -> float | None:
    """``raw`` as a finite number when it is one (not a bool) or a text that is one in its plain
    form (:func:`judgekit.core.values.plain_number`, the rule the CSV reader types numbers by: ``7`` and
    ``0.5``, not ``007``, ``+7``, ``7.`` or ``1e1``), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        x = float(raw)
    elif isinstance(raw, str) and (number := plain_number(raw.strip())) is not None:
        x = float(number)
    else:
        return None
    return x if math.isfinite(x) else None


def match_range(ranges: Sequence[AliasRange], raw: Any) -> str | None:
    """The code of the range holding ``raw`` (a number, or a text that is one), or None."""
    x = _as_number(raw)
    if x is None:
        return None
    for r in ranges:
        if r.contains(x):
            return r.code
    return None
