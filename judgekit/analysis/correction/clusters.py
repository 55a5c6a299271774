"""Corrected figures whose interval resamples clusters (conversations, prompts), not items.

The samples and turns of one conversation are not independent draws, so the interval of a
corrected refusal rate or mean R over multi-turn data resamples whole clusters, as every other
interval of the analyses does. The estimate and the refusals are those of
:func:`judgekit.analysis.correction.multiclass.corrected_weighted` (Rogan–Gladen through the
confusion matrix, or PPI++); the percentile bootstrap draws clusters with replacement, each
bringing its labelled (judge, reference) pairs and its unlabelled judge labels, and recomputes
the judge's error and the estimate on every replicate — both sources of uncertainty, and the
dependence within a cluster (Field & Welsh 2007, *JRSS B* 69:369, the cluster bootstrap).
The raw (judge-only) figure's interval is the same cluster bootstrap (:func:`raw_clustered`),
so the two intervals printed side by side assume the same thing about the data.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.correction.multiclass import corrected_weighted, invert_confusion
from judgekit.analysis.correction.rate import CorrectedRate, ppi_on_counts
from judgekit.errors import JudgekitError
from judgekit.stats.intervals import percentile_interval


def corrected_weighted_clustered(
    judge: Sequence[Any],
    reference: Sequence[Any],
    clusters: Sequence[Hashable],
    *,
    weights: Mapping[Any, float],
    name: str | None = None,
    method: str = "rogan_gladen",
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> CorrectedRate:
    """:func:`~judgekit.analysis.correction.multiclass.corrected_weighted` with a cluster
    bootstrap interval.

    Aligned per item: ``judge`` (the judge's label), ``reference`` (the reference's label, or
    None where the reference did not rate the item) and ``clusters`` (the item's cluster, e.g.
    its conversation). Raises what ``corrected_weighted`` raises when the correction is
    unreliable.
    """
    if not len(judge) == len(reference) == len(clusters):
        raise JudgekitError("judge, reference and clusters must have one entry per item.")
    lab = [i for i, y in enumerate(reference) if y is not None and y == y]
    point = corrected_weighted(list(judge), judge_labelled=[judge[i] for i in lab],
                               reference_labelled=[reference[i] for i in lab], weights=weights,
                               name=name, method=method, level=level, n_resamples=1, seed=seed)
    classes = np.array(sorted({float(weights[c]) for c in weights}))
    k = len(classes)
    idx = {v: i for i, v in enumerate(classes)}
    f = np.array([idx[float(weights[v])] for v in judge])
    is_lab = np.zeros(len(judge), dtype=bool)
    is_lab[lab] = True
    y = np.full(len(judge), -1)
    y[lab] = [idx[float(weights[reference[i]])] for i in lab]
    cl, n_c = _cluster_codes(clusters)
    lab_counts = np.zeros((n_c, k * k))
    np.add.at(lab_counts, (cl[is_lab], f[is_lab] * k + y[is_lab]), 1.0)
    unl_counts = np.zeros((n_c, k))
    np.add.at(unl_counts, (cl[~is_lab], f[~is_lab]), 1.0)
    w = _cluster_weights(n_c, n_resamples, seed)
    rl, ru = w @ lab_counts, w @ unl_counts
    lo_w, hi_w = float(classes.min()), float(classes.max())
    if method == "rogan_gladen":
        cells = rl.reshape(-1, k, k)  # [judge class, reference class]
        with np.errstate(invalid="ignore", divide="ignore"):
            m = cells / cells.sum(axis=1, keepdims=True)
            q = (cells.sum(axis=2) + ru) / (cells.sum(axis=(1, 2)) + ru.sum(axis=1))[:, None]
        reps = invert_confusion(m, q) @ classes
    else:
        f_l = np.repeat(classes, k)  # cell j*k + t: judge class j, reference class t
        y_l = np.tile(classes, k)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = np.clip(ppi_on_counts(f_l, y_l, rl, classes, ru)[0], lo_w, hi_w)
    lo, hi = percentile_interval(reps, level)
    _, raw_lo, raw_hi = _raw_interval([float(weights[v]) for v in judge], cl, n_c, w, level)
    return replace(point, ci_low=lo, ci_high=hi, raw_ci_low=raw_lo, raw_ci_high=raw_hi,
                   n_resamples=n_resamples)


def raw_clustered(values: Sequence[float], clusters: Sequence[Hashable], *, level: float = 0.95,
                  n_resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The judge-only figure ``x̄`` over all items with a cluster bootstrap interval:
    ``(mean, low, high)``.

    Each replicate draws the clusters with replacement and takes the ratio
    ``Σ_c w_c s_c / Σ_c w_c n_c`` (``s_c``: the cluster's sum of values, ``n_c``: its items,
    ``w_c``: how often it was drawn); the interval is the percentile one. These are the same
    draws, from the same ``seed``, as the corrected figure's interval of
    :func:`corrected_weighted_clustered`, so the raw and corrected intervals printed side by side
    rest on the same resampling unit (a judge without error gets the same interval twice).
    """
    v = [float(x) for x in values]
    if len(v) != len(clusters):
        raise JudgekitError("values and clusters must have one entry per item.")
    if not v:
        return float("nan"), float("nan"), float("nan")
    cl, n_c = _cluster_codes(clusters)
    return _raw_interval(v, cl, n_c, _cluster_weights(n_c, n_resamples, seed), level)


def _cluster_codes(clusters: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    cl = pd.factorize(pd.Series(list(clusters), dtype=object))[0]
    return cl, int(cl.max()) + 1


def _cluster_weights(n_c: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each of ``n_c`` clusters is drawn, per replicate (``n_resamples × n_c``)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_c, np.full(n_c, 1.0 / n_c), size=n_resamples).astype(float)


def _raw_interval(values: Sequence[float], cl: np.ndarray, n_c: int, w: np.ndarray,
                  level: float) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    sums = np.bincount(cl, weights=v, minlength=n_c)
    counts = np.bincount(cl, minlength=n_c).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (w @ sums) / (w @ counts)
    lo, hi = percentile_interval(reps, level)
    return float(v.mean()), lo, hi
