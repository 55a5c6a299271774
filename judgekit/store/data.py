"""Item and Rating frames: validation, normalisation of labels through a rubric.

The two tables everything meets in (see DESIGN.md):

* **items** — ``item_id`` (unique), ``prompt`` or ``messages``, ``response``, any metadata columns;
* **ratings** — long format, :data:`judgekit.store.schema.RATING_COLUMNS`.

Functions here are pure (DataFrame in, DataFrame out) and raise :class:`JudgekitError` with the
file, row and fix for anything a user got wrong. Row numbers in messages are the file's line
numbers for CSV (header = line 1) and 1-based record numbers otherwise.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.core.values import (
    NUMBER,
    Where,
    as_id,
    as_timestamp,
    as_trial,
    check_ids,
    lines_of,
    row_ref,
    where_text,
)
from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Rubric
from judgekit.store.items_table import (
    check_messages as _messages,  # the one check, also without pandas
)
from judgekit.store.items_table import require_names
from judgekit.store.rating_input import (  # re-exported: their old home (rating_input.py says so)
    RESERVED_ITEM_COLUMNS as RESERVED_ITEM_COLUMNS,
)
from judgekit.store.rating_input import label_code as label_code
from judgekit.store.rating_input import parse_rater_map as parse_rater_map
from judgekit.store.schema import RATER_KINDS, STATUSES, is_missing
from judgekit.store.schema import (
    item_content_hash as item_content_hash,  # re-exported: its old home
)

_RATING_INPUT_KEYS = ("item_id", "rater_id", "label")


def require_columns(df: pd.DataFrame, columns: Sequence[str], *, source: str, hint: str = "") -> None:
    require_names(list(df.columns), columns, source=source, hint=hint)


def wide_to_long(
    df: pd.DataFrame,
    *,
    raters: Mapping[str, str] | None = None,
    judges: Mapping[str, str] | None = None,
    reference: Mapping[str, str] | None = None,
    source: str = "input",
    csv: bool = False,
    lines: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One column per rater → long rows ``item_id, rater_id, rater_kind, label, _row``.

    Empty cells (missing, or only white space) are "not rated" (no row); a NaN label is not
    empty and is refused by :func:`normalise_ratings`. ``_row`` keeps the 0-based source row for
    messages; ``lines`` the rows' physical lines (see :func:`row_ref`).
    """
    groups = [("human", raters or {}), ("judge", judges or {}), ("reference", reference or {})]
    cols = [c for _, m in groups for c in m.values()]
    require_columns(df, ["item_id", *cols], source=source)
    seen: dict[str, str] = {}
    for _, mapping in groups:
        for rater in mapping:
            as_id(rater, "rater id", f"{source}: --raters/--judges/--reference")
            if rater in seen:
                raise JudgekitError(f"{source}: rater id {rater!r} is given twice; rename one.")
            seen[rater] = rater
    item_ids = check_ids(df["item_id"].tolist(), "item_id", source, csv=csv, lines=lines)
    frames = []
    for kind, mapping in groups:
        for rater, col in mapping.items():
            labels = df[col].tolist()
            rated = [
                i for i, v in enumerate(labels)
                if not (v is None or v is pd.NA or (isinstance(v, str) and not v.strip()))
            ]
            frames.append(pd.DataFrame(
                {
                    "item_id": [item_ids[i] for i in rated],
                    "rater_id": rater,
                    "rater_kind": kind,
                    "label": pd.Series([labels[i] for i in rated], dtype=object),
                    "_row": rated,
                }
            ))
    if not frames:
        raise JudgekitError(f"{source}: name the rater columns with --raters and/or --judges.")
    return pd.concat(frames, ignore_index=True)


def normalise_ratings(
    long: pd.DataFrame,
    rubric: Rubric,
    *,
    source: str = "input",
    csv: bool = False,
    default_kind: str = "human",
    judge_unknown: str = "abstain",
    lines: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Validate long-format ratings and map labels to rubric codes.

    A human (or reference) label outside the rubric is an error naming the row. A judge label
    outside the rubric is, by default, an abstention with the raw text kept as rationale (an
    unparseable judge output is not a guessed label); ``judge_unknown="error"`` makes it an error.
    Duplicate (item, rater, trial) rows are an error.

    Values are kept exactly or refused, never coerced: ids as :func:`as_id` says, ``trial`` a
    whole number (:func:`as_trial`), ``created_at`` a number or an ISO 8601 time with a zone
    (:func:`as_timestamp`; empty = now), a NaN label an error. A label written as a number
    (``0.25``, also as text in a CSV) matches the rubric label of that value (see
    :meth:`Rubric.normalise`).
    """
    require_columns(long, _RATING_INPUT_KEYS, source=source, hint=" (long format needs item_id, "
                    "rater_id, label; for one column per rater use --raters/--judges)")
    df = long.copy()
    if "_row" not in df.columns:
        df["_row"] = range(len(df))
    src_rows = df["_row"].tolist()

    def ref(i: int) -> str:
        return row_ref(source, int(src_rows[i]), csv=csv, lines=lines)

    def lazy(i: int) -> Where:
        return lambda: ref(i)

    kinds = _one_of(df, "rater_kind", default_kind, RATER_KINDS, ref, tail="; fix it")
    df["rater_kind"] = kinds
    for col in ("item_id", "rater_id"):
        df[col] = check_ids(df[col].tolist(), col, source, csv=csv, lines=lines, rows=src_rows)
    if "trial" not in df.columns:
        df["trial"] = 0
    else:
        df["trial"] = [as_trial(v, lazy(i)) for i, v in enumerate(df["trial"].tolist())]
    statuses = _one_of(df, "status", "ok", STATUSES, ref)
    if "rationale" not in df.columns:
        rationales: list[Any] = [None] * len(df)
    else:
        rationales = [None if is_missing(v) else v if isinstance(v, str) else _as_text(v)
                      for v in df["rationale"].tolist()]

    raw = df["label"].tolist()
    codes = _label_codes(raw, statuses, rubric, ref)
    _unknown_labels(codes, raw, kinds, statuses, rationales, rubric, ref, judge_unknown)
    df["label"] = codes
    df["status"] = statuses
    df["rationale"] = pd.Series(rationales, index=df.index, dtype=object)
    df.loc[df["status"] != "ok", "label"] = None
    if "confidence" in df.columns:  # a judge's confidence in its label (judgekit.store.rating_confidence)
        df["confidence"] = pd.Series([None if st != "ok" else _as_confidence(v, lazy(i))
                                      for i, (v, st) in enumerate(zip(df["confidence"].tolist(), statuses,
                                                                      strict=True))],
                                     index=df.index, dtype=object)
    check_rubric_columns(df, rubric, ref)
    written_values = df["value"].tolist() if "value" in df.columns else None
    df["value"] = [rubric.values.get(c) if c else None for c in df["label"]]
    if written_values is not None:
        _check_values(written_values, df["label"].tolist(), df["value"].tolist(), rubric, ref)

    _refuse_duplicates(df, source, csv=csv, lines=lines)
    df["rubric"] = rubric.id
    df["rubric_hash"] = rubric.hash
    now = time.time()
    if "created_at" not in df.columns:
        df["created_at"] = now
    else:
        df["created_at"] = [as_timestamp(v, lazy(i), now) for i, v in enumerate(df["created_at"])]
    df["source"] = source
    return df


def _as_confidence(value: Any, where: Where) -> float | None:
    """A rating's ``confidence``: empty, or a number from 0 to 1 (also as text in a CSV)."""
    if is_missing(value):
        return None
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise JudgekitError(f"{where_text(where)}: confidence {excerpt(value)} is not a number from 0 to 1; "
                            "fix it or leave the cell empty.")
    return number


def _one_of(df: pd.DataFrame, col: str, default: str, allowed: Sequence[str],
            ref: Callable[[int], str], tail: str = "") -> list[str]:
    """A text column as a list, empty cells (or no column) ``default``; a value not in
    ``allowed`` is refused, naming its row."""
    if col not in df.columns:
        return [default] * len(df)
    values = [default if is_missing(v) else str(v) for v in df[col].tolist()]
    bad = next((i for i, v in enumerate(values) if v not in allowed), None)
    if bad is not None:
        raise JudgekitError(f"{ref(bad)}: {col} {excerpt(values[bad])} is not one of "
                            f"{', '.join(allowed)}{tail}.")
    return values


def _label_codes(raw: list[Any], statuses: list[str], rubric: Rubric,
                 ref: Callable[[int], str]) -> list[str | None]:
    """Each written label's rubric code (``None``: not in the rubric); a NaN label of a rating
    that is ``ok`` is refused."""

    codes = []
    known: dict[tuple[type, Any], str | None] = {}
    for i, v in enumerate(raw):
        if isinstance(v, float) and not math.isfinite(v) and statuses[i] == "ok":
            raise JudgekitError(
                f"{ref(i)}: label {v!r} is not a number and not a label; leave the cell empty "
                "for \"not rated\" or write the label."
            )
        if isinstance(v, str | int | float | bool | None):
            key = (type(v), v)
            if key not in known:
                known[key] = label_code(rubric, v)
            codes.append(known[key])
        else:
            codes.append(label_code(rubric, v))
    return codes


def _unknown_labels(codes: list[str | None], raw: list[Any], kinds: list[str], statuses: list[str],
                    rationales: list[Any], rubric: Rubric, ref: Callable[[int], str],
                    judge_unknown: str) -> None:
    """A label outside the rubric: a judge's is an abstention with the raw text as rationale
    (``statuses`` and ``rationales`` changed in place) unless ``judge_unknown="error"``; anyone
    else's is refused."""
    for i, code in enumerate(codes):
        if code is not None or statuses[i] != "ok":
            continue
        if kinds[i] == "judge" and judge_unknown == "abstain":
            statuses[i] = "abstain"
            text = "" if raw[i] is None else str(raw[i])
            rationales[i] = f"unparseable judge output: {text[:500]}"
            continue
        raise JudgekitError(
            f"{ref(i)}: label {excerpt(raw[i])} is not in rubric "
            f"{rubric.id} (codes: {rubric.describe_codes()}); fix the label or add an alias to the "
            "rubric."
        )


def _refuse_duplicates(df: pd.DataFrame, source: str, *, csv: bool,
                       lines: Sequence[int] | None) -> None:
    """Refuse two rows rating the same (item, rater, trial), naming both rows."""
    dup = df.duplicated(subset=["item_id", "rater_id", "trial"], keep=False)
    if dup.any():
        rows = df[dup].sort_values(["item_id", "rater_id", "_row"]).head(2)
        where = " and ".join(row_ref(source, int(x), csv=csv, lines=lines) for x in rows["_row"])
        r = rows.iloc[0]
        raise JudgekitError(
            f"{where}: duplicate rating of item {r['item_id']!r} by "
            f"rater {r['rater_id']!r}; keep one row (or number repeated judge runs in a 'trial' "
            "column)."
        )


def check_reserved_item_columns(columns: Sequence[Any], *, source: str) -> None:
    """Refuse a table column whose name judgekit keeps for itself
    (:data:`judgekit.store.rating_input.RESERVED_ITEM_COLUMNS`) and so would not be stored as the item
    metadata it looks like."""
    from judgekit.store.rating_input import RESERVED_ITEM_COLUMNS

    for col in columns:
        why = RESERVED_ITEM_COLUMNS.get(col) if isinstance(col, str) else None
        if why is not None:
            raise JudgekitError(
                f"{source}: the column {col!r} is a name judgekit keeps for itself ({why}), so it "
                "cannot be imported; rename it (e.g. 'origin_' + the name) to keep it as item "
                "metadata, or remove it."
            )


def check_rubric_columns(df: pd.DataFrame, rubric: Rubric, ref: Callable[[int], str]) -> None:
    """Refuse a ``rubric`` cell other than this import's rubric (its id ``name@version`` or its
    name) and a ``rubric_hash`` cell other than its hash: the ratings were made under another
    rubric, and would be stored under this one. ``ref(i)`` names row ``i``."""
    if "rubric" in df.columns:
        for i, v in enumerate(df["rubric"].tolist()):
            if not is_missing(v) and v not in (rubric.id, rubric.name):
                raise JudgekitError(
                    f"{ref(i)}: rubric {excerpt(v, 40)} is not {rubric.id}, the rubric of this "
                    "import (--rubric); import these ratings under their own rubric, or remove "
                    "the rubric column."
                )
    if "rubric_hash" in df.columns:
        for i, v in enumerate(df["rubric_hash"].tolist()):
            if not is_missing(v) and v != rubric.hash:
                raise JudgekitError(
                    f"{ref(i)}: rubric_hash {excerpt(v, 40)} is not the hash of {rubric.id} "
                    f"({rubric.hash}): the ratings were made under another version of the "
                    "rubric; import them under that rubric file, or remove the rubric_hash column."
                )


def _check_values(written: list[Any], labels: list[Any], values: list[Any], rubric: Rubric,
                  ref: Callable[[int], str]) -> None:
    """Refuse a written ``value`` that is not the rubric's value of the row's label (empty for a
    row without a label): judgekit stores the rubric's value, never the file's."""
    for i, v in enumerate(written):
        if is_missing(v) or (isinstance(v, str) and not v.strip()):
            continue
        numeric = (isinstance(v, int | float) and not isinstance(v, bool)
                   or isinstance(v, str) and NUMBER.fullmatch(v.strip()) is not None)
        number = float(v) if numeric else None
        if number is not None and values[i] is not None and number == float(values[i]):
            continue
        label = labels[i]
        have = (f"label {label} has the value {values[i]!r} in {rubric.id}" if label is not None
                else "the row has no label (not rated ok), so no value")
        raise JudgekitError(
            f"{ref(i)}: value {excerpt(v, 40)} disagrees with the label ({have}); judgekit takes "
            "the value from the rubric, so fix or remove the value column."
        )


def _as_text(value: Any) -> str:
    """A non-text value of a text field (a JSON number as a rationale) as its JSON text."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def items_from_table(
    df: pd.DataFrame,
    *,
    source: str,
    exclude: Sequence[str] = (),
    csv: bool = False,
    lines: Sequence[int] | None = None,
) -> pd.DataFrame:
    """The item part of a ratings or items file: ``item_id`` + text columns + metadata.

    Columns in ``exclude`` (rater label columns, rating fields) are not item metadata. An item id
    appearing on several rows must carry the same metadata on each (an error names both rows).
    ``messages`` (a list of ``{role, content}`` objects, or its JSON text) is checked and kept as
    canonical JSON text.
    """
    rating_fields = {"rater_id", "rater_kind", "label", "trial", "status", "rationale",
                     "created_at", "value", "rubric", "rubric_hash", "_row", "confidence"}
    keep = [c for c in df.columns if c not in set(exclude) and c not in rating_fields]
    check_reserved_item_columns(keep, source=source)
    items = df[keep].reset_index(drop=True)  # index = row position, for messages
    items["item_id"] = check_ids(items["item_id"].tolist(), "item_id", source, csv=csv, lines=lines)
    if "messages" in items.columns:
        items["messages"] = messages_as_json(items["messages"].tolist(), source, csv=csv, lines=lines)
    items = items.drop_duplicates()
    clash = items["item_id"].duplicated(keep=False)
    if clash.any():
        iid = items.loc[clash, "item_id"].iloc[0]
        first, second = (int(x) for x in items.index[items["item_id"] == iid][:2])
        a, b = items.loc[first], items.loc[second]
        col = next((c for c in items.columns if not _same(a[c], b[c])), None)
        where = (f"{row_ref(source, first, csv=csv, lines=lines)} and "
                 f"{row_ref(source, second, csv=csv, lines=lines).removeprefix(source).strip()}")
        what = ("different metadata" if col is None else
                f"{col} {excerpt(a[col], 40)} on one row and {excerpt(b[col], 40)} on the other")
        raise JudgekitError(
            f"{where}: item {iid!r} has {what}; make its metadata agree or give the items in a "
            "separate --items file."
        )
    return items


def _same(a: Any, b: Any) -> bool:
    if is_missing(a) and is_missing(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def validate_items(df: pd.DataFrame, *, source: str, need_response: bool = True) -> pd.DataFrame:
    """Check an items table (for judging): ``item_id`` unique, a prompt or messages, a response.

    Rows are named by their physical line when ``df`` comes from
    :func:`judgekit.io.tables.read_table` (``df.attrs["lines"]``).
    """
    require_columns(df, ["item_id"], source=source)
    if need_response:
        require_columns(df, ["response"], source=source,
                        hint=" (the judge needs the model output to rate)")
    if "prompt" not in df.columns and "messages" not in df.columns:
        raise JudgekitError(f"{source}: needs a 'prompt' or a 'messages' column.")

    lines = lines_of(df)
    ids = pd.Series(check_ids(df["item_id"].tolist(), "item_id", source, csv=False, lines=lines))
    dup = ids.duplicated()
    if dup.any():
        raise JudgekitError(
            f"{source}: item_id {ids[dup].iloc[0]!r} appears twice; item ids must be unique."
        )
    from judgekit.store.variants import is_variant_item

    reserved = ids[ids.map(is_variant_item)]
    if len(reserved):
        raise JudgekitError(
            f"{source}: item_id {excerpt(str(reserved.iloc[0]))} ends in a marker judgekit reserves for "
            "perturbed copies (judgekit probe); rename the item."
        )
    out = df.copy()
    out["item_id"] = ids.to_numpy(dtype=object)
    if "messages" in out.columns:
        out["messages"] = pd.Series(
            [_messages(m, row_ref(source, i, csv=False, lines=lines))
             for i, m in enumerate(out["messages"])],
            index=out.index, dtype=object,
        )
    return out


def messages_as_json(
    values: Sequence[Any], source: str, *, csv: bool = False, lines: Sequence[int] | None = None
) -> pd.Series:
    """A ``messages`` column checked (see :func:`_messages`) and kept as canonical JSON text."""
    out = []
    for i, m in enumerate(values):
        parsed = _messages(m, lambda i=i: row_ref(source, i, csv=csv, lines=lines))  # type: ignore[misc]
        out.append(None if parsed is None else json.dumps(parsed, ensure_ascii=False))
    return pd.Series(out, dtype=object)


