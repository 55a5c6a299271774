"""The agreement figures a gate policy's checks read, and only those: the report the gate
decides on (:func:`gate_report`).

:func:`judgekit.agreement.agreement_report` computes every figure of every rater pair in every
slice (five metrics with their bootstrap, α with and without each judge, the human ceiling, the
per-class table ...). The gate reads a few of them: per judge, the policy's ``metric`` against the
reference with its interval, the abstention and error counts, and — when the policy has the
check — the coverage, the confusion matrix (class recall), the signed bias, the leave-one-out
comparison (overall), and the metric or the bias in each slice of ``by``. This module computes
exactly those, with the same estimators on the same items in the same order (so the same
bootstrap draws: every figure's resampling starts from the policy's seed), from the code matrix
of :mod:`judgekit.agreement.code_matrix` (built once from SQL on a plain store, without pandas).

The result is an :class:`GateReport`: the agreement report's shape (``data["slices"]``,
``slice()``, ``judge()``) holding only the figures named above; ``data["scope"]`` says so.
tests/test_gate_figures.py checks each figure against the full report's on many stores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.agreement.code_matrix import GateMatrix, frame_matrix, store_matrix
from judgekit.agreement.report_data import AgreementReport
from judgekit.agreement.roles import no_ratings_error, rater_roles
from judgekit.rubric.model import Rubric
from judgekit.store.variants import is_variant_rater

SCOPE = "the figures of the gate policy's checks only (judgekit.gate.figures)"


class GateReport(AgreementReport):
    """The figures :func:`judgekit.gate.run.evaluate` reads, in the agreement report's layout."""


@dataclass
class _Want:
    metric: str
    coverage: bool
    confusion: bool
    bias: bool
    loo: bool
    slice_metric: bool
    slice_bias: bool


def _wanted(policy: Any) -> _Want:
    c = policy.checks
    return _Want(metric=c.metric, coverage=c.min_coverage is not None, confusion=c.min_class_recall is not None,
                 bias=c.max_abs_bias is not None, loo=c.within_human_noise is not None,
                 slice_metric=c.per_slice is not None,
                 slice_bias=c.max_abs_bias is not None and bool(c.max_abs_bias.per_slice))


def read_matrix(source: Any, rubric: Rubric, policy: Any) -> GateMatrix:
    """The code matrix :func:`gate_report` computes on (perturbed item copies only when the
    policy names a perturbed judge, as the agreement report reads them)."""
    return _read(source, rubric, reads_variants(policy))


def reads_variants(policy: Any) -> bool:
    """Whether the policy's figures read perturbed item copies (it names a perturbed judge)."""
    return any(is_variant_rater(j) for j in policy.judges)


def _read(source: Any, rubric: Rubric, variants: bool) -> GateMatrix:
    from judgekit.store.digests import plain_store

    if plain_store(source):
        return store_matrix(source, rubric, variants=variants)
    from judgekit.agreement.unit_frames import read_ratings

    return frame_matrix(read_ratings(source, rubric, variants=variants), rubric)


def gate_report(source: Any, *, policy: Any, rubric: Rubric, confidence: float = 0.95,
                matrix: GateMatrix | None = None) -> GateReport:
    """The figures of ``policy``'s checks over the ratings of ``source`` (a Store, or a store
    seen through a view) under ``rubric``: the raters, reference and errors as
    :func:`judgekit.agreement.agreement_report` with the policy's judges, humans, reference,
    ``by``, ``n_resamples`` and ``seed`` has them. ``matrix``: :func:`read_matrix`'s, if the
    caller has it already."""
    want = _wanted(policy)
    judges = list(policy.judges)
    mat = matrix if matrix is not None else read_matrix(source, rubric, policy)
    if not mat.items:
        older = source.stale_rubric_hashes(rubric) if hasattr(source, "stale_rubric_hashes") else []
        raise no_ratings_error(rubric.id, rubric.ref, older)
    roles = rater_roles(mat.kinds, rubric.id, humans=policy.humans, judges=judges,
                        reference=policy.reference)
    humans, reference, ceiling_humans, ref_info = (roles.humans, roles.reference, roles.ceiling_humans,
                                                   roles.ref_info)
    if reference == "consensus":
        ref = _consensus(mat.labels[:, [mat.col(h) for h in humans]], mat.n_codes)
    else:
        ref = mat.labels[:, mat.col(reference)]

    ctx = _Ctx(mat, ref, rubric, want, ceiling_humans, judges, policy.n_resamples, confidence, policy.seed)
    everything = np.arange(len(mat.items))
    slices = [ctx.slice(None, "all", everything, overall=True)]
    if want.slice_metric or want.slice_bias:
        from judgekit.gate.slices import slice_positions

        for col in policy.by:
            for key, rows in slice_positions(source, col.split("+"), mat.items):
                slices.append(ctx.slice(col, key, rows, overall=False))
    data = {
        "scope": SCOPE,
        "rubric": rubric.id,
        "rubric_hash": rubric.hash,
        "level": rubric.level,
        "labels": rubric.codes,
        "reference": ref_info,
        "humans": humans,
        "ceiling_raters": ceiling_humans,
        "judges": judges,
        "by": list(policy.by),
        "confidence": confidence,
        "n_resamples": policy.n_resamples,
        "slices": slices,
    }
    return GateReport(data=data)


def full_agreement_report(store: Any, policy: Any, rubric: Rubric, items: Any) -> Any:
    """The whole agreement report of the policy's raters (the gate's figures before issue 13)."""
    from judgekit.agreement.report import agreement_report

    return agreement_report(store, rubric=rubric, items=items, by=policy.by, judges=policy.judges,
                            humans=policy.humans, reference=policy.reference, n_resamples=policy.n_resamples,
                            seed=policy.seed)


def decide_figures(store: Any, policy: Any, policy_path: Any, rubric: Rubric, *,
                   full_report: bool) -> tuple[Any, GateMatrix | None]:
    """The figures the gate decides on and the code matrix they came from: :func:`gate_report`'s
    (after the policy's raters are checked in ``store``, :func:`judgekit.verdict.policy.check_policy_raters`),
    or with ``full_report`` :func:`full_agreement_report`'s (matrix None).

    A store holding a label the rubric does not have (one written without the import's checks,
    e.g. by ``Store.put_ratings``: the matrix then has codes from V on) is decided by the full
    report too, as before issue 13: it refuses such a label in one sentence where it reads it,
    and the lean figures must not decide where it would refuse (docs/gate.md)."""
    from judgekit.verdict.policy import check_policy_raters

    items = check_policy_raters(policy, policy_path, store, rubric, read_items=full_report)
    mat = None if full_report else read_matrix(store, rubric, policy)
    if mat is not None and len(mat.codes) > mat.n_codes:
        mat = None
        items = check_policy_raters(policy, policy_path, store, rubric, read_items=True)
    if mat is None:
        return full_agreement_report(store, policy, rubric, items), None
    return gate_report(store, policy=policy, rubric=rubric, matrix=mat), mat


def has_probes(policy: Any) -> bool:
    """Whether the policy has a probe check (:func:`judgekit.gate.probe_checks.gate_checks` has work)."""
    c = policy.checks
    return any((c.max_covariate_effect, c.max_self_preference, c.min_stability, c.max_flip_rate))


def _consensus(humans: np.ndarray, n_codes: int) -> np.ndarray:
    """The plurality code of the human columns per item, -1 where they tie or none rated
    (:func:`judgekit.agreement.trials.consensus`: only the rubric's own codes count)."""
    counts = np.stack([(humans == c).sum(axis=1) for c in range(n_codes)], axis=1)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    return np.where((top == 0) | (n_top > 1), -1, counts.argmax(axis=1))


class _Ctx:
    """What every slice shares: the matrix, the reference, the rubric and the options."""

    def __init__(self, mat: GateMatrix, ref: np.ndarray, rubric: Rubric, want: _Want, ceiling_humans: list[str],
                 judges: list[str], n_resamples: int, confidence: float, seed: int) -> None:
        self.mat, self.ref, self.rubric, self.want = mat, ref, rubric, want
        self.hcols = [h for h in ceiling_humans if h in mat.raters]
        self.judges = [j for j in judges if j in mat.raters]
        self.weights = "quadratic" if rubric.level in ("ordinal", "interval") else None
        self.ci_kw: dict[str, Any] = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
        self.confidence = confidence
        self.cats: list[Any] = [float(i) for i in range(len(rubric.codes))]
        self.values = [rubric.values[c] for c in rubric.codes]

    def slice(self, by: str | None, key: str, rows: np.ndarray, *, overall: bool) -> dict[str, Any]:
        from judgekit.agreement.bias import signed_bias
        from judgekit.agreement.ceiling import code_matrix, loo_figures
        from judgekit.agreement.coverage import coverage

        mat, w = self.mat, self.want
        labels = mat.labels[rows]
        status = mat.status[rows]
        ref = self.ref[rows]
        ref_pos = mat.pos(ref)
        h = labels[:, [mat.col(x) for x in self.hcols]] if self.hcols else np.zeros((len(rows), 0), dtype=np.int64)
        ceiling: dict[str, Any] = {}
        vs_loo: dict[str, Any] = {}
        if overall and w.loo:
            jcodes = labels[:, [mat.col(j) for j in self.judges]]
            ceiling["loo"], vs_loo = loo_figures(
                code_matrix(mat.pos(h)), self.hcols, code_matrix(mat.pos(jcodes)), self.judges,
                n_categories=len(self.rubric.codes), weights=self.weights, confidence=self.confidence,
                **{k: v for k, v in self.ci_kw.items() if k != "confidence"})
        in_scope = (ref >= 0) | (h >= 0).any(axis=1)
        jout: dict[str, Any] = {}
        for j in self.judges:
            lab = labels[:, mat.col(j)]
            st = status[:, mat.col(j)]
            rated = lab >= 0
            n_items = int((st >= 0).sum())
            n_abstain = int((st == 1).sum())
            n_error = int((st == 2).sum())
            out: dict[str, Any] = {
                "n_items": n_items,
                "n_rated": int(rated.sum()),
                "n_abstain": n_abstain,
                "n_error": n_error,
                "abstain_rate": _num(n_abstain / n_items) if n_items else None,
                "error_rate": _num(n_error / n_items) if n_items else None,
            }
            if overall or w.slice_metric:
                both = (ref >= 0) & rated
                vs_ref: dict[str, Any] = {w.metric: self.pair_metric(ref, lab, ref_pos, mat.pos(lab))}
                if overall and w.confusion:
                    from judgekit.agreement import confusion_matrix

                    cm = confusion_matrix(mat.texts(ref[both]).tolist(), mat.texts(lab[both]).tolist(),
                                          labels=self.rubric.codes)
                    vs_ref["confusion"] = cm.to_dict()
                vs_ref["n"] = int(both.sum())
                out["vs_reference"] = vs_ref
            if overall and w.coverage:
                out["coverage"] = coverage(in_scope, rated, _status_texts(st), confidence=self.confidence)
            if (overall and w.bias) or (not overall and w.slice_bias):
                out["bias"] = signed_bias(code_matrix(ref_pos), code_matrix(mat.pos(lab)), codes=self.rubric.codes,
                                          values=self.values, level=self.rubric.level, **self.ci_kw)
            if overall and w.loo:
                out["vs_loo"] = vs_loo[j]
            jout[j] = out
        return {"by": by, "key": key, "n_items": len(rows), "n_reference": int((ref >= 0).sum()),
                "human_ceiling": ceiling, "judges": jout}

    def pair_metric(self, a: np.ndarray, b: np.ndarray, a_pos: np.ndarray, b_pos: np.ndarray) -> dict[str, Any] | None:
        """The policy's metric between two columns (label codes and their positions), as the
        agreement report's pair figures compute it."""
        from judgekit.agreement.figures import fig

        metric, level = self.want.metric, self.rubric.level
        if metric == "weighted_kappa" and not self.weights:
            return None
        both = ~np.isnan(a_pos) & ~np.isnan(b_pos)
        n = int(both.sum())
        if n == 0:
            return fig(float("nan"), None, 0, "no item rated by both")
        x, y = a_pos[both], b_pos[both]
        pair = np.vstack([x, y])
        cats = self.cats
        kw = self.ci_kw
        from judgekit import agreement as ag

        if metric == "percent_agreement":
            value = ag.percent_agreement(pair)
            ci: Any = lambda: ag.percent_agreement_ci(pair, **kw)  # noqa: E731
        elif metric in ("kappa", "weighted_kappa"):
            wts = self.weights if metric == "weighted_kappa" else None
            value = ag.cohen_kappa(x, y, labels=cats, weights=wts)
            ci = lambda: ag.kappa_ci(x, y, labels=cats, weights=wts, **kw)  # noqa: E731
        elif metric == "alpha":
            if level == "interval":
                apair = np.vstack([self._values(a[both]), self._values(b[both])])
            else:
                apair = pair
            alpha_cats = None if level == "interval" else cats
            value = ag.krippendorff_alpha(apair, level=level, categories=alpha_cats)
            ci = lambda: ag.alpha_ci(apair, level=level, categories=alpha_cats, **kw)  # noqa: E731
        else:
            value = ag.gwet_ac1(pair, categories=cats)
            ci = lambda: ag.ac1_ci(pair, categories=cats, **kw)  # noqa: E731
        if math.isnan(value):
            why = ag.undefined_reason(np.vstack([self.mat.texts(a[both]), self.mat.texts(b[both])]),
                                      categories=self.rubric.codes)
            return fig(value, None, n, why)
        return fig(value, ci(), n)

    def _values(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.values, dtype=float)[codes]


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 6)


def _status_texts(st: np.ndarray) -> np.ndarray:
    table = np.array(["ok", "abstain", "error", None], dtype=object)
    return table[np.where(st < 0, 3, st)]
