"""An items table as plain columns: read, checked and merged with the stored items without pandas.

``read_items(path)`` is ``validate_items(read_table(path), ...)`` (:mod:`judgekit.store.data`,
:mod:`judgekit.io.tables`) without a DataFrame: the same reading (:func:`~judgekit.io.tables.
read_columns`), the same checks in the same order with the same messages, the same values.
:meth:`ItemTable.frame` is the DataFrame ``validate_items`` returns, for callers that want one;
:func:`merged_item_rows` is :func:`judgekit.store.records.item_rows` for a table (what
:meth:`judgekit.store.database.Store.put_items` writes). A judge panel reads its items this way, so a
rerun whose calls are all cached never imports pandas.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from judgekit.core.values import Where, check_ids, loads_json_strict, row_ref, where_text
from judgekit.errors import JudgekitError, excerpt
from judgekit.store.columns import closest_hint, column_list
from judgekit.store.schema import (
    ITEM_CORE,
    ItemRow,
    is_missing,
    item_content_hash,
    json_value,
    merged_texts,
)

if TYPE_CHECKING:
    import pandas as pd


class ItemTable:
    """Items as columns of Python values (``item_id`` first as read, then the file's order).

    ``lines``: each row's first physical line in its file (for messages), or None."""

    __slots__ = ("columns", "data", "lines")

    def __init__(self, columns: Sequence[str], data: Mapping[str, list[Any]],
                 lines: Sequence[int] | None = None) -> None:
        self.columns = list(columns)
        self.data = {c: data[c] for c in self.columns}
        self.lines = lines

    def __len__(self) -> int:
        return len(self.data[self.columns[0]]) if self.columns else 0

    @property
    def empty(self) -> bool:
        """No rows (as ``DataFrame.empty``)."""
        return len(self) == 0

    @property
    def ids(self) -> list[str]:
        return [str(v) for v in self.data["item_id"]]

    def column(self, name: str) -> list[Any]:
        """The values of column ``name`` (None for every row when the table has no such column)."""
        values = self.data.get(name)
        return list(values) if values is not None else [None] * len(self)

    def take(self, rows: Sequence[int]) -> ItemTable:
        """The rows at these positions, in this order."""
        lines = None if self.lines is None else [self.lines[i] for i in rows]
        return ItemTable(self.columns, {c: [v[i] for i in rows] for c, v in self.data.items()}, lines)

    def records(self) -> Iterable[dict[str, Any]]:
        """One ``{column: value}`` per row."""
        cols = self.columns
        for values in zip(*(self.data[c] for c in cols), strict=True):
            yield dict(zip(cols, values, strict=True))

    def frame(self) -> pd.DataFrame:
        """The table as the DataFrame :func:`judgekit.store.data.validate_items` returns for it
        (object columns, ``attrs["lines"]``)."""
        import pandas as pd

        from judgekit.core.values import LineNumbers

        df = pd.DataFrame({c: pd.Series(self.data[c], dtype=object) for c in self.columns})
        if self.lines is not None:
            df.attrs["lines"] = LineNumbers(self.lines)
        return df

    @classmethod
    def from_frame(cls, df: pd.DataFrame) -> ItemTable:
        """A table of ``df``'s columns and values (a validated items frame)."""
        from judgekit.core.values import lines_of

        columns = list(df.columns)
        return cls(columns, {c: df[c].tolist() for c in columns}, lines_of(df))


def require_names(columns: Sequence[Any], needed: Sequence[str], *, source: str, hint: str = "") -> None:
    """Every name of ``needed`` is a column (:func:`judgekit.store.data.require_columns`' message)."""
    missing = [c for c in needed if c not in columns]
    if missing:
        raise JudgekitError(
            f"{source}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(m) for m in missing)} (the file has: {column_list(columns)})"
            f"{closest_hint(missing[0], columns)}{hint}."
        )


def validate_item_table(table: ItemTable, *, source: str, need_response: bool = True) -> ItemTable:
    """:func:`judgekit.store.data.validate_items` for a table: ``item_id`` unique, a prompt or
    messages, a response column; each ``messages`` checked (:func:`check_messages`) and kept as
    its list of turns. Returns a new table; ``table`` is not changed."""
    from judgekit.store.variants import is_variant_item

    columns = table.columns
    require_names(columns, ["item_id"], source=source)
    if need_response:
        require_names(columns, ["response"], source=source,
                      hint=" (the judge needs the model output to rate)")
    if "prompt" not in columns and "messages" not in columns:
        raise JudgekitError(f"{source}: needs a 'prompt' or a 'messages' column.")
    lines = table.lines
    ids = check_ids(table.data["item_id"], "item_id", source, csv=False, lines=lines)
    seen: set[Any] = set()
    for iid in ids:
        if iid in seen:
            raise JudgekitError(f"{source}: item_id {iid!r} appears twice; item ids must be unique.")
        seen.add(iid)
    reserved = next((iid for iid in ids if is_variant_item(iid)), None)
    if reserved is not None:
        raise JudgekitError(
            f"{source}: item_id {excerpt(str(reserved))} ends in a marker judgekit reserves for "
            "perturbed copies (judgekit probe); rename the item."
        )
    data = dict(table.data)
    data["item_id"] = list(ids)
    if "messages" in data:
        data["messages"] = [
            check_messages(m, row_ref(source, i, csv=False, lines=lines))
            for i, m in enumerate(data["messages"])
        ]
    return ItemTable(columns, data, lines)


def check_messages(m: Any, where: Where) -> list[dict[str, Any]] | None:
    """A checked conversation: a list of ``{role, content}`` objects (or its JSON text), each
    ``content`` a string or a list of content parts and ``role`` a non-empty string (a turn
    without a role is not a conversation turn: refused, in an import and in ``--items`` alike)."""
    if is_missing(m):
        return None
    if hasattr(m, "tolist") and not isinstance(m, str):  # Parquet lists read by pandas: numpy arrays
        m = m.tolist()
    if isinstance(m, str):
        try:
            m = loads_json_strict(m)
        except (ValueError, RecursionError):
            raise JudgekitError(
                f"{where_text(where)}: 'messages' is not a JSON list of {{role, content}} objects; fix it."
            ) from None
    if not isinstance(m, list):
        raise JudgekitError(
            f"{where_text(where)}: 'messages' must be a list of {{role, content}} objects, not "
            f"{excerpt(m, 40)}; fix it."
        )
    for k, x in enumerate(m):
        if not isinstance(x, dict) or "content" not in x:
            raise JudgekitError(
                f"{where_text(where)}: messages[{k}] is {excerpt(x, 40)}, not a {{role, content}} object; fix it."
            )
        if "role" not in x:
            raise JudgekitError(
                f"{where_text(where)}: messages[{k}] has no 'role' (who speaks: user, assistant, "
                "system); add it."
            )
        if not isinstance(x["content"], str | list) or not isinstance(x["role"], str) or not x["role"]:
            raise JudgekitError(
                f"{where_text(where)}: messages[{k}] needs 'content' as text (or a list of content parts) and "
                "'role' as text; fix it."
            )
    return [dict(x) for x in m]


def _missing(value: Any) -> bool:
    """:func:`judgekit.store.schema.is_missing`, a text at once (most cells)."""
    return value is None or (type(value) is not str and is_missing(value))


def merged_item_rows(table: ItemTable, stored: Mapping[str, ItemRow], *, now: float) -> list[ItemRow]:
    """Rows to write for ``table``, merged with the ``stored`` rows of the same ids (the rule of
    :func:`judgekit.store.records.item_rows`): metadata columns given here overwrite, others stay; a
    missing prompt, messages or response keeps the stored one."""
    meta_cols = [c for c in table.columns if c not in ITEM_CORE]
    rows = []
    parsed: dict[str, dict[str, Any]] = {}  # stored metadata texts repeat: each parsed once
    for rec in table.records():
        item_id = str(rec["item_id"])
        old = stored.get(item_id)
        if old:
            base = parsed.get(old.meta)
            if base is None:
                base = parsed[old.meta] = json.loads(old.meta)
            meta = dict(base)
        else:
            meta = {}
        for c in meta_cols:
            v = rec[c]
            if not _missing(v):
                meta[c] = v
        prompt, messages, response = merged_texts(rec, old)
        rows.append(ItemRow(
            item_id=item_id, prompt=prompt, messages=messages, response=response,
            content_hash=item_content_hash(prompt, messages, response),
            meta=json.dumps(meta, default=json_value, ensure_ascii=False, sort_keys=True),
            updated_at=now,
        ))
    return rows


def item_ids(items: ItemTable | pd.DataFrame) -> list[str]:
    """The item ids of a table or an items frame, as text."""
    return items.ids if isinstance(items, ItemTable) else items["item_id"].astype(str).tolist()


def merged_rows(items: ItemTable | pd.DataFrame, stored: Mapping[str, ItemRow], *, now: float) -> list[ItemRow]:
    """:func:`merged_item_rows` for a table, :func:`judgekit.store.records.item_rows` for a frame."""
    if isinstance(items, ItemTable):
        return merged_item_rows(items, stored, now=now)
    from judgekit.store.records import item_rows

    return item_rows(items, stored, now=now)


def unchanged(row: ItemRow, old: ItemRow | None) -> bool:
    """Whether writing ``row`` would store what ``old`` holds already (all but ``updated_at``)."""
    return old is not None and (row.prompt, row.messages, row.response, row.content_hash, row.meta) == (
        old.prompt, old.messages, old.response, old.content_hash, old.meta)


def rows_to_write(rows: list[ItemRow], stored: Mapping[str, ItemRow]) -> list[ItemRow]:
    """The rows that change what is stored (an unchanged item keeps its row, its
    ``updated_at`` and its place in the store's order); every row when an id is given twice
    (the last one wins, as it always has)."""
    if len({r.item_id for r in rows}) < len(rows):
        return rows
    return [r for r in rows if not unchanged(r, stored.get(r.item_id))]


__all__ = [
    "ItemTable", "check_messages", "content_id_twins", "item_ids", "merged_item_rows",
    "merged_rows", "require_names", "rows_to_write", "unchanged", "validate_item_table",
]


# One item, one id: a panel's item whose text the store already holds under a content id.
#
# ``judgekit import --id-from content`` names each item ``c-`` + its content hash
# (:func:`judgekit.store.schema.item_content_hash` of prompt, messages and response). A panel whose
# items file gives the same texts other ids (its own ids, or text re-encoded so the hash differs)
# would store each a second time, and its judges' ratings would never meet the human labels.
# :func:`content_id_twins` finds them; the panel refuses to run with one sentence naming the
# recipe (``judgekit export items``: the stored items under their stored ids).


_CONTENT_ID = re.compile(r"c-[0-9a-f]{16}")


def content_id_twins(store: Any, table: Any) -> list[tuple[str, str]]:
    """``(new_id, stored_id)`` for each item of ``table`` (an ItemTable or a DataFrame of
    item_id, prompt, messages, response)
    whose id the store does not have while it holds the same text under a content id."""
    conn = getattr(store, "conn", None)
    if conn is None or table is None:
        return []
    ids = [str(i) for i in (table.ids if hasattr(table, "ids") else table["item_id"].tolist())]
    if not ids:
        return []
    known: set[str] = set()
    for k in range(0, len(ids), 500):
        chunk = ids[k:k + 500]
        known |= {r[0] for r in conn.execute(
            f"SELECT item_id FROM items WHERE item_id IN ({','.join('?' * len(chunk))})", chunk)}
    new = [i for i, iid in enumerate(ids) if iid not in known]
    if not new:  # a rerun: every item is stored already
        return []
    col = {c: _column(table, c, len(ids)) for c in ("prompt", "messages", "response")}
    hashes: dict[str, str] = {}
    for i in new:
        hashes.setdefault(item_content_hash(col["prompt"][i], col["messages"][i], col["response"][i]), ids[i])
    out: list[tuple[str, str]] = []
    keys = list(hashes)
    for k in range(0, len(keys), 500):
        chunk = keys[k:k + 500]
        for stored_id, h in conn.execute(
                f"SELECT item_id, content_hash FROM items WHERE content_hash IN ({','.join('?' * len(chunk))})",
                chunk):
            if _CONTENT_ID.fullmatch(str(stored_id)):
                out.append((hashes[h], str(stored_id)))
    return out


def _column(table: Any, name: str, n: int) -> list[Any]:
    """A column of an :class:`~judgekit.store.items_table.ItemTable` or a DataFrame (Nones when
    it has none)."""
    if hasattr(table, "column"):
        try:
            return list(table.column(name))
        except (KeyError, ValueError):
            return [None] * n
    return table[name].tolist() if name in table.columns else [None] * n
