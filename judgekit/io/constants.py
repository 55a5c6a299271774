"""``judgekit import FILE --set COLUMN=VALUE``: a constant metadata column for every item of one
file (the source data set, the model that wrote the responses), so several files of a study can
be told apart and sliced (``agree --by model``) without editing them.

The value is stored as text, exactly as written (``--set model=gpt-4o``, ``--set batch=007``);
a column the file already has, a name judgekit keeps for itself (``item_id``, ``response``, …),
a rating column's name (``status``, ``rater_kind``, ``trial``, ``value``, ``provenance``, …),
an empty name or one with spaces at either end is refused with one sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from judgekit.errors import JudgekitError
from judgekit.store.schema import RATING_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["apply_set_columns", "parse_set_options"]

#: columns of the item text, which --set must not replace
_TEXT = ("item_id", "prompt", "response", "messages")
#: a rating's columns and its provenance, which --set must not mimic as item metadata (``source``
#: and ``call_key`` are refused as names judgekit keeps for itself: store.data; ``confidence`` is a
#: judge's confidence per rating, store.rating_confidence)
RATING_NAMES = frozenset(RATING_COLUMNS) - {*_TEXT, "source"} | {"provenance", "confidence"}


def parse_set_options(values: Sequence[str]) -> dict[str, str]:
    """``["model=gpt-4o", "source=xstest"]`` → ``{"model": "gpt-4o", "source": "xstest"}``.

    The value is everything after the first ``=`` (it may hold ``=`` itself, or be empty)."""
    out: dict[str, str] = {}
    for v in values:
        col, sep, value = v.partition("=")
        if not sep:
            raise JudgekitError(f"--set {v!r}: give it as COLUMN=VALUE, e.g. --set model=gpt-4o.")
        if not col or col != col.strip():
            raise JudgekitError(f"--set {v!r}: the column name is empty or has spaces at either end; "
                                "write it as COLUMN=VALUE without spaces around the name.")
        if col in out:
            raise JudgekitError(f"--set names the column {col!r} twice; give each column once.")
        if col in RATING_NAMES:
            raise JudgekitError(f"--set {col}=…: {col!r} is a rating column's name, not item metadata "
                                "(an export would show it beside the rating's own); pick another name, "
                                "e.g. --set origin_" + col + "=….")
        out[col] = value
    return out


def apply_set_columns(items: pd.DataFrame, set_columns: Mapping[str, str] | None, *,
                      source: str, file_columns: Sequence[str] = ()) -> pd.DataFrame:
    """``items`` with each ``--set`` column holding its value (text, as written) in every row.
    ``file_columns``: the file's own columns (rater columns included), which --set must not shadow."""
    if not set_columns:
        return items
    from judgekit.store.data import check_reserved_item_columns

    for col in set_columns:
        if col in _TEXT:
            raise JudgekitError(f"--set {col}=…: {col!r} is the item's id or text, not metadata; "
                                "--set adds metadata columns (e.g. --set model=gpt-4o).")
        if col in items.columns or col in file_columns:
            raise JudgekitError(f"{source}: the file already has a column {col!r}; --set would "
                                f"overwrite its values: drop --set {col}=… or rename the column.")
    check_reserved_item_columns(list(set_columns), source=f"--set ({source})")
    return items.assign(**{col: [value] * len(items) for col, value in set_columns.items()})
