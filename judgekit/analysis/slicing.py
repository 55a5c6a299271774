"""Slicing an analysis as people think: ``--where COL=VALUE[,VALUE]`` filters and crossed slices
``--by a+b`` (as ``judgekit agree`` does), shared by every analysis.

* ``--where severity=4,5`` keeps the items whose ``severity`` is one of the values; several
  ``--where`` must all hold. A value matches as written (``roleplay``), or as the same number
  (``4`` matches 4 and 4.0), or as the same truth value for a flag (``true`` matches True). A
  column the items lack, or a value no item has, is one sentence naming the option and the fix:
  a typo never filters everything away in silence.
* ``--by severity+tactic`` slices by the combination: an item's key is its values joined by
  ``" / "``, a missing part reads ``(missing)`` (the agreement report's keys,
  :mod:`judgekit.agreement.slicing`). The analysis sees one column named ``severity+tactic``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from judgekit.agreement.slicing import MISSING, part_order
from judgekit.errors import JudgekitError, excerpt
from judgekit.store.schema import is_missing

Where = list[tuple[str, list[str]]]


def parse_where(specs: Sequence[str]) -> Where:
    """``["severity=4,5", "tactic=roleplay"]`` → ``[("severity", ["4", "5"]), ("tactic", ["roleplay"])]``."""
    out: Where = []
    for spec in specs:
        col, eq, values = spec.partition("=")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not eq or not col.strip() or not vals:
            raise JudgekitError(f"--where {excerpt(spec)}: write COLUMN=VALUE or COLUMN=VALUE,VALUE "
                                "(e.g. --where severity=4,5).")
        out.append((col.strip(), vals))
    return out


def _number(x: object) -> float | None:
    try:
        f = float(str(x))
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _matches(value: object, wanted: str) -> bool:
    if is_missing(value):
        return False
    if isinstance(value, bool):
        return wanted.strip().lower() in (("true", "yes", "1") if value else ("false", "no", "0"))
    if str(value) == wanted:
        return True
    a, b = _number(value), _number(wanted)
    return a is not None and b is not None and a == b


def _columns(items: pd.DataFrame) -> str:
    cols = [c for c in items.columns if c not in ("item_id", "prompt", "messages", "response", "content_hash")]
    return ", ".join(map(str, cols[:15])) or "none"


def where_mask(items: pd.DataFrame, where: Where) -> pd.Series:
    """Which items every ``--where`` holds for (see module doc for the refusals)."""
    mask = pd.Series(True, index=items.index)
    for col, values in where:
        if col not in items.columns:
            raise JudgekitError(f"--where {excerpt(col)}: the items have no such column; they have: "
                                f"{_columns(items)}.")
        col_values = items[col].tolist()
        for v in values:
            if not any(_matches(x, v) for x in col_values):
                seen = sorted({str(x) for x in col_values if not is_missing(x)}, key=part_order)
                raise JudgekitError(f"--where {excerpt(col)}={excerpt(v)}: no item has that value; "
                                    f"its values are {', '.join(seen[:12]) or 'all empty'}.")
        mask &= items[col].map(lambda x, vs=values: any(_matches(x, v) for v in vs)).astype(bool)
    if where and not mask.any():
        shown = "; ".join(f"{c}={','.join(v)}" for c, v in where)
        raise JudgekitError(f"--where {excerpt(shown)}: no item matches every filter at once; loosen one.")
    return mask


def cross_columns(items: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``items`` with a column per crossed slice of ``by`` (``"a+b"``): the parts' values joined
    by ``" / "``, ``(missing)`` for a missing part. Plain columns are left as they are."""
    out = items
    for spec in dict.fromkeys(by):
        parts = [p.strip() for p in spec.split("+")]
        if len(parts) < 2:
            continue
        if any(not p for p in parts):
            raise JudgekitError(f"--by {excerpt(spec)}: a crossed slice names columns joined by + "
                                "(e.g. --by severity+tactic).")
        for p in parts:
            if p not in items.columns:
                raise JudgekitError(f"--by {excerpt(spec)}: the items have no column {excerpt(p)}; they have: "
                                    f"{_columns(items)}.")
        if out is items:
            out = items.copy()

        def key(row: pd.Series, parts: list[str] = parts) -> str:
            return " / ".join(MISSING if is_missing(row[p]) or str(row[p]).strip() == "" else str(row[p])
                              for p in parts)

        out[spec] = items[parts].apply(key, axis=1).astype(object) if len(items) else pd.Series(dtype=object)
    return out


def where_note(where: Where, kept: int, total: int) -> str:
    """The note an analysis carries about its filter."""
    shown = "; ".join(f"{c} in {{{', '.join(v)}}}" for c, v in where)
    return f"Filtered with --where: {shown} — {kept} of {total} items."


def restrict(items: pd.DataFrame, frames: Sequence[pd.DataFrame | None], where: Where
             ) -> tuple[pd.DataFrame, list[pd.DataFrame | None], str | None]:
    """``items`` kept by ``where``, each ratings frame of ``frames`` cut to those items (None
    stays None), and the note saying so (None without a filter)."""
    if not where:
        return items, list(frames), None
    mask = where_mask(items, where)
    kept = items[mask]
    ids = set(kept["item_id"].astype(str))
    cut = [None if f is None else f[f["item_id"].astype(str).isin(ids)] for f in frames]
    return kept, cut, where_note(where, len(kept), len(items))
