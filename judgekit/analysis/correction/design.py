"""The labelling design behind the reference's labels, as the corrected figures need it.

Prediction-powered inference needs to know how the labelled conversations were drawn. A sample
drawn with ``judgekit sample`` is recorded in the store (:func:`judgekit.annotation.sampling.
sample_design`: per chosen item its ``reason``, ``stratum`` and ``weight``). Here it becomes the
stratum of every conversation (cluster), for stratified PPI
(:func:`judgekit.stats.ppi_strata.stratified_ppi_mean`: within each stratum the labelled
conversations are a simple random sample, with inclusion probability ``n_k / N_k``, and the
strata are weighted by their share of the units):

* no recorded design → the labelled conversations are treated as a simple random sample, with
  a warning saying so;
* a design whose strata are recorded → each conversation's stratum is recomputed from the same
  item columns (``severity=4|benign_lookalike=False``), so unlabelled conversations get theirs;
* a design that chose items by judge disagreement (a targeted share) → refused: such labels are
  not a random sample within any stratum, and a PPI estimate on them would be biased;
* an active design (``judgekit sample --active``: each item with its recorded probability) →
  accepted as ``active`` (:mod:`judgekit.analysis.correction.active` weights by 1/π);
* labels in several recorded samples (a pilot, then ``sample --from-plan`` drawn from the
  conversations not yet labelled) → one design, their union (:func:`union_design`), stratified
  by the cross of their strata columns; a targeted or an active sample among them is refused;
* labelled conversations no recorded sample chose → refused (no design describes them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.store.schema import is_missing

#: reasons of a recorded design that target items by the judges' signals
_TARGETED = ("disagreement", "abstention", "unstable")


@dataclass(frozen=True)
class Reference:
    """The reference rater's labels a correction measures the judge's error on: its long
    ``ratings``, its rater id ``name``, and where the design that drew the labelled items is
    recorded (``store``; ``sample``: the recorded sample's name, None to find the one holding the
    labels)."""

    ratings: pd.DataFrame
    name: str
    store: Any = None
    sample: str | None = None


@dataclass(frozen=True)
class LabellingDesign:
    """``strata``: cluster → stratum (None: a simple random sample); ``sample``: the recorded
    sample it came from (None: no recorded design); ``warning``: what the user must know
    (None when the design is recorded); ``description``: one line for the result's notes."""

    strata: dict[str, str] | None
    sample: str | None
    warning: str | None
    description: str
    active: pd.DataFrame | None = None


def _key_columns(keys: Iterable[str]) -> list[str]:
    cols: list[str] = []
    for key in keys:
        for part in str(key).split("|"):
            name = part.split("=", 1)[0]
            if name and name not in cols:
                cols.append(name)
    return cols


def design_strata(
    items: pd.DataFrame,
    design: pd.DataFrame | None,
    *,
    labelled: Iterable[str],
    cluster_col: str,
    sample: str | None = None,
) -> LabellingDesign:
    """The :class:`LabellingDesign` of the labelled items ``labelled`` (item ids) among
    ``items`` (with ``cluster_col``, the conversation or prompt), from ``design`` (the recorded
    sample ``sample``, :func:`judgekit.annotation.sampling.sample_design`; None when there is
    none). Raises :class:`~judgekit.errors.JudgekitError` (one sentence) for a targeted design,
    labelled conversations outside the design, or strata columns the items lack."""
    its = items.assign(item_id=items["item_id"].astype(str))
    if cluster_col in its.columns:
        cl = pd.Series([str(c) if not is_missing(c) and c != "" else f"item:{i}"
                        for i, c in zip(its["item_id"], its[cluster_col], strict=True)],
                       index=its["item_id"])
    else:
        cl = pd.Series(its["item_id"].to_numpy(), index=its["item_id"])
    lab_clusters = set(cl.reindex(pd.Index(list(map(str, labelled)))).dropna())
    if design is None:
        msg = ("warning: the reference's labels come from no recorded sampling design, so the "
               f"{len(lab_clusters)} labelled {cluster_col} values are treated as a simple "
               "random sample; if they were drawn otherwise (by stratum, by disagreement) the "
               "corrected figures are biased — draw them with `judgekit sample` and pass "
               "--sample NAME.")
        return LabellingDesign(None, None, msg, "labelled conversations: treated as a simple "
                                                "random sample (no recorded design)")
    name = sample or "the sample"
    union = "" if sample is None or "+" not in sample else (
        f"; the recorded samples {', '.join(sample.split('+'))}, each drawn at random (within "
        "strata) from the units not yet labelled, are one design: in each cell of their strata "
        "the labelled units are a random sample given their number")
    d = design.assign(item_id=design["item_id"].astype(str))
    if (d["reason"] == "active").any():
        return LabellingDesign(None, sample, None, f"labelled conversations: an active design "
                               f"(sample {name}), each weighted by 1/its recorded probability", d)
    targeted = d[d["reason"].isin(_TARGETED)]
    if len(targeted):
        raise JudgekitError(
            f"sample {name!r} chose {len(targeted)} items by the judges' "
            f"{targeted['reason'].iloc[0]}, so its labels are not a random sample and a "
            "corrected figure on them would be biased without recorded probabilities; draw it "
            "with `judgekit sample --active` (which records them) or without a targeted share.")
    in_design = set(cl.reindex(pd.Index(d["item_id"])).dropna())
    outside = sorted(lab_clusters - in_design)
    if outside:
        raise JudgekitError(
            f"{len(outside)} labelled {cluster_col} values (e.g. {outside[0]!r}) are not in "
            f"sample {name!r}, so its design does not describe them; pass the --sample they "
            "were drawn in, or label only that sample's items.")
    keys = [k for k in d["stratum"].tolist() if not is_missing(k) and k != ""]
    if not keys:
        return LabellingDesign(None, sample, None,
                               f"labelled conversations: a simple random sample ({name}){union}")
    cols = _key_columns(keys)
    missing = [c for c in cols if c not in its.columns]
    if missing:
        raise JudgekitError(
            f"sample {name!r} is stratified by {missing[0]!r}, which the items no longer have; "
            "re-import the items with that column or draw the sample again.")
    parts = [its[c].map(lambda v, c=c: f"{c}={'NA' if is_missing(v) else v}") for c in cols]
    key = parts[0]
    for p in parts[1:]:
        key = key + "|" + p
    _check_recorded(d, dict(zip(its["item_id"], zip(*parts, strict=True), strict=True)), cols,
                    name)
    first = pd.DataFrame({"cluster": cl.to_numpy(), "key": key.to_numpy()}).drop_duplicates(
        "cluster")
    strata = dict(zip(first["cluster"], first["key"], strict=True))
    return LabellingDesign(strata, sample, None,
                           f"labelled conversations: stratified by {', '.join(cols)} "
                           f"({len(set(strata.values()))} strata, sample {name}); stratified "
                           f"PPI weights each stratum by its share of the units{union}")


def _check_recorded(design: pd.DataFrame, now: dict[str, tuple[str, ...]], cols: list[str],
                    name: str) -> None:
    """One sentence when a chosen item's recorded stratum is not its stratum now (by the same
    columns): the recorded inclusion probabilities describe the strata at the draw (a computed
    column such as ``harm_tier`` moves when harm ratings are added), so recomputed strata would
    weight the labels by a design that was not drawn."""
    for item, rec in zip(design["item_id"], design["stratum"], strict=True):
        if is_missing(rec) or rec == "" or item not in now:
            continue
        parts = dict(zip(cols, now[item], strict=True))
        current = "|".join(parts.get(p.split("=", 1)[0], "?") for p in str(rec).split("|"))
        if current != rec:
            raise JudgekitError(
                f"item {item!r} of sample {name!r} was drawn in stratum {rec} but is now in "
                f"{current}, so the recorded design no longer describes the strata; restore the "
                "items' columns (or harm ratings) as they were at the draw, or draw the sample "
                "again.")


def union_design(named: list[tuple[str, pd.DataFrame]]) -> tuple[pd.DataFrame, str]:
    """One design from the recorded samples ``named`` (name, :func:`~judgekit.annotation.sampling.
    sample_design`), and its name (``pilot+main``).

    Samples drawn one after the other, each a random sample (within strata) of the units not yet
    labelled — a pilot, then ``sample --from-plan`` — are one design: within each cell of the
    cross of their strata columns, the union of their units is a random sample of the cell given
    its number (a simple random sample of the rest, added to one of the whole, is a simple random
    sample of the whole). An item in several samples counts once. Refused, in one sentence: a
    sample that chose items by the judges' signals (no recorded probabilities), and an active
    sample beside another (its probabilities describe it alone)."""
    if len(named) == 1:
        return named[0][1], named[0][0]
    for name, d in named:
        targeted = d[d["reason"].isin(_TARGETED)]
        if len(targeted):
            raise JudgekitError(
                f"sample {name!r} chose {len(targeted)} items by the judges' "
                f"{targeted['reason'].iloc[0]}, so it cannot join the other samples holding labels "
                "as one design (its items have no recorded probabilities); if the labels were "
                "drawn in the others, name them with --sample, else label only the other "
                "samples' items, or draw it with `judgekit sample --active`, alone.")
        if (d["reason"] == "active").any():
            others = ", ".join(repr(n) for n, _ in named if n != name)
            raise JudgekitError(
                f"sample {name!r} is an active design, whose recorded probabilities describe it "
                f"alone, so it cannot be combined with {others}; keep the labels of one design "
                "in this store (a copy of it for the other).")
    union = pd.concat([d.assign(item_id=d["item_id"].astype(str)) for _, d in named],
                      ignore_index=True).drop_duplicates("item_id")
    return union.reset_index(drop=True), "+".join(n for n, _ in named)


def find_sample(store: object, labelled: Iterable[str], sample: str | None
                ) -> tuple[pd.DataFrame | None, str | None]:
    """The recorded design behind the labelled items: the union (:func:`union_design`) of the
    recorded samples holding labelled items and those ``sample`` names (one name or several,
    comma-separated); None when no sample does. Naming one sample of several that hold labels
    does not set the others' labels aside: labels known are used, and a sample drawn from the
    units not yet labelled describes the population only together with the ones before it. When
    the named samples drew every labelled item, they alone are the design (a sample that only
    shares items with them, e.g. one drawn later by disagreement and never labelled, is left
    out)."""
    from judgekit.annotation.sampling import sample_design

    named = [s.strip() for s in (sample or "").split(",") if s.strip()]
    designs = {name: sample_design(store, name) for name in named}  # type: ignore[arg-type]
    lab = set(map(str, labelled))
    drawn = {str(i) for d in designs.values() for i in d["item_id"]}
    if designs and lab <= drawn:
        # the named samples drew every label: another sample that merely shares items with
        # them (drawn later for another purpose, never labelled) does not describe the labels
        return union_design(sorted(designs.items()))
    for name in store.sample_names():  # type: ignore[attr-defined]
        if name not in designs:
            d = sample_design(store, name)  # type: ignore[arg-type]
            if lab & set(d["item_id"].astype(str)):
                designs[name] = d
    if not designs:
        return None, None
    return union_design(sorted(designs.items()))
