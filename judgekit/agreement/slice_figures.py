"""One slice of the agreement report, computed from item patterns (:mod:`.pattern_figures`).

The report's code matrix (:mod:`.rating_codes`) is reduced once to its distinct rows — each
rater's label, the reference label and each judge's status — and every slice is a frequency
vector over those rows (``bincount`` of the slice's items), so no figure, slice or bootstrap goes
back to the items. What needs items as such gets the slice's rows of the code matrix: the
leave-one-out ceiling (:func:`judgekit.agreement.ceiling.loo_figures`), the signed bias and, at
interval level, alpha (its unit moments are shifted by the first rating in item order).

The figures and their definitions are those documented in :mod:`judgekit.agreement.report`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.agreement import pattern_figures as pf
from judgekit.agreement.ceiling import loo_figures, pairwise_table
from judgekit.agreement.confusion import confusion_result
from judgekit.agreement.figures import fig, num
from judgekit.agreement.judge_figures import coverage, per_class, signed_bias
from judgekit.agreement.rating_codes import ABSTAIN, ERROR, NO_RATING, STATUS_TEXT
from judgekit.rubric.model import Rubric

METRICS = ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")
REF = "__ref__"


@dataclass(frozen=True)
class Opts:
    n_resamples: int
    confidence: float
    seed: int


@dataclass(frozen=True)
class Wanted:
    """The figures a caller reads, when not every figure (the gate: those its policy's checks
    read, :func:`judgekit.gate.figures.wanted_by`). In every slice: each judge's counts (items,
    rated, abstentions, errors and their rates). Overall: ``metric`` against the reference (with
    its n), and on request the confusion matrix, the coverage, the signed bias and the
    leave-one-out ceiling with each judge against it. In the other slices: ``metric`` against the
    reference (``slice_metric``) and the signed bias (``slice_bias``); no other slice is computed
    when neither is asked for. Each figure is the one the full report gives (same function, same
    items, same seed)."""

    metric: str
    confusion: bool = False
    coverage: bool = False
    bias: bool = False
    loo: bool = False
    slice_metric: bool = False
    slice_bias: bool = False

    @property
    def slices(self) -> bool:
        return self.slice_metric or self.slice_bias


@dataclass(frozen=True)
class ReportCodes:
    """The columns the slices use: ``labels`` (N, L) codes of ``label_cols`` (raters and
    ``__ref__``), ``status`` (N, J) status codes of ``status_cols`` (the judges), and the
    distinct rows of both with each item's row."""

    label_cols: list[str]
    status_cols: list[str]
    labels: np.ndarray
    status: np.ndarray
    patterns: np.ndarray
    inverse: np.ndarray

    @classmethod
    def build(cls, label_cols: list[str], labels: np.ndarray, status_cols: list[str],
              status: np.ndarray) -> ReportCodes:
        rows, inverse = pf.patterns_of(np.hstack([labels, status.astype(np.int64)]))
        return cls(label_cols, status_cols, labels, status, rows, inverse)


class _SliceView:
    """One slice of the report's code matrix: its distinct pattern rows (``rows``) with their
    counts (``freq``), its items' label codes (``item_labels``) and each item's pattern row, and
    the figures computed over them (pairs are computed once and kept)."""

    def __init__(self, pos: np.ndarray | None, rc: ReportCodes, rubric: Rubric, o: Opts) -> None:
        self.rubric, self.o = rubric, o
        self.codes = rubric.codes
        self.v = len(self.codes)
        self.level = rubric.level
        self.weights = "quadratic" if self.level in ("ordinal", "interval") else None
        self.ci_kw: dict[str, Any] = {"n_resamples": o.n_resamples, "confidence": o.confidence,
                                      "seed": o.seed}
        inverse = rc.inverse if pos is None else rc.inverse[pos]
        freq_all = np.bincount(inverse, minlength=rc.patterns.shape[0])
        present = np.flatnonzero(freq_all)
        self.rows, self.freq = rc.patterns[present], freq_all[present]
        n_lab = len(rc.label_cols)
        self.col = {c: i for i, c in enumerate(rc.label_cols)}
        self.scol = {c: n_lab + i for i, c in enumerate(rc.status_cols)}
        self.lab_obj = np.array([*self.codes, None], dtype=object)
        self.item_labels = rc.labels if pos is None else rc.labels[pos]
        self.values = np.array([*(rubric.values[c] for c in self.codes), np.nan], dtype=float)
        self.everything = np.ones(self.rows.shape[0], dtype=bool)
        self.item_row = np.searchsorted(present, inverse)  # each item's row of ``rows``
        self._pairs: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}

    def units(self, names: list[str], mask: np.ndarray) -> np.ndarray:
        """The items of pattern rows ``mask`` as a (raters, items) float matrix, in item order:
        what the public statistics get, for the point values."""
        picked = self.item_labels[:, [self.col[c] for c in names]].T  # (raters, items) positions
        sub = np.where(picked >= 0, picked, np.nan)
        return sub if mask.all() else sub[:, mask[self.item_row]]

    def item_of(self, mask: np.ndarray) -> np.ndarray:
        """Each item of pattern rows ``mask``, in item order, as its row of ``rows[mask]``."""
        if mask.all():
            return self.item_row
        local = np.cumsum(mask) - 1
        return local[self.item_row[mask[self.item_row]]]

    def lazy(self, names: list[str], mask: np.ndarray) -> pf.Units:
        return lambda: self.units(names, mask)

    def labels(self, names: list[str]) -> np.ndarray:
        """The label columns of raters ``names`` over the pattern rows."""
        return self.rows[:, [self.col[c] for c in names]]

    def items_of(self, name: str) -> np.ndarray:
        """Rater ``name``'s label codes over the slice's items."""
        return self.item_labels[:, self.col[name]]

    def reason(self, names: list[str], mask: np.ndarray) -> str | None:
        from judgekit.agreement.chance import undefined_reason

        return undefined_reason(self.lab_obj[self.labels(names)[mask]].T, categories=self.codes)

    def alpha_value(self, names: list[str], mask: np.ndarray) -> tuple[float, pf.Thunk]:
        if self.level != "interval":
            return pf.krippendorff_alpha(self.labels(names)[mask], self.freq[mask],
                                         self.lazy(names, mask), self.level, self.v, self.ci_kw,
                                         items=self.item_of(mask))
        # interval: on the items themselves, as krippendorff_alpha / alpha_ci see them
        from judgekit.agreement.alpha import krippendorff_alpha
        from judgekit.agreement.bootstrap import alpha_ci

        items = mask[self.item_row]
        arr = self.values[self.item_labels[items][:, [self.col[c] for c in names]]].T
        return (krippendorff_alpha(arr, level=self.level),
                lambda: alpha_ci(arr, level=self.level, **self.ci_kw))

    def alpha_fig(self, names: list[str], mask: np.ndarray) -> dict:
        n = pf.n_pairable(self.labels(names)[mask], self.freq[mask]) if names else 0
        if n == 0:
            return fig(float("nan"), None, 0, "no item was rated by two of these raters")
        val, ci = self.alpha_value(names, mask)
        if math.isnan(val):
            return fig(val, None, n, self.reason(names, mask))
        return fig(val, ci(), n)

    def figure(self, parts: tuple[float, pf.Thunk], n: int, why: Callable[[], str | None]) -> dict:
        """A figure from a value and its interval thunk, undefined with ``why()`` when NaN."""
        value, ci = parts
        return fig(value, None, n, why()) if math.isnan(value) else fig(value, ci(), n)

    def pair_figs(self, a: str, b: str, metrics: tuple[str, ...] = METRICS) -> dict[str, Any]:
        """The ``metrics`` of raters ``a`` and ``b`` on the items both rated (weighted κ None
        for a nominal rubric); computed once."""
        if (a, b, metrics) not in self._pairs:
            self._pairs[a, b, metrics] = self._pair_figs(a, b, metrics)
        return self._pairs[a, b, metrics]

    def _pair_figs(self, a: str, b: str, metrics: tuple[str, ...]) -> dict[str, Any]:
        pair = self.labels([a, b])
        both = np.asarray((pair >= 0).all(axis=1))
        n = int(self.freq[both].sum())
        if n == 0:
            return {m: fig(float("nan"), None, 0, "no item rated by both")
                    if self.weights or m != "weighted_kappa" else None for m in metrics}
        sub, f = pair[both], self.freq[both]
        why: list[str | None] = []

        def why_once() -> str | None:
            if not why:
                why.append(self.reason([a, b], both))
            return why[0]

        items, units = self.item_of(both), self.lazy([a, b], both)
        matrix = pf.confusion(sub[:, 0], sub[:, 1], f, self.v)
        out: dict[str, Any] = {}
        for m in metrics:
            if m == "percent_agreement":
                parts = pf.percent_agreement(sub, f, units, self.ci_kw, items=items)
            elif m in ("kappa", "weighted_kappa"):
                wts = self.weights if m == "weighted_kappa" else None
                if not (m == "kappa" or wts):
                    out[m] = None
                    continue
                parts = pf.cohen_kappa(matrix, wts, units, self.ci_kw)
            elif m == "alpha":
                parts = self.alpha_value([a, b], both)
            else:
                parts = pf.gwet_ac1(sub, f, units, self.v, self.ci_kw, items=items)
            out[m] = self.figure(parts, n, why_once)
        return out

    def loo(self, hcols: list[str], js: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """:func:`judgekit.agreement.ceiling.loo_figures` of the humans ``hcols`` and judges ``js``."""
        o = self.o
        return loo_figures(
            self.item_labels[:, [self.col[h] for h in hcols]], hcols,
            self.item_labels[:, [self.col[j] for j in js]], js, n_categories=self.v,
            weights=self.weights, n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)

    def bias(self, judge: str) -> dict[str, Any]:
        """:func:`judgekit.agreement.judge_figures.signed_bias` of a judge's labels against the reference's."""
        rubric, o = self.rubric, self.o
        return signed_bias(self.items_of(REF), self.items_of(judge), codes=rubric.codes,
                           values=[rubric.values[c] for c in rubric.codes], level=rubric.level,
                           n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)

    def coverage(self, in_scope: np.ndarray, judge: str) -> dict[str, Any]:
        """:func:`judgekit.agreement.judge_figures.coverage` of a judge over the slice's items."""
        status_text = np.array(STATUS_TEXT, dtype=object)
        freq = self.freq
        rated = self.rows[:, self.col[judge]] >= 0
        return coverage(np.repeat(in_scope, freq), np.repeat(rated, freq),
                        np.repeat(status_text[self.rows[:, self.scol[judge]]], freq),
                        confidence=self.o.confidence)

    def counts(self, judge: str) -> dict[str, Any]:
        """A judge's items, rated items, abstentions and errors and their rates."""
        return _counts(self.rows[:, self.scol[judge]], self.rows[:, self.col[judge]] >= 0, self.freq)

    def in_scope(self, hcols: list[str]) -> np.ndarray:
        """The pattern rows with a reference label or a human rating."""
        return (self.rows[:, self.col[REF]] >= 0) | (self.labels(hcols) >= 0).any(axis=1)


def slice_figures(by: str | None, key: str, pos: np.ndarray | None, rc: ReportCodes, rubric: Rubric,
                  raters: tuple[list[str], list[str], list[str]], o: Opts,
                  wanted: Wanted | None = None) -> dict[str, Any]:
    """The slice dict of :func:`judgekit.agreement.report.agreement_report` for the items at
    positions ``pos`` of ``rc`` (None: every item): every figure, or with ``wanted`` only those
    (:class:`Wanted`, :func:`_wanted_slice`)."""
    humans, ceiling_humans, judges = raters
    view = _SliceView(pos, rc, rubric, o)
    if wanted is not None:
        return _wanted_slice(by, key, wanted, view, (ceiling_humans, judges))
    hcols = [h for h in ceiling_humans if h in view.col]
    ceiling = _human_ceiling(view, hcols)
    js = [j for j in judges if j in view.col]
    ceiling["loo"], vs_loo = view.loo(hcols, js)
    pairwise = pairwise_table(hcols, view.pair_figs)
    if len(hcols) < 2:
        pairwise["undefined"] = "fewer than two human raters"
    rows, freq = view.rows, view.freq
    ref = rows[:, view.col[REF]]
    in_scope = view.in_scope(hcols)
    humans_here = [h for h in humans if h in view.col]
    jout = {j: _judge_figures(view, j, humans_here, hcols, in_scope, vs_loo[j]) for j in js}
    return {
        "by": by,
        "key": key,
        "n_items": int(freq.sum()),
        "n_reference": int(freq[ref >= 0].sum()),
        "n_in_scope": int(freq[in_scope].sum()),
        "n_rated": {j: jout[j]["n_rated"] for j in jout},
        "human_ceiling": ceiling,
        "human_pairwise": pairwise,
        "human_label_distribution": pf.distribution(view.labels(hcols), freq, view.codes),
        "reference_label_distribution": pf.distribution(ref, freq, view.codes),
        "judges": jout,
    }


def _human_ceiling(view: _SliceView, hcols: list[str]) -> dict[str, Any]:
    """The pooled agreement of the humans ``hcols`` (the ceiling a judge is read against)."""
    hum, freq, weights = view.labels(hcols), view.freq, view.weights
    n_pairable = pf.n_pairable(hum, freq) if hcols else 0
    ceiling: dict[str, Any] = {"n": n_pairable, "raters": hcols, **_ceiling_names(len(hcols), weights)}
    if len(hcols) < 2:
        why = "fewer than two human raters"
        for m in ("percent_agreement", "kappa", "alpha", "ac1"):
            ceiling[m] = fig(float("nan"), None, 0, why)
        ceiling["weighted_kappa"] = fig(float("nan"), None, 0, why) if weights else None
        return ceiling
    everything = view.everything
    hum_items, hum_units = view.item_of(everything), view.lazy(hcols, everything)
    pa, pa_ci = pf.percent_agreement(hum, freq, hum_units, view.ci_kw, items=hum_items)
    ceiling["percent_agreement"] = fig(pa, pa_ci() if not math.isnan(pa) else None, n_pairable,
                                       "no item was rated by two humans")
    why_all = lambda: view.reason(hcols, everything)  # noqa: E731
    if len(hcols) == 2:
        pfg = view.pair_figs(hcols[0], hcols[1])
        ceiling["kappa"] = pfg["kappa"]
        ceiling["weighted_kappa"] = pfg["weighted_kappa"]
    else:
        # several humans: Fleiss' kappa (each unit with the humans who rated it), and for
        # ordinal rubrics the mean pairwise weighted kappa (Light's approach), without a CI
        ceiling["kappa"] = view.figure(pf.fleiss_kappa(hum, freq, hum_units, view.v, view.ci_kw,
                                                       items=hum_items), n_pairable, why_all)
        if weights:
            pairs = [view.pair_figs(a, b)["weighted_kappa"] for i, a in enumerate(hcols)
                     for b in hcols[i + 1:]]
            vals = [f["value"] for f in pairs if f and f["value"] is not None]
            ceiling["weighted_kappa"] = fig(float(np.mean(vals)) if vals else float("nan"), None,
                                            n_pairable, "no pair of humans has a defined weighted kappa")
        else:
            ceiling["weighted_kappa"] = None
    ceiling["alpha"] = view.alpha_fig(hcols, everything)
    ceiling["ac1"] = view.figure(pf.gwet_ac1(hum, freq, hum_units, view.v, view.ci_kw,
                                             items=hum_items), n_pairable, why_all)
    return ceiling


def _judge_figures(view: _SliceView, j: str, humans: list[str], hcols: list[str],
                   in_scope: np.ndarray, vs_loo: Any) -> dict[str, Any]:
    """Every figure of judge ``j`` in the slice (``vs_loo``: its leave-one-out comparison)."""
    rows, freq, codes, rubric = view.rows, view.freq, view.codes, view.rubric
    rated = rows[:, view.col[j]] >= 0
    vs_ref = view.pair_figs(REF, j)
    cm = confusion_result(pf.confusion(rows[:, view.col[REF]], rows[:, view.col[j]], freq, view.v), codes)
    vs_ref["confusion"] = cm.to_dict()
    vs_ref["n"] = int(cm.matrix.sum())
    vs_h = {}
    for h in humans:
        f = view.pair_figs(h, j)
        vs_h[h] = {"n": f["kappa"]["n"], "kappa": f["kappa"], "percent_agreement": f["percent_agreement"]}
    a_h = (view.alpha_fig(hcols, rated) if len(hcols) >= 2
           else fig(float("nan"), None, 0, "fewer than two human raters"))
    a_hj = view.alpha_fig([*hcols, j], rated) if hcols else fig(float("nan"), None, 0, "no human raters")
    delta = None
    if a_h["value"] is not None and a_hj["value"] is not None:
        delta = round(a_hj["value"] - a_h["value"], 6)
    return {
        **view.counts(j),
        "vs_reference": vs_ref,
        "vs_humans": vs_h,
        "alpha_humans": a_h,
        "alpha_with_judge": a_hj,
        "alpha_delta": delta,
        "label_distribution": pf.distribution(rows[:, view.col[j]], freq, codes),
        "coverage": view.coverage(in_scope, j),
        "vs_loo": vs_loo,
        "bias": view.bias(j),
        "per_class": per_class(cm.matrix, codes, [rubric.values[c] for c in codes], **view.ci_kw),
    }


def _wanted_slice(by: str | None, key: str, wanted: Wanted, view: _SliceView,
                  raters: tuple[list[str], list[str]]) -> dict[str, Any]:
    """The ``wanted`` figures of one slice, by the functions the full slice uses."""
    ceiling_humans, judges = raters
    rows, freq, col = view.rows, view.freq, view.col
    overall = by is None
    hcols = [h for h in ceiling_humans if h in col]
    js = [j for j in judges if j in col]
    ceiling: dict[str, Any] = {}
    vs_loo: dict[str, Any] = {}
    if overall and wanted.loo:
        ceiling["loo"], vs_loo = view.loo(hcols, js)
    ref = rows[:, col[REF]]
    in_scope = view.in_scope(hcols)
    jout: dict[str, Any] = {}
    for j in js:
        lab = rows[:, col[j]]
        out = view.counts(j)
        if overall or wanted.slice_metric:
            vs_ref = {wanted.metric: view.pair_figs(REF, j, (wanted.metric,))[wanted.metric]}
            if overall and wanted.confusion:
                vs_ref["confusion"] = confusion_result(pf.confusion(ref, lab, freq, view.v),
                                                       view.codes).to_dict()
            vs_ref["n"] = int(freq[(ref >= 0) & (lab >= 0)].sum())
            out["vs_reference"] = vs_ref
        if overall and wanted.coverage:
            out["coverage"] = view.coverage(in_scope, j)
        if wanted.bias if overall else wanted.slice_bias:
            out["bias"] = view.bias(j)
        if overall and wanted.loo:
            out["vs_loo"] = vs_loo[j]
        jout[j] = out
    return {"by": by, "key": key, "n_items": int(freq.sum()), "n_reference": int(freq[ref >= 0].sum()),
            "human_ceiling": ceiling, "judges": jout}


def _counts(st: np.ndarray, rated: np.ndarray, freq: np.ndarray) -> dict[str, Any]:
    """A judge's items, rated items, abstentions and errors and their rates, from its status and
    rated columns of the pattern rows."""
    n_items = int(freq[st != NO_RATING].sum())
    n_abstain = int(freq[st == ABSTAIN].sum())
    n_error = int(freq[st == ERROR].sum())
    return {
        "n_items": n_items,
        "n_rated": int(freq[rated].sum()),
        "n_abstain": n_abstain,
        "n_error": n_error,
        "abstain_rate": num(n_abstain / n_items) if n_items else None,
        "error_rate": num(n_error / n_items) if n_items else None,
    }


def _ceiling_names(n_humans: int, weights: str | None) -> dict[str, str | None]:
    """What the pooled ceiling's κ figures are: Cohen's for two humans, Fleiss' (and the mean
    pairwise weighted κ, Light's approach) for more."""
    if n_humans > 2:
        return {"kappa_name": "Fleiss κ",
                "weighted_kappa_name": f"mean pairwise {weights}-weighted Cohen κ" if weights else None}
    return {"kappa_name": "Cohen κ", "weighted_kappa_name": f"{weights}-weighted Cohen κ" if weights else None}
