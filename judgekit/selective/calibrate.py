"""Calibrate a selective cascade on the store's human-labelled items (``judgekit escalate
calibrate``): per judge the confidence threshold chosen by fixed-sequence testing with the exact
Clopper-Pearson bound (:func:`judgekit.stats.selective_cascade.calibrate_cascade`), checked on the
held-out labelled items, with the coverage-agreement curves the report draws.

The guarantee (Jung, Brahman & Choi, ICLR 2025): if the calibration items and the new items are
exchangeable (drawn from the same population, e.g. a random sample of it), then with probability
at least ``1 - delta`` over the calibration sample, each judge's **expected** disagreement with the
humans on the items it keeps (the rate over the population) is at most ``alpha``. The share
realised on one finite batch of new items varies around that rate and can exceed ``alpha``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, ValidationError

from judgekit.core.atomic import write_text_atomic
from judgekit.core.config import ConfigModel, first_error
from judgekit.core.paths import read_limited
from judgekit.core.values import loads_json_strict
from judgekit.errors import JudgekitError
from judgekit.selective.judgments import CallConfidence, Judgments, read_judgments, split_labelled
from judgekit.selective.policy import SelectivePolicy
from judgekit.stats.selective_cascade import apply_cascade, calibrate_cascade
from judgekit.store.calls import usage_by_judge
from judgekit.store.database import Store

#: alphas at which the cascade's coverage-agreement curve is drawn
_CURVE_ALPHAS = (0.02, 0.03, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3)
#: format of the calibration JSON
_FORMAT = "judgekit.selective.calibration/1"


@dataclass(frozen=True)
class StageResult:
    """One judge's outcome: its threshold (None: keeps nothing), the calibration items it saw
    (those earlier judges left), how many it keeps and their agreement and bound, its share of all
    calibration items, and why."""

    judge: str
    threshold: float | None
    met: bool
    n_seen: int
    n_kept: int
    coverage: float
    agreement: float | None
    upper_bound: float | None
    reason: str


@dataclass(frozen=True)
class CurvePoint:
    """Coverage and agreement with the humans when keeping items at ``confidence >= threshold``."""

    threshold: float
    coverage: float
    agreement: float


@dataclass
class SelectiveCalibration:
    """What ``escalate calibrate`` found; written as the calibration JSON (:meth:`to_dict`)."""

    rubric: str
    reference: str
    policy_hash: str  #: :func:`policy_hash` of the policy calibrated
    alpha: float
    delta: float
    rule: str
    min_kept: int
    fraction: float
    seed: int
    n_labelled: int
    n_calibration: int
    n_held_out: int
    n_new: int
    stages: list[StageResult]
    coverage: float
    selective_agreement: float | None
    held_out_coverage: float | None
    held_out_agreement: float | None
    curves: dict[str, list[CurvePoint]] = field(default_factory=dict)
    cascade_curve: list[dict[str, float]] = field(default_factory=list)
    #: :func:`judgekit.selective.calibrate.cascade_costs` (empty when not computed)
    cost: dict[str, Any] = field(default_factory=dict)
    #: the store's hashes when calibrated, as a verdict records them
    #: (:func:`judgekit.verdict.read.store_hashes`: the items with human labels and those labels)
    items_hash: str = ""
    human_ratings_hash: str = ""

    @property
    def met(self) -> bool:
        """Whether some judge keeps items with the guarantee."""
        return any(s.met and s.threshold is not None for s in self.stages)

    def thresholds(self) -> list[float | None]:
        return [s.threshold for s in self.stages]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["format"] = _FORMAT
        out["guarantee"] = _guarantee_sentences(self)
        out["file_hash"] = file_digest(out)
        return out


def policy_hash(policy: SelectivePolicy) -> str:
    """SHA-256 (first 16 hex digits) of the policy as validated (its canonical JSON)."""
    import hashlib

    text = policy.model_dump_json(by_alias=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _guarantee_sentences(cal: SelectiveCalibration) -> list[str]:
    """The guarantee in words, one sentence per judge that keeps items."""
    out = []
    for s in cal.stages:
        if s.threshold is None:
            continue
        if not s.met:  # rule "authors" returns a threshold even when its test failed
            out.append(f"Judge {s.judge} keeps {100 * s.coverage:.0f}% of items (confidence >= "
                       f"{s.threshold:.4f}) WITHOUT a guarantee: {s.reason}.")
            continue
        out.append(
            f"On the {100 * s.coverage:.0f}% of items it keeps (confidence >= {s.threshold:.4f}), "
            f"judge {s.judge}'s expected agreement with the humans ({cal.reference}) is >= "
            f"{1 - cal.alpha:.2f} with probability >= {1 - cal.delta:.2f} over the calibration sample "
            "(a bound on the agreement rate over new items drawn like the calibration items, not on "
            "the share realised in any one batch of them)."
        )
    return out


def _curve(conf: npt.NDArray[np.float64], agree: npt.NDArray[np.int64], points: int = 40) -> list[CurvePoint]:
    """Coverage and agreement at the distinct confidences (at most ``points`` of them, evenly
    spaced in rank), most confident first."""
    ok = ~np.isnan(conf)
    n = conf.size
    if n == 0 or not ok.any():
        return []
    values = np.unique(conf[ok])[::-1]
    if values.size > points:
        values = values[np.linspace(0, values.size - 1, points).round().astype(int)]
    out = []
    for t in values:
        kept = ok & (conf >= t)
        out.append(CurvePoint(float(t), float(kept.sum() / n), float(agree[kept].mean())))
    return out


def calibrate_policy(
    store: Store, policy: SelectivePolicy, *, call_confidence: CallConfidence | None = None
) -> tuple[SelectiveCalibration, Judgments]:
    """Calibrate ``policy`` on ``store``; see the module docstring. Raises
    :class:`JudgekitError` when the store has no labelled item for it."""
    from judgekit.rubric.model import load_rubric

    j = read_judgments(store, policy, call_confidence=call_confidence)
    cal = calibrate_judgments(j, policy)
    rub = load_rubric(policy.rubric)
    cal.cost = cascade_costs(store, rub.id, rub.hash, j, [s.coverage for s in cal.stages])
    hashes = _store_hashes(store, rub)
    cal.items_hash, cal.human_ratings_hash = hashes["items_hash"], hashes["human_ratings_hash"]
    return cal, j


def calibrate_judgments(j: Judgments, policy: SelectivePolicy, *, curves: bool = True) -> SelectiveCalibration:
    """:func:`calibrate_policy` on judgments already read (``curves=False``: without the
    coverage-agreement curves, for simulations)."""
    cal_idx, held = split_labelled(j, policy.calibration.fraction, policy.calibration.seed)
    if cal_idx.size == 0:
        raise JudgekitError(
            f"Selective policy: no item rated by the cascade has a label from {policy.reference!r}; "
            "calibration needs human-labelled items."
        )
    conf, agree = j.confidence_at(cal_idx), j.agreements(cal_idx)
    cc = calibrate_cascade(conf, agree, policy.alpha, policy.delta, rule=policy.rule,
                           min_kept=policy.min_kept)
    stages = []
    for k, (name, t, pj) in enumerate(zip(j.judges, cc.thresholds, cc.per_judge, strict=True)):
        reused = t is not None and t != pj.threshold  # the authors' rule: the previous judge's threshold
        reason = (f"fewer than {policy.min_kept} items left: the authors' code reuses the previous "
                  f"judge's threshold {t:.4f} (no test made)" if reused else pj.reason)
        stages.append(StageResult(name, t, pj.met and not reused, pj.n_items, int(np.sum(cc.kept_by == k)),
                                  cc.judge_coverage[k], _agreement(agree[k], cc.kept_by == k),
                                  pj.upper_bound if t is not None and not reused else None, reason))
    ho_cov = ho_agree = None
    if held.size:
        who = apply_cascade(j.confidence_at(held), list(cc.thresholds))
        ha = j.agreements(held)
        kept = [(r, k) for r, k in enumerate(who) if k is not None]
        ho_cov = len(kept) / held.size
        ho_agree = (sum(int(ha[k][r]) for r, k in kept) / len(kept)) if kept else None
    judge_curves = {name: _curve(conf[k], agree[k]) for k, name in enumerate(j.judges)} if curves else {}
    cascade_curve = []
    for a in _CURVE_ALPHAS if curves else ():
        c2 = calibrate_cascade(conf, agree, a, policy.delta, rule=policy.rule, min_kept=policy.min_kept)
        if c2.n_kept:
            cascade_curve.append({"alpha": a, "coverage": c2.coverage,
                                  "agreement": float(c2.selective_agreement or math.nan)})
    return SelectiveCalibration(
        rubric=policy.rubric, reference=policy.reference, policy_hash=policy_hash(policy), alpha=policy.alpha, delta=policy.delta,
        rule=policy.rule, min_kept=policy.min_kept, fraction=policy.calibration.fraction,
        seed=policy.calibration.seed, n_labelled=int(j.labelled().size), n_calibration=int(cal_idx.size),
        n_held_out=int(held.size), n_new=int(j.unlabelled().size), stages=stages,
        coverage=cc.coverage, selective_agreement=cc.selective_agreement,
        held_out_coverage=ho_cov, held_out_agreement=ho_agree, curves=judge_curves, cascade_curve=cascade_curve,
    )


def _agreement(agree: npt.NDArray[np.int64], kept: npt.NDArray[np.bool_]) -> float | None:
    return float(agree[kept].mean()) if kept.any() else None


def summary_lines(cal: SelectiveCalibration) -> list[str]:
    """The terminal lines of a calibration (judge ids are the policy's, checked as rater ids)."""
    lines = [
        f"Calibrated on {cal.n_calibration} of {cal.n_labelled} labelled items (reference "
        f"{cal.reference}), target expected agreement >= {1 - cal.alpha:.2f} with probability >= {1 - cal.delta:.2f} "
        f"({cal.rule}, at least {cal.min_kept} kept items per threshold):",
    ]
    for s in cal.stages:
        if s.threshold is None:
            lines.append(f"  {s.judge:<16} keeps nothing of the {s.n_seen} items left to it: {s.reason}")
        else:
            lines.append(
                f"  {s.judge:<16} threshold {s.threshold:.4f}  keeps {s.n_kept} of {s.n_seen} "
                f"(coverage {100 * s.coverage:.1f}% of all)  agreement {s.agreement:.3f}  "
                f"disagreement bound {s.upper_bound:.3f}"
            )
    sel = "n/a" if cal.selective_agreement is None else f"{cal.selective_agreement:.3f}"
    lines.append(f"  cascade          coverage {100 * cal.coverage:.1f}%  agreement on kept items {sel}; "
                 f"escalated to humans {100 * (1 - cal.coverage):.1f}%")
    if cal.held_out_coverage is not None:
        ha = "n/a" if cal.held_out_agreement is None else f"{cal.held_out_agreement:.3f}"
        lines.append(f"  held out ({cal.n_held_out} labelled items): coverage "
                     f"{100 * cal.held_out_coverage:.1f}%  agreement on kept items {ha}")
    lines.extend(_guarantee_sentences(cal))
    sentence = cost_sentence(cal.cost)
    if sentence:
        lines.append(sentence)
    return lines


def cost_sentence(cost: dict[str, Any]) -> str | None:
    """"Cost per kept label: ..." from :func:`cascade_costs` (None when not computed): the figure,
    or, when unknown, which judges have no recorded calls and what the others cost."""
    if not cost:
        return None
    per_kept = cost.get("per_kept_label")
    if per_kept is not None:
        return f"Cost per kept label: ${per_kept:.6f}."
    per_item, calls = cost.get("per_item") or {}, cost.get("calls") or {}
    missing = [j for j, c in per_item.items() if c is None and not calls.get(j)]
    unlabelled = [f"{j} made {calls[j]} recorded calls but labelled no item" for j, c in per_item.items()
                  if c is None and calls.get(j)]
    known = [f"{j} ${c:.6f} per item ({calls.get(j, 0)} recorded calls)" for j, c in per_item.items()
             if c is not None]
    why = ([", ".join(missing) + (" has" if len(missing) == 1 else " have")
            + " no recorded call under the rubric (imported labels)"] if missing else []) + unlabelled
    return "Cost per kept label: unknown: " + "; ".join(why + known) + "."


__all__ = [ "CalibrationFile", "check_anchored", "file_digest", "CurvePoint", "SelectiveCalibration",
    "StageResult", "calibrate_judgments", "calibrate_policy", "cascade_costs", "cost_sentence", "policy_hash", "read_calibration", "summary_lines", "write_calibration",
]


# What the labels a cascade keeps cost: each judge's cost per item from its recorded calls, and
# the cascade's cost per kept label.
#
# Judge ``j`` is asked about the items no earlier judge kept, a share ``reach_j = 1 - sum_{i<j}
# coverage_i`` of all items (``reach_0 = 1``). With ``c_j`` its recorded cost per item (the USD of
# its stored calls under the rubric / the items it rated, trials included), the cascade costs
# ``sum_j reach_j c_j`` per item and ``sum_j reach_j c_j / coverage`` per kept label. Judges whose
# labels were imported (no recorded call) have an unknown cost, and so then has the cascade; the
# panel judges a ``panel`` confidence reads (``with``) are not counted unless they are in the cascade.

def cascade_costs(store: Store, rubric_id: str, rubric_hash: str, j: Judgments,
                  coverages: list[float]) -> dict[str, Any]:
    """``{"per_item": {judge: USD or None}, "calls": {judge: recorded calls}, "cascade_per_item":
    USD or None, "per_kept_label": USD or None}`` (see the module docstring; a judge no item
    reaches costs nothing, known or not)."""
    usage = {u.judge_id: u for u in usage_by_judge(store, rubric_id, rubric_hash)}
    calls = {judge: (usage[judge].calls if judge in usage else 0) for judge in j.judges}
    per_item: dict[str, float | None] = {}
    for k, judge in enumerate(j.judges):
        rated = sum(1 for lab in j.labels[k] if lab is not None)
        u = usage.get(judge)
        per_item[judge] = None if u is None or u.calls == 0 or rated == 0 else u.cost_usd / rated
    total: float | None = 0.0
    reach = 1.0
    for judge, cov in zip(j.judges, coverages, strict=True):
        c = per_item[judge]
        if reach <= 1e-12:  # no item reaches this judge (or any later one): it costs nothing
            break
        if c is None:
            total = None
            break
        total = (total or 0.0) + reach * c
        reach -= cov
    kept = sum(coverages)
    return {"per_item": per_item, "calls": calls, "cascade_per_item": total,
            "per_kept_label": None if total is None or kept == 0 else total / kept}


# The calibration file ``escalate calibrate`` writes and ``escalate apply`` reads: written whole
# or not at all; read strictly (it is a user's file by then) and checked against the policy it is
# applied with, so thresholds are never applied to another cascade, rubric, reference or target.

#: the largest calibration file read (it holds a few curves: tens of KB)
_MAX_BYTES = 5_000_000


class _Stage(ConfigModel):
    model_config = ConfigModel.model_config | {"extra": "ignore"}
    judge: str
    threshold: float | None = Field(ge=0.0, le=1.0)


class CalibrationFile(ConfigModel):
    """What ``escalate apply`` needs from a calibration file (other keys are for people)."""

    model_config = ConfigModel.model_config | {"extra": "ignore"}
    format: Literal["judgekit.selective.calibration/1"]
    rubric: str
    reference: str
    policy_hash: str
    alpha: float
    delta: float
    rule: str
    stages: list[_Stage] = Field(min_length=1)
    coverage: float
    guarantee: list[str]
    items_hash: str = Field(min_length=1)
    human_ratings_hash: str = Field(min_length=1)
    file_hash: str = Field(min_length=1)

    def thresholds(self) -> list[float | None]:
        return [s.threshold for s in self.stages]


def write_calibration(path: str | Path, cal: SelectiveCalibration) -> Path:
    """Write ``cal`` as JSON (atomically: the old file or the new one, never half)."""
    text = json.dumps(cal.to_dict(), indent=1, allow_nan=False)
    return write_text_atomic(path, text + "\n")


def read_calibration(path: str | Path, policy: SelectivePolicy) -> CalibrationFile:
    """Read a calibration file and check it belongs to ``policy``; any problem is one sentence
    naming the file."""
    p = Path(path)
    too_large = f"Calibration file {p}: larger than {_MAX_BYTES} bytes; is it the file `judgekit escalate calibrate` wrote?"
    raw = read_limited(lambda: p.open("rb"), _MAX_BYTES, too_large=too_large,
                       unreadable=lambda exc: f"Calibration file {p}: cannot read it ({exc.strerror or exc}).")
    try:
        data: Any = loads_json_strict(raw)
    except (ValueError, RecursionError) as exc:
        raise JudgekitError(f"Calibration file {p}: not valid JSON ({str(exc)[:120]}); write it "
                            "again with `judgekit escalate calibrate`.") from None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise JudgekitError(f"Calibration file {p}: not a judgekit calibration (its format must be "
                            f"{_FORMAT!r}); write it with `judgekit escalate calibrate`.")
    missing = [k for k in ("items_hash", "human_ratings_hash", "file_hash") if k not in data]
    if missing:
        raise JudgekitError(f"Calibration file {p}: it records no {missing[0]} (written by an older "
                            "judgekit, or edited), so nothing ties it to a store; calibrate again.")
    try:
        cal = CalibrationFile(**data)
    except ValidationError as exc:
        raise JudgekitError(f"Calibration file {p}: {first_error(exc)}.") from None
    if file_digest(data) != cal.file_hash:
        raise JudgekitError(f"Calibration file {p}: edited after `judgekit escalate calibrate` wrote it "
                            "(its content no longer hashes to its file_hash); calibrate again.")
    mismatch = [
        (key, mine, theirs)
        for key, mine, theirs in (
            ("rubric", cal.rubric, policy.rubric),
            ("reference", cal.reference, policy.reference),
            ("alpha", cal.alpha, policy.alpha),
            ("delta", cal.delta, policy.delta),
            ("rule", cal.rule, policy.rule),
            ("cascade", [s.judge for s in cal.stages], policy.judges()),
            ("policy hash (confidence sources, calibration split or min_kept)", cal.policy_hash,
             policy_hash(policy)),
        )
        if mine != theirs
    ]
    if mismatch:
        key, mine, theirs = mismatch[0]
        raise JudgekitError(f"Calibration file {p}: its {key} is {mine!r} but the policy's is "
                            f"{theirs!r}; calibrate again with this policy.")
    return cal


def file_digest(data: dict[str, Any]) -> str:
    """The digest of a calibration file's content, every key but ``file_hash`` itself
    (:func:`judgekit.core.hashing.digest`)."""
    from judgekit.core.hashing import digest

    return digest({k: v for k, v in data.items() if k != "file_hash"})


def _store_hashes(store: Store, rubric: Any) -> dict[str, str]:
    from judgekit.verdict.read import store_hashes

    return store_hashes(store, rubric)


def check_anchored(cal: CalibrationFile, store: Store, policy: SelectivePolicy, j: Judgments,
                   where: str) -> None:
    """Refuse, in one sentence naming ``where`` (the file), a calibration that no longer describes
    ``store``: the items with human labels or those labels changed since it was written (the
    verdict's hashes), or its thresholds are not what calibrating ``policy`` on the store's
    labelled items gives (an edited threshold whose file hash was forged too), nor is the guarantee
    it would print (``escalate apply`` prints the file's)."""
    from judgekit.rubric.model import load_rubric

    now = _store_hashes(store, load_rubric(policy.rubric))
    for key, what in (("items_hash", "the items with human labels"), ("human_ratings_hash", "the human labels")):
        if now[key] != getattr(cal, key):
            raise JudgekitError(f"Calibration file {where}: {what} under {policy.rubric} in {store.path} "
                                "changed since it was calibrated (or it is about another store); calibrate again.")
    redone = calibrate_judgments(j, policy, curves=False)
    again = redone.thresholds()
    if again != cal.thresholds():
        k = next(k for k, (a, b) in enumerate(zip(again, cal.thresholds(), strict=True)) if a != b)
        raise JudgekitError(f"Calibration file {where}: stage {k} ({cal.stages[k].judge}) has threshold "
                            f"{cal.thresholds()[k]}, but calibrating the policy on {store.path} gives "
                            f"{again[k]}; calibrate again.")
    if cal.guarantee != _guarantee_sentences(redone):  # apply prints the file's guarantee
        raise JudgekitError(f"Calibration file {where}: its guarantee is not the one calibrating the policy "
                            f"on {store.path} gives (the text was edited); calibrate again.")

