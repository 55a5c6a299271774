"""A reference made from several human annotators (``judgekit adjudicate``).

Each annotator's label on an item is its modal label over its ``ok`` trials (a tie between its own
trials gives it no label there). The reference label of an item is the label most of the
annotators who labelled it gave (a strict plurality); an item where two labels tie for most votes
is **left out** and listed for adjudication by a person, and an item fewer than ``min_raters``
annotators labelled is left out too (default 1, as ``agree``'s consensus; ``--min-raters 2`` makes
no item rest on one annotator alone). With ``min_raters`` 1 over every human rater this is the
``consensus`` reference of ``agree``, ``analyze --correct`` and ``escalate``
(:func:`consensus_ratings`), so the three read the same labels.

:func:`single_annotator_agreement`: Cohen's κ of one annotator against the consensus of the
others (leave-one-out, same rule), on the items both have, for the warning printed when one
annotator is used as the reference while others exist.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgekit.agreement.kappa import cohen_kappa
from judgekit.errors import JudgekitError
from judgekit.rubric.views import ViewSource

#: rater kinds whose labels may make a reference (a judge's never do)
PEOPLE = ("human", "reference")


@dataclass(frozen=True)
class Adjudication:
    """The outcome of :func:`majority_labels`.

    ``labels``: item id -> reference label (items with a strict plurality among at least
    ``min_raters`` annotators); ``ties``: item id -> the annotators' votes (label -> count) of the
    items left for a person to adjudicate; ``too_few``: item id -> how many annotators labelled it
    (fewer than ``min_raters``)."""

    raters: tuple[str, ...]
    min_raters: int
    labels: dict[str, str] = field(default_factory=dict)
    ties: dict[str, dict[str, int]] = field(default_factory=dict)
    too_few: dict[str, int] = field(default_factory=dict)
    #: item id -> how many annotators labelled it (every item some annotator labelled)
    n_votes: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One sentence: how many items have a reference label and why the others have none."""
        parts = [f"{len(self.labels)} items have a reference label (the majority of "
                 f"{', '.join(self.raters)})"]
        if self.ties:
            parts.append(f"{len(self.ties)} tie and are left out for adjudication")
        single = sum(1 for i in self.labels if self.n_votes.get(i) == 1)
        if single:
            parts.append(f"{single} of them rest on one annotator's label alone")
        if self.too_few:
            parts.append(f"{len(self.too_few)} have fewer than {self.min_raters} annotators' labels "
                         "and are left out")
        return "; ".join(parts) + "."


def rater_labels(ratings: pd.DataFrame) -> dict[str, dict[str, str]]:
    """rater id -> item id -> the rater's modal label over its ``ok`` trials (no entry where its
    own trials tie). ``ratings``: columns item_id, rater_id, label, status."""
    ok = ratings[(ratings["status"] == "ok") & ratings["label"].notna()]
    out: dict[str, dict[str, str]] = {}
    for (rater, item), labels in ok.groupby(["rater_id", "item_id"], sort=True)["label"]:
        top = Counter(str(v) for v in labels).most_common(2)
        if len(top) == 1 or top[0][1] > top[1][1]:
            out.setdefault(str(rater), {})[str(item)] = top[0][0]
    return out


def majority_labels(ratings: pd.DataFrame, raters: Sequence[str], *, min_raters: int = 1) -> Adjudication:
    """The majority reference of ``raters`` from ``ratings`` (see the module docstring)."""
    if min_raters < 1:
        raise JudgekitError(f"--min-raters must be at least 1, not {min_raters}.")
    raters = list(dict.fromkeys(raters))  # an annotator named twice votes once
    per = rater_labels(ratings[ratings["rater_id"].astype(str).isin(list(raters))])
    votes: dict[str, Counter[str]] = {}
    for rater in raters:
        for item, label in per.get(rater, {}).items():
            votes.setdefault(item, Counter())[label] += 1
    out = Adjudication(tuple(raters), min_raters)
    for item in sorted(votes):
        count = votes[item]
        n = sum(count.values())
        out.n_votes[item] = n
        top = count.most_common(2)
        if n < min_raters:
            out.too_few[item] = n
        elif len(top) > 1 and top[0][1] == top[1][1]:
            out.ties[item] = dict(sorted(count.items()))
        else:
            out.labels[item] = top[0][0]
    return out


def consensus_ratings(ratings: pd.DataFrame, kinds: dict[str, str], rubric: Any) -> pd.DataFrame:
    """The ``consensus`` reference as a ratings frame (one ``ok`` rating per item where the human
    annotators have a strict majority, as ``agree``'s consensus; rater id ``consensus``, kind reference):
    what ``analyze --correct`` and ``escalate`` read for ``--reference consensus``.
    ``ratings``: every rating under ``rubric``; ``kinds``: rater id -> kind."""
    humans = sorted(r for r, k in kinds.items() if k == "human")
    if not humans:
        raise JudgekitError(
            f"The consensus reference is the majority of the human raters, and the store has none "
            f"under {rubric.id}; import human labels first."
        )
    adj = majority_labels(ratings, humans)
    return reference_frame(adj, rubric, "consensus")


def reference_frame(adj: Adjudication, rubric: Any, name: str, *, created_at: float = 0.0) -> pd.DataFrame:
    """The ratings a reference rater ``name`` holds for ``adj`` (one per labelled item), in the
    store's rating columns."""
    items = list(adj.labels)
    return pd.DataFrame({
        "item_id": items,
        "rater_id": name,
        "rater_kind": "reference",
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "label": [adj.labels[i] for i in items],
        "value": [float(rubric.values[adj.labels[i]]) for i in items],
        "trial": 0,
        "status": "ok",
        "rationale": None,
        "created_at": created_at,
        "source": f"adjudicate:majority:{','.join(adj.raters)}",
    }, columns=["item_id", "rater_id", "rater_kind", "rubric", "rubric_hash", "label", "value",
                "trial", "status", "rationale", "created_at", "source"])


def adjudicate(store: Any, rubric: Any, raters: Sequence[str], name: str, *,
               min_raters: int = 1) -> Adjudication:
    """Write the majority of the human ``raters`` under ``rubric`` as the reference rater ``name``
    (kind reference, one ``ok`` rating per item with a majority) and return the
    :class:`Adjudication`. Any problem is one sentence, with nothing written: fewer than two
    raters, a rater without ratings under the rubric or that is a judge, ``name`` one of the
    raters or already a rater under the rubric, or no item with a majority."""
    if len(set(raters)) < 2:
        raise JudgekitError(f"--raters names {len(set(raters))} rater; a reference from several annotators "
                            "needs at least two.")
    if name in raters:
        raise JudgekitError(f"--as {name!r} is one of --raters; name the new reference rater otherwise.")
    if name == "consensus":  # the word --reference reads as the humans' majority computed anew
        raise JudgekitError("--as 'consensus' is the name --reference gives the humans' majority; "
                            "name the new reference rater otherwise (e.g. majority).")
    every = store.ratings(rubric=rubric, columns=["item_id", "rater_id", "rater_kind", "label", "status"])
    kinds = dict(zip(every["rater_id"].astype(str), every["rater_kind"].astype(str), strict=True))
    for rater in raters:
        if rater not in kinds:
            people = sorted(r for r, k in kinds.items() if k in PEOPLE)
            raise JudgekitError(f"--raters: {rater!r} has no rating under {rubric.ref} in {store.path}; "
                                f"human raters there: {', '.join(people) or 'none'}.")
        if kinds[rater] not in PEOPLE:
            raise JudgekitError(f"--raters: {rater!r} is a {kinds[rater]} rater; a reference is made "
                                "from human annotators only (a judge's labels are what it checks).")
    if name in kinds:
        raise JudgekitError(f"--as {name!r} already has ratings under {rubric.ref}; choose a new name.")
    adj = majority_labels(every, raters, min_raters=min_raters)
    if not adj.labels:
        raise JudgekitError(f"No item has a majority of {', '.join(raters)} under {rubric.ref} "
                            f"({len(adj.ties)} tie, {len(adj.too_few)} have too few labels); nothing written.")
    import time

    store.put_ratings(reference_frame(adj, rubric, name, created_at=time.time()))
    return adj


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Cohen's κ of one annotator against the consensus of the others on ``n`` items both have."""

    rater: str
    others: tuple[str, ...]
    kappa: float
    n: int

    def warning(self) -> str:
        k = "undefined" if math.isnan(self.kappa) else f"{self.kappa:.3f}"
        return (f"warning: the reference {self.rater} is one annotator while {len(self.others)} other "
                f"human rater(s) exist ({', '.join(self.others)}); its Cohen's kappa with their "
                f"consensus is {k} (n = {self.n}): write a reference from all of them with "
                f"`judgekit adjudicate --raters {','.join((self.rater, *self.others))} --as NAME`.")


def single_annotator_agreement(ratings: pd.DataFrame, kinds: dict[str, str], rater: str,
                               codes: Sequence[str]) -> AnnotatorAgreement | None:
    """κ of the human ``rater`` against the majority of the other human raters (ties and items
    only one other rated count too: an item needs one other annotator), or None when ``rater``
    is not a human rater or no other human rater exists."""
    others = tuple(sorted(r for r, k in kinds.items() if k == "human" and r != rater))
    if kinds.get(rater) != "human" or not others:
        return None
    mine = rater_labels(ratings[ratings["rater_id"].astype(str) == rater]).get(rater, {})
    rest = majority_labels(ratings, others, min_raters=1).labels
    both = sorted(set(mine) & set(rest))
    kappa = (cohen_kappa([mine[i] for i in both], [rest[i] for i in both], labels=list(codes))
             if both else math.nan)
    return AnnotatorAgreement(rater, others, kappa, len(both))


def _annotations(store: Any, rubric: Any) -> pd.DataFrame:
    """The ratings under ``rubric`` (the columns the warning reads); a view of a rubric
    (:class:`judgekit.rubric.views.ViewSource`) gives whole rows in the view's codes."""
    if isinstance(store, ViewSource):
        return store.ratings(rubric=rubric)
    return store.ratings(rubric=rubric, columns=["item_id", "rater_id", "rater_kind", "label", "status"])


def reference_warning(store: Any, rubric: Any, rater: str | None) -> str | None:
    """The one-line warning that the reference ``rater`` is a single human annotator while other
    human raters exist under ``rubric`` (with its κ and n against their consensus), else None
    (``consensus``, an adjudicated or judge rater, or the only human). The one function behind
    the warning of ``agree``, ``gate``, ``analyze --correct`` and ``escalate``; ``store``: a
    store or a view of one."""
    if rater is None:
        return None
    if rater == "consensus":  # the majority of every human, computed anew: no single annotator
        return None
    every = _annotations(store, rubric)
    kinds = dict(zip(every["rater_id"].astype(str), every["rater_kind"].astype(str), strict=True))
    found = single_annotator_agreement(every, kinds, rater, list(rubric.codes))
    return None if found is None else found.warning()


__all__ = ["PEOPLE", "Adjudication", "AnnotatorAgreement", "adjudicate", "consensus_ratings", "majority_labels",
           "rater_labels", "reference_frame", "reference_warning", "single_annotator_agreement"]
