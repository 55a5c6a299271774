"""Cascades of selective judges (cheap -> strong): calibration and application.

Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025, Sec. 4; the authors'
``CascadedClassifier.calibrate`` / ``apply_decision_rule`` (github.com/jaehunjung1/
cascaded-selective-evaluation, commit 1b969f2). Each judge's threshold is calibrated by
:func:`judgekit.stats.selective.calibrate_threshold`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats.selective import (
    GRID_SIZE,
    MIN_KEPT,
    Rule,
    ThresholdCalibration,
    calibrate_threshold,
    validate_calibration_inputs,
)


@dataclass(frozen=True)
class CascadeCalibration:
    """Outcome of calibrating a cascade of judges (cheap -> strong) on one calibration sample.

    ``thresholds[j]`` is judge ``j``'s threshold (``None``: judge ``j`` keeps nothing).
    ``per_judge[j]`` is judge ``j``'s calibration on the items left by judges ``0..j-1``.
    ``kept_by[i]`` is the index of the judge that keeps calibration item ``i`` (``-1``: escalated
    to humans). ``judge_coverage[j]`` is the share of all calibration items kept by judge ``j``;
    ``coverage`` their sum; ``selective_agreement`` the agreement with humans over all kept items
    (``None`` when nothing is kept; the authors' code reports 1.0 there).
    """

    thresholds: tuple[float | None, ...]
    per_judge: tuple[ThresholdCalibration, ...]
    kept_by: npt.NDArray[np.int64]
    judge_coverage: tuple[float, ...]
    coverage: float
    n_kept: int
    selective_agreement: float | None
    alpha: float
    delta: float
    rule: str


def _cascade_assign(
    conf: Sequence[npt.NDArray[Any]], thresholds: Sequence[float | None]
) -> npt.NDArray[np.int64]:
    n = conf[0].size
    kept_by = np.full(n, -1, dtype=np.int64)
    for j, (c, lam) in enumerate(zip(conf, thresholds, strict=True)):
        if lam is None:
            continue
        with np.errstate(invalid="ignore"):
            take = (c >= c.dtype.type(lam)) & (kept_by < 0)
        kept_by[take] = j
    return kept_by


def _as_matrix(
    confidences_per_judge: Sequence[npt.ArrayLike],
) -> list[npt.NDArray[np.float64]]:
    conf: list[npt.NDArray[np.float64]] = [
        np.asarray(c, dtype=np.float64).ravel() for c in confidences_per_judge
    ]
    if not conf:
        raise ValueError("need at least one judge")
    if len({c.size for c in conf}) != 1:
        raise ValueError("every judge needs one confidence per item (lengths differ)")
    return conf


def apply_cascade(
    confidences_per_judge: Sequence[npt.ArrayLike], thresholds: Sequence[float | None]
) -> list[int | None]:
    """Which judge keeps each item: the first judge ``j`` (in order) with ``c_j >= lambda_j``.

    As the authors' ``apply_decision_rule``/``evaluate_sample``: judges are tried in order, an
    item goes to the first whose confidence reaches its threshold (``>=``), and ``None`` means
    escalate to humans. A NaN confidence or a ``None`` threshold never keeps an item.
    """
    conf = _as_matrix(confidences_per_judge)
    if len(thresholds) != len(conf):
        raise ValueError(f"{len(conf)} judges but {len(thresholds)} thresholds")
    return [None if j < 0 else int(j) for j in _cascade_assign(conf, thresholds)]


def calibrate_cascade(
    confidences_per_judge: Sequence[npt.ArrayLike],
    agreements_per_judge: Sequence[npt.ArrayLike],
    alpha: float,
    delta: float,
    *,
    rule: Rule = "fixed_sequence",
    grid_size: int = GRID_SIZE,
    min_kept: int = MIN_KEPT,
) -> CascadeCalibration:
    """Calibrate a cascade of judges ordered cheap -> strong (Jung et al. 2025, Sec. 4).

    Judge ``0`` is calibrated (:func:`calibrate_threshold`) on all calibration items; judge ``j``
    on the items that judges ``0..j-1`` did not keep at their thresholds; each at ``alpha`` and
    ``delta``. This is the authors' ``CascadedClassifier.calibrate``: one calibration sample used
    sequentially (no cross-fitting, no split of ``delta``). With ``rule="authors"`` a judge left
    with no candidate threshold (fewer than ``min_kept`` items) reuses the previous judge's
    threshold, as their code does (their code raises for the first judge; here it keeps all, as
    their ``lambda_hat`` would); with ``rule="fixed_sequence"`` it keeps nothing.

    ``agreements_per_judge[j][i]`` is 1 when judge ``j``'s label on item ``i`` matches the humans.
    """
    conf = _as_matrix(confidences_per_judge)
    agree_in = [np.asarray(a).ravel() for a in agreements_per_judge]
    if len(agree_in) != len(conf):
        raise ValueError(f"{len(conf)} judges but {len(agree_in)} agreement arrays")
    agree: list[npt.NDArray[np.int64]] = []
    for c, a in zip(conf, agree_in, strict=True):
        agree.append(validate_calibration_inputs(c, a, alpha, delta)[1])
    n = conf[0].size
    work = [c.astype(np.float32) for c in conf] if rule == "authors" else conf
    thresholds: list[float | None] = []
    per_judge: list[ThresholdCalibration] = []
    remaining = np.ones(n, dtype=bool)
    for j in range(len(conf)):
        cal = calibrate_threshold(conf[j][remaining], agree[j][remaining], alpha, delta,
                                  rule=rule, grid_size=grid_size, min_kept=min_kept)
        lam = cal.threshold
        n_left = int(np.sum(~np.isnan(work[j][remaining])))
        if rule == "authors" and j > 0 and n_left < min_kept:
            lam = thresholds[-1]  # their `lam_hat = self.lambda_hats[-1]`
        thresholds.append(lam)
        per_judge.append(cal)
        if lam is not None:
            with np.errstate(invalid="ignore"):
                remaining &= ~(work[j] >= work[j].dtype.type(lam))
    kept_by = _cascade_assign(work, thresholds)
    kept = kept_by >= 0
    n_kept = int(kept.sum())
    judge_cov = tuple(float(np.sum(kept_by == j)) / n if n else 0.0 for j in range(len(conf)))
    if n_kept:
        agreed = sum(int(agree[j][kept_by == j].sum()) for j in range(len(conf)))
        sel: float | None = agreed / n_kept
    else:
        sel = None
    return CascadeCalibration(tuple(thresholds), tuple(per_judge), kept_by, judge_cov,
                              n_kept / n if n else 0.0, n_kept, sel, alpha, delta, rule)
