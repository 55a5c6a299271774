"""What a selective policy reads from the store: each cascade judge's label and confidence per
item, the humans' label where there is one, and the split of the labelled items into calibration
and held-out items.

A judge's label on an item is its modal label over its ``ok`` trials (the first on ties); no ``ok``
trial gives no label and a NaN confidence (never kept). The items are every item a cascade judge
was asked about, so an item every judge abstained or errored on is escalated, never dropped. The confidence comes from the stage's
:class:`~judgekit.selective.policy.Confidence`:

* ``trials``: ``#{trials with the label} / #{ok trials}`` (:func:`judgekit.stats.confidence.trial_agreement_confidence`);
* ``panel``: ``#{panel judges whose label is this judge's} / #{panel judges with a label}``, the
  panel being this judge and the judges ``with`` (:func:`judgekit.stats.confidence.support_confidence`);
* ``logprobs``: the mean over ``ok`` trials of the probability each trial's answer had (recorded
  with its call from the provider's log-probabilities), a trial with another label counting 0;
  a trial without a recorded probability makes the confidence NaN (never kept);
* ``imported``: as ``logprobs``, with the confidence imported with each rating
  (:mod:`judgekit.store.rating_confidence`);
* ``by_label`` / ``constant``: the policy's values.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.agreement.adjudicate import PEOPLE, majority_labels
from judgekit.errors import JudgekitError
from judgekit.selective.policy import CONSENSUS, Confidence, SelectivePolicy
from judgekit.stats.confidence import support_confidence, trial_agreement_confidence
from judgekit.store.database import Store

#: ``{(judge id, item id, trial): probability of the judge's answer}`` from its recorded call
CallConfidence = dict[tuple[str, str, int], float]


@dataclass(frozen=True)
class Judgments:
    """The cascade's judgments on every item some cascade judge rated.

    ``labels[j][i]`` / ``confidences[j][i]``: judge ``j``'s label (None: none) and confidence (NaN:
    none) on ``item_ids[i]``; ``human[i]``: the reference label (None: the item is not labelled).
    """

    judges: tuple[str, ...]
    item_ids: tuple[str, ...]
    labels: tuple[tuple[str | None, ...], ...]
    confidences: tuple[npt.NDArray[np.float64], ...]
    human: tuple[str | None, ...]

    def labelled(self) -> npt.NDArray[np.int64]:
        """Indices of the items with a human label."""
        return np.flatnonzero(np.array([h is not None for h in self.human], dtype=bool))

    def unlabelled(self) -> npt.NDArray[np.int64]:
        """Indices of the items without a human label (the new items a cascade is applied to)."""
        return np.flatnonzero(np.array([h is None for h in self.human], dtype=bool))

    def agreements(self, idx: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
        """Per judge, 1 where its label equals the human label on the items ``idx``."""
        return [
            np.array([int(lab[i] is not None and lab[i] == self.human[i]) for i in idx], dtype=np.int64)
            for lab in self.labels
        ]

    def confidence_at(self, idx: npt.NDArray[np.int64]) -> list[npt.NDArray[np.float64]]:
        """Per judge, the confidences on the items ``idx``."""
        return [c[idx] for c in self.confidences]


def split_labelled(j: Judgments, fraction: float, seed: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(calibration, held_out)`` indices: a random ``fraction`` of the labelled items (rounded
    to the nearest item, drawn by ``numpy.random.default_rng(seed).permutation``) and the rest."""
    lab = j.labelled()
    perm = np.random.default_rng(seed).permutation(lab.size)
    n_cal = int(round(fraction * lab.size))
    return np.sort(lab[perm[:n_cal]]), np.sort(lab[perm[n_cal:]])


def _modal(votes: list[str]) -> tuple[str | None, float]:
    lc = trial_agreement_confidence(votes)
    return (None if lc.label is None else str(lc.label)), lc.confidence


def read_judgments(
    store: Store, policy: SelectivePolicy, *, call_confidence: CallConfidence | None = None
) -> Judgments:
    """The policy's judgments from ``store`` (ratings under the policy's rubric, current hash).

    ``call_confidence``: ``{(judge, item id, trial): probability of the answer}`` for ``logprobs``
    stages (read from the calls by the caller). Raises :class:`JudgekitError` naming a rater the store lacks.
    """
    _check_labels(policy)
    kinds = _check_roles(store, policy)
    consensus = policy.reference == CONSENSUS
    raters = [r for r in policy.raters() if r != CONSENSUS]
    cols = ["item_id", "rater_id", "label", "trial", "status"]
    rows = _ratings(store, policy, raters, cols)
    present = {r[1] for r in rows}
    for name in raters:
        if name not in present:
            what = "reference" if name == policy.reference else "judge"
            raise JudgekitError(
                f"Selective policy: the {what} {name!r} has no rating under rubric {policy.rubric!r} "
                f"in {store.path}; import its labels first or fix the policy's rater ids."
            )
    votes: dict[str, dict[str, list[tuple[str, int]]]] = defaultdict(lambda: defaultdict(list))
    judges = policy.judges()
    # every item a cascade judge was asked about, labelled or not: one no judge could label
    # (all abstained or errored) has NaN confidences, so it is escalated, never lost
    asked: set[str] = set()
    for item_id, rater, label, trial, status in rows:
        if rater in judges:
            asked.add(item_id)
        if status == "ok" and label is not None:
            votes[rater][item_id].append((str(label), int(trial)))
    items = sorted(asked)
    modal = {r: {i: _modal([v for v, _ in vs]) for i, vs in votes[r].items()} for r in raters}
    labels = tuple(tuple(modal[j].get(i, (None, math.nan))[0] for i in items) for j in judges)
    confs = tuple(
        np.array([_confidence(stage.confidence, stage.judge, i, modal, votes, call_confidence)
                  for i in items], dtype=np.float64)
        for stage in policy.cascade
    )
    if consensus:
        import pandas as pd

        humans = sorted(r for r, k in kinds.items() if k == "human")
        majority = majority_labels(pd.DataFrame(_ratings(store, policy, humans, cols), columns=cols), humans).labels
        human = tuple(majority.get(i) for i in items)
    else:
        human = tuple(modal[policy.reference].get(i, (None, math.nan))[0] for i in items)
    return Judgments(tuple(judges), tuple(items), labels, confs, human)


def _check_roles(store: Store, policy: SelectivePolicy) -> dict[str, str]:
    """The rater kinds under the policy's rubric (rater id -> kind), after checking each rater's
    role: the reference is a human or reference rater (or ``consensus``, the human raters'
    majority), each cascade judge and each panel judge a confidence reads is a judge — a
    confidence read from people would be the humans' agreement with themselves."""
    try:
        df = store.ratings(rubric=policy.rubric, columns=["rater_id", "rater_kind"])
    except (FileNotFoundError, ValueError) as exc:  # an unknown rubric name
        raise JudgekitError(f"Selective policy: rubric {policy.rubric!r}: {exc}") from None
    kinds = dict(zip(df["rater_id"].astype(str), df["rater_kind"].astype(str), strict=True))
    ref = policy.reference
    if ref == CONSENSUS:
        if not any(k == "human" for k in kinds.values()):
            raise JudgekitError(f"Selective policy: reference consensus is the human raters' majority, "
                                f"and no human rater has ratings under rubric {policy.rubric!r} in {store.path}.")
    elif ref in kinds and kinds[ref] not in PEOPLE:
        raise JudgekitError(
            f"Selective policy: the reference {ref!r} is a {kinds[ref]} rater, not a human or reference "
            f"rater (a judge's agreement with a judge proves nothing); name one of "
            f"{', '.join(sorted(r for r, k in kinds.items() if k in PEOPLE)) or 'none'} or consensus."
        )
    for k, stage in enumerate(policy.cascade):
        for who, role in [(stage.judge, "is"), *((o, "reads the panel judge") for o in stage.confidence.with_ or [])]:
            if kinds.get(who, "judge") != "judge":
                what = f"{stage.judge!r} is" if role == "is" else f"{stage.judge!r} reads the panel rater {who!r}, which is"
                raise JudgekitError(
                    f"Selective policy: cascade[{k}] {what} a {kinds[who]} rater; a cascade and its "
                    "panels are judges (a confidence from people is the humans agreeing with themselves)."
                )
    return kinds


def _check_labels(policy: SelectivePolicy) -> None:
    """A ``by_label`` stage may only name labels of the rubric (a typo would silently give 0)."""
    from judgekit.rubric.model import load_rubric

    try:
        codes = [lab.code for lab in load_rubric(policy.rubric).labels]
    except (FileNotFoundError, ValueError, JudgekitError) as exc:
        raise JudgekitError(f"Selective policy: rubric {policy.rubric!r}: {exc}") from None
    for k, stage in enumerate(policy.cascade):
        for label in stage.confidence.values or {}:
            if label not in codes:
                raise JudgekitError(
                    f"Selective policy: cascade[{k}] ({stage.judge}) confidence.values names label "
                    f"{label!r}, which rubric {policy.rubric!r} does not have; use one of {', '.join(codes)}."
                )


def _ratings(store: Store, policy: SelectivePolicy, raters: list[str], cols: list[str]) -> list[tuple[Any, ...]]:
    try:
        df = store.ratings(rubric=policy.rubric, rater_ids=raters, columns=cols)
    except (FileNotFoundError, ValueError) as exc:  # an unknown rubric name
        raise JudgekitError(f"Selective policy: rubric {policy.rubric!r}: {exc}") from None
    return list(df.itertuples(index=False, name=None))


def _confidence(
    spec: Confidence, judge: str, item: str, modal: dict[str, dict[str, tuple[str | None, float]]],
    votes: dict[str, dict[str, list[tuple[str, int]]]], call_confidence: CallConfidence | None,
) -> float:
    label, share = modal[judge].get(item, (None, math.nan))
    if label is None:
        return math.nan
    if spec.source == "trials":
        return share
    if spec.source == "panel":
        others = [modal[o].get(item, (None, math.nan))[0] for o in spec.with_ or []]
        return support_confidence(label, others)
    if spec.source == "by_label":
        return (spec.values or {}).get(label, spec.default)
    if spec.source == "constant":
        return float(spec.value if spec.value is not None else math.nan)
    # logprobs, imported: a probability per trial, recorded with its call or imported with it
    probs = []
    for trial_label, trial in votes[judge][item]:
        p = None if call_confidence is None else call_confidence.get((judge, item, trial))
        if p is None:
            return math.nan
        probs.append(p if trial_label == label else 0.0)
    return float(np.mean(probs))





def load_call_confidence(store: Store, policy: SelectivePolicy) -> CallConfidence | None:
    """The recorded answer probabilities of the policy's ``logprobs`` judges and the imported
    confidences of its ``imported`` judges (None when no stage reads either), under the policy
    rubric's current hash."""
    from judgekit.rubric.model import load_rubric
    from judgekit.store.calls import rating_confidences
    from judgekit.store.rating_confidence import imported_confidences

    called = [s.judge for s in policy.cascade if s.confidence.source == "logprobs"]
    imported = [s.judge for s in policy.cascade if s.confidence.source == "imported"]
    if not called and not imported:
        return None
    _check_labels(policy)
    rubric_hash = load_rubric(policy.rubric).hash
    return {**rating_confidences(store, called, rubric_hash), **imported_confidences(store, imported, rubric_hash)}
__all__ = ["CallConfidence", "Judgments", "load_call_confidence", "read_judgments", "split_labelled"]
