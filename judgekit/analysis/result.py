"""The shape every analysis returns: titled tables, charts and notes, stamped when untrusted.

An :class:`AnalysisResult` is plain data (DataFrames and lists of points); the renderers in
:mod:`judgekit.report.analysis` turn it into JSON, Markdown and an HTML page. When an analysis ran
on ratings of a judge without a passing verdict (forced with ``--untrusted``),
:meth:`AnalysisResult.stamp_untrusted` prefixes the title of the result and of every table and
chart with ``UNTRUSTED``, so no figure can be copied out of the report without the stamp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

UNTRUSTED = "UNTRUSTED"


def _stamp(title: str) -> str:
    return title if title.startswith(UNTRUSTED) else f"{UNTRUSTED} — {title}"


@dataclass
class Table:
    """A titled table. ``key`` names it in the JSON output (stable, machine-readable)."""

    key: str
    title: str
    frame: pd.DataFrame
    description: str = ""


#: a chart point: ``(x, y)``, ``(x, y, low, high)``, ``(x, y, low, high, n)`` or
#: ``(x, y, low, high, n, why)`` — the estimate, its 95% CI, its n and why a CI is undefined.
ChartPoint = tuple[Any, ...]


@dataclass
class Chart:
    """A line chart: ``series`` maps a legend label to points (:data:`ChartPoint`), each with
    its 95% CI where the analysis has one.

    ``overlay`` is an optional second layer of the same figure (same point format), drawn
    dashed: e.g. ``series`` = the raw estimates per model and ``overlay`` = the judge-error-
    corrected ones, or ``series`` = the judge's figures on the human-labelled items and
    ``overlay`` = the reference's on the same items. ``layers`` names the two layers in the
    legend (``("raw", "corrected")``); a series of the overlay keeps the colour of the series of
    the same name. ``n_label`` says what n counts; ``ci_note`` says what the intervals are (the
    page writes it under the chart).
    """

    key: str
    title: str
    series: dict[str, list[ChartPoint]]
    x_label: str
    y_label: str
    y_range: tuple[float, float] | None = None
    hline: float | None = None
    overlay: dict[str, list[ChartPoint]] = field(default_factory=dict)
    layers: tuple[str, str] | None = None
    n_label: str = "n"
    ci_note: str = ""


def rated_by(rater: str, rubric: Any) -> dict[str, Any]:
    """The first keys of an analysis' ``meta``: whose ratings (``rater``), under which rubric and
    rubric version (``rubric``, ``rubric_hash``)."""
    return {"rater": rater, "rubric": rubric.id, "rubric_hash": rubric.hash}


@dataclass
class AnalysisResult:
    """What an analysis produced: meta data, definitions, notes, tables and charts."""

    kind: str
    title: str
    meta: dict[str, Any] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    #: why the result is untrusted (its ``UNTRUSTED:`` note without the prefix); None when trusted
    untrusted_reason: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether every figure of the result rests on trusted ratings (no untrusted reason)."""
        return self.untrusted_reason is None

    def table(self, key: str) -> pd.DataFrame:
        """The frame of the table named ``key`` (KeyError if there is none)."""
        for t in self.tables:
            if t.key == key:
                return t.frame
        raise KeyError(f"no table {key!r}; tables: {[t.key for t in self.tables]}")

    def chart(self, key: str) -> Chart:
        """The chart named ``key`` (KeyError if there is none)."""
        for c in self.charts:
            if c.key == key:
                return c
        raise KeyError(f"no chart {key!r}; charts: {[c.key for c in self.charts]}")

    def mark_untrusted(self, reason: str) -> AnalysisResult:
        """Record why the result is untrusted and say it in the first note (``UNTRUSTED: reason``),
        leaving the titles as they are (a result that stamps some of its tables only)."""
        self.untrusted_reason = reason
        note = f"{UNTRUSTED}: {reason}"
        if note not in self.notes:
            self.notes.insert(0, note)
        return self

    def stamp_untrusted(self, reason: str | None = None) -> AnalysisResult:
        """Mark the result as computed on untrusted ratings (``reason``, else the reason it
        already has): every title gets ``UNTRUSTED``, also of tables and charts added since an
        earlier stamp."""
        why = reason if reason is not None else self.untrusted_reason
        if why is None:
            raise ValueError("stamp_untrusted: a trusted result needs the reason it is untrusted")
        self.title = _stamp(self.title)
        for t in self.tables:
            t.title = _stamp(t.title)
        for c in self.charts:
            c.title = _stamp(c.title)
        return self.mark_untrusted(why)
