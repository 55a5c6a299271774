"""Which items people should rate: a sampling design recorded in the store.

Human labels are expensive; they teach the most where the judges are unsure, but an agreement
estimate is only unbiased on items chosen at random. A sample therefore mixes, in this order:

1. ``random`` — a simple random share of the population (``random_share`` of ``size``). Agreement
   computed on these items alone, unweighted, is an unbiased estimate for the whole population.
2. ``stratum`` — top-ups so that every slice (e.g. severity tier x prompt type) has at least
   ``min_per_stratum`` items, drawn at random inside the slice.
3. ``disagreement`` / ``abstention`` — items where the judges of the panel give different labels,
   or where one abstained or failed; then ``unstable`` — items the same judge labels differently
   across trials. These fill the remaining budget, drawn at random within each tier when there
   are more than fit.
4. ``fill`` — more random items from the rest when the targeted tiers do not fill the budget.

Every chosen item carries a ``weight``: the inverse sampling fraction of its *cell* (judge signal
x stratum), ``N_cell / n_cell``. Because every stage draws uniformly inside unions of cells, the
chosen items of a cell are a uniform random subset of it, so a weighted estimate over all chosen
items is unbiased for the population (cells with no chosen item are not covered; see
:attr:`SampleSummary.uncovered`). ``overlap`` marks the items to be rated by at least two
annotators (random-share items first), so human–human agreement is measurable.

The design is recorded in the store's ``samples`` table; :func:`sample_design` reads it back.
``judgekit agree --sample NAME --random-only`` (``agreement_report(..., only_items=...)``) computes
agreement on the random share; the report does not take weights, so a weighted estimate over all
chosen items is computed from :func:`sample_design`'s ``weight`` column.

With ``exclude_rated`` the population is the items no human has rated yet: the random share and
the weights then describe those items, not all items (a note says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field, PrivateAttr, ValidationError

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric, rubric_named_in
from judgekit.store.database import Store
from judgekit.store.schema import SampleRow, is_missing

#: columns of a sample design table, as returned by :func:`sample_design`.
DESIGN_COLUMNS = ["item_id", "reason", "stratum", "weight", "overlap"]
#: reasons in the order they are applied.
_REASONS = ("random", "stratum", "disagreement", "abstention", "unstable", "fill", "conversation")
_TIER_1 = ("disagreement", "abstention")
_TIER_2 = ("unstable",)


class SampleSpec(ConfigModel):
    """How to draw a sample. Written as YAML (``judgekit sample --spec FILE``) or built in code.

    >>> SampleSpec(name="pilot", size=200, strata=["severity"], min_per_stratum=10).random_share
    0.3
    """

    #: name under which the design is recorded (often the Label Studio project).
    name: str = Field(min_length=1)
    #: target number of items (stratum minimums may raise it).
    size: int = Field(ge=1)
    #: rubric whose judge ratings decide disagreement/abstention/instability (optional).
    rubric: str | None = None
    #: judges (rater ids) of the panel; default: every judge with ratings under the rubric.
    judges: list[str] | None = None
    #: item metadata columns that define the slices.
    strata: list[str] = Field(default_factory=list)
    #: every slice gets at least this many items (or all it has).
    min_per_stratum: int = Field(default=0, ge=0)
    #: fraction of ``size`` drawn as a simple random sample of the population.
    random_share: float = Field(default=0.3, ge=0.0, le=1.0)
    #: put disagreement / abstention / unstable items before the rest.
    targeted: bool = True
    #: fraction of the chosen items to be rated by at least two annotators.
    overlap: float = Field(default=0.2, ge=0.0, le=1.0)
    #: random seed: the same spec on the same store draws the same sample.
    seed: int = 0
    #: leave out items a human already rated under ``rubric``.
    exclude_rated: bool = False
    #: draw whole conversations (:mod:`judgekit.annotation.sampling_conversations`), so per-turn figures
    #: (Drift(t)) can be checked against people; ``size`` is then a target in items.
    by_conversation: bool = False
    #: the column naming the conversation (with ``by_conversation``).
    conversation_column: str = "conversation_id"
    #: where the spec was written ("Sample spec FILE"), for messages about its values
    _source: str | None = PrivateAttr(default=None)

    @property
    def where(self) -> str:
        """How messages name the spec: its file (and the sample), or the sample."""
        return f"{self._source} (sample {self.name!r})" if self._source else f"Sample {self.name!r}"


def load_spec(path: str | Path) -> SampleSpec:
    """Read a :class:`SampleSpec` from a YAML file; one sentence naming the file on error."""
    p = Path(path)
    data = read_yaml_mapping(p, what="Sample spec", expect="the spec's fields")
    return spec_from_dict(data, source=f"Sample spec {p}", file=p)


def spec_from_dict(data: dict[str, Any], *, source: str = "sample spec",
                   file: str | Path | None = None) -> SampleSpec:
    """A :class:`SampleSpec` from a mapping; ``source`` names it in a validation error. ``file``:
    the spec file its rubric, judges and strata come from, named in the messages about them when
    the sample is drawn (:attr:`SampleSpec.where`)."""
    try:
        spec = SampleSpec(**data)
    except ValidationError as exc:
        raise JudgekitError(f"{source}: {first_error(exc)}.") from None
    if file is not None:
        spec._source = f"Sample spec {file}"
    return spec


@dataclass
class SampleSummary:
    """What a draw chose."""

    name: str
    population: int
    chosen: int
    by_reason: dict[str, int] = field(default_factory=dict)
    overlap: int = 0
    strata: int = 0
    #: population items in cells of which nothing was chosen (not covered by the weights).
    uncovered: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        parts = ", ".join(f"{n} {r}" for r, n in self.by_reason.items() if n)
        out = [
            f"Sample {self.name!r}: {self.chosen} of {self.population} items ({parts}); "
            f"{self.overlap} marked for at least two annotators."
        ]
        if self.strata:
            out.append(f"  {self.strata} strata.")
        if self.uncovered:
            out.append(
                f"  {self.uncovered} population items lie in cells with no chosen item: the "
                "weighted estimate does not cover them (use the random share)."
            )
        out.extend(f"  {n}" for n in self.notes)
        return out


# ---------------------------------------------------------------- judge signals
def judge_signals(judge_ratings: pd.DataFrame, judges: list[str] | None = None) -> pd.DataFrame:
    """Per item: did the judges disagree, did one abstain/fail, is one unstable across trials.

    ``judge_ratings`` is long format (``item_id, rater_id, label, trial, status``). Returns a frame
    indexed by ``item_id`` with boolean columns ``disagreement``, ``abstention``, ``unstable`` and
    the item's ``signal`` (the first that holds, in that order, else missing).
    """
    cols = ["disagreement", "abstention", "unstable", "signal"]
    if judge_ratings.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="item_id"))
    df = judge_ratings
    if judges is not None:
        df = df[df["rater_id"].isin(judges)]
    df = df.assign(item_id=df["item_id"].astype(str))
    abst = df["status"].isin(["abstain", "error"]).groupby(df["item_id"]).any()
    ok = df[df["status"].eq("ok") & df["label"].notna()]
    per_judge = ok.groupby(["item_id", "rater_id"])["label"]
    unstable = (per_judge.nunique() > 1).groupby(level="item_id").any()
    # A judge's own label on an item: its most frequent one over trials (ties: alphabetical).
    modal = (
        ok.groupby(["item_id", "rater_id", "label"]).size().rename("n").reset_index()
        .sort_values(["item_id", "rater_id", "n", "label"], ascending=[True, True, False, True])
        .drop_duplicates(["item_id", "rater_id"])
    )
    disagree = modal.groupby("item_id")["label"].nunique() > 1
    out = pd.DataFrame(index=pd.Index(sorted(df["item_id"].unique()), name="item_id"))
    out["disagreement"] = disagree.reindex(out.index, fill_value=False).astype(bool)
    out["abstention"] = abst.reindex(out.index, fill_value=False).astype(bool)
    out["unstable"] = unstable.reindex(out.index, fill_value=False).astype(bool)
    signal = pd.Series(None, index=out.index, dtype=object)
    for name in ("unstable", "abstention", "disagreement"):  # last assignment wins: priority
        signal[out[name]] = name
    out["signal"] = signal
    return out


# ------------------------------------------------------------------------- draw
def _stratum_keys(items: pd.DataFrame, strata: list[str], source: str) -> pd.Series:
    if not strata:
        return pd.Series("", index=items.index, dtype=object)
    missing = [c for c in strata if c not in items.columns]
    if missing:
        have = ", ".join(
            c for c in items.columns if c not in ("prompt", "messages", "response", "content_hash")
        )
        raise JudgekitError(
            f"{source}: stratum column {missing[0]!r} is not item metadata (items have: {have}); "
            "fix the strata."
        )
    parts = [
        items[c].map(lambda v, c=c: f"{c}={'NA' if is_missing(v) else v}")
        for c in strata
    ]
    key = parts[0]
    for p in parts[1:]:
        key = key + "|" + p
    return key.astype(object)


def draw_sample(
    items: pd.DataFrame,
    spec: SampleSpec,
    *,
    signals: pd.DataFrame | None = None,
    source: str = "sample",
) -> tuple[pd.DataFrame, SampleSummary]:
    """Choose items for human rating. Pure: items (+ judge signals) in, design table out.

    ``items`` needs ``item_id`` and the ``spec.strata`` columns; ``signals`` is the output of
    :func:`judge_signals` (ignored unless ``spec.targeted``). Returns the design
    (:data:`DESIGN_COLUMNS`, one row per chosen item) and a summary.
    """
    if items.empty:
        raise JudgekitError(f"{source}: there are no items to sample from; add items first.")
    pop = items.reset_index(drop=True)
    pop_ids = pop["item_id"].astype(str).to_numpy()
    n_pop = len(pop)
    rng = np.random.default_rng(spec.seed)
    stratum = _stratum_keys(pop, spec.strata, source).to_numpy()
    if spec.by_conversation:
        return _by_conversation(pop, stratum, spec, source)
    signal: np.ndarray = np.full(n_pop, None, dtype=object)
    if spec.targeted and signals is not None and not signals.empty:
        raw = signals["signal"].reindex(pop_ids).to_numpy(dtype=object)
        signal = np.array([None if pd.isna(v) else v for v in raw], dtype=object)
    reason = np.full(n_pop, None, dtype=object)
    notes = _choose(rng, reason, signal, stratum, spec)
    is_chosen = reason != None  # noqa: E711 (elementwise)
    weight, uncovered = _cell_weights(signal, stratum, is_chosen)
    overlap = _overlap(rng, reason, is_chosen, spec.overlap)

    sel = np.flatnonzero(is_chosen)
    design = pd.DataFrame(
        {
            "item_id": pop_ids[sel],
            "reason": reason[sel].astype(str),
            "stratum": [s if s else None for s in stratum[sel]],
            "weight": weight[sel].astype(float),
            "overlap": overlap[sel],
        }
    )
    order = {r: i for i, r in enumerate(_REASONS)}
    design = design.sort_values("reason", key=lambda s: s.map(order), kind="stable")
    design = design.reset_index(drop=True)
    summary = SampleSummary(
        name=spec.name,
        population=n_pop,
        chosen=len(design),
        by_reason={r: int((design["reason"] == r).sum()) for r in _REASONS},
        overlap=int(design["overlap"].sum()),
        strata=len(pd.unique(stratum)) if spec.strata else 0,
        uncovered=uncovered,
        notes=notes,
    )
    return design, summary


def _choose(rng: np.random.Generator, reason: np.ndarray, signal: np.ndarray, stratum: np.ndarray,
            spec: SampleSpec) -> list[str]:
    """Mark the chosen items' ``reason`` (in place): the random share, each stratum's minimum,
    the targeted tiers of judge signals, then a random fill up to the size; returns the notes."""
    n_pop = len(reason)
    notes: list[str] = []

    def take(candidates: np.ndarray, k: int, why: str) -> None:
        k = min(k, len(candidates))
        if k <= 0:
            return
        picked = candidates if k == len(candidates) else rng.choice(candidates, k, replace=False)
        reason[picked] = why

    def free(mask: np.ndarray | None = None) -> np.ndarray:
        m = np.array([r is None for r in reason])
        if mask is not None:
            m &= mask
        return np.flatnonzero(m)

    size = min(spec.size, n_pop)
    if spec.size > n_pop:
        notes.append(f"size {spec.size} exceeds the {n_pop} items available: all are chosen.")
    take(free(), round(spec.random_share * size), "random")
    if spec.strata and spec.min_per_stratum:
        short = 0
        for key in pd.unique(stratum):
            in_s = stratum == key
            have = int(np.sum(in_s & (reason != None)))  # noqa: E711 (elementwise)
            need = spec.min_per_stratum - have
            avail = free(in_s)
            if need > len(avail):
                short += 1
            take(avail, need, "stratum")
        if short:
            notes.append(
                f"{short} strata have fewer than {spec.min_per_stratum} items: all of theirs are "
                "chosen."
            )
    chosen = int(np.sum(reason != None))  # noqa: E711
    if chosen > size:
        notes.append(f"stratum minimums raise the sample to {chosen} items (size was {size}).")
    for tier in (_TIER_1, _TIER_2):
        budget = size - int(np.sum(reason != None))  # noqa: E711
        cand = free(np.isin(signal.astype(str), tier) & (signal != None))  # noqa: E711
        k = min(budget, len(cand))
        if k <= 0:
            continue
        picked = cand if k == len(cand) else rng.choice(cand, k, replace=False)
        reason[picked] = signal[picked]
    take(free(), size - int(np.sum(reason != None)), "fill")  # noqa: E711

    return notes


def _cell_weights(signal: np.ndarray, stratum: np.ndarray,
                  is_chosen: np.ndarray) -> tuple[np.ndarray, int]:
    """Each item's weight, the inverse sampling fraction of its cell (signal x stratum), and the
    number of items in cells no chosen item covers (their weight is NaN)."""
    cell = pd.Series([f"{s}\x1f{st}" for s, st in zip(signal, stratum, strict=True)])
    chosen = pd.Series(is_chosen)
    n_cell = cell.map(cell.value_counts())
    k_cell = cell.map(cell[chosen].value_counts()).fillna(0)
    weight = (n_cell / k_cell.where(k_cell > 0)).to_numpy()
    return weight, int((k_cell == 0).sum())


def _overlap(rng: np.random.Generator, reason: np.ndarray, is_chosen: np.ndarray,
             share: float) -> np.ndarray:
    """Which chosen items a second annotator rates (1): ``share`` of them, the random-share items
    first, so the human ceiling is estimated without bias."""
    overlap = np.zeros(len(reason), dtype=int)
    k_over = round(share * int(is_chosen.sum()))
    rand_idx = np.flatnonzero(reason == "random")
    if k_over:
        overlap[rng.choice(rand_idx, min(k_over, len(rand_idx)), replace=False)] = 1
    rest = np.flatnonzero(is_chosen & (overlap == 0))
    k_rest = k_over - int(overlap.sum())
    if k_rest > 0:
        overlap[rng.choice(rest, min(k_rest, len(rest)), replace=False)] = 1
    return overlap


def _by_conversation(pop: pd.DataFrame, stratum: np.ndarray, spec: SampleSpec,
                     source: str) -> tuple[pd.DataFrame, SampleSummary]:
    from judgekit.annotation.sampling_conversations import draw_conversations

    d = draw_conversations(pop, stratum, size=spec.size, column=spec.conversation_column,
                           min_per_stratum=spec.min_per_stratum, overlap=spec.overlap, seed=spec.seed,
                           source=source)
    notes = [f"whole conversations: {d.conversations} of {d.population_conversations} conversations "
             f"({spec.conversation_column}), every turn of each chosen."] + d.notes
    design = d.design
    summary = SampleSummary(
        name=spec.name, population=len(pop), chosen=len(design),
        by_reason={r: int((design["reason"] == r).sum()) for r in _REASONS}, overlap=int(design["overlap"].sum()),
        strata=len(pd.unique(stratum)) if spec.strata else 0, uncovered=d.uncovered, notes=notes)
    return design, summary


# ------------------------------------------------------------------------ store
def sample_names(store: Store) -> list[str]:
    """Names of the samples recorded in the store."""
    return store.sample_names()


def record_sample(store: Store, name: str, design: pd.DataFrame, *, replace: bool = False) -> None:
    """Write a design into the store's ``samples`` table (one transaction).

    An existing sample of the same name is an error unless ``replace`` (a sample already pushed to
    annotators should not change under them).
    """
    if not replace:
        _check_free(store, name)
    rows = [
        SampleRow(str(r["item_id"]), str(r["reason"]), r["stratum"], float(r["weight"]),
                  int(r["overlap"]))
        for r in design[DESIGN_COLUMNS].astype(object).to_dict("records")
    ]
    store.put_sample(name, rows)


def _check_free(store: Store, name: str) -> None:
    if store.has_sample(name):
        raise JudgekitError(
            f"Sample {name!r} already exists in {store.path}; to push it again use --sample {name} "
            "(its name, not the spec file), or choose another name, or pass --replace to redraw it."
        )


def sample_design(store: Store, sample: str) -> pd.DataFrame:
    """The recorded design of ``sample``: columns ``item_id, reason, stratum, weight, overlap``.

    For agreement: ``design[design.reason == "random"].item_id`` is a simple random sample of the
    population (use unweighted); ``design.set_index("item_id").weight`` weights all chosen items
    to the population. Raises :class:`JudgekitError` when no sample has that name.
    """
    rows = store.sample_rows(sample)
    if not rows:
        known = store.sample_names()
        hint = f"recorded samples: {', '.join(known)}" if known else "draw one with `judgekit sample`"
        raise JudgekitError(f"Sample {sample!r} is not in {store.path}; {hint}.")
    df = pd.DataFrame([astuple(r) for r in rows], columns=DESIGN_COLUMNS)
    df["overlap"] = df["overlap"].astype(int)
    df["weight"] = df["weight"].astype(float)
    return df


def _where_strata(design: pd.DataFrame, items: pd.DataFrame, where: Sequence[str],
                  strata: Sequence[str]) -> pd.DataFrame:
    """``design`` with the ``where`` columns (``COL=VALUE``) leading each chosen item's stratum:
    a sample of a filtered population describes that part alone, so the design records it as a
    stratum (a later sample of the rest, or a pilot of all, then joins it as one design crossed
    by these columns, instead of passing for a simple random sample of all items)."""
    cols = [c for c in dict.fromkeys(w.partition("=")[0].strip() for w in where)
            if c not in strata]
    if not cols or design.empty:
        return design
    rows = items.assign(item_id=items["item_id"].astype(str)).drop_duplicates("item_id")
    chosen = rows.set_index("item_id").reindex(design["item_id"].astype(str)).reset_index()
    keys = _stratum_keys(chosen, cols, "--where").to_numpy()
    old = design["stratum"].to_numpy(dtype=object)
    return design.assign(stratum=[k if is_missing(o) or o == "" else f"{k}|{o}"
                                  for k, o in zip(keys, old, strict=True)])


def sample_items(
    store: Store, spec: SampleSpec, *, replace: bool = False, record: bool = True,
    where: Sequence[str] = (), groups: Sequence[str] = (),
    computed: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, SampleSummary]:
    """Draw ``spec`` from the items in ``store`` (signals from its judge ratings) and record it.

    With ``record=False`` the design is only returned (record it later with :func:`record_sample`).
    ``where`` (``COL=VALUE[,VALUE]``) restricts the population; ``groups`` (item columns: the
    analysis's groups) are checked for the labelled conversations the corrected figures need
    (:mod:`judgekit.annotation.sampling_support`). ``computed`` (``item_id`` and columns the
    caller computed, e.g. ``harm_tier`` from harm ratings) joins the items first, so the strata,
    ``where`` and ``groups`` may name the analysis's own groups.
    """
    from judgekit.annotation.sampling_support import filter_where, group_support

    every = store.items()
    if computed is not None:
        extra = computed.assign(item_id=computed["item_id"].astype(str))
        every = every.drop(columns=[c for c in extra.columns if c != "item_id"],
                           errors="ignore").merge(extra, on="item_id", how="left")
    items, where_note = filter_where(every, where)
    source = spec.where
    signals = None
    excluded = ""
    rubric: Rubric | None = rubric_named_in(spec.rubric, source) if spec.rubric else None
    if rubric is not None:
        judged = store.ratings(rubric=rubric, rater_kind="judge")
        if spec.judges:
            unknown = sorted(set(spec.judges) - set(judged["rater_id"]))
            if unknown:
                have = ", ".join(sorted(judged["rater_id"].unique())) or "none"
                raise JudgekitError(
                    f"{source}: judge {unknown[0]!r} has no ratings under {rubric.id} in "
                    f"{store.path} (judges there: {have}); fix the judges list."
                )
        signals = judge_signals(judged, spec.judges)
        if spec.exclude_rated:
            rated = set(store.ratings(rubric=rubric.id, rater_kind=["human", "reference"])["item_id"])
            keep = ~items["item_id"].isin(rated)
            if not keep.all():
                excluded = (
                    f"{int((~keep).sum())} items a human already rated are left out: the random "
                    f"share and the weights describe the {int(keep.sum())} unrated items, not all "
                    f"{len(items)}."
                )
            items = items[keep]
    elif spec.judges or spec.exclude_rated:
        raise JudgekitError(f"{source}: judges and exclude_rated need a rubric; add one.")
    design, summary = draw_sample(items, spec, signals=signals, source=source)
    design = _where_strata(design, items, where, spec.strata)
    if where_note:
        summary.notes.insert(0, where_note)
    summary.notes.extend(group_support(items, design, groups,
                                       conversation_column=spec.conversation_column))
    if excluded:
        summary.notes.append(excluded)
    if rubric is not None and spec.targeted and (signals is None or signals.empty):
        summary.notes.append(f"no judge ratings under {rubric.id}: nothing targeted by disagreement.")
    if record:
        record_sample(store, spec.name, design, replace=replace)
    elif not replace:
        _check_free(store, spec.name)
    return design, summary
