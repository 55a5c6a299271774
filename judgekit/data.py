"""Item and Rating frames: validation, normalisation of labels through a rubric.

The two tables everything meets in (see DESIGN.md):

* **items** — ``item_id`` (unique), ``prompt`` or ``messages``, ``response``, any metadata columns;
* **ratings** — long format, :data:`judgekit.schema.RATING_COLUMNS`.

Functions here are pure (DataFrame in, DataFrame out) and raise :class:`JudgekitError` with the
file, row and fix for anything a user got wrong. Row numbers in messages are the file's line
numbers for CSV (header = line 1) and 1-based record numbers otherwise.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.rubric import Rubric
from judgekit.schema import RATER_KINDS, STATUSES, is_missing
from judgekit.schema import item_content_hash as item_content_hash  # re-exported: its old home

RATING_INPUT_KEYS = ("item_id", "rater_id", "label")


def row_ref(source: str, index: int, *, csv: bool) -> str:
    """``file.csv line 7`` for a 0-based DataFrame row."""
    return f"{source} line {index + 2}" if csv else f"{source} row {index + 1}"


def require_columns(df: pd.DataFrame, columns: Sequence[str], *, source: str, hint: str = "") -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        have = ", ".join(str(c) for c in df.columns[:12] if not str(c).startswith("_"))
        raise JudgekitError(
            f"{source}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(m) for m in missing)} (the file has: {have}){hint}."
        )


def parse_rater_map(spec: str | Sequence[str] | None) -> dict[str, str]:
    """``"a,b"`` or ``"alice=col_a,bob=col_b"`` → {rater_id: column}."""
    if not spec:
        return {}
    parts: list[str] = []
    for chunk in [spec] if isinstance(spec, str) else spec:
        parts.extend(p.strip() for p in chunk.split(",") if p.strip())
    out: dict[str, str] = {}
    for p in parts:
        rater, _, col = p.partition("=")
        out[rater.strip()] = (col or rater).strip()
    return out


def wide_to_long(
    df: pd.DataFrame,
    *,
    raters: Mapping[str, str] | None = None,
    judges: Mapping[str, str] | None = None,
    reference: Mapping[str, str] | None = None,
    source: str = "input",
) -> pd.DataFrame:
    """One column per rater → long rows ``item_id, rater_id, rater_kind, label, _row``.

    Empty cells are "not rated" (no row). ``_row`` keeps the 0-based source row for messages.
    """
    groups = [("human", raters or {}), ("judge", judges or {}), ("reference", reference or {})]
    cols = [c for _, m in groups for c in m.values()]
    require_columns(df, ["item_id", *cols], source=source)
    seen: dict[str, str] = {}
    for _, mapping in groups:
        for rater in mapping:
            if rater in seen:
                raise JudgekitError(f"{source}: rater id {rater!r} is given twice; rename one.")
            seen[rater] = rater
    frames = []
    for kind, mapping in groups:
        for rater, col in mapping.items():
            part = pd.DataFrame(
                {
                    "item_id": df["item_id"].astype(str).to_numpy(),
                    "rater_id": rater,
                    "rater_kind": kind,
                    "label": df[col].to_numpy(),
                    "_row": range(len(df)),
                }
            )
            frames.append(part[part["label"].notna() & (part["label"].astype(str).str.strip() != "")])
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
) -> pd.DataFrame:
    """Validate long-format ratings and map labels to rubric codes.

    A human (or reference) label outside the rubric is an error naming the row. A judge label
    outside the rubric is, by default, an abstention with the raw text kept as rationale (an
    unparseable judge output is not a guessed label); ``judge_unknown="error"`` makes it an error.
    Duplicate (item, rater, trial) rows are an error.
    """
    require_columns(long, RATING_INPUT_KEYS, source=source, hint=" (long format needs item_id, "
                    "rater_id, label; for one column per rater use --raters/--judges)")
    df = long.copy()
    if "_row" not in df.columns:
        df["_row"] = range(len(df))
    if "rater_kind" not in df.columns:
        df["rater_kind"] = default_kind
    df["rater_kind"] = df["rater_kind"].fillna(default_kind).astype(str)
    bad_kind = df[~df["rater_kind"].isin(RATER_KINDS)]
    if not bad_kind.empty:
        r = bad_kind.iloc[0]
        raise JudgekitError(
            f"{row_ref(source, int(r['_row']), csv=csv)}: rater_kind {r['rater_kind']!r} is not one "
            f"of {', '.join(RATER_KINDS)}; fix it."
        )
    for col in ("item_id", "rater_id"):
        blank = df[df[col].isna() | (df[col].astype(str).str.strip() == "")]
        if not blank.empty:
            r = blank.iloc[0]
            raise JudgekitError(
                f"{row_ref(source, int(r['_row']), csv=csv)}: empty {col}; every rating needs one."
            )
    df["item_id"] = df["item_id"].astype(str)
    df["rater_id"] = df["rater_id"].astype(str)
    if "trial" not in df.columns:
        df["trial"] = 0
    df["trial"] = pd.to_numeric(df["trial"], errors="coerce").fillna(0).astype(int)
    if "status" not in df.columns:
        df["status"] = "ok"
    df["status"] = df["status"].fillna("ok").astype(str)
    bad_status = df[~df["status"].isin(STATUSES)]
    if not bad_status.empty:
        r = bad_status.iloc[0]
        raise JudgekitError(
            f"{row_ref(source, int(r['_row']), csv=csv)}: status {r['status']!r} is not one of "
            f"{', '.join(STATUSES)}."
        )
    if "rationale" not in df.columns:
        df["rationale"] = None
    df["rationale"] = df["rationale"].astype(object).where(df["rationale"].notna(), None)

    raw = df["label"].tolist()
    codes = [rubric.normalise(v) for v in raw]
    statuses = df["status"].tolist()
    rationales = df["rationale"].tolist()
    kinds = df["rater_kind"].tolist()
    src_rows = df["_row"].tolist()
    for i, code in enumerate(codes):
        if code is not None or statuses[i] != "ok":
            continue
        if kinds[i] == "judge" and judge_unknown == "abstain":
            statuses[i] = "abstain"
            text = "" if raw[i] is None else str(raw[i])
            rationales[i] = f"unparseable judge output: {text[:500]}"
            continue
        raise JudgekitError(
            f"{row_ref(source, int(src_rows[i]), csv=csv)}: label {raw[i]!r} is not in rubric "
            f"{rubric.id} (codes: {rubric.describe_codes()}); fix the label or add an alias to the "
            "rubric."
        )
    df["label"] = codes
    df["status"] = statuses
    df["rationale"] = rationales
    df.loc[df["status"] != "ok", "label"] = None
    df["value"] = [rubric.values.get(c) if c else None for c in df["label"]]

    dup = df.duplicated(subset=["item_id", "rater_id", "trial"], keep=False)
    if dup.any():
        rows = df[dup].sort_values(["item_id", "rater_id", "_row"]).head(2)
        where = " and ".join(row_ref(source, int(x), csv=csv) for x in rows["_row"])
        r = rows.iloc[0]
        raise JudgekitError(
            f"{where}: duplicate rating of item {r['item_id']!r} by "
            f"rater {r['rater_id']!r}; keep one row (or number repeated judge runs in a 'trial' "
            "column)."
        )
    df["rubric"] = rubric.id
    df["rubric_hash"] = rubric.hash
    if "created_at" not in df.columns:
        df["created_at"] = time.time()
    df["source"] = source
    return df


def items_from_table(df: pd.DataFrame, *, source: str, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """The item part of a ratings or items file: ``item_id`` + text columns + metadata.

    Columns in ``exclude`` (rater label columns, rating fields) are not item metadata. An item id
    appearing on several rows must carry the same metadata on each.
    """
    rating_fields = {"rater_id", "rater_kind", "label", "trial", "status", "rationale",
                     "created_at", "value", "rubric", "_row"}
    keep = [c for c in df.columns if c not in set(exclude) and c not in rating_fields]
    items = df[keep].copy()
    items["item_id"] = items["item_id"].astype(str)
    items = items.drop_duplicates()
    clash = items["item_id"].duplicated(keep=False)
    if clash.any():
        iid = items.loc[clash, "item_id"].iloc[0]
        raise JudgekitError(
            f"{source}: item {iid!r} appears with different metadata on different rows; make its "
            "metadata agree or give the items in a separate --items file."
        )
    return items


def validate_items(df: pd.DataFrame, *, source: str, need_response: bool = True) -> pd.DataFrame:
    """Check an items table (for judging): ``item_id`` unique, a prompt or messages, a response."""
    require_columns(df, ["item_id"], source=source)
    if need_response:
        require_columns(df, ["response"], source=source,
                        hint=" (the judge needs the model output to rate)")
    if "prompt" not in df.columns and "messages" not in df.columns:
        raise JudgekitError(f"{source}: needs a 'prompt' or a 'messages' column.")
    dup = df["item_id"].astype(str).duplicated()
    if dup.any():
        raise JudgekitError(
            f"{source}: item_id {df['item_id'][dup].iloc[0]!r} appears twice; item ids must be unique."
        )
    out = df.copy()
    out["item_id"] = out["item_id"].astype(str)
    if "messages" in out.columns:
        out["messages"] = [_parse_messages(m, source, i) for i, m in enumerate(out["messages"])]
    return out


def _parse_messages(m: Any, source: str, i: int) -> Any:
    if is_missing(m):
        return None
    if hasattr(m, "tolist") and not isinstance(m, str):  # Parquet lists arrive as numpy arrays
        m = m.tolist()
    if isinstance(m, str):
        try:
            m = json.loads(m)
        except json.JSONDecodeError:
            raise JudgekitError(
                f"{source} row {i + 1}: 'messages' is not a JSON list of {{role, content}}."
            ) from None
    if not isinstance(m, list) or not all(isinstance(x, dict) and "content" in x for x in m):
        raise JudgekitError(
            f"{source} row {i + 1}: 'messages' must be a list of {{role, content}} objects."
        )
    return [dict(x) for x in m]

