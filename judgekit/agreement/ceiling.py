"""Like-for-like human ceiling: each human against the consensus of the *other* humans
(leave-one-out), each judge against that same consensus on the same items, and the pairwise
human–human table.

Why: the pooled ceiling (one human against another, or Fleiss' κ of all) and a judge's κ against
the majority of the humans are unlike quantities: each human is a member of the majority the
judge is scored on, and a human is never scored against a majority. Leave-one-out puts the judge
and each human in the same seat.

Definitions. The *ceiling humans* are the human raters, plus the reference rater when it is a
human (an adjudicated ``reference`` rater is not a human and is not among them). For human h and
item i, the consensus C₋ₕ(i) is the plurality label of the other ceiling humans who rated i: the
label more of them chose than any other. When two or more labels tie for most (e.g. a 1-1 split of
two other humans) there is no consensus: the item is left out of h's comparison and counted in
``n_ties``. Then, per human h, on I_h = {i : h rated i and C₋ₕ(i) exists}::

    κ_h = Cohen κ(h, C₋ₕ)   (also % agreement, and quadratic-weighted κ for ordinal/interval)

and per judge j, on S_jh = I_h ∩ {i : j rated i} (the same items, less the judge's gaps)::

    κ_jh = κ(j, C₋ₕ),  κ_h|S = κ(h, C₋ₕ) on S_jh,  d_jh = κ_jh − κ_h|S

The summaries are means over the humans with a defined figure: the LOO ceiling mean_h κ_h, the
judge's mean_h κ_jh and the paired difference mean_h d_jh. With two humans C₋ₕ is simply the
other human, so κ_h is the pair's Cohen κ for both. With one human there is no other human and
every LOO figure is undefined, with that reason (never n = 0 silently).

CIs: percentile bootstrap over items (Efron & Tibshirani 1993, ch. 13): the items rated by at
least two ceiling humans are resampled, and every LOO figure of a slice (per human, per judge,
differences and means) is computed on the same resamples, so a difference's CI is paired. The
consensus is computed once per distinct item pattern (an integer code matrix, numpy only).

Leaving one annotator out and scoring the model against the remaining ones follows the
alternative annotator test: N. Calderon, R. Reichart & R. Dror (2025), The Alternative Annotator
Test for LLM-as-a-Judge, ACL. Cohen's κ: J. Cohen (1960), Educ. Psychol. Meas. 20, 37-46.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from judgekit.agreement.figures import (
    CellSums,
    agreement_stack,
    disagreement,
    fig,
    kappa_stack,
    percentile_bounds,
    resample_weights,
    undefined_fig,
)

LOO_METRICS = ("percent_agreement", "kappa", "weighted_kappa")


def _item_patterns(codes: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an (N, R) code matrix and how often each occurs: (P, R), (P,)."""
    n, r = codes.shape
    if n == 0:
        return codes.reshape(0, r), np.zeros(0, dtype=np.int64)
    base = n_categories + 1
    if r and r * np.log2(base) < 62:
        keys = (codes + 1) @ (base ** np.arange(r, dtype=np.int64))
        _, first, freq = np.unique(keys, return_index=True, return_counts=True)
        return codes[first], freq
    rows, freq = np.unique(codes, axis=0, return_counts=True)
    return rows, freq


def loo_consensus(humans: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row and each human column h: the plurality code of the other columns (-1 when
    none rated or they tie) and whether they tie. ``humans`` (N, k) int codes, -1 missing."""
    onehot = humans[:, :, None] == np.arange(n_categories)[None, None, :]  # (N, k, V)
    counts = onehot.sum(axis=1)  # (N, V)
    others = counts[:, None, :] - onehot  # (N, k, V): every column but h
    top = others.max(axis=2)
    n_top = (others == top[:, :, None]).sum(axis=2)
    cons = np.where((top > 0) & (n_top == 1), others.argmax(axis=2), -1)
    tie = (top > 0) & (n_top > 1)
    return cons, tie


def _metric_stats(observed: np.ndarray, weights: str | None) -> dict[str, np.ndarray]:
    """% agreement, κ and (weights) weighted κ of confusion stacks (..., V, V)."""
    v = observed.shape[-1]
    out = {"percent_agreement": agreement_stack(observed), "kappa": kappa_stack(observed, disagreement(v, None))}
    if weights:
        out["weighted_kappa"] = kappa_stack(observed, disagreement(v, weights))
    return out


def loo_figures(
    humans: np.ndarray,
    human_ids: Sequence[str],
    judges: np.ndarray,
    judge_ids: Sequence[str],
    *,
    n_categories: int,
    weights: str | None,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The leave-one-out ceiling and each judge against it (see the module docstring).

    ``humans`` (N, k) and ``judges`` (N, J) are int code matrices over the same N items (-1
    missing). Returns ``(loo, {judge: vs_loo})``.
    """
    k, v = len(human_ids), n_categories
    metrics = [m for m in LOO_METRICS if weights or m != "weighted_kappa"]
    if k < 2:
        why = ("no human rater" if k == 0 else
               f"one human rater ({human_ids[0]}): a leave-one-out ceiling needs at least two humans")
        return _undefined_loo(human_ids, why, weights), {j: _undefined_vs(why, weights) for j in judge_ids}
    pairable = (humans >= 0).sum(axis=1) >= 2
    rows, freq = _item_patterns(np.hstack([humans, judges])[pairable], v)
    comp = _Comparisons(rows[:, :k], rows[:, k:], v)
    observed = comp.derived(_metric_stats(comp.confusions(freq[None].astype(float)), weights), None, metrics)
    keep = {m: observed.pop(m + "__keep") for m in metrics}
    sampled: dict[str, list[np.ndarray]] = {m: [] for m in metrics}
    for w in resample_weights(freq, n_resamples, seed, cost=len(comp.comps) * (len(freq) + v * v)):
        for m, s in comp.derived(_metric_stats(comp.confusions(w), weights), keep, metrics).items():
            sampled[m].append(s)
    bounds = {m: percentile_bounds(np.concatenate(sampled[m]), confidence) if sampled[m] else None
              for m in metrics}
    table = _LooTable(comp, freq, observed, bounds, keep, weights)
    return table.loo(human_ids), {j: table.vs(a, human_ids) for a, j in enumerate(judge_ids)}


class _Comparisons:
    """The comparisons of the leave-one-out ceiling over item patterns: each human against the
    consensus of the others, and each judge and that human against the same consensus on the items
    both rated. One comparison = (row codes = consensus, column codes = rater) restricted to a
    mask; ``hp`` (P, k) the humans' and ``jp`` (P, J) the judges' codes of the patterns."""

    def __init__(self, hp: np.ndarray, jp: np.ndarray, v: int) -> None:
        self.k, self.n_judges, self.v = hp.shape[1], jp.shape[1], v
        self.hp = hp
        self.cons, self.tie = loo_consensus(hp, v)
        self.comps: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        cons = self.cons
        self.hum = [self._add((hp[:, h] >= 0) & (cons[:, h] >= 0), hp[:, h], cons[:, h]) for h in range(self.k)]
        self.jud: dict[tuple[int, int], tuple[int, int]] = {}
        for a in range(self.n_judges):
            for h in range(self.k):
                same = (hp[:, h] >= 0) & (cons[:, h] >= 0) & (jp[:, a] >= 0)
                self.jud[a, h] = (self._add(same, jp[:, a], cons[:, h]), self._add(same, hp[:, h], cons[:, h]))
        self.sums = [CellSums(c, v * v) for c in self.comps]

    def _add(self, mask: np.ndarray, rater: np.ndarray, c: np.ndarray) -> int:
        self.masks.append(mask)
        self.comps.append(np.where(mask, c * self.v + rater, -1))
        return len(self.comps) - 1

    def confusions(self, w: np.ndarray) -> np.ndarray:
        """Pattern weights (b, P) -> the comparisons' confusion matrices (b, C, V, V)."""
        v = self.v
        return np.stack([s(w) for s in self.sums], axis=1).reshape(w.shape[0], len(self.comps), v, v)

    def derived(self, stats: dict[str, np.ndarray], defined: dict[str, np.ndarray] | None,
                metrics: Sequence[str]) -> dict[str, np.ndarray]:
        """Per-human, per-judge, difference and mean statistics from comparison stats (b, C):
        per metric the columns humans (k), then per judge: judge (k), human on the same items
        (k), difference (k); then the means of each of these blocks. ``defined``: the humans kept
        in each mean (None: those defined here, returned as ``<metric>__keep``)."""
        k, n_judges = self.k, self.n_judges
        out: dict[str, np.ndarray] = {}
        for m in metrics:
            s = stats[m]
            cols = [s[:, self.hum]]  # (b, k) humans
            for a in range(n_judges):
                jv = s[:, [self.jud[a, h][0] for h in range(k)]]
                hv = s[:, [self.jud[a, h][1] for h in range(k)]]
                cols += [jv, hv, jv - hv]
            block = np.concatenate(cols, axis=1)  # (b, k * (1 + 3J))
            groups = block.reshape(block.shape[0], 1 + 3 * n_judges, k)
            keep = defined[m] if defined is not None else np.isfinite(groups[0])
            masked = np.where(keep[None], groups, 0.0)
            n_keep = keep.sum(axis=1)
            means = np.divide(masked.sum(axis=2), n_keep, out=np.full(groups.shape[:2], np.nan), where=n_keep > 0)
            # a resample where a kept human's figure is undefined has no mean
            bad = (~np.isfinite(groups) & keep[None]).any(axis=2)
            means[bad] = np.nan
            out[m] = np.concatenate([block, means], axis=1)
            if defined is None:
                out[m + "__keep"] = keep
        return out


class _LooTable:
    """The reported figures of the comparisons: observed values, their bounds and n."""

    def __init__(self, comp: _Comparisons, freq: np.ndarray, observed: dict[str, np.ndarray],
                 bounds: dict[str, Any], keep: dict[str, np.ndarray], weights: str | None) -> None:
        self.comp, self.freq, self.observed, self.bounds, self.keep = comp, freq, observed, bounds, keep
        self.weights = weights
        self.ns = [int(freq[mask].sum()) for mask in comp.masks]
        self.n_cols = comp.k * (1 + 3 * comp.n_judges)

    def figure(self, m: str, col: int, n: int) -> dict:
        val = self.observed[m][0, col]
        b = self.bounds[m]
        ci = None if b is None else (b[0][col], b[1][col])
        why = ("no item has both this rating and a consensus of the other humans" if n == 0 else
               "undefined on these items: both sides give one and the same label")
        return fig(val, ci, n, why)

    def figs(self, col: int, n: int) -> dict[str, Any]:
        out: dict[str, Any] = {m: self.figure(m, col, n) for m in self.observed}
        if not self.weights:
            out["weighted_kappa"] = None
        return out

    def mean_n(self, block: int) -> int:
        """Items entering at least one of the comparisons averaged in mean column ``block``."""
        comp = self.comp
        cols = [comp.hum[h] if block == 0 else comp.jud[(block - 1) // 3, h][0] for h in range(comp.k)]
        sel = [comp.masks[c] for h, c in enumerate(cols) if self.keep["percent_agreement"][block, h]]
        return int(self.freq[np.logical_or.reduce(sel)].sum()) if sel else 0

    def summary(self, block: int) -> dict[str, Any]:
        n = self.mean_n(block)
        return {"n": n, "n_humans": int(self.keep["percent_agreement"][block].sum()),
                **self.figs(self.n_cols + block, n)}

    def loo(self, human_ids: Sequence[str]) -> dict[str, Any]:
        """The leave-one-out ceiling: each human against the others' consensus, and the mean."""
        comp, freq = self.comp, self.freq
        n_ties = [int(freq[(comp.hp[:, h] >= 0) & comp.tie[:, h]].sum()) for h in range(comp.k)]
        return {
            "kappa_name": "Cohen κ",
            "consensus": "plurality of the other humans; items where they tie are left out (n_ties)",
            "raters": list(human_ids),
            "per_human": [{"human": hid, "n": self.ns[comp.hum[i]], "n_ties": n_ties[i],
                           **self.figs(i, self.ns[comp.hum[i]])} for i, hid in enumerate(human_ids)],
            "mean": self.summary(0),
            "undefined": None,
        }

    def vs(self, a: int, human_ids: Sequence[str]) -> dict[str, Any]:
        """Judge ``a`` against each C₋ₕ on the same items, beside the human, and the mean."""
        k = self.comp.k
        base, blk = k + 3 * k * a, 1 + 3 * a  # columns: judge (k), human on the same items (k), difference (k)
        per = []
        for i, hid in enumerate(human_ids):
            n = self.ns[self.comp.jud[a, i][0]]
            per.append({"human": hid, "n": n, **self.figs(base + i, n),
                        "human_same_items": self.figs(base + k + i, n),
                        "difference": self.figs(base + 2 * k + i, n)})
        mean = self.summary(blk)
        mean["human_same_items"] = self.figs(self.n_cols + blk + 1, mean["n"])
        mean["difference"] = self.figs(self.n_cols + blk + 2, mean["n"])
        return {"per_human": per, "mean": mean, "undefined": None}


def _undefined_loo(human_ids: Sequence[str], why: str, weights: str | None) -> dict[str, Any]:
    return {"kappa_name": "Cohen κ", "consensus": None, "raters": list(human_ids), "per_human": [],
            "mean": {"n": 0, "n_humans": 0, **_undefined_figs(why, weights)}, "undefined": why}


def _undefined_vs(why: str, weights: str | None) -> dict[str, Any]:
    figs = _undefined_figs(why, weights)
    return {"per_human": [], "mean": {"n": 0, "n_humans": 0, **figs, "human_same_items": dict(figs),
                                      "difference": dict(figs)}, "undefined": why}


def _undefined_figs(why: str, weights: str | None) -> dict[str, Any]:
    return {"percent_agreement": undefined_fig(why), "kappa": undefined_fig(why),
            "weighted_kappa": undefined_fig(why) if weights else None}


def pairwise_table(raters: Sequence[str], pair: Callable[[str, str], dict[str, Any]]) -> dict[str, Any]:
    """Every pair of ceiling humans: n, % agreement, Cohen κ (weighted κ for ordinal/interval, α
    and AC1 when ``pair`` gives them), as a list of pairs and as symmetric matrices of the point
    values (``None`` on the diagonal and where undefined) for a heatmap."""
    raters = list(raters)
    pairs, k = [], len(raters)
    mats: dict[str, list[list[Any]]] = {m: [[None] * k for _ in range(k)] for m in ("n", *LOO_METRICS)}
    for a in range(k):
        for b in range(a + 1, k):
            f = pair(raters[a], raters[b])
            entry = {"a": raters[a], "b": raters[b], "n": f["kappa"]["n"],
                     **{m: f.get(m) for m in ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")}}
            pairs.append(entry)
            for m in mats:
                val = entry["n"] if m == "n" else (entry[m] or {}).get("value")
                mats[m][a][b] = mats[m][b][a] = val
    return {"raters": raters, "pairs": pairs, "matrix": mats}
