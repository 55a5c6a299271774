"""A sample that serves the analysis: ``sample --where`` and the check of its analysis groups.

* :func:`filter_where` — the population a sample is drawn from, restricted by ``--where
  COL=VALUE[,VALUE]`` (repeat: all must hold). A value matches as written or as the same number
  (``4`` matches 4 and 4.0). A column the items lack, a value no item has, or filters that keep
  nothing are one sentence naming the option.
* :func:`group_support` — after a whole-conversation draw, the labelled conversations in each
  group of the analysis (e.g. model × severity, the groups of Drift(t | tier)): a group with
  fewer than :data:`_MIN_STRATUM` gets a warning (its corrected figure will be refused or not
  estimable: stratified PPI needs 2 labelled conversations per stratum), one with fewer than
  :data:`_MIN_TUNED` a note (PPI++ does not tune λ on so few; classic PPI, λ = 1, is used and
  the interval is wider).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.store.schema import is_missing

#: labelled conversations a stratum needs for stratified PPI (judgekit.stats.ppi_strata)
_MIN_STRATUM = 2
#: labelled conversations below which PPI++ uses λ = 1 (judgekit.stats.ppi_core)
_MIN_TUNED = 10


def _matches(series: pd.Series, value: str) -> pd.Series:
    as_text = series.astype(str) == value
    try:
        num = float(value)
    except ValueError:
        return as_text
    return as_text | (pd.to_numeric(series, errors="coerce") == num)


def filter_where(items: pd.DataFrame, where: Sequence[str]) -> tuple[pd.DataFrame, str | None]:
    """``items`` kept by every ``COL=VALUE[,VALUE]`` of ``where``, and a note saying how many."""
    if not where:
        return items, None
    mask = pd.Series(True, index=items.index)
    for cond in where:
        col, sep, values = cond.partition("=")
        col = col.strip()
        wanted = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not col or not wanted:
            raise JudgekitError(f"--where {cond!r}: write COLUMN=VALUE[,VALUE], e.g. "
                                "--where severity=4,5.")
        if col not in items.columns:
            raise JudgekitError(f"--where {cond!r}: the items have no column {col!r}; they have: "
                                f"{', '.join(map(str, items.columns[:15]))}.")
        hit = pd.Series(False, index=items.index)
        for v in wanted:
            one = _matches(items[col], v)
            if not one.any():
                raise JudgekitError(f"--where {cond!r}: no item has {col} = {v!r}; fix the value.")
            hit |= one
        mask &= hit
    if not mask.any():
        raise JudgekitError(f"--where {' '.join(where)}: together the filters keep no item; "
                            "loosen them.")
    kept = items[mask]
    return kept, (f"Filtered with --where {' '.join(where)}: the sample is drawn from {len(kept)} "
                  f"of {len(items)} items.")


def group_support(items: pd.DataFrame, design: pd.DataFrame, groups: Sequence[str], *,
                  conversation_column: str) -> list[str]:
    """Warnings and notes for the analysis ``groups`` (item columns) whose chosen conversations
    fall below what the corrected figures need (module doc). Empty without groups."""
    if not groups:
        return []
    missing = [g for g in groups if g not in items.columns]
    if missing:
        raise JudgekitError(f"--groups {missing[0]!r}: the items have no such column; they "
                            f"have: {', '.join(map(str, items.columns[:15]))}.")
    conv = (items[conversation_column] if conversation_column in items.columns
            else items["item_id"])
    frame = items.assign(_conv=[f"item:{i}" if is_missing(c) or c == "" else str(c)
                                for i, c in zip(items["item_id"], conv, strict=True)])
    frame = frame.drop_duplicates("_conv")
    chosen_items = set(design["item_id"].astype(str))
    frame["_chosen"] = [str(i) in chosen_items for i in frame["item_id"]]
    # a conversation is chosen whole, so its first item tells
    counts = frame.groupby(list(groups), dropna=False)["_chosen"].agg(["sum", "size"])
    low = counts[counts["sum"] < _MIN_STRATUM]
    thin = counts[(counts["sum"] >= _MIN_STRATUM) & (counts["sum"] < _MIN_TUNED)]
    out = []

    def name(key: object) -> str:
        key = key if isinstance(key, tuple) else (key,)
        return ", ".join(f"{g}={k}" for g, k in zip(groups, key, strict=True))

    if len(low):
        first = low.index[0]
        out.append(f"warning: {len(low)} of {len(counts)} analysis groups ({', '.join(groups)}) "
                   f"get fewer than {_MIN_STRATUM} labelled conversations (e.g. {name(first)}: "
                   f"{int(low['sum'].iloc[0])} of {int(low['size'].iloc[0])}); their corrected "
                   "figures will be refused or not estimable — stratify by these columns with "
                   f"--min-per-stratum {_MIN_STRATUM} or more.")
    if len(thin):
        out.append(f"{len(thin)} analysis groups get {_MIN_STRATUM}–{_MIN_TUNED - 1} labelled "
                   "conversations: PPI++ does not tune λ on so few (classic PPI, wider "
                   f"intervals); --min-per-stratum {_MIN_TUNED} lets it tune.")
    return out
