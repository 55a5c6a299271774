"""Joining an items (metadata) file on any key: ``--items FILE --join-on behavior_id``.

The ratings file gives the items and their ids; the items file gives metadata for them, one row
per key. ``--join-on behavior_id`` joins on a column both files have; ``--join-on
behavior_id=BehaviorID`` names the items file's column when it differs. Every mistake is one
:class:`JudgekitError` sentence naming the file and the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.core.values import lines_of, row_ref
from judgekit.errors import JudgekitError, excerpt
from judgekit.io.mapping import require_table_columns
from judgekit.io.tables import read_table, table_format
from judgekit.store.data import check_reserved_item_columns, messages_as_json
from judgekit.store.schema import is_missing


def join_items_file(
    items: pd.DataFrame, items_path: str | Path, join_on: str, *, source: str,
    column_map: Mapping[str, str] | None = None, csv: bool = False,
    file_columns: Sequence[str] | None = None, ratings_map: Mapping[str, str] | None = None,
    rater_columns: Sequence[str] = (),
) -> pd.DataFrame:
    """Read ``items_path`` (its columns renamed by ``column_map``, ``--items-map``) and join it
    onto ``items`` as ``join_on`` says (see :func:`_parse_join_on`, :func:`_join_items`).

    ``csv``: the ratings file is a CSV (its keys are compared as the text written);
    ``file_columns``, ``ratings_map`` (its ``--map``) and ``rater_columns`` (its
    --raters/--judges/--reference columns) word the error of a key it lacks."""
    items_source = str(items_path)
    left, right = _parse_join_on(join_on, source=items_source)
    extra = read_table(items_path, column_map=column_map, map_option="--items-map")
    check_reserved_item_columns(list(extra.columns), source=items_source)
    is_csv, lines = table_format(items_path) == "csv", lines_of(extra)
    if "messages" in extra.columns:
        extra["messages"] = messages_as_json(extra["messages"].tolist(), items_source, csv=is_csv,
                                             lines=lines)
    if left not in items.columns:
        _missing_left(items, left, source=source, file_columns=file_columns, ratings_map=ratings_map,
                      rater_columns=rater_columns)
    return _join_items(items, extra, left=left, right=right, source=source, items_source=items_source,
                      items_csv=is_csv, items_lines=lines, csv=csv)


def _missing_left(
    items: pd.DataFrame, left: str, *, source: str, file_columns: Sequence[str] | None,
    ratings_map: Mapping[str, str] | None, rater_columns: Sequence[str],
) -> None:
    """The ratings file lacks the --join-on key ``left``: one sentence naming the file's own
    columns (not those of the prepared items table), and why when the file has the column."""
    if file_columns is None:
        require_table_columns(items, [left], source=source, what=" (--join-on)")
        return
    renamed = {column: name for name, column in (ratings_map or {}).items()}
    if left in renamed:
        why = (f"its column {left!r} is read as {renamed[left]} (--map {renamed[left]}={left}); "
               f"give --join-on {renamed[left]}" + ("" if renamed[left] == "item_id" else "=COLUMN")
               + " or join on another column")
    elif left in rater_columns:
        why = (f"{left!r} is a rater's label column (--raters/--judges/--reference), not item "
               "metadata; join on another column")
    elif left in file_columns:
        why = f"{left!r} is a field of each rating, not item metadata; join on another column"
    else:
        why = ""
    if why:
        raise JudgekitError(f"{source}: --join-on {left!r}: {why}.")
    require_table_columns(pd.DataFrame(columns=list(file_columns)), [left], source=source,
                          what=" (--join-on)")


def _parse_join_on(spec: str, *, source: str) -> tuple[str, str]:
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


def _join_items(
    items: pd.DataFrame, extra: pd.DataFrame, *, left: str, right: str, source: str,
    items_source: str, items_csv: bool = False, items_lines: Sequence[int] | None = None,
    csv: bool = False,
) -> pd.DataFrame:
    """Each item's metadata completed from the items file's row whose ``right`` equals the
    item's ``left`` (where both give a column, the ratings file's own value wins).

    The key column missing in either file, an empty or repeated key in the items file, an item
    without a key or with a key the items file lacks, and an ``item_id`` column in the items
    file (the ids come from the ratings file) are errors naming the file and the key.

    Keys are compared as written: where either file is a CSV (``csv``, ``items_csv``), as their
    text (a CSV types a column as numbers only when all its cells are plain numbers, so ``1`` may
    be read as a number in one file and as text in another); between JSON/Parquet files, with
    their type (``1`` and ``"1"`` are different keys).
    """
    as_text = csv or items_csv
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
        hashable = _key(key, as_text)
        if hashable in seen:
            other = row_ref(items_source, seen[hashable], csv=items_csv, lines=items_lines)
            raise JudgekitError(
                f"{other} and {where.removeprefix(items_source).strip()}: {right} {excerpt(key, 40)} "
                "appears twice; a --join-on key must be unique in the items file."
            )
        seen[hashable] = i
    by_text = {str(k): k for k in keys}
    for iid, key in zip(items["item_id"].tolist(), items[left].tolist(), strict=True):
        if is_missing(key):
            raise JudgekitError(
                f"{source}: item {excerpt(iid, 40)} has no {left}, the --join-on key; give every "
                "row one."
            )
        if _key(key, as_text) not in seen:
            near = None if as_text else by_text.get(str(key))  # as text, a near key is the key
            hint = (f" (it has {excerpt(near, 40)}, written as {type(near).__name__}, not "
                    f"{type(key).__name__})" if near is not None else "")
            raise JudgekitError(
                f"{source}: item {excerpt(iid, 40)} has {left} {excerpt(key, 40)}, which is not in "
                f"{items_source}{hint}; fix the key or add its row to the items file."
            )
    meta = extra.drop(columns=[right]) if left != right else extra
    positions = [seen[_key(k, as_text)] for k in items[left].tolist()]
    joined = meta.iloc[positions].astype(object).set_axis(items.index)
    out = items.copy()
    for col in joined.columns:
        if col in out.columns:  # the ratings file's own value wins where it gives one
            out[col] = [b if is_missing(a) else a for a, b in zip(out[col], joined[col], strict=True)]
        else:
            out[col] = joined[col]
    return out


def _key(value: Any, as_text: bool = False) -> tuple[str, Any]:
    """A join key as written: ``1`` (a number) and ``"1"`` (text) are different keys; ``as_text``
    (a CSV on either side): the key's text, a number's as JSON writes it (``1``, ``0.5``, which is
    the text a CSV cell the reader typed as a number had)."""
    if as_text:
        return ("text", value if isinstance(value, str) else json.dumps(value))
    return (type(value).__name__ if not isinstance(value, bool) else "bool", value)
