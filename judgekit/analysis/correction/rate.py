"""Judge-error-corrected estimates: a prevalence (or a mean) over all items, corrected for the
judge's error measured on the items a human (the reference) also rated.

A judge labels all ``N`` items; a random subset of ``n`` of them also carries the reference's
label. The judge's raw rate over all items is biased by its errors; two corrections are given.

**Rogan–Gladen** (Rogan & Gladen 1978, *Am. J. Epidemiol.* 107:71–76). With the judge's
sensitivity ``Se = P(judge = pos | ref = pos)`` and specificity ``Sp = P(judge ≠ pos | ref ≠ pos)``
measured on the labelled items and the raw rate ``p̂`` over all items,

.. math::

    \\hat\\pi = \\frac{\\hat p + \\widehat{Sp} - 1}{\\widehat{Se} + \\widehat{Sp} - 1},

clipped to ``[0, 1]``. Unreliable when Youden's ``J = Se + Sp − 1`` is near 0 (the denominator
amplifies every error by ``1/J``) and when few labelled items are positive (``Se`` is then a
guess); the function refuses in both cases.

**Prediction-powered inference** (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023,
*Science* 382:669–674), power-tuned as PPI++ (Angelopoulos, Duchi & Zrnic 2023,
arXiv:2311.01453). With the judge's values ``f`` and the reference's ``Y`` on the ``n`` labelled
items and ``f`` on the ``N_u = N − n`` other items,

.. math::

    \\hat\\theta_\\lambda = \\bar Y_L + \\lambda\\,(\\bar f_U - \\bar f_L), \\qquad
    \\hat\\lambda = \\frac{\\widehat{\\mathrm{Cov}}_L(Y, f)}{(1 + n/N_u)\\,\\widehat{\\mathrm{Var}}(f)}
    \\ \\text{clipped to } [0, 1],

which is the labelled mean when the judge is useless (``λ → 0``) and the classical PPI estimate
``f̄_U − (f̄_L − Ȳ_L)`` at ``λ = 1``. It estimates a rate (``Y``, ``f`` indicators of
``positive``) or a mean value (``positive=None``: the labels are numbers, e.g. restrictiveness R).

**Interval.** Both carry the two sources of uncertainty: a percentile bootstrap that resamples
the labelled pairs and the unlabelled judge labels separately (each with replacement, at its own
size), recomputing ``Se``, ``Sp`` (or ``λ``) and the estimate every time. The resampling is drawn
as multinomial counts over the distinct (judge, reference) cells, so 2000 replicates cost
microseconds. The labelled items must be a random sample of the items (as
``judgekit sample`` draws them); a stratified sample needs a per-stratum correction.

The multi-class version (:mod:`judgekit.analysis.correction.multiclass`) inverts the judge's
confusion matrix ``P(judge | truth)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval, wilson_interval

METHODS = ("rogan_gladen", "ppi")
#: Rogan–Gladen refuses when Se + Sp − 1 is below this (errors amplified more than 5 times)
MIN_YOUDEN = 0.2
#: both methods refuse with fewer labelled reference positives (or negatives) than this
MIN_LABELLED_CLASS = 10


@dataclass(frozen=True)
class Floors:
    """When a correction is refused: fewer than ``min_labelled_class`` labelled items in a
    reference class, or (Rogan–Gladen) the judge separating the classes by less than
    ``min_youden`` (Se + Sp − 1 for two classes, the confusion matrix's smallest singular value
    for more)."""

    min_labelled_class: int = MIN_LABELLED_CLASS
    min_youden: float = MIN_YOUDEN


#: the floors every correction uses unless told otherwise
DEFAULT_FLOORS = Floors()


class UnreliableCorrection(JudgekitError):
    """A correction that would print a wild number: refused with one sentence saying why."""


@dataclass(frozen=True)
class CorrectedRate:
    """A raw (judge-only) estimate and its judge-error-corrected counterpart, each with its CI.

    ``raw`` is the judge's rate (or mean) over all ``n_total`` items, with a Wilson interval
    (rates) or a normal interval (means) that carries no judge error; ``corrected`` is the
    corrected estimate with its bootstrap interval ``[ci_low, ci_high]`` at ``level``.
    ``sensitivity``/``specificity`` are measured on the ``n_labelled`` items (rates only);
    ``lam`` is PPI++'s tuning weight (``ppi`` only).
    """

    method: str
    positive: str | None
    raw: float
    raw_ci_low: float
    raw_ci_high: float
    corrected: float
    ci_low: float
    ci_high: float
    level: float
    n_labelled: int
    n_total: int
    n_labelled_positive: int | None
    reference_labelled: float
    sensitivity: float | None
    specificity: float | None
    lam: float | None
    n_resamples: int

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2.0)


def check_inputs(
    judge_all: Sequence[Any], judge_labelled: Sequence[Any], reference_labelled: Sequence[Any],
    method: str, level: float, n_resamples: int,
) -> None:
    """The checks every correction makes first: a known method, a level in (0, 1), at least one
    resample, labelled lists of equal length, at least one labelled item, and no more labelled
    items than items (each failure one sentence)."""
    if method not in METHODS:
        raise JudgekitError(f"Correction method {method!r} is unknown; use one of {', '.join(METHODS)}.")
    if not 0.0 < level < 1.0:
        raise JudgekitError(f"Confidence level {level} must be between 0 and 1 (e.g. 0.95).")
    if n_resamples < 1:
        raise JudgekitError(f"n_resamples={n_resamples} must be at least 1.")
    if len(judge_labelled) != len(reference_labelled):
        raise JudgekitError(
            f"judge_labelled has {len(judge_labelled)} labels and reference_labelled "
            f"{len(reference_labelled)}; give both labels of each labelled item, in the same order."
        )
    if not len(judge_labelled):
        raise UnreliableCorrection(
            "No item has both a judge and a reference label, so the judge's error cannot be "
            "measured; label a random sample of the items."
        )
    if len(judge_labelled) > len(judge_all):
        raise JudgekitError(
            f"judge_labelled has {len(judge_labelled)} labels but judge_all only "
            f"{len(judge_all)}; judge_all must hold the judge's labels on all items, the "
            "labelled ones included."
        )


def unlabelled_part(judge_all: Sequence[Hashable], judge_labelled: Sequence[Hashable]) -> Counter[Any]:
    """The judge's labels on the items that are not labelled: ``judge_all`` minus
    ``judge_labelled`` as multisets (an error when ``judge_labelled`` is not contained in it)."""
    rest = Counter(judge_all)
    rest.subtract(Counter(judge_labelled))
    short = [k for k, v in rest.items() if v < 0]
    if short:
        raise JudgekitError(
            f"judge_labelled has more {short[0]!r} labels than judge_all; judge_all must hold the "
            "judge's labels on all items, the labelled ones included."
        )
    return +rest


def _cells(judge_labelled: Sequence[Any], reference_labelled: Sequence[Any],
           unlabelled: Counter[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct labelled (f, y) cells with counts, and distinct unlabelled f values with counts."""
    pairs = Counter(zip(judge_labelled, reference_labelled, strict=True))
    keys = list(pairs)
    f_l = np.array([float(k[0]) for k in keys])
    y_l = np.array([float(k[1]) for k in keys])
    c_l = np.array([pairs[k] for k in keys], dtype=float)
    ukeys = list(unlabelled)
    f_u = np.array([float(k) for k in ukeys])
    c_u = np.array([unlabelled[k] for k in ukeys], dtype=float)
    return f_l, y_l, c_l, f_u, c_u


def _resample(counts: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, len(counts))`` multinomial resamples of a sample with these cell counts."""
    n = int(counts.sum())
    if n == 0 or len(counts) == 0:
        return np.zeros((n_resamples, len(counts)))
    return rng.multinomial(n, counts / n, size=n_resamples).astype(float)


def rogan_gladen(p_raw: np.ndarray, se: np.ndarray, sp: np.ndarray) -> np.ndarray:
    """``(p + Sp − 1) / (Se + Sp − 1)`` clipped to [0, 1] (NaN where ``Se + Sp − 1 <= 0``)."""
    j = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(j > 0, (p_raw + sp - 1.0) / np.where(j > 0, j, 1.0), np.nan)
    return np.clip(est, 0.0, 1.0)


def _rg_stat(f_l: np.ndarray, y_l: np.ndarray, c_l: np.ndarray, f_u: np.ndarray,
             c_u: np.ndarray) -> np.ndarray:
    """Rogan–Gladen on (batched) cell counts ``c_l`` (b, cells) and ``c_u`` (b, values)."""
    pos = c_l @ y_l
    neg = c_l @ (1.0 - y_l)
    se = np.divide(c_l @ (f_l * y_l), pos, out=np.full_like(pos, np.nan), where=pos > 0)
    sp = np.divide(c_l @ ((1.0 - f_l) * (1.0 - y_l)), neg, out=np.full_like(neg, np.nan),
                   where=neg > 0)
    n_all = c_l.sum(axis=-1) + c_u.sum(axis=-1)
    p_raw = (c_l @ f_l + c_u @ f_u) / n_all
    return rogan_gladen(p_raw, se, sp)


def ppi_on_counts(f_l: np.ndarray, y_l: np.ndarray, c_l: np.ndarray, f_u: np.ndarray,
              c_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PPI++ mean on (batched) cell counts: (estimate, λ)."""
    n = c_l.sum(axis=-1)
    n_u = c_u.sum(axis=-1)
    ybar = (c_l @ y_l) / n
    fbar_l = (c_l @ f_l) / n
    fbar_u = np.divide(c_u @ f_u, n_u, out=fbar_l.copy(), where=n_u > 0)
    cov = (c_l @ (f_l * y_l)) / n - fbar_l * ybar
    n_all = n + n_u
    fbar_all = (c_l @ f_l + c_u @ f_u) / n_all
    var_f = (c_l @ (f_l * f_l) + c_u @ (f_u * f_u)) / n_all - fbar_all**2
    # no unlabelled items: λ = 0 (the labelled mean is all there is)
    ratio = np.divide(n, n_u, out=np.zeros_like(n), where=n_u > 0)
    den = (1.0 + ratio) * var_f
    lam = np.divide(cov, den, out=np.zeros_like(cov), where=(var_f > 1e-12) & (n_u > 0))
    lam = np.clip(np.nan_to_num(lam, nan=0.0), 0.0, 1.0)
    return ybar + lam * (fbar_u - fbar_l), lam


def corrected_rate(
    judge_all: Sequence[Any],
    *,
    judge_labelled: Sequence[Any],
    reference_labelled: Sequence[Any],
    positive: Any,
    method: str = "rogan_gladen",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    floors: Floors = Floors(),
) -> CorrectedRate:
    """The prevalence of ``positive`` over all items, corrected for the judge's error.

    ``judge_all``: the judge's labels on all items (the labelled ones included);
    ``judge_labelled`` / ``reference_labelled``: the judge's and the reference's labels on the
    labelled items, in the same order; ``positive``: the code counted (e.g. ``"full_refusal"``),
    or ``None`` for the mean of numeric labels (a mean value such as restrictiveness R; ``ppi``
    only). ``method``: ``"rogan_gladen"`` or ``"ppi"`` (formulas and references in the module
    docstring). The interval resamples the labelled pairs and the unlabelled labels separately,
    ``n_resamples`` times from ``seed``.

    Raises :class:`UnreliableCorrection` (one sentence) when fewer than
    ``floors.min_labelled_class`` labelled items are reference positives or negatives, or
    (Rogan–Gladen) when ``Se + Sp − 1 < floors.min_youden`` (:class:`Floors`).

    >>> r = corrected_rate([1] * 30 + [0] * 70, judge_labelled=[1] * 15 + [0] * 25,
    ...                    reference_labelled=[1] * 10 + [0] * 5 + [1] * 2 + [0] * 23,
    ...                    positive=1)
    >>> round(r.raw, 2), round(r.sensitivity, 3), round(r.specificity, 3), round(r.corrected, 3)
    (0.3, 0.833, 0.821, 0.185)
    """
    check_inputs(judge_all, judge_labelled, reference_labelled, method, level, n_resamples)
    min_labelled_class, min_youden = floors.min_labelled_class, floors.min_youden
    n_l, n_total = len(judge_labelled), len(judge_all)
    if positive is None:
        if method != "ppi":
            raise JudgekitError(
                "A mean value (positive=None) can only be corrected with method='ppi'; "
                "Rogan–Gladen corrects a rate (give the positive code)."
            )
        to_num = _numbers
    else:
        def to_num(labels: Sequence[Any]) -> list[float]:
            return [1.0 if v == positive else 0.0 for v in labels]
    fa, fl, yl = to_num(judge_all), to_num(judge_labelled), to_num(reference_labelled)
    unl = unlabelled_part(fa, fl)
    f_l, y_l, c_l, f_u, c_u = _cells(fl, yl, unl)

    raw = float(np.mean(fa))
    n_pos: int | None = None
    se = sp = None
    if positive is not None:
        n_pos = int(sum(yl))
        n_neg = n_l - n_pos
        who = f"{positive!r}"
        if n_pos < min_labelled_class:
            raise UnreliableCorrection(
                f"Only {n_pos} of the {n_l} labelled items are {who} by the reference (fewer than "
                f"{min_labelled_class}), so the judge's sensitivity is a guess; label more items "
                "before correcting this rate."
            )
        if n_neg < min_labelled_class:
            raise UnreliableCorrection(
                f"Only {n_neg} of the {n_l} labelled items are not {who} by the reference (fewer "
                f"than {min_labelled_class}), so the judge's specificity is a guess; label more "
                "items before correcting this rate."
            )
        se = float(sum(a * b for a, b in zip(fl, yl, strict=True)) / n_pos)
        sp = float(sum((1 - a) * (1 - b) for a, b in zip(fl, yl, strict=True)) / n_neg)
        lo_r, hi_r = wilson_interval(sum(fa), n_total, z=_z(level))
        raw_lo, raw_hi = float(lo_r), float(hi_r)
        if method == "rogan_gladen" and se + sp - 1.0 < min_youden:
            raise UnreliableCorrection(
                f"The judge's sensitivity + specificity − 1 for {who} is {se + sp - 1.0:.3f} on the "
                f"{n_l} labelled items (below {min_youden:g}), so Rogan–Gladen would multiply every "
                f"error by more than {1 / min_youden:g}; use method='ppi' or a better judge."
            )
    else:
        sd = float(np.std(fa, ddof=1)) if n_total > 1 else float("nan")
        half = _z(level) * sd / np.sqrt(n_total)
        raw_lo, raw_hi = raw - half, raw + half

    rng = np.random.default_rng(seed)
    rl = _resample(c_l, n_resamples, rng)
    ru = _resample(c_u, n_resamples, rng)
    lam: float | None = None
    if method == "rogan_gladen":
        assert se is not None and sp is not None
        est = float(rogan_gladen(np.array(raw), np.array(se), np.array(sp)))
        reps = _rg_stat(f_l, y_l, rl, f_u, ru)
    else:
        e, lam_arr = ppi_on_counts(f_l, y_l, c_l[None, :], f_u, c_u[None, :])
        est, lam = float(e[0]), float(lam_arr[0])
        reps = ppi_on_counts(f_l, y_l, rl, f_u, ru)[0]
        if positive is not None:
            est = min(max(est, 0.0), 1.0)
            reps = np.clip(reps, 0.0, 1.0)
    lo, hi = percentile_interval(reps, level)
    return CorrectedRate(
        method=method, positive=None if positive is None else str(positive), raw=raw,
        raw_ci_low=raw_lo, raw_ci_high=raw_hi, corrected=est, ci_low=lo, ci_high=hi, level=level,
        n_labelled=n_l, n_total=n_total, n_labelled_positive=n_pos,
        reference_labelled=float(np.mean(yl)), sensitivity=se, specificity=sp, lam=lam,
        n_resamples=n_resamples,
    )


def _numbers(labels: Sequence[Any]) -> list[float]:
    out = []
    for v in labels:
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise JudgekitError(
                f"Label {v!r} is not a number; a mean (positive=None) needs numeric labels such "
                "as restrictiveness values, or give the positive code to correct a rate."
            )
        if v != v:
            raise JudgekitError("A label is NaN; leave unrated items out rather than passing NaN.")
        out.append(float(v))
    return out
