"""Judge-error-corrected class shares of a multi-class rubric (every code at once).

**Matrix method** (``method="rogan_gladen"``; the multi-class Rogan–Gladen, Barron 1977,
*Biometrics* 33:427; Buonaccorsi 2010, *Measurement Error*, §3.6). On the labelled items the
judge's confusion matrix ``M[j, t] = P(judge = j | reference = t)`` is estimated; the judge's
label shares over all items are ``q = M π`` in expectation, so

.. math::

    \\hat\\pi = \\hat M^{-1} \\hat q,

projected onto the simplex (negative shares set to 0, the rest renormalised). For two classes
this is exactly Rogan–Gladen. It is refused when ``M`` is (nearly) singular — its smallest
singular value below ``min_singular`` (0.2, the value of ``Se + Sp − 1`` at which the binary
correction is refused) — or when a reference class has fewer than ``min_labelled_class``
labelled items.

``method="ppi"``: each class share by PPI++ one-vs-rest
(:func:`judgekit.analysis.corrected.corrected_rate`).

The interval of each share is a percentile bootstrap resampling the labelled pairs and the
unlabelled judge labels separately (multinomial counts over the ``K × K`` and ``K`` cells), ``M``
re-estimated and re-inverted in every replicate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from judgekit.analysis.corrected import (
    MIN_LABELLED_CLASS,
    MIN_YOUDEN,
    CorrectedRate,
    UnreliableCorrection,
    corrected_rate,
    unlabelled_part,
)
from judgekit.analysis.intervals import wilson_interval
from judgekit.errors import JudgekitError


def confusion_given_truth(judge: Sequence[Any], reference: Sequence[Any],
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


def _invert(m: np.ndarray, q: np.ndarray) -> np.ndarray:
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
    min_labelled_class: int = MIN_LABELLED_CLASS,
    min_singular: float = MIN_YOUDEN,
) -> dict[str, CorrectedRate]:
    """Every code's share over all items, corrected through the judge's confusion matrix.

    Arguments as :func:`judgekit.analysis.corrected.corrected_rate`; ``codes`` are the rubric's
    codes (every label given must be one of them). Returns ``{code: CorrectedRate}`` (the
    corrected shares sum to 1 under the matrix method). Raises
    :class:`~judgekit.analysis.corrected.UnreliableCorrection` as described in the module
    docstring.
    """
    codes = list(dict.fromkeys(codes))
    if len(codes) < 2:
        raise JudgekitError("A class-share correction needs at least two codes.")
    known = set(codes)
    for name, labels in (("judge_all", judge_all), ("judge_labelled", judge_labelled),
                         ("reference_labelled", reference_labelled)):
        bad = next((v for v in labels if v not in known), None)
        if bad is not None:
            raise JudgekitError(f"{name} holds the label {bad!r}, which is not one of the codes "
                                f"{', '.join(map(str, codes))}; pass the rubric's codes.")
    if method == "ppi":
        return {str(c): corrected_rate(judge_all, judge_labelled=judge_labelled,
                                       reference_labelled=reference_labelled, positive=c,
                                       method="ppi", level=level, n_resamples=n_resamples,
                                       seed=seed + i, min_labelled_class=min_labelled_class)
                for i, c in enumerate(codes)}
    if method != "rogan_gladen":
        raise JudgekitError(f"Correction method {method!r} is unknown; use rogan_gladen or ppi.")
    if len(judge_labelled) != len(reference_labelled):
        raise JudgekitError(
            f"judge_labelled has {len(judge_labelled)} labels and reference_labelled "
            f"{len(reference_labelled)}; give both labels of each labelled item, in the same order."
        )
    unl = unlabelled_part(judge_all, judge_labelled)
    m, n_t = confusion_given_truth(judge_labelled, reference_labelled, codes)
    n_l, n_total, k = len(judge_labelled), len(judge_all), len(codes)
    few = [(c, int(n)) for c, n in zip(codes, n_t, strict=True) if n < min_labelled_class]
    if few:
        c, n = few[0]
        raise UnreliableCorrection(
            f"Only {n} of the {n_l} labelled items are {c!r} by the reference (fewer than "
            f"{min_labelled_class}), so the judge's errors on that class are a guess; label more "
            "items before correcting these shares."
        )
    sv = float(np.linalg.svd(m, compute_uv=False).min())
    if sv < min_singular:
        raise UnreliableCorrection(
            f"The judge's confusion matrix on the {n_l} labelled items is nearly singular "
            f"(smallest singular value {sv:.3f}, below {min_singular:g}): it does not tell the "
            "classes apart well enough to invert; use method='ppi' or a better judge."
        )
    q_counts = np.array([Counter(judge_all)[c] for c in codes], dtype=float)
    q = q_counts / n_total
    est = _invert(m[None], q[None])[0]

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
    reps = _invert(mb, qb)
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
