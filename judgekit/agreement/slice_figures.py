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
from judgekit.agreement.bias import signed_bias
from judgekit.agreement.ceiling import loo_figures, pairwise_table
from judgekit.agreement.classes import per_class
from judgekit.agreement.confusion import confusion_result
from judgekit.agreement.coverage import coverage
from judgekit.agreement.figures import fig, num
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


def slice_figures(by: str | None, key: str, pos: np.ndarray | None, rc: ReportCodes, rubric: Rubric,
                  raters: tuple[list[str], list[str], list[str]], o: Opts,
                  wanted: Wanted | None = None) -> dict[str, Any]:
    """The slice dict of :func:`judgekit.agreement.report.agreement_report` for the items at
    positions ``pos`` of ``rc`` (None: every item): every figure, or with ``wanted`` only those
    (:class:`Wanted`, :func:`_wanted_slice`)."""
    humans, ceiling_humans, judges = raters
    codes = rubric.codes
    v = len(codes)
    level = rubric.level
    weights = "quadratic" if level in ("ordinal", "interval") else None
    ci_kw: dict[str, Any] = {"n_resamples": o.n_resamples, "confidence": o.confidence, "seed": o.seed}
    inverse = rc.inverse if pos is None else rc.inverse[pos]
    freq_all = np.bincount(inverse, minlength=rc.patterns.shape[0])
    present = np.flatnonzero(freq_all)
    rows, freq = rc.patterns[present], freq_all[present]
    n_lab = len(rc.label_cols)
    col = {c: i for i, c in enumerate(rc.label_cols)}
    scol = {c: n_lab + i for i, c in enumerate(rc.status_cols)}
    lab_obj = np.array([*codes, None], dtype=object)
    item_labels = rc.labels if pos is None else rc.labels[pos]
    values = np.array([*(rubric.values[c] for c in codes), np.nan], dtype=float)
    everything = np.ones(rows.shape[0], dtype=bool)
    item_row = np.searchsorted(present, inverse)  # each item's row of ``rows``

    def U(names: list[str], mask: np.ndarray) -> np.ndarray:
        """The items of pattern rows ``mask`` as a (raters, items) float matrix, in item order:
        what the public statistics get, for the point values."""
        picked = item_labels[:, [col[c] for c in names]].T  # (raters, items) label positions
        sub = np.where(picked >= 0, picked, np.nan)
        return sub if mask.all() else sub[:, mask[item_row]]

    def item_of(mask: np.ndarray) -> np.ndarray:
        """Each item of pattern rows ``mask``, in item order, as its row of ``rows[mask]``."""
        if mask.all():
            return item_row
        local = np.cumsum(mask) - 1
        return local[item_row[mask[item_row]]]

    def lazy(names: list[str], mask: np.ndarray) -> pf.Units:
        return lambda: U(names, mask)

    def L(names: list[str]) -> np.ndarray:
        return rows[:, [col[c] for c in names]]

    def reason(names: list[str], mask: np.ndarray) -> str | None:
        from judgekit.agreement.chance import undefined_reason

        return undefined_reason(lab_obj[L(names)[mask]].T, categories=codes)

    def alpha_value(names: list[str], mask: np.ndarray) -> tuple[float, pf.Thunk]:
        if level != "interval":
            return pf.krippendorff_alpha(L(names)[mask], freq[mask], lazy(names, mask), level, v,
                                         ci_kw, items=item_of(mask))
        # interval: on the items themselves, as krippendorff_alpha / alpha_ci see them
        from judgekit.agreement.alpha import krippendorff_alpha
        from judgekit.agreement.bootstrap import alpha_ci

        items = mask[item_row]
        arr = values[item_labels[items][:, [col[c] for c in names]]].T
        return (krippendorff_alpha(arr, level=level),
                lambda: alpha_ci(arr, level=level, **ci_kw))

    def alpha_fig(names: list[str], mask: np.ndarray) -> dict:
        n = pf.n_pairable(L(names)[mask], freq[mask]) if names else 0
        if n == 0:
            return fig(float("nan"), None, 0, "no item was rated by two of these raters")
        val, ci = alpha_value(names, mask)
        if math.isnan(val):
            return fig(val, None, n, reason(names, mask))
        return fig(val, ci(), n)

    pair_cache: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}

    def pair_figs(a: str, b: str, metrics: tuple[str, ...] = METRICS) -> dict[str, Any]:
        if (a, b, metrics) not in pair_cache:
            pair_cache[a, b, metrics] = _pair_figs(a, b, metrics)
        return pair_cache[a, b, metrics]

    def _pair_figs(a: str, b: str, metrics: tuple[str, ...]) -> dict[str, Any]:
        """The ``metrics`` of raters ``a`` and ``b`` on the items both rated (weighted κ None
        for a nominal rubric)."""
        pair = L([a, b])
        both = np.asarray((pair >= 0).all(axis=1))
        n = int(freq[both].sum())
        out: dict[str, Any] = {}
        if n == 0:
            for m in metrics:
                out[m] = fig(float("nan"), None, 0, "no item rated by both") if weights or m != "weighted_kappa" else None
            return out
        sub, f = pair[both], freq[both]
        why: list[str | None] = []

        def why_once() -> str | None:
            if not why:
                why.append(reason([a, b], both))
            return why[0]

        def one(parts: tuple[float, pf.Thunk]) -> dict:
            value, ci = parts
            return fig(value, None, n, why_once()) if math.isnan(value) else fig(value, ci(), n)

        items, units = item_of(both), lazy([a, b], both)
        matrix = pf.confusion(sub[:, 0], sub[:, 1], f, v)
        for m in metrics:
            if m == "percent_agreement":
                out[m] = one(pf.percent_agreement(sub, f, units, ci_kw, items=items))
            elif m in ("kappa", "weighted_kappa"):
                wts = weights if m == "weighted_kappa" else None
                if m == "kappa" or wts:
                    out[m] = one(pf.cohen_kappa(matrix, wts, units, ci_kw))
                else:
                    out[m] = None
            elif m == "alpha":
                out[m] = one(alpha_value([a, b], both))
            else:
                out[m] = one(pf.gwet_ac1(sub, f, units, v, ci_kw, items=items))
        return out

    if wanted is not None:
        return _wanted_slice(by, key, wanted, rows, freq, col, scol, item_labels, pair_figs, rubric,
                             (ceiling_humans, judges), o)

    # human ceiling ------------------------------------------------------------------------
    hcols = [h for h in ceiling_humans if h in col]
    hum = L(hcols)
    n_pairable = pf.n_pairable(hum, freq) if hcols else 0
    ceiling: dict[str, Any] = {"n": n_pairable, "raters": hcols, **_ceiling_names(len(hcols), weights)}
    if len(hcols) >= 2:
        hum_items, hum_units = item_of(everything), lazy(hcols, everything)
        pa, pa_ci = pf.percent_agreement(hum, freq, hum_units, ci_kw, items=hum_items)
        ceiling["percent_agreement"] = fig(pa, pa_ci() if not math.isnan(pa) else None, n_pairable,
                                           "no item was rated by two humans")
        if len(hcols) == 2:
            pfg = pair_figs(hcols[0], hcols[1])
            ceiling["kappa"] = pfg["kappa"]
            ceiling["weighted_kappa"] = pfg["weighted_kappa"]
        else:
            # several humans: Fleiss' kappa (each unit with the humans who rated it), and for
            # ordinal rubrics the mean pairwise weighted kappa (Light's approach), without a CI
            fk, fk_ci = pf.fleiss_kappa(hum, freq, hum_units, v, ci_kw, items=hum_items)
            ceiling["kappa"] = (fig(fk, None, n_pairable, reason(hcols, everything)) if math.isnan(fk)
                                else fig(fk, fk_ci(), n_pairable))
            if weights:
                pairs = [pair_figs(a, b)["weighted_kappa"] for i, a in enumerate(hcols) for b in hcols[i + 1:]]
                vals = [f["value"] for f in pairs if f and f["value"] is not None]
                ceiling["weighted_kappa"] = fig(float(np.mean(vals)) if vals else float("nan"), None,
                                                n_pairable, "no pair of humans has a defined weighted kappa")
            else:
                ceiling["weighted_kappa"] = None
        ceiling["alpha"] = alpha_fig(hcols, everything)
        ac, ac_ci = pf.gwet_ac1(hum, freq, hum_units, v, ci_kw, items=hum_items)
        ceiling["ac1"] = (fig(ac, None, n_pairable, reason(hcols, everything)) if math.isnan(ac)
                          else fig(ac, ac_ci(), n_pairable))
    else:
        why = "fewer than two human raters"
        for m in ("percent_agreement", "kappa", "alpha", "ac1"):
            ceiling[m] = fig(float("nan"), None, 0, why)
        ceiling["weighted_kappa"] = fig(float("nan"), None, 0, why) if weights else None

    js = [j for j in judges if j in col]
    ceiling["loo"], vs_loo = loo_figures(
        item_labels[:, [col[h] for h in hcols]], hcols, item_labels[:, [col[j] for j in js]], js,
        n_categories=v, weights=weights, n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)
    pairwise = pairwise_table(hcols, pair_figs)
    if len(hcols) < 2:
        pairwise["undefined"] = "fewer than two human raters"
    ref = rows[:, col[REF]]
    in_scope = (ref >= 0) | (hum >= 0).any(axis=1)
    ref_items = item_labels[:, col[REF]]

    # judges -------------------------------------------------------------------------------
    jout: dict[str, Any] = {}
    for j in judges:
        if j not in col:
            continue
        st = rows[:, scol[j]]
        rated = rows[:, col[j]] >= 0
        vs_ref = pair_figs(REF, j)
        cm = confusion_result(pf.confusion(ref, rows[:, col[j]], freq, v), codes)
        vs_ref["confusion"] = cm.to_dict()
        vs_ref["n"] = int(cm.matrix.sum())
        vs_h = {}
        for h in [h for h in humans if h in col]:
            f = pair_figs(h, j)
            vs_h[h] = {"n": f["kappa"]["n"], "kappa": f["kappa"], "percent_agreement": f["percent_agreement"]}
        a_h = alpha_fig(hcols, rated) if len(hcols) >= 2 else fig(float("nan"), None, 0, "fewer than two human raters")
        a_hj = alpha_fig([*hcols, j], rated) if hcols else fig(float("nan"), None, 0, "no human raters")
        delta = None
        if a_h["value"] is not None and a_hj["value"] is not None:
            delta = round(a_hj["value"] - a_h["value"], 6)
        jout[j] = {
            **_counts(st, rated, freq),
            "vs_reference": vs_ref,
            "vs_humans": vs_h,
            "alpha_humans": a_h,
            "alpha_with_judge": a_hj,
            "alpha_delta": delta,
            "label_distribution": pf.distribution(rows[:, col[j]], freq, codes),
            "coverage": _coverage(in_scope, rated, st, freq, o),
            "vs_loo": vs_loo[j],
            "bias": _bias(ref_items, item_labels[:, col[j]], rubric, o),
            "per_class": per_class(cm.matrix, codes, [rubric.values[c] for c in codes], **ci_kw),
        }
    return {
        "by": by,
        "key": key,
        "n_items": int(freq.sum()),
        "n_reference": int(freq[ref >= 0].sum()),
        "n_in_scope": int(freq[in_scope].sum()),
        "n_rated": {j: jout[j]["n_rated"] for j in jout},
        "human_ceiling": ceiling,
        "human_pairwise": pairwise,
        "human_label_distribution": pf.distribution(hum, freq, codes),
        "reference_label_distribution": pf.distribution(ref, freq, codes),
        "judges": jout,
    }


def _wanted_slice(by: str | None, key: str, wanted: Wanted, rows: np.ndarray, freq: np.ndarray,
                  col: dict[str, int], scol: dict[str, int], item_labels: np.ndarray,
                  pair_figs: Callable[[str, str, tuple[str, ...]], dict[str, Any]], rubric: Rubric,
                  raters: tuple[list[str], list[str]], o: Opts) -> dict[str, Any]:
    """The ``wanted`` figures of one slice (``rows``/``freq``: its pattern rows and their
    counts; ``item_labels``: its items' label codes), by the functions the full slice uses."""
    ceiling_humans, judges = raters
    codes, v, level = rubric.codes, len(rubric.codes), rubric.level
    weights = "quadratic" if level in ("ordinal", "interval") else None
    overall = by is None
    hcols = [h for h in ceiling_humans if h in col]
    js = [j for j in judges if j in col]
    ceiling: dict[str, Any] = {}
    vs_loo: dict[str, Any] = {}
    if overall and wanted.loo:
        ceiling["loo"], vs_loo = loo_figures(
            item_labels[:, [col[h] for h in hcols]], hcols, item_labels[:, [col[j] for j in js]], js,
            n_categories=v, weights=weights, n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)
    ref = rows[:, col[REF]]
    in_scope = (ref >= 0) | (rows[:, [col[h] for h in hcols]] >= 0).any(axis=1)
    jout: dict[str, Any] = {}
    for j in js:
        st, lab = rows[:, scol[j]], rows[:, col[j]]
        rated = lab >= 0
        out = _counts(st, rated, freq)
        if overall or wanted.slice_metric:
            vs_ref = {wanted.metric: pair_figs(REF, j, (wanted.metric,))[wanted.metric]}
            if overall and wanted.confusion:
                vs_ref["confusion"] = confusion_result(pf.confusion(ref, lab, freq, v), codes).to_dict()
            vs_ref["n"] = int(freq[(ref >= 0) & rated].sum())
            out["vs_reference"] = vs_ref
        if overall and wanted.coverage:
            out["coverage"] = _coverage(in_scope, rated, st, freq, o)
        if wanted.bias if overall else wanted.slice_bias:
            out["bias"] = _bias(item_labels[:, col[REF]], item_labels[:, col[j]], rubric, o)
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


def _coverage(in_scope: np.ndarray, rated: np.ndarray, st: np.ndarray, freq: np.ndarray, o: Opts) -> dict[str, Any]:
    """:func:`judgekit.agreement.coverage.coverage` of a judge over the items of the pattern rows."""
    status_text = np.array(STATUS_TEXT, dtype=object)
    return coverage(np.repeat(in_scope, freq), np.repeat(rated, freq), np.repeat(status_text[st], freq),
                    confidence=o.confidence)


def _bias(ref: np.ndarray, judge: np.ndarray, rubric: Rubric, o: Opts) -> dict[str, Any]:
    """:func:`judgekit.agreement.bias.signed_bias` of a judge's label codes against the reference's."""
    return signed_bias(ref, judge, codes=rubric.codes, values=[rubric.values[c] for c in rubric.codes],
                       level=rubric.level, n_resamples=o.n_resamples, confidence=o.confidence, seed=o.seed)


def _ceiling_names(n_humans: int, weights: str | None) -> dict[str, str | None]:
    """What the pooled ceiling's κ figures are: Cohen's for two humans, Fleiss' (and the mean
    pairwise weighted κ, Light's approach) for more."""
    if n_humans > 2:
        return {"kappa_name": "Fleiss κ",
                "weighted_kappa_name": f"mean pairwise {weights}-weighted Cohen κ" if weights else None}
    return {"kappa_name": "Cohen κ", "weighted_kappa_name": f"{weights}-weighted Cohen κ" if weights else None}
