"""Naming a table's columns in messages: every column (none hidden), and the closest to a name.

A message about a missing column lists the file's columns so the user can see what is there:
every one of them, ``_``-prefixed ones too (``_id`` is a real column of real files), up to
:data:`_MAX_LISTED` and then how many more; and it suggests the column closest to the missing name
(:func:`difflib.get_close_matches`, case-insensitive).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: columns judgekit adds to a table for itself (never a file's): left out of the lists
_INTERNAL_COLUMNS = frozenset({"_row", "_explanation"})
#: at most this many columns are listed; the rest are counted ("… and 40 more")
_MAX_LISTED = 60


def file_columns(columns: Iterable[object]) -> list[str]:
    """The table's columns as the file names them (judgekit's own :data:`_INTERNAL_COLUMNS` left out)."""
    return [str(c) for c in columns if str(c) not in _INTERNAL_COLUMNS]


def column_list(columns: Iterable[object]) -> str:
    """``'a', 'b', '_id'`` — every column, or the first :data:`_MAX_LISTED` and ``… and N more``."""
    names = file_columns(columns)
    shown = ", ".join(repr(n) for n in names[:_MAX_LISTED])
    if len(names) > _MAX_LISTED:
        shown += f", … and {len(names) - _MAX_LISTED} more"
    return shown or "no columns"


def closest_column(name: str, columns: Iterable[object]) -> str | None:
    """The column whose name is closest to ``name`` (case-insensitive), or None if none is close.

    >>> closest_column("item_id", ["_id", "Response", "question"])
    '_id'
    >>> closest_column("response", ["_id", "Response"])
    'Response'
    """
    names = file_columns(columns)
    by_lower: dict[str, str] = {}
    for n in names:
        by_lower.setdefault(n.lower(), n)
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.5)
    if not found and "_" in name:  # item_id ~ id, rater_id ~ rater
        tails = [t for t in name.lower().split("_") if t]
        found = [t for t in tails if t in by_lower][:1]
    return by_lower[found[0]] if found else None


def closest_hint(name: str, columns: Iterable[object]) -> str:
    """``; the closest is '_id'`` (or nothing when no column is close)."""
    best = closest_column(name, columns)
    return f"; the closest is {best!r}" if best is not None else ""
