"""Judge-error-corrected class shares of a multi-class rubric (every code at once).

**Matrix method** (``method="rogan_gladen"``; the multi-class Rogan–Gladen, Barron 1977,
*Biometrics* 33:427; Buonaccorsi 2010, *Measurement Error*, .3.6). On the labelled items the
judge's confusion matrix ``M[j, t] = P(judge = j | reference = t)`` is estimated; the judge's
label shares over all items are ``q = M π`` in expectation, so

.. math::

    \\hat\\pi = \\hat M^{-1} \\hat q,

projected onto the simplex (negative shares set to 0, the rest renormalised). For two classes
this is exactly Rogan–Gladen. It is refused when a reference class has fewer than
``min_labelled_class`` labelled items, or when ``M`` is too close to singular to invert (both
floors are the :class:`~judgekit.analysis.correction.rate.Floors` given as ``floors``;
``min_singular`` is its ``min_youden``):

* **two classes**: Youden's ``J = Se + Sp − 1 = M[0,0] + M[1,1] − 1`` (which is ``det M``) below
  ``min_singular`` (0.2) — the same rule, on the same figure, as
  :func:`judgekit.analysis.correction.rate.corrected_rate`, so the two agree on every 2×2 case;
* **three or more classes**: the smallest singular value of ``M`` below ``min_singular``. It
  bounds the amplification ``‖M⁻¹‖ = 1/σ_min`` of an error in the judge's shares, as ``1/J``
  does for two classes (for a 2×2 matrix ``σ_min ≤ |J|``, so it is the stricter of the two and is
  not used there).

``method="ppi"``: each class share by PPI++ one-vs-rest
(:func:`judgekit.analysis.correction.rate.corrected_rate`).

The interval of each share is a percentile bootstrap resampling the labelled pairs and the
unlabelled judge labels separately (multinomial counts over the ``K × K`` and ``K`` cells), ``M``
re-estimated and re-inverted in every replicate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from judgekit.analysis.correction.rate import (
    DEFAULT_FLOORS,
    CorrectedRate,
    Floors,
    UnreliableCorrection,
    check_inputs,
    corrected_rate,
    unlabelled_part,
)
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import wilson_interval


def _confusion_given_truth(judge: Sequence[Any], reference: Sequence[Any],
                          codes: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(M, n_t)``: ``M[j, t] = #(judge = codes[j], ref = codes[t]) / n_t[t]`` (NaN columns
    where ``n_t = 0``) and ``n_t``, the labelled items per reference class."""
    idx = {c: i for i, c in enumerate(codes)}
    k = len(codes)
    counts = np.zeros((k, k))
    for j, t in zip(judge, reference, strict=True):
        counts[idx[j], idx[t]] += 1
    n_t = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / n_t, n_t


def invert_confusion(m: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Batched ``M⁻¹ q`` projected onto the simplex; NaN rows where ``M`` is singular."""
    ok = np.isfinite(m).all(axis=(-2, -1))
    safe = np.where(ok[..., None, None], m, np.eye(m.shape[-1]))
    ok &= np.abs(np.linalg.det(safe)) > 1e-9
    safe = np.where(ok[..., None, None], safe, np.eye(m.shape[-1]))
    pi = np.linalg.solve(safe, q[..., None])[..., 0]
    pi = np.clip(pi, 0.0, None)
    tot = pi.sum(axis=-1, keepdims=True)
    pi = np.divide(pi, tot, out=np.full_like(pi, np.nan), where=tot > 0)
    return np.where(ok[..., None], pi, np.nan)


def corrected_shares(
    judge_all: Sequence[Any],
    *,
    judge_labelled: Sequence[Any],
    reference_labelled: Sequence[Any],
    codes: Sequence[Any],
    method: str = "rogan_gladen",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    floors: Floors = DEFAULT_FLOORS,
) -> dict[str, CorrectedRate]:
    """Every code's share over all items, corrected through the judge's confusion matrix.

    Arguments as :func:`judgekit.analysis.correction.rate.corrected_rate`; ``codes`` are the rubric's
    codes (every label given must be one of them). Returns ``{code: CorrectedRate}`` (the
    corrected shares sum to 1 under the matrix method). Raises
    :class:`~judgekit.analysis.correction.rate.UnreliableCorrection` as described in the module
    docstring.
    """
    codes = _check_codes(codes, judge_all, judge_labelled, reference_labelled)
    min_labelled_class, min_singular = floors.min_labelled_class, floors.min_youden
    if method == "ppi":
        return {str(c): corrected_rate(judge_all, judge_labelled=judge_labelled,
                                       reference_labelled=reference_labelled, positive=c,
                                       method="ppi", level=level, n_resamples=n_resamples,
                                       seed=seed + i, floors=floors)
                for i, c in enumerate(codes)}
    check_inputs(judge_all, judge_labelled, reference_labelled, method, level, n_resamples)
    m, n_t, q_counts, est, reps = _matrix(judge_all, judge_labelled, reference_labelled, codes,
                                          n_resamples=n_resamples, seed=seed,
                                          min_labelled_class=min_labelled_class,
                                          min_singular=min_singular)
    n_l, n_total, k = len(judge_labelled), len(judge_all), len(codes)
    q = q_counts / n_total
    a = (1.0 - level) / 2.0
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    out: dict[str, CorrectedRate] = {}
    ref_counts = Counter(reference_labelled)
    for i, c in enumerate(codes):
        r = reps[:, i]
        r = r[np.isfinite(r)]
        lo, hi = (np.percentile(r, [100 * a, 100 * (1 - a)]) if len(r)
                  else (np.nan, np.nan))
        wl, wh = wilson_interval(q_counts[i], n_total, z=z)
        se = float(m[i, i])
        others = [t for t in range(k) if t != i]
        neg = n_t[others].sum()
        sp = float(sum((1.0 - m[i, t]) * n_t[t] for t in others) / neg)
        out[str(c)] = CorrectedRate(
            method="rogan_gladen", positive=str(c), raw=float(q[i]), raw_ci_low=float(wl),
            raw_ci_high=float(wh), corrected=float(est[i]), ci_low=float(lo), ci_high=float(hi),
            level=level, n_labelled=n_l, n_total=n_total, n_labelled_positive=int(n_t[i]),
            reference_labelled=float(ref_counts[c] / n_l), sensitivity=se, specificity=sp,
            lam=None, n_resamples=n_resamples,
        )
    return out


def _check_codes(codes: Sequence[Any], *labels_of: Sequence[Any]) -> list[Any]:
    codes = list(dict.fromkeys(codes))
    if len(codes) < 2:
        raise JudgekitError("A class-share correction needs at least two codes.")
    known = set(codes)
    for name, labels in zip(("judge_all", "judge_labelled", "reference_labelled"), labels_of,
                            strict=True):
        bad = next((v for v in labels if v not in known), None)
        if bad is not None:
            raise JudgekitError(f"{name} holds the label {bad!r}, which is not one of the codes "
                                f"{', '.join(map(str, codes))}; pass the rubric's codes.")
    return codes


def raw_estimate(values: Sequence[float] | np.ndarray, *, level: float = 0.95) -> tuple[float, float, float]:
    """The judge-only figure over all items with its interval: ``(mean, low, high)``; Wilson's
    interval when every value is 0 or 1 (a rate), else the normal interval ``x̄ ± z s/√n``."""
    from statistics import NormalDist

    v = np.asarray(values, dtype=float)
    n = len(v)
    if not n:
        return float("nan"), float("nan"), float("nan")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    mean = float(v.mean())
    if np.isin(v, (0.0, 1.0)).all():
        lo, hi = wilson_interval(v.sum(), n, z=z)
        return mean, float(lo), float(hi)
    half = z * float(v.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")
    return mean, mean - half, mean + half


def corrected_weighted(
    judge_all: Sequence[Any],
    *,
    judge_labelled: Sequence[Any],
    reference_labelled: Sequence[Any],
    weights: Mapping[Any, float],
    name: str | None = None,
    method: str = "rogan_gladen",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    floors: Floors = DEFAULT_FLOORS,
) -> CorrectedRate:
    """``Σ_c w_c π_c`` over all items, corrected: the share of a set of codes (weights 1 on
    them, 0 elsewhere: e.g. full or partial refusal) or a mean value (the rubric's values: mean
    restrictiveness R).

    ``weights`` maps every code to its weight. ``rogan_gladen``: the matrix method on all codes,
    then ``w · π̂`` (in every bootstrap replicate too); ``ppi``: PPI++ on the values ``w(label)``
    (:func:`judgekit.analysis.correction.rate.corrected_rate` with ``positive=None``), clipped to the
    range of the weights. ``name`` is recorded as the result's ``positive``.
    """
    codes = _check_codes(list(weights), judge_all, judge_labelled, reference_labelled)
    min_labelled_class, min_singular = floors.min_labelled_class, floors.min_youden
    w = np.array([float(weights[c]) for c in codes])
    binary = bool(np.isin(w, (0.0, 1.0)).all())
    lo_w, hi_w = float(w.min()), float(w.max())
    if method == "ppi":
        r = corrected_rate([weights[v] for v in judge_all],
                           judge_labelled=[weights[v] for v in judge_labelled],
                           reference_labelled=[weights[v] for v in reference_labelled],
                           positive=None, method="ppi", level=level, n_resamples=n_resamples,
                           seed=seed)
        n_pos = int(sum(weights[v] for v in reference_labelled)) if binary else None
        if binary and n_pos is not None and min(n_pos, r.n_labelled - n_pos) < min_labelled_class:
            few_pos = n_pos < min_labelled_class
            side = n_pos if few_pos else r.n_labelled - n_pos
            # the labels of the short side (as the matrix method names a class), not the figure
            label = " or ".join(str(c) for c in codes if (weights[c] == 1.0) == few_pos)
            raise UnreliableCorrection(
                f"Only {side} of the {r.n_labelled} labelled items are {label!r} by the "
                f"reference (fewer than {min_labelled_class}); label more items before "
                f"correcting the {name or 'rate'}."
            )
        _, raw_lo, raw_hi = raw_estimate([weights[v] for v in judge_all], level=level)
        return replace(r, positive=name, raw_ci_low=raw_lo, raw_ci_high=raw_hi,
                       corrected=min(max(r.corrected, lo_w), hi_w),
                       ci_low=max(r.ci_low, lo_w), ci_high=min(r.ci_high, hi_w),
                       n_labelled_positive=n_pos)
    check_inputs(judge_all, judge_labelled, reference_labelled, method, level, n_resamples)
    # codes of equal weight are one class of the figure: merge them before inverting (for a rate
    # this is the binary Rogan–Gladen; a mean keeps one class per distinct value)
    level_of = {c: float(weights[c]) for c in codes}
    classes = sorted(set(level_of.values()))
    if len(classes) < 2:
        raise UnreliableCorrection(
            "Every code has the same weight, so the figure is the same whatever the labels; "
            "there is nothing to correct."
        )
    m, n_t, q_counts, est, reps = _matrix(
        [level_of[v] for v in judge_all], [level_of[v] for v in judge_labelled],
        [level_of[v] for v in reference_labelled], classes, n_resamples=n_resamples, seed=seed,
        min_labelled_class=min_labelled_class, min_singular=min_singular,
        names={x: " or ".join(str(c) for c in codes if level_of[c] == x) for x in classes})
    n_l, n_total = len(judge_labelled), len(judge_all)
    w = np.array(classes)
    vals = reps @ w
    vals = vals[np.isfinite(vals)]
    a = (1.0 - level) / 2.0
    lo, hi = (np.percentile(vals, [100 * a, 100 * (1 - a)]) if len(vals) else (np.nan, np.nan))
    raw, raw_lo, raw_hi = raw_estimate([weights[v] for v in judge_all], level=level)
    y = np.array([weights[v] for v in reference_labelled], dtype=float)
    return CorrectedRate(
        method="rogan_gladen", positive=name, raw=raw, raw_ci_low=raw_lo, raw_ci_high=raw_hi,
        corrected=float(est @ w), ci_low=float(lo), ci_high=float(hi), level=level,
        n_labelled=n_l, n_total=n_total,
        n_labelled_positive=int(y.sum()) if binary else None, reference_labelled=float(y.mean()),
        sensitivity=None, specificity=None, lam=None, n_resamples=n_resamples,
    )


def _matrix(
    judge_all: Sequence[Any], judge_labelled: Sequence[Any], reference_labelled: Sequence[Any],
    codes: list[Any], *, n_resamples: int, seed: int, min_labelled_class: int,
    min_singular: float, names: Mapping[Any, str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The matrix method: ``(M, n_t, judge counts q, estimate π̂, bootstrap replicates of π̂)``.

    Refuses (:class:`~judgekit.analysis.correction.rate.UnreliableCorrection`) as the module docstring
    says: a reference class with fewer than ``min_labelled_class`` items; for two classes
    Youden's ``J = M[0,0] + M[1,1] − 1 < min_singular``; for more, ``σ_min(M) < min_singular``.
    """
    unl = unlabelled_part(judge_all, judge_labelled)
    m, n_t = _confusion_given_truth(judge_labelled, reference_labelled, codes)
    n_l, n_total, k = len(judge_labelled), len(judge_all), len(codes)
    few = [(c, int(n)) for c, n in zip(codes, n_t, strict=True) if n < min_labelled_class]
    if few:
        c, n = few[0]
        label = repr(names[c]) if names and c in names else repr(c)
        raise UnreliableCorrection(
            f"Only {n} of the {n_l} labelled items are {label} by the reference (fewer than "
            f"{min_labelled_class}), so the judge's errors on that class are a guess; label more "
            "items before correcting these shares."
        )
    if k == 2:
        youden = float(m[0, 0] + m[1, 1] - 1.0)
        if youden < min_singular:
            label = " or ".join(repr(names[c]) if names and c in names else repr(c)
                                for c in codes[1:])
            raise UnreliableCorrection(
                f"The judge's sensitivity + specificity − 1 for {label} is {youden:.3f} on the "
                f"{n_l} labelled items (below {min_singular:g}), so Rogan–Gladen would multiply "
                f"every error by more than {1 / min_singular:g}; use method='ppi' or a better "
                "judge."
            )
    sv = float(np.linalg.svd(m, compute_uv=False).min()) if k > 2 else float("inf")
    if sv < min_singular:
        raise UnreliableCorrection(
            f"The judge's confusion matrix on the {n_l} labelled items is nearly singular "
            f"(smallest singular value {sv:.3f}, below {min_singular:g}): it does not tell the "
            "classes apart well enough to invert; use method='ppi' or a better judge."
        )
    q_counts = np.array([Counter(judge_all)[c] for c in codes], dtype=float)
    q = q_counts / n_total
    est = invert_confusion(m[None], q[None])[0]

    # bootstrap: labelled K×K cells and unlabelled K cells, resampled separately
    idx = {c: i for i, c in enumerate(codes)}
    cells = np.zeros(k * k)
    for j, t in zip(judge_labelled, reference_labelled, strict=True):
        cells[idx[j] * k + idx[t]] += 1
    u = np.array([unl.get(c, 0) for c in codes], dtype=float)
    rng = np.random.default_rng(seed)
    rl = rng.multinomial(n_l, cells / n_l, size=n_resamples).astype(float).reshape(-1, k, k)
    n_u = int(u.sum())
    ru = (rng.multinomial(n_u, u / n_u, size=n_resamples).astype(float) if n_u
          else np.zeros((n_resamples, k)))
    col = rl.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mb = rl / col
    qb = (rl.sum(axis=2) + ru) / n_total
    reps = invert_confusion(mb, qb)
    return m, n_t, q_counts, est, reps
