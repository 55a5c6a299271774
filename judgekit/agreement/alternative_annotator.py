"""The alternative annotator test (alt-test): can a judge stand in for the human raters?

Calderon, Reichart & Dror (ACL 2025) compare the judge with each human in turn, leaving that
human out: on every unit, the judge and the left-out human are each scored against the
*remaining* humans, and a one-sided t-test asks whether the human beats the judge on fewer than
``epsilon`` more units than the judge beats the human (``epsilon`` is the cost-benefit allowance
for the judge being cheaper). The judge "wins" against a human when that test rejects, after
the Benjamini-Yekutieli correction over all humans; it passes when it wins against at least
half of them (``winning_rate >= 0.5``).

This module reproduces the authors' reference implementation (``alt_test`` in
``alt_test_example.ipynb`` of https://github.com/nitaytech/AltTest) step for step, on the
raters x units layout of the other statistics in :mod:`judgekit.agreement`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import ttest_1samp

from judgekit.agreement._matrix import (
    MISSING,
    as_array,
    encode,
    is_missing,
    missing_mask,
    rating_matrix,
    value_counts,
)
from judgekit.errors import JudgekitError

SCORINGS: tuple[str, ...] = ("accuracy", "neg_rmse")


@dataclass(frozen=True)
class AltTestHuman:
    """The judge against one left-out human.

    ``n`` units were compared (kept units this human rated); ``advantage_probability`` is the
    share of them on which the judge scored at least as well as the human against the remaining
    humans, ``human_advantage_probability`` the share on which the human scored at least as
    well as the judge (ties count for both). ``t_statistic`` and ``p_value`` are the one-sided
    one-sample t-test of ``human indicator - judge indicator`` against ``epsilon``
    (H0: mean >= epsilon); ``rejected`` is the Benjamini-Yekutieli decision: the judge wins
    against this human.
    """

    rater: Any
    n: int
    t_statistic: float
    p_value: float
    rejected: bool
    advantage_probability: float
    human_advantage_probability: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (NaN as ``None``)."""
        return {
            "rater": _plain(self.rater),
            "n": self.n,
            "t_statistic": _none_if_nan(self.t_statistic),
            "p_value": _none_if_nan(self.p_value),
            "rejected": self.rejected,
            "advantage_probability": _none_if_nan(self.advantage_probability),
            "human_advantage_probability": _none_if_nan(self.human_advantage_probability),
        }


@dataclass(frozen=True)
class AltTestResult:
    """Outcome of :func:`alt_test`.

    ``winning_rate`` (omega) = humans the judge wins against / humans tested;
    ``advantage_probability`` (rho) = mean over the tested humans of their
    ``advantage_probability``. Both are NaN when no human could be tested, and
    ``undefined_reason`` then says why. ``skipped`` lists ``(rater, n)`` for the humans with
    fewer than ``min_units_per_human`` kept units; ``n_units`` counts the kept units (rated by
    the judge and at least ``min_raters_per_unit`` humans).
    """

    winning_rate: float
    advantage_probability: float
    per_human: tuple[AltTestHuman, ...]
    skipped: tuple[tuple[Any, int], ...]
    n_units: int
    epsilon: float
    q: float
    scoring: str
    undefined_reason: str | None = None

    @property
    def n_humans(self) -> int:
        """Number of humans tested (the denominator of the winning rate)."""
        return len(self.per_human)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (NaN as ``None``, rater ids as plain values)."""
        return {
            "winning_rate": _none_if_nan(self.winning_rate),
            "advantage_probability": _none_if_nan(self.advantage_probability),
            "per_human": [h.to_dict() for h in self.per_human],
            "skipped": [{"rater": _plain(r), "n": n} for r, n in self.skipped],
            "n_units": self.n_units,
            "epsilon": self.epsilon,
            "q": self.q,
            "scoring": self.scoring,
            "undefined_reason": self.undefined_reason,
        }


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def benjamini_yekutieli(p_values: Sequence[float], q: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR level ``q``.

    Sort the m p-values ascending; reject the k smallest, where k is the largest rank i with
    ``p_(i) <= i / m * q / H_m`` and ``H_m = 1 + 1/2 + ... + 1/m`` (valid under any dependence
    between the tests). A NaN p-value is never rejected. Returns a boolean mask in input order.

    Reference: Y. Benjamini & D. Yekutieli (2001), The control of the false discovery rate in
    multiple testing under dependency, Annals of Statistics 29(4), 1165-1188.

    Examples
    --------
    >>> benjamini_yekutieli([0.004, 0.03, 0.5], q=0.05).tolist()  # thresholds .0091 .0182 .0273
    [True, False, False]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(p)  # NaN sorts last and never passes a threshold
    harmonic = np.sum(1.0 / np.arange(1, m + 1))
    thresholds = np.arange(1, m + 1) / m * (q / harmonic)
    passing = np.flatnonzero(p[order] <= thresholds)
    if passing.size:
        rejected[order[: passing[-1] + 1]] = True
    return rejected


def _check_options(
    epsilon: Any, q: Any, scoring: Any, min_raters_per_unit: Any, min_units_per_human: Any
) -> None:
    def real(value: Any) -> bool:
        return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_
        )

    def integer(value: Any) -> bool:
        return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)

    if not real(epsilon) or not 0.0 <= float(epsilon) < 1.0:
        raise JudgekitError(
            f"alt_test: epsilon={epsilon!r} must be a number from 0 up to (not including) 1, "
            "e.g. 0.2 for expert annotators, 0.15 skilled, 0.1 crowd-workers."
        )
    if not real(q) or not 0.0 < float(q) < 1.0:
        raise JudgekitError(f"alt_test: q={q!r} must be between 0 and 1, e.g. 0.05.")
    if scoring not in SCORINGS:
        raise JudgekitError(
            f"alt_test: unknown scoring {scoring!r}; use 'accuracy' (labels) or 'neg_rmse' "
            "(numeric scores)."
        )
    if not integer(min_raters_per_unit) or min_raters_per_unit < 2:
        raise JudgekitError(
            f"alt_test: min_raters_per_unit={min_raters_per_unit!r} must be an integer of at "
            "least 2 (the left-out human needs at least one other human to be compared with)."
        )
    if not integer(min_units_per_human) or min_units_per_human < 2:
        raise JudgekitError(
            f"alt_test: min_units_per_human={min_units_per_human!r} must be an integer of at "
            "least 2 (the t-test needs two units; the authors recommend at least 30)."
        )


def _rater_ids(humans: Any, n_raters: int) -> list[Any]:
    index = getattr(humans, "index", None)
    if index is None or not hasattr(humans, "columns"):
        return list(range(n_raters))
    ids = [_plain(r) for r in index]
    seen: set[Any] = set()
    for rater in ids:
        if rater in seen:
            raise JudgekitError(
                f"alt_test: rater {rater!r} appears twice in the index of humans; give each "
                "human one row."
            )
        seen.add(rater)
    return ids


def _check_alignment(humans: Any, judge: Any) -> None:
    """A pandas judge must be indexed by the same units, in the same order, as humans' columns."""
    columns = getattr(humans, "columns", None)
    index = getattr(judge, "index", None)
    if columns is None or index is None or not hasattr(judge, "to_numpy"):
        return
    if not index.equals(columns):
        raise JudgekitError(
            "alt_test: the judge's index does not match the columns (units) of humans; "
            "pass judge.reindex(humans.columns) so both list the same units in the same order."
        )


def _accuracy_scores(
    humans: np.ndarray, judge: np.ndarray, kept: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per human and kept unit, (judge >= human, human >= judge) under accuracy scoring.

    A unit's score is the share of the remaining humans with the same label (the mean of
    ``pred == ann`` over them). Both shares have the same denominator, so the counts of
    matching remaining humans are compared exactly.
    """
    if humans.dtype != judge.dtype:
        humans, judge = humans.astype(object), judge.astype(object)
    codes, cats = encode(
        np.vstack([humans[:, kept], judge[None, kept]]), None, func="alt_test", ordered=False
    )
    human_codes, judge_codes = codes[:-1], codes[-1]
    counts = value_counts(human_codes, len(cats))  # (K, V) humans per unit and label
    units = np.arange(judge_codes.size)
    judge_matches = counts[units, judge_codes][None, :] - (human_codes == judge_codes[None, :])
    own = np.where(human_codes >= 0, human_codes, 0)
    human_matches = counts[units[None, :], own] - 1
    rated = human_codes != MISSING
    return (judge_matches >= human_matches) & rated, (human_matches >= judge_matches) & rated


def _numeric(values: np.ndarray, what: str) -> np.ndarray:
    if values.dtype.kind == "f":
        return values
    for position, value in np.ndenumerate(values):
        if not is_missing(value) and not (
            isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_)
        ):
            where = ", ".join(
                f"{k} {i}" for k, i in zip(("row", "unit")[-len(position) :], position, strict=True)
            )
            raise JudgekitError(
                f"alt_test: scoring='neg_rmse' needs numeric scores, but {what} has {value!r} "
                f"({where}); map labels to numbers or use scoring='accuracy'."
            )
    return np.array([np.nan if is_missing(v) else float(v) for v in values.ravel()]).reshape(
        values.shape
    )


def _rmse_scores(
    humans: np.ndarray, judge: np.ndarray, kept: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per human and kept unit, (judge >= human, human >= judge) under negative-RMSE scoring.

    A unit's score is ``-sqrt(mean over the remaining humans of (pred - ann)^2)``.
    """
    x = _numeric(humans, "humans")[:, kept]
    j = _numeric(judge, "the judge")[kept]
    rated = ~np.isnan(x)
    n_raters = x.shape[0]
    judge_wins = np.zeros(x.shape, dtype=bool)
    human_wins = np.zeros(x.shape, dtype=bool)
    for h in range(n_raters):
        others = rated.copy()
        others[h] = False
        remaining = others.sum(axis=0)
        ok = rated[h] & (remaining > 0)
        judge_sq = np.where(others, (j[None, :] - x) ** 2, 0.0).sum(axis=0)
        human_sq = np.where(others, (np.where(rated[h], x[h], 0.0)[None, :] - x) ** 2, 0.0)
        safe = np.where(ok, remaining, 1)
        judge_score = -np.sqrt(judge_sq / safe)
        human_score = -np.sqrt(human_sq.sum(axis=0) / safe)
        judge_wins[h] = ok & (judge_score >= human_score)
        human_wins[h] = ok & (human_score >= judge_score)
    return judge_wins, human_wins


def alt_test(
    humans: Any,
    judge: Any,
    *,
    epsilon: float = 0.2,
    q: float = 0.05,
    scoring: str = "accuracy",
    min_raters_per_unit: int = 2,
    min_units_per_human: int = 30,
) -> AltTestResult:
    """The alternative annotator test: can ``judge`` replace the human raters?

    Procedure (Calderon, Reichart & Dror 2025, Algorithm 1; their reference code exactly):

    1. Keep the units rated by the judge and by at least ``min_raters_per_unit`` humans.
    2. For each human h with at least ``min_units_per_human`` kept units (others are skipped):
       on every kept unit i that h rated, score the judge and h against the remaining humans
       R_i = (humans who rated i) - {h}: with ``scoring="accuracy"``
       ``S(x) = (1/|R_i|) sum_{g in R_i} [x == x_g]``, with ``scoring="neg_rmse"``
       ``S(x) = -sqrt((1/|R_i|) sum_{g in R_i} (x - x_g)^2)``. Indicators
       ``W_i = [S(judge) >= S(h)]`` and ``V_i = [S(h) >= S(judge)]`` (a tie counts for both).
    3. One-sided one-sample t-test of ``d_i = V_i - W_i`` against ``epsilon``,
       H0: ``mean(d) >= epsilon``: ``t = (mean(d) - epsilon) / (sd(d) / sqrt(n))`` (sd with
       n - 1), ``p = P(T_{n-1} <= t)`` (:func:`scipy.stats.ttest_1samp`, ``alternative="less"``).
       Rejecting means the judge is at least as good as h, allowing ``epsilon``.
    4. Benjamini-Yekutieli at FDR ``q`` over the tested humans (:func:`benjamini_yekutieli`).
    5. ``winning_rate = rejected / tested``; ``advantage_probability = mean_h mean_i W_i``.

    The judge passes the authors' test when ``winning_rate >= 0.5``; compare judges by
    ``advantage_probability``. The authors recommend at least three humans and 50-100 units
    (at least 30 per human for the t-test's normal approximation).

    Parameters
    ----------
    humans : array-like of shape (M humans, N units)
        The layout of the other statistics: one row per human, missing ratings as None/NaN; a
        DataFrame's index gives the rater ids (otherwise rows are numbered from 0).
    judge : array-like of shape (N,)
        The judge's ratings of the same units in the same order (None/NaN where it did not
        rate); a pandas Series must be indexed like ``humans``' columns.
    epsilon : float, default 0.2
        The allowance, in [0, 1): 0.2 for expert humans, 0.15 skilled, 0.1 crowd-workers.
    q : float, default 0.05
        False discovery rate of the Benjamini-Yekutieli correction.
    scoring : {"accuracy", "neg_rmse"}, default "accuracy"
        "accuracy" for labels (exact equality, as written); "neg_rmse" for numeric scores.
    min_raters_per_unit : int, default 2
    min_units_per_human : int, default 30

    Returns
    -------
    AltTestResult
        ``winning_rate``, ``advantage_probability``, ``per_human`` (:class:`AltTestHuman`:
        rater, n, t, p-value, rejected, advantage probability), ``skipped``, ``n_units``.

    References
    ----------
    N. Calderon, R. Reichart & R. Dror (2025). The Alternative Annotator Test for
    LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs. ACL
    2025, 16051-16081, https://aclanthology.org/2025.acl-long.782/ ; code and data:
    https://github.com/nitaytech/AltTest.

    Examples
    --------
    Three humans and a judge on 40 units; the judge agrees with the majority everywhere, each
    human deviates on 8 units (the other two humans then agree with each other):

    >>> truth = ["yes", "no"] * 20
    >>> flip = {"yes": "no", "no": "yes"}
    >>> humans = [
    ...     [flip[t] if 8 * h <= i < 8 * h + 8 else t for i, t in enumerate(truth)]
    ...     for h in range(3)
    ... ]
    >>> result = alt_test(humans, truth)
    >>> result.winning_rate, round(result.advantage_probability, 3)
    (1.0, 1.0)
    >>> [(h.rater, h.n, h.rejected) for h in result.per_human]
    [(0, 40, True), (1, 40, True), (2, 40, True)]
    """
    _check_options(epsilon, q, scoring, min_raters_per_unit, min_units_per_human)
    arr = rating_matrix(humans, func="alt_test")
    raters = _rater_ids(humans, arr.shape[0])
    j = _judge_ratings(humans, judge, arr.shape[1])
    human_rated = ~missing_mask(arr)
    kept = (human_rated.sum(axis=0) >= min_raters_per_unit) & ~missing_mask(j[None, :])[0]
    if scoring == "accuracy":
        judge_wins, human_wins = _accuracy_scores(arr, j, kept)
    else:
        judge_wins, human_wins = _rmse_scores(arr, j, kept)
    counts = human_rated[:, kept].sum(axis=1)

    tested: list[tuple[Any, int, float, float, float, float]] = []
    skipped: list[tuple[Any, int]] = []
    for h, rater in enumerate(raters):
        n = int(counts[h])
        if n < min_units_per_human:
            skipped.append((rater, n))
            continue
        mine = human_rated[h, kept]
        tested.append((rater, n, *_one_sided_t(judge_wins[h, mine], human_wins[h, mine], epsilon)))

    rejected = benjamini_yekutieli([t[3] for t in tested], float(q))
    per_human = tuple(
        AltTestHuman(
            rater=rater,
            n=n,
            t_statistic=t,
            p_value=p,
            rejected=bool(r),
            advantage_probability=adv,
            human_advantage_probability=human_adv,
        )
        for (rater, n, t, p, adv, human_adv), r in zip(tested, rejected, strict=True)
    )
    n_kept = int(kept.sum())
    reason = None
    if not per_human:
        reason = (
            f"no unit was rated by the judge and at least {min_raters_per_unit} humans"
            if n_kept == 0
            else f"no human rated at least {min_units_per_human} of the {n_kept} kept units"
        )
    return AltTestResult(
        winning_rate=float(rejected.sum() / len(per_human)) if per_human else math.nan,
        advantage_probability=(
            float(np.mean([h.advantage_probability for h in per_human])) if per_human else math.nan
        ),
        per_human=per_human,
        skipped=tuple(skipped),
        n_units=n_kept,
        epsilon=float(epsilon),
        q=float(q),
        scoring=scoring,
        undefined_reason=reason,
    )


def _judge_ratings(humans: Any, judge: Any, n_units: int) -> np.ndarray:
    """The judge's ratings as an array aligned with the humans' ``n_units`` columns; one
    sentence when they do not line up."""
    _check_alignment(humans, judge)
    j = as_array(judge, func="alt_test", ndim=1)
    if j.size != n_units:
        raise JudgekitError(
            f"alt_test: the judge has {j.size} ratings but humans cover {n_units} units; "
            "give one judge rating (or None) per unit, in the order of the humans' columns."
        )
    return j


def _one_sided_t(judge_wins: np.ndarray, human_wins: np.ndarray,
                 epsilon: float) -> tuple[float, float, float, float]:
    """``(t, p, mean W, mean V)`` of the one-sided t-test of ``V − W`` against ``epsilon``."""
    w = judge_wins.astype(np.float64)
    v = human_wins.astype(np.float64)
    with warnings.catch_warnings():  # constant differences: scipy warns, t is +-inf or NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        test = ttest_1samp(v - w, float(epsilon), alternative="less")
    return float(test.statistic), float(test.pvalue), float(w.mean()), float(v.mean())
