"""Apply a calibrated cascade to new items (``judgekit escalate apply``) and record who labels
what as a sample design in the store.

Each item without a human label goes to the first judge of the cascade whose confidence reaches
its threshold; the rest are escalated to people. The outcome is recorded as a sample
(:func:`judgekit.annotation.sampling.record_sample`): one row per item, ``reason`` ``kept`` (its
``stratum`` the judge that keeps it) or ``escalated`` (``stratum`` ``humans``), weight 1 (every
item of the population is in one stratum or the other: a census split by confidence, not a
random sample) — so analyses can tell judge labels from human labels, and ``judgekit labelstudio
push --escalated NAME`` sends exactly the escalated items to annotators.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pandas as pd

from judgekit.annotation.sampling import DESIGN_COLUMNS, record_sample, sample_design
from judgekit.errors import JudgekitError
from judgekit.selective.calibrate import CalibrationFile, check_anchored
from judgekit.selective.judgments import CallConfidence, read_judgments
from judgekit.selective.policy import SelectivePolicy
from judgekit.stats.selective_cascade import apply_cascade
from judgekit.store.database import Store

_KEPT = "kept"
_ESCALATED = "escalated"
#: the stratum of escalated items in the recorded design
HUMANS = "humans"


@dataclass(frozen=True)
class Assignment:
    """Who labels one new item: ``judge`` (None: escalated to people), with the judge's label and
    confidence when kept."""

    item_id: str
    judge: str | None
    label: str | None
    confidence: float


def apply_policy(
    store: Store, policy: SelectivePolicy, cal: CalibrationFile, *,
    call_confidence: CallConfidence | None = None, where: str = "",
) -> list[Assignment]:
    """Apply the thresholds of ``cal`` (checked against ``policy`` and ``store``:
    :func:`~judgekit.selective.calibrate.check_anchored`; ``where``: the file's name for its
    message) to the items of ``store`` that the cascade rated and that have no human (reference)
    label."""
    j = read_judgments(store, policy, call_confidence=call_confidence)
    check_anchored(cal, store, policy, j, where or "given")
    idx = j.unlabelled()
    who = apply_cascade(j.confidence_at(idx), cal.thresholds())
    out = []
    for r, i in enumerate(idx):
        k = who[r]
        if k is None:
            out.append(Assignment(j.item_ids[i], None, None, math.nan))
        else:
            out.append(Assignment(j.item_ids[i], j.judges[k], j.labels[k][i], float(j.confidences[k][i])))
    return out


def _escalation_design(assignments: list[Assignment]) -> pd.DataFrame:
    """The sample design of an application (columns of :data:`DESIGN_COLUMNS`)."""
    rows = [
        {"item_id": a.item_id, "reason": _KEPT if a.judge else _ESCALATED,
         "stratum": a.judge or HUMANS, "weight": 1.0, "overlap": 0}
        for a in assignments
    ]
    return pd.DataFrame(rows, columns=DESIGN_COLUMNS)


def record_escalation(store: Store, name: str, assignments: list[Assignment], *, replace: bool = False) -> None:
    """Record ``assignments`` as sample ``name`` (an existing name is refused unless ``replace``)."""
    if not assignments:
        raise JudgekitError("Nothing to record: the cascade rated no item without a human label.")
    record_sample(store, name, _escalation_design(assignments), replace=replace)


def coverage_lines(assignments: list[Assignment]) -> list[str]:
    """Per judge the items it keeps, and the escalated ones."""
    n = len(assignments)
    by = Counter(a.judge or HUMANS for a in assignments)
    lines = [f"{n} new items (rated by the cascade, no human label):"]
    for who, k in by.items():
        what = "escalated to people" if who == HUMANS else f"kept by {who}"
        lines.append(f"  {what:<28} {k:6d}  ({100 * k / n:.1f}%)" if n else f"  {what}")
    return lines


def escalated_design(store: Store, name: str) -> pd.DataFrame:
    """The escalated items of the selective sample ``name`` (what ``labelstudio push --escalated``
    sends). Refuses a sample that is not an escalation record or escalates nothing."""
    design = sample_design(store, name)
    if not set(design["reason"]).issubset({_KEPT, _ESCALATED}):
        raise JudgekitError(f"Sample {name!r} is not a selective escalation (record one with "
                            "`judgekit escalate apply --record NAME`); push it with --sample instead.")
    out = design[design["reason"] == _ESCALATED].reset_index(drop=True)
    if out.empty:
        raise JudgekitError(f"Sample {name!r} escalates no item: the cascade keeps all of them.")
    return out


def selective_labels(store: Store, name: str, policy: SelectivePolicy) -> pd.DataFrame:
    """The labels of the selective study ``name``: one row per item with ``label`` and
    ``labelled_by`` (the judge that kept it, or ``humans``: the modal label of the human raters,
    None while nobody has labelled it) and ``source`` (``judge`` | ``human``)."""
    design = sample_design(store, name)
    if not set(design["reason"]).issubset({_KEPT, _ESCALATED}):
        raise JudgekitError(f"Sample {name!r} is not a selective escalation.")
    judges = sorted({s for s in design["stratum"] if s != HUMANS})
    cols = ["item_id", "rater_id", "rater_kind", "label", "status"]
    r = store.ratings(rubric=policy.rubric, columns=cols)
    r = r[(r["status"] == "ok") & r["label"].notna()]
    judge_votes = r[r["rater_id"].isin(judges)].groupby(["item_id", "rater_id"])["label"].agg(list)
    human_votes = r[r["rater_kind"] == "human"].groupby("item_id")["label"].agg(list)
    rows = []
    for item, who in zip(design["item_id"], design["stratum"], strict=True):
        if who == HUMANS:
            votes = human_votes.get(item, [])
            source = "human"
        else:
            votes = judge_votes.get((item, who), [])
            source = "judge"
        label = Counter(votes).most_common(1)[0][0] if len(votes) else None
        rows.append({"item_id": item, "label": label, "labelled_by": who, "source": source})
    return pd.DataFrame(rows, columns=["item_id", "label", "labelled_by", "source"])


__all__ = [ "HUMANS", "Assignment", "apply_policy", "coverage_lines",
           "escalated_design", "record_escalation", "selective_labels"]
