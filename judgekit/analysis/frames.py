"""Shaping rating and item frames for the analyses (pure pandas, no I/O).

Conventions shared by every analysis:

* a **sample** is one item: one model output, one draw from the model's behaviour on a prompt;
* a **prompt unit** is what several samples are draws of: ``conversation_id`` when the items
  have it (multi-turn data), else ``prompt_id``, else the item itself — and, when the items have a
  ``turn`` column, the turn as well (the same conversation at turn 3 and turn 4 are two units);
* a rater's several **trials** on one sample are averaged: a sample judged twice, once refusal
  and once not, counts as half a refusal. Abstentions and errors are not values; a sample with
  none of its trials ``ok`` is counted as unrated, never as a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Rubric, load_rubric
from judgekit.store.schema import is_missing

ALL = "all"


def one_rater(ratings: pd.DataFrame, *, what: str) -> str:
    """The single rater id of ``ratings`` (an analysis reads one rater's labels at a time)."""
    if ratings.empty:
        raise JudgekitError(
            f"{what}: there are no ratings to analyse; import or judge them first "
            "(judgekit import FILE --rubric R) and check --judge and --rubric."
        )
    raters = sorted(ratings["rater_id"].astype(str).unique())
    if len(raters) > 1:
        raise JudgekitError(
            f"{what}: the ratings come from {len(raters)} raters ({', '.join(raters[:5])}); "
            "analyse one rater at a time with --judge RATER."
        )
    return raters[0]


def check_rubric(ratings: pd.DataFrame, rubric: Rubric, *, what: str) -> None:
    """Every rating must be under ``rubric`` (its id and, when given, its hash)."""
    ids = set(ratings["rubric"].astype(str))
    if ids - {rubric.id}:
        raise JudgekitError(
            f"{what}: ratings are under {', '.join(sorted(ids))}, not {rubric.id}; pass the "
            f"ratings of {rubric.id} only."
        )
    if "rubric_hash" in ratings.columns:
        hashes = set(ratings["rubric_hash"].dropna().astype(str))
        if hashes - {rubric.hash}:
            raise JudgekitError(
                f"{what}: some ratings were made under an older edit of {rubric.id} (hash "
                f"{', '.join(sorted(hashes - {rubric.hash}))}, current {rubric.hash}); re-rate "
                "them or analyse with the rubric file they were made under."
            )


def per_item_values(ratings: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per rated item: ``item_id, value`` (mean over ok trials), ``n_trials``, ``n_ok``.

    ``value`` is NaN for an item whose trials are all abstentions or errors.
    """
    df = ratings[["item_id", "label", "status"]].copy()
    df["item_id"] = df["item_id"].astype(str)
    ok = df["status"].eq("ok") & df["label"].notna()
    df["_v"] = np.where(ok, df["label"].map(rubric.values).astype(float), np.nan)
    g = df.groupby("item_id", sort=False)
    out = pd.DataFrame(
        {"value": g["_v"].mean(), "n_trials": g.size(), "n_ok": g["_v"].count()}
    ).reset_index()
    return out


def label_shares(ratings: pd.DataFrame, codes: Sequence[str]) -> pd.DataFrame:
    """Per item, the share of its ok trials giving each code: ``item_id`` + one column per code."""
    df = ratings.loc[ratings["status"].eq("ok") & ratings["label"].notna(), ["item_id", "label"]]
    df = df.assign(item_id=df["item_id"].astype(str))
    # a group-by count is the crosstab's table, several times faster (tests/test_label_shares.py)
    counts = df.groupby(["item_id", "label"]).size().unstack("label", fill_value=0)
    counts = counts.reindex(columns=list(codes), fill_value=0)
    shares = counts.div(counts.sum(axis=1).replace(0, np.nan), axis=0)
    shares.columns = [str(c) for c in shares.columns]
    return shares.reset_index()


def unit_columns(items: pd.DataFrame, *, prompt_col: str | None, turn_col: str) -> list[str]:
    """The columns naming a prompt unit (see module docstring)."""
    if prompt_col is not None:
        if prompt_col not in items.columns:
            raise JudgekitError(
                f"The items have no column {prompt_col!r} for --prompt-column; they have: "
                f"{', '.join(map(str, items.columns[:15]))}."
            )
        cols = [prompt_col]
    elif "conversation_id" in items.columns:
        cols = ["conversation_id"]
    elif "prompt_id" in items.columns:
        cols = ["prompt_id"]
    else:
        cols = ["item_id"]
    if turn_col in items.columns and turn_col not in cols:
        cols.append(turn_col)
    return cols


def fill_unit_key(items: pd.DataFrame, column: str) -> pd.DataFrame:
    """``items`` with empty cells of the unit column ``column`` filled, so an item without a
    ``conversation_id`` (a single-turn prompt among conversations) is its own prompt unit —
    by its ``prompt_id``, else its ``item_id`` — instead of all such items becoming one unit."""
    missing = items[column].isna()
    if not missing.any():
        return items
    fallback = items["item_id"].astype(str)
    if column != "prompt_id" and "prompt_id" in items.columns:
        fallback = items["prompt_id"].astype(str).where(items["prompt_id"].notna(), fallback)
    out = items.copy()
    out[column] = out[column].astype(object).where(~missing, fallback)
    return out


def require_item_columns(items: pd.DataFrame, columns: Sequence[str], *, option: str) -> None:
    missing = [c for c in columns if c not in items.columns]
    if missing:
        raise JudgekitError(
            f"The items have no column {missing[0]!r} (named by {option}); they have: "
            f"{', '.join(map(str, items.columns[:15]))}."
        )


def check_column_names(named: Mapping[str, Sequence[str]], reserved: Iterable[str], *,
                       what: str) -> None:
    """Refuse a column named by an option (``{"--by": [...], ...}``) that has the name of one
    the analysis adds (``reserved``): two columns of one name would crash the analysis or
    overwrite the user's values. One sentence naming the option and the column."""
    taken = set(reserved)
    for option, columns in named.items():
        for col in columns:
            if col in taken:
                raise JudgekitError(
                    f"{option} {col!r}: {what} adds a column named {col!r} to its tables, so the "
                    "two would collide; use another column (or re-import the items with this one "
                    "renamed)."
                )


def check_slice_values(items: pd.DataFrame, named: Mapping[str, Sequence[str]]) -> None:
    """Refuse a column named by an option (``{"--by": [...], "--prompt-column": [...]}``) that
    cannot group items: one holding lists or objects (a ``messages`` conversation) and, for
    ``--by``, one whose every value is empty (no slice to show). One sentence naming the option
    and the column; columns the items lack are left to the callers' own checks."""
    for option, columns in named.items():
        for col in dict.fromkeys(columns):
            if col not in items.columns:
                continue
            values = items[col].tolist()
            nested = next((v for v in values if isinstance(v, list | tuple | dict | set | np.ndarray)),
                          None)
            if nested is not None:
                raise JudgekitError(
                    f"{option} {col!r}: the items' {col!r} values are lists or objects (e.g. "
                    f"{excerpt(nested, 40)}), not one value per item, so they cannot group items; "
                    "use a column of single values."
                )
            if option == "--by" and values and all(is_missing(v) or v == "" for v in values):
                raise JudgekitError(
                    f"--by {col!r}: every item's {col!r} is empty, so there is no slice to show; "
                    "use a column with values or leave it out of --by."
                )


def item_columns(items: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``items`` with only ``item_id`` and the ``columns`` it has (each once): the metadata an
    analysis does not use cannot collide with a column it adds."""
    keep = [c for c in dict.fromkeys(["item_id", *columns]) if c in items.columns]
    return items[keep]


def model_series(items: pd.DataFrame, model_col: str) -> pd.Series:
    """The model of each item; one model called ``all`` when the items have no ``model`` column.

    A column named by the user (anything but the default ``model``) must exist: a typo in
    ``--model-column`` would otherwise pool every model into one without a word.
    """
    if model_col in items.columns:
        return items[model_col].fillna("(none)").astype(str)
    if model_col != "model":
        require_item_columns(items, [model_col], option="--model-column")
    return pd.Series(ALL, index=items.index)


def truthy(series: pd.Series) -> pd.Series:
    """A metadata flag as booleans: true/yes/1 (any case) and True are true; anything else false."""
    def one(v: object) -> bool:
        if isinstance(v, bool | np.bool_):
            return bool(v)
        if is_missing(v):
            return False
        if isinstance(v, int | float | np.integer | np.floating):
            return float(v) != 0.0
        return str(v).strip().lower() in ("true", "yes", "y", "1", "t")

    return series.map(one).astype(bool)


# --------------------------------------------------------------------------- harm severity
def harm_from_column(items: pd.DataFrame, column: str) -> pd.Series:
    """H per item from a metadata column of tiers 1–5 (→ 0, .25, .5, .75, 1), indexed by item_id.

    Values go through the ``harm_severity`` rubric, so ``3``, ``"3"``, ``"moderate"`` and
    ``"t3_moderate"`` all mean tier 3. Items with an empty cell get NaN (and are left out).
    """
    if column not in items.columns:
        raise JudgekitError(
            f"--harm-column {column!r}: the items have no such column; they have: "
            f"{', '.join(map(str, items.columns[:15]))}."
        )
    rubric = load_rubric("harm_severity")
    out = np.full(len(items), np.nan)
    for i, (iid, raw) in enumerate(zip(items["item_id"], items[column], strict=True)):
        if is_missing(raw):
            continue
        value = raw
        if isinstance(raw, float | np.floating) and float(raw).is_integer():
            value = int(raw)
        code = rubric.normalise(value)
        if code is None:
            raise JudgekitError(
                f"--harm-column {column!r}: item {iid!r} has {raw!r}, which is not a severity "
                "tier; use 1–5 (or t1_benign … t5_catastrophic)."
            )
        out[i] = rubric.values[code]
    return pd.Series(out, index=items["item_id"].astype(str).to_numpy(), name="H")


def harm_from_ratings(ratings: pd.DataFrame, rubric: Rubric | None = None) -> pd.Series:
    """H per item from human ``harm_severity`` ratings, indexed by item_id.

    The adjudicated (``reference``) label wins where there is one; otherwise the mean of the
    human raters' values. Judge ratings are not used for H (they would need their own verdict).
    """
    rubric = rubric or load_rubric("harm_severity")
    humans = ratings[ratings["rater_kind"].isin(["human", "reference"])]
    if humans.empty:
        raise JudgekitError(
            f"There are no human {rubric.id} ratings to take H from; import them "
            "(judgekit import FILE --rubric harm_severity) or give --harm-column COLUMN."
        )
    ok = humans[humans["status"].eq("ok") & humans["label"].notna()].copy()
    ok["item_id"] = ok["item_id"].astype(str)
    ok["_v"] = ok["label"].map(rubric.values).astype(float)
    ref = ok[ok["rater_kind"].eq("reference")].groupby("item_id")["_v"].mean()
    hum = ok[ok["rater_kind"].eq("human")].groupby("item_id")["_v"].mean()
    return ref.combine_first(hum).rename("H")


def spread_harm(harm: pd.Series, items: pd.DataFrame, key: str | None) -> pd.Series:
    """H per item_id for every item of ``items``, sharing H within each value of ``key``.

    Harm rates the request, not the response: a human harm rating given on one item of a prompt
    applies to every item of that prompt (all its samples, models and turns). ``items`` must
    include the harm-rated items and the items to analyse. Where several items of one prompt
    were rated, their mean is used. With ``key`` None (or absent from the items), H stays
    per item; so does it for an item whose ``key`` is empty (it shares H with no other item).
    """
    h = harm.copy()
    h.index = h.index.astype(str)
    ids = items["item_id"].astype(str)
    own = ids.map(h).to_numpy(float)
    if key is None or key not in items.columns:
        return pd.Series(own, index=ids.to_numpy(), name="H")
    has_key = items[key].notna().to_numpy()
    keys = items[key].astype(str).to_numpy()
    per_key = pd.Series(own[has_key], index=keys[has_key]).groupby(level=0).mean()
    shared = pd.Series(keys).map(per_key).to_numpy(float)
    return pd.Series(np.where(has_key, shared, own), index=ids.to_numpy(), name="H")


def tier_of(h: np.ndarray) -> np.ndarray:
    """Severity tier 1–5 of H in [0, 1] (the nearest tier when H is a mean of raters)."""
    return (np.rint(np.asarray(h, dtype=float) * 4.0) + 1).astype(int)


#: the item column of the harm tier 1–5 computed from H (``sample --harm-rubric`` stratifies by
#: it; the corrected figures read a design stratified by it)
HARM_TIER = "harm_tier"


def harm_tier_column(harm: pd.Series, item_ids: pd.Series) -> pd.api.extensions.ExtensionArray:
    """Each of ``item_ids``' harm tier 1–5 from ``harm`` (item_id → H), NA where it has no H."""
    h = harm.reindex(item_ids.astype(str)).to_numpy(dtype=float)
    tiers = tier_of(np.nan_to_num(h))
    return pd.array([int(t) if ok else pd.NA for t, ok in zip(tiers, np.isfinite(h), strict=True)],
                    dtype="Int64")
