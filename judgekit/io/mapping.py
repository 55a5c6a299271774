"""Reading other people's files as they are: column mapping, ids when there are none, joins.

* **Column mapping** (``--map item_id=_id,response=Response``): a judgekit name = the file's
  column. The file's column is read as that judgekit field (an id checked as an id, a text kept as
  text). :func:`parse_column_map` reads the option, :func:`apply_column_map` renames the columns
  of a table as it is read (:func:`judgekit.io.tables.read_table` calls it).
* **Ids** (``--id-from content|row``): :func:`make_item_ids`.
* **Joins** (``--items FILE --join-on behavior_id``): :mod:`judgekit.io.joins`.

Every mistake is one :class:`JudgekitError` sentence naming the file and the key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.core.values import row_ref
from judgekit.errors import JudgekitError, excerpt
from judgekit.store.columns import closest_column, closest_hint, column_list
from judgekit.store.schema import is_missing, item_content_hash

if TYPE_CHECKING:  # imported where a frame is made: the column map needs none
    import pandas as pd

#: the judgekit names a file's column can be mapped onto
_MAPPABLE = (
    "item_id", "prompt", "messages", "response", "rater_id", "rater_kind", "label", "trial",
    "status", "rationale", "created_at", "value", "rubric", "rubric_hash", "confidence",
)
_ID_FROM = ("content", "row")
#: prefix of an item id made from the item's content
_CONTENT_ID_PREFIX = "c-"


# ------------------------------------------------------------------ --map
def parse_column_map(spec: str | None, *, source: str, option: str = "--map") -> dict[str, str]:
    """``"item_id=_id,response=Response"`` → ``{"item_id": "_id", "response": "Response"}``.

    Each part is ``judgekit_name=file_column``; a judgekit name outside :data:`_MAPPABLE`, a name
    or a file column given twice, or a part without ``=`` is an error naming ``source``.
    """
    if spec is None:
        return {}
    out: dict[str, str] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        name, eq, column = part.partition("=")
        name, column = name.strip(), column.strip()
        if not eq or not name or not column:
            raise JudgekitError(
                f"{source}: {option} part {excerpt(part.strip(), 40)} is not judgekit_name=file_column; "
                f"write e.g. {option} item_id=_id,response=Response."
            )
        if name not in _MAPPABLE:
            best = closest_column(name, _MAPPABLE)
            guess = f"did you mean {best!r}? " if best else ""
            raise JudgekitError(
                f"{source}: {option} {_part(name, column)}: {excerpt(name, 40)} is not "
                f"a column judgekit reads ({guess}the names are {', '.join(_MAPPABLE)}); other "
                "columns are item metadata under their own names."
            )
        if name in out:
            raise JudgekitError(
                f"{source}: {option} maps onto {name!r} twice ({out[name]!r} and {excerpt(column, 40)}); "
                "give each judgekit name one column."
            )
        taken = next((k for k, v in out.items() if v == column), None)
        if taken is not None:
            raise JudgekitError(
                f"{source}: {option} maps the column {excerpt(column, 40)} onto both {taken!r} and "
                f"{name!r}; give each column one judgekit name."
            )
        out[name] = column
    return out


def apply_column_map(
    p: Path | str, columns: list[str], data: dict[str, list[Any]], column_map: Mapping[str, str],
    *, option: str = "--map",
) -> tuple[list[str], dict[str, list[Any]]]:
    """Rename the file's columns to their judgekit names (see :func:`parse_column_map`).

    A mapped column the file does not have is an error listing every column and the closest one;
    so is a judgekit name the file already has as another column (it would be shadowed).
    """
    if not column_map:
        return columns, data
    renamed = {column: name for name, column in column_map.items()}
    for name, column in column_map.items():
        if column not in data:
            raise JudgekitError(
                f"{p}: {option} {_part(name, column)}: the file has no column "
                f"{excerpt(column, 40)}{closest_hint(column, columns)} (its columns: {column_list(columns)})."
            )
        if name != column and name in data and name not in renamed:
            raise JudgekitError(
                f"{p}: {option} {_part(name, column)}: the file already has a column {name!r}, which "
                "this mapping would hide; drop the mapping, or rename that column in the file."
            )
    new_columns = [renamed.get(c, c) for c in columns]
    return new_columns, {renamed.get(c, c): v for c, v in data.items()}


def _part(name: str, column: str) -> str:
    """``'item_id=_id'``: one part of a mapping as the user wrote it (quoted, shortened)."""
    return excerpt(f"{name}={column}", 60)


# ------------------------------------------------------------------ required columns
def require_table_columns(
    table: pd.DataFrame, needed: Sequence[str], *, source: str, what: str = "",
    option: str = "--map", fix: str | None = None,
) -> None:
    """The first of ``needed`` missing from ``table``: one sentence listing every column, the
    closest one, and how to name it (``--map item_id=_id``; ``fix``, where ``COLUMN`` stands for the
    closest column, says it otherwise)."""
    for name in needed:
        if name in table.columns:
            continue
        best = closest_column(name, table.columns)
        if fix is not None:
            fix = fix.replace("COLUMN", best or "COLUMN")
        elif name in _MAPPABLE:
            fix = (f"; name the file's column with {option} {name}={best}" if best is not None
                   else f"; name the file's column with {option} {name}=COLUMN")
            if name == "item_id":
                fix += " (or make ids with --id-from content or --id-from row)"
        else:
            fix = ""
        raise JudgekitError(
            f"{source}: missing column {name!r}{what} (the file has: {column_list(table.columns)})"
            f"{closest_hint(name, table.columns)}{fix}."
        )


# ------------------------------------------------------------------ --id-from
def make_item_ids(
    table: pd.DataFrame, how: str, *, source: str, file_name: str, csv: bool = False,
    lines: Sequence[int] | None = None, one_row_per_item: bool = True,
    file_path: str | Path | None = None,
) -> tuple[pd.DataFrame, str]:
    """The table with an ``item_id`` column made for it, and a note saying how.

    * ``content``: ``c-`` and the item's content hash (:func:`judgekit.store.schema.item_content_hash`
      of prompt/messages and response: the first 16 hex digits of a SHA-256), so the same output
      gets the same id in every file. Needs a ``response`` on every row; with one row per item
      (``one_row_per_item``: a wide file), two rows of the same text are an error.
    * ``row``: the file name, ``@`` and 8 hex digits of the SHA-256 of the file's resolved path
      (``file_path``; :func:`_row_id_stem`), and the row's number (``labels.csv@1a2b3c4d:1`` is the
      first row under the header): one item per row, so a long file (a ``rater_id`` column) is
      refused. Re-importing the same file gives the same ids; ``run1/labels.csv`` and
      ``run2/labels.csv`` give different ones.
    """
    import pandas as pd

    if how not in _ID_FROM:
        raise JudgekitError(f"{source}: --id-from {excerpt(how, 20)} is not one of {', '.join(_ID_FROM)}.")
    if "item_id" in table.columns:
        raise JudgekitError(
            f"{source}: --id-from {how} makes the item ids, but the file has an item_id column; "
            "drop --id-from to use that column."
        )
    n = len(table)
    if how == "row":
        if "rater_id" in table.columns:
            raise JudgekitError(
                f"{source}: --id-from row makes one item per row, but the file has a rater_id column "
                "(one row per rating); use --id-from content, or an id column."
            )
        stem = _row_id_stem(file_path) if file_path is not None else file_name
        ids = [f"{stem}:{i + 1}" for i in range(n)]
        note = (f"Item ids made from the file name, a digest of its path and the row number "
                f"(--id-from row): {ids[0]!r} is the first row under the header, {ids[-1]!r} the last.")
        return table.assign(item_id=pd.Series(ids, index=table.index, dtype=object)), note
    require_table_columns(table, ["response"], source=source, what=" (--id-from content hashes it)")
    prompts = table["prompt"].tolist() if "prompt" in table.columns else [None] * n
    messages = table["messages"].tolist() if "messages" in table.columns else [None] * n
    ids = []
    first: dict[str, int] = {}
    for i, response in enumerate(table["response"].tolist()):
        if is_missing(response):
            raise JudgekitError(
                f"{row_ref(source, i, csv=csv, lines=lines)}: empty response; --id-from content "
                "makes the id from the prompt and response, so every row needs one."
            )
        prompt = None if is_missing(prompts[i]) else str(prompts[i])
        msgs = None if is_missing(messages[i]) else messages[i]
        iid = _CONTENT_ID_PREFIX + item_content_hash(prompt, msgs, str(response))
        if one_row_per_item and iid in first:
            a = row_ref(source, first[iid], csv=csv, lines=lines)
            b = row_ref(source, i, csv=csv, lines=lines).removeprefix(source).strip()
            raise JudgekitError(
                f"{a} and {b} have the same prompt and response, so --id-from content gives them one "
                "id; use --id-from row, or an id column (--map item_id=COLUMN)."
            )
        first.setdefault(iid, i)
        ids.append(iid)
    with_prompt = "prompt/messages and response" if (
        "prompt" in table.columns or "messages" in table.columns) else "response (the file has no prompt)"
    note = (f"Item ids made from each row's {with_prompt} (--id-from content): {_CONTENT_ID_PREFIX!r} "
            f"+ 16 hex digits of a SHA-256, the same for the same text in every file; the first row's "
            f"is {ids[0]!r}.")
    return table.assign(item_id=pd.Series(ids, index=table.index, dtype=object)), note


def content_ids_as_stored(
    items: pd.DataFrame, ratings: pd.DataFrame, *, source: str, joined_from: str,
    one_row_per_item: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """``--id-from content`` with ``--items … --join-on``: the items' ids made again from their
    content as it will be stored (the prompt/messages the join added), so the same output gets
    the same id in every file whatever file gave its prompt. Returns (items, ratings, the note).

    Two items that become one (the same stored text) are merged in a long file and an error in a
    wide one (``one_row_per_item``), as in :func:`make_item_ids`.
    """
    def text(rec: dict[Any, Any], name: str) -> Any:
        v = rec.get(name)
        return None if is_missing(v) else v

    new_ids: dict[Any, str] = {}
    owner: dict[str, Any] = {}
    for rec in items.to_dict("records"):
        prompt = text(rec, "prompt")
        iid = _CONTENT_ID_PREFIX + item_content_hash(None if prompt is None else str(prompt),
                                                    text(rec, "messages"), str(rec["response"]))
        if one_row_per_item and iid in owner and owner[iid] != rec["item_id"]:
            raise JudgekitError(
                f"{source}: two rows have the same prompt and response once {joined_from} gives "
                "their prompts, so --id-from content gives them one id; use --id-from row, or an id "
                "column (--map item_id=COLUMN)."
            )
        owner.setdefault(iid, rec["item_id"])
        new_ids[rec["item_id"]] = iid
    items = items.assign(item_id=items["item_id"].map(new_ids)).drop_duplicates("item_id")
    ratings = ratings.assign(item_id=ratings["item_id"].map(new_ids))
    first = ratings["item_id"].iloc[0] if len(ratings) else items["item_id"].iloc[0]
    note = (f"Item ids made from each item's prompt/messages and response as stored, after the join "
            f"with {joined_from} (--id-from content): {_CONTENT_ID_PREFIX!r} + 16 hex digits of a "
            f"SHA-256, the same for the same text in every file; the first row's is {first!r}.")
    return items.reset_index(drop=True), ratings, note


def _row_id_stem(path: str | Path) -> str:
    """``labels.csv@1a2b3c4d``: the file's base name and the first 8 hex digits of the SHA-256 of
    its resolved absolute path (UTF-8), so two files of one name in two folders never share row
    ids, and the same file imported again (from any working directory) gets the same ones."""
    p = Path(path)
    digest = hashlib.sha256(str(p.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{p.name}@{digest}"


def check_layout_columns(
    table: pd.DataFrame, *, source: str, raters: Mapping[str, str] | None = None,
    judges: Mapping[str, str] | None = None, reference: Mapping[str, str] | None = None,
) -> None:
    """The columns the layout needs: ``item_id`` and each rater's column (wide, named by
    --raters/--judges/--reference) or ``item_id, rater_id, label`` (long); the first missing one
    is an error listing every column, the closest, and the ``--map`` that would name it."""
    require_table_columns(table, ["item_id"], source=source)
    named = [(opt, col) for opt, m in (("--raters", raters), ("--judges", judges),
                                       ("--reference", reference)) if m for col in m.values()]
    if not named:
        require_table_columns(table, ["rater_id", "label"], source=source,
                              what=" (long format: one row per rating; for one column per rater "
                                   "use --raters/--judges)")
    for opt, col in named:
        require_table_columns(table, [col], source=source, what=f" (named by {opt})")
