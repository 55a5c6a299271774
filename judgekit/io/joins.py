"""Joining an items (metadata) file on any key: ``--items FILE --join-on behavior_id``.

The ratings file gives the items and their ids; the items file gives metadata for them, one row
per key. ``--join-on behavior_id`` joins on a column both files have; ``--join-on
behavior_id=BehaviorID`` names the items file's column when it differs. Every mistake is one
:class:`JudgekitError` sentence naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data import check_reserved_item_columns, messages_as_json
from judgekit.errors import JudgekitError, excerpt
from judgekit.io.mapping import require_table_columns
from judgekit.io.tables import read_table, table_format
from judgekit.schema import is_missing
from judgekit.values import lines_of, row_ref


def join_items_file(
    items: pd.DataFrame, items_path: str | Path, join_on: str, *, source: str,
    column_map: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read ``items_path`` (its columns renamed by ``column_map``, ``--items-map``) and join it
    onto ``items`` as ``join_on`` says (see :func:`parse_join_on`, :func:`join_items`)."""
    items_source = str(items_path)
    left, right = parse_join_on(join_on, source=items_source)
    extra = read_table(items_path, column_map=column_map, map_option="--items-map")
    check_reserved_item_columns(list(extra.columns), source=items_source)
    is_csv, lines = table_format(items_path) == "csv", lines_of(extra)
    if "messages" in extra.columns:
        extra["messages"] = messages_as_json(extra["messages"].tolist(), items_source, csv=is_csv,
                                             lines=lines)
    return join_items(items, extra, left=left, right=right, source=source, items_source=items_source,
                      items_csv=is_csv, items_lines=lines)


def parse_join_on(spec: str, *, source: str) -> tuple[str, str]:
    """``behavior_id`` → (``behavior_id``, ``behavior_id``); ``behavior_id=BehaviorID`` → (the
    ratings file's column, the items file's column)."""
    left, eq, right = spec.partition("=")
    left, right = left.strip(), (right.strip() if eq else left.strip())
    if not left or not right:
        raise JudgekitError(
            f"{source}: --join-on {excerpt(spec, 40)} names no column; give COLUMN, or "
            "COLUMN=ITEMS_FILE_COLUMN when the items file names it otherwise."
        )
    return left, right


def join_items(
    items: pd.DataFrame, extra: pd.DataFrame, *, left: str, right: str, source: str,
    items_source: str, items_csv: bool = False, items_lines: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Each item's metadata completed from the items file's row whose ``right`` equals the
    item's ``left`` (where both give a column, the ratings file's own value wins).

    The key column missing in either file, an empty or repeated key in the items file, an item
    without a key or with a key the items file lacks, and an ``item_id`` column in the items
    file (the ids come from the ratings file) are errors naming the file and the key.
    """
    if left not in items.columns:
        require_table_columns(items, [left], source=source, what=" (--join-on)")
    require_table_columns(extra, [right], source=items_source, what=" (--join-on)",
                          fix=f"; name the items file's column with --join-on {left}=COLUMN")
    if right != "item_id" and "item_id" in extra.columns:
        raise JudgekitError(
            f"{items_source}: has an item_id column, but --join-on joins on {right!r} and the item "
            f"ids come from {source}; remove or rename that column."
        )
    keys = extra[right].tolist()
    seen: dict[Any, int] = {}
    for i, key in enumerate(keys):
        where = row_ref(items_source, i, csv=items_csv, lines=items_lines)
        if is_missing(key) or (isinstance(key, str) and not key.strip()):
            raise JudgekitError(f"{where}: empty {right}, the --join-on key; every row needs one.")
        hashable = _key(key)
        if hashable in seen:
            other = row_ref(items_source, seen[hashable], csv=items_csv, lines=items_lines)
            raise JudgekitError(
                f"{other} and {where.removeprefix(items_source).strip()}: {right} {excerpt(key, 40)} "
                "appears twice; a --join-on key must be unique in the items file."
            )
        seen[hashable] = i
    as_text = {str(k): k for k in keys}
    for iid, key in zip(items["item_id"].tolist(), items[left].tolist(), strict=True):
        if is_missing(key):
            raise JudgekitError(
                f"{source}: item {excerpt(iid, 40)} has no {left}, the --join-on key; give every "
                "row one."
            )
        if _key(key) not in seen:
            near = as_text.get(str(key))
            hint = (f" (it has {excerpt(near, 40)}, written as {type(near).__name__}, not "
                    f"{type(key).__name__})" if near is not None else "")
            raise JudgekitError(
                f"{source}: item {excerpt(iid, 40)} has {left} {excerpt(key, 40)}, which is not in "
                f"{items_source}{hint}; fix the key or add its row to the items file."
            )
    meta = extra.drop(columns=[right]) if left != right else extra
    positions = [seen[_key(k)] for k in items[left].tolist()]
    joined = meta.iloc[positions].astype(object).set_axis(items.index)
    out = items.copy()
    for col in joined.columns:
        if col in out.columns:  # the ratings file's own value wins where it gives one
            out[col] = [b if is_missing(a) else a for a, b in zip(out[col], joined[col], strict=True)]
        else:
            out[col] = joined[col]
    return out


def _key(value: Any) -> tuple[str, Any]:
    """A join key as written: ``1`` (a number) and ``"1"`` (text) are different keys."""
    return (type(value).__name__ if not isinstance(value, bool) else "bool", value)
