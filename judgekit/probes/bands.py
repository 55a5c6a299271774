"""Null bands and the multiplicity rule every probe shares.

A probe asks whether an effect that should be nil (a length effect, a self-preference, a flip
rate) stays inside a **null band**, an equivalence margin the probe file states: ``|θ| <= m``
(or ``θ >= m`` for stability). Per judge it tests the overall figure and each slice; so that a
clean judge does not trip by chance when many slices are tested, the slices of one probe and
judge form one family and the decision "outside the band" is Holm's step-down at one-sided level
α = 0.025 (two-sided 95% for a single slice).

Each tested slice gets the one-sided level α_i at which "its interval clears the band" is exactly
Holm's rejection (:func:`holm_levels`); its recorded interval is the two-sided ``1 − 2 α_i``
interval, so the three states follow from the interval alone
(:func:`judgekit.verdict.check.derive_state`, the rule a verdict is checked against when read back):

* ``fail``: the whole interval lies outside the band (Holm rejects "inside the band");
* ``pass``: the whole interval lies inside the band (a two one-sided tests equivalence at α_i <= α,
  Schuirmann 1987; an intersection-union test needs no multiplicity correction);
* ``inconclusive``: otherwise, or the slice has fewer items than the probe's ``min_items``.

References: S. Holm (1979), A simple sequentially rejective multiple test procedure, Scand. J.
Statist. 6:65–70. D. J. Schuirmann (1987), J. Pharmacokinet. Biopharm. 15:657–680.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from judgekit.verdict.check import Subject

#: one-sided level of each probe family (two-sided 95% intervals when one slice is tested)
ALPHA = 0.025

_N = NormalDist()


def z_of(alpha: float) -> float:
    """The normal quantile ``z_{1−alpha}``."""
    from judgekit.stats.intervals import normal_quantile

    return normal_quantile(1.0 - alpha)


def holm_levels(pvalues: Sequence[float | None], alpha: float = ALPHA) -> list[float | None]:
    """One-sided level α_i per hypothesis such that ``p_i <= α_i`` exactly when Holm's step-down
    procedure at family level ``alpha`` rejects hypothesis i.

    With the k defined p-values sorted, p_(1) <= ... <= p_(k), Holm rejects H_(j) for
    j < r, where r is the first rank with p_(r) > alpha / (k − r + 1). Rank j gets
    α_(j) = alpha / (k − min(j, r) + 1): before r its Holm threshold (rejected), from r on the
    threshold at which the procedure stopped (p_(j) >= p_(r) exceeds it: not rejected).
    None p-values (an untested slice) get None and do not count in k.
    """
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: (float(pvalues[i]), i))  # type: ignore[arg-type]
    k = len(order)
    out: list[float | None] = [None] * len(pvalues)
    stop: int | None = None
    for rank, i in enumerate(order):  # rank is 0-based: threshold alpha / (k - rank)
        if stop is None and float(pvalues[i]) > alpha / (k - rank):  # type: ignore[arg-type]
            stop = rank
        out[i] = alpha / (k - (rank if stop is None else stop))
    return out


def holm_adjusted(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values: p̃_(j) = max_{i <= j} min(1, (k − i + 1) p_(i)); None stays None."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: (float(pvalues[i]), i))  # type: ignore[arg-type]
    k = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def p_outside(estimate: float, se: float, margin: float) -> float:
    """One-sided p-value of "the effect lies inside the band |θ| <= margin" against "outside",
    from a normal estimate: ``1 − Φ((|θ̂| − margin) / se)`` (with se = 0: 0 outside, 1 inside;
    :func:`decide` does not test a zero-width interval)."""
    if se <= 0 or not math.isfinite(se):
        return 0.0 if abs(estimate) > margin else 1.0
    return 1.0 - _N.cdf((abs(estimate) - margin) / se)


def p_below(estimate: float, se: float, minimum: float) -> float:
    """One-sided p-value of "θ >= minimum" against "θ < minimum": ``Φ((θ̂ − minimum) / se)``."""
    if se <= 0 or not math.isfinite(se):
        return 0.0 if estimate < minimum else 1.0
    return _N.cdf((estimate - minimum) / se)


def p_rate_above(k: float, n: int, margin: float) -> float:
    """Score-test p-value of "rate <= margin" against "rate > margin" for k of n:
    ``1 − Φ((p̂ − m) / sqrt(m (1 − m) / n))`` — the test the Wilson interval inverts, so the
    Wilson interval at level ``1 − 2 α`` has its low end above m exactly when p <= α
    (Wilson 1927)."""
    if n <= 0:
        return 1.0
    if margin <= 0:
        return 0.0 if k > 0 else 1.0
    if margin >= 1:
        return 1.0
    return 1.0 - _N.cdf((k / n - margin) / math.sqrt(margin * (1 - margin) / n))


def fmt_p(p: float | None) -> str:
    """A p-value for people: ``"< 0.001"`` below 0.001 (never ``"0"``), else three significant
    digits; ``"n/a"`` for None."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3g}"


def _positive(se: Any) -> bool:
    return se is not None and math.isfinite(float(se)) and float(se) > 0


def decide(rows: list[dict[str, Any]], *, mode: str, threshold: float, min_n: int) -> list[dict[str, Any]]:
    """Apply one probe family's rule to its slices (rows with ``probe``, ``by``/``key``, ``n``,
    ``estimate`` and ``se``, or ``k`` for a rate; ``detail``) and attach each row's check as
    recorded (:func:`judgekit.verdict.check.check_json`; its interval at the row's Holm level).

    ``mode``: ``"abs"`` (null band |θ| <= threshold; the check's figure is |θ̂|), ``"min"``
    (θ >= threshold) or ``"rate"`` (a rate k/n <= threshold, Wilson intervals). Rows with fewer
    than ``min_n`` items or no estimate are not tested (plain 95% intervals, inconclusive); the
    others get their Holm level (:func:`holm_levels`) and the ``1 − 2 α_i`` interval.
    """
    from judgekit.stats.intervals import abs_interval, wilson_interval
    from judgekit.verdict.check import check_json, interval_of, new_check

    def tested(r: dict[str, Any]) -> bool:
        return r["estimate"] is not None and r["n"] >= min_n and (mode == "rate" or _positive(r.get("se")))

    def pvalue(r: dict[str, Any]) -> float | None:
        if not tested(r):
            return None
        if mode == "abs":
            return p_outside(r["estimate"], r["se"], threshold)
        if mode == "min":
            return p_below(r["estimate"], r["se"], threshold)
        return p_rate_above(r["k"], r["n"], threshold)

    ps = [pvalue(r) for r in rows]
    levels = holm_levels(ps)
    adjusted = holm_adjusted(ps)
    for r, p, lvl, padj in zip(rows, ps, levels, adjusted, strict=True):
        a = lvl if lvl is not None else ALPHA
        z = z_of(a)
        est = r["estimate"]
        lo = hi = None
        ci: tuple[float, float] | None = None
        figure = None
        if est is not None and mode == "rate":
            w_lo, w_hi = wilson_interval(r["k"], r["n"], z=z)
            lo, hi = float(w_lo), float(w_hi)
            ci, figure = (lo, hi), est
        elif est is not None and r.get("se") is not None:
            lo, hi = est - z * r["se"], min(est + z * r["se"], r.get("upper", float("inf")))  # α <= 1
            ci = abs_interval(lo, hi) if mode == "abs" else (lo, hi)
            figure = abs(est) if mode == "abs" else est
        elif est is not None:
            figure = abs(est) if mode == "abs" else est
        if (mode != "rate" and est is not None and r.get("se") is not None and not _positive(r["se"])
                and r["n"] >= min_n):
            # a zero-width interval (bootstrap se 0: no resample differs) is not certainty
            lo = hi = ci = None
            r["detail"] = (r["detail"] + "; the interval has zero width (every resample gives the same "
                           "figure), which does not bound the effect: not decided")
        level_words = (f"; Holm level {a:.4g} one-sided ({100 * (1 - 2 * a):.2f}% interval) over "
                       f"{sum(x is not None for x in ps)} tested slices" if lvl is not None else "")
        method = ("holm-" if lvl is not None else "") + ("wilson" if mode == "rate" else "normal")
        check = new_check(_KIND[r["probe"]], "", None if figure is None else round(float(figure), 6), threshold,
                          r["n"], r["detail"] + level_words, subject=_subject(r), min_n=min_n,
                          interval=interval_of(None if ci is None else (round(ci[0], 6), round(ci[1], 6)),
                                               method, 1 - 2 * a))
        r.update({"p": p, "p_holm": padj, "level": a, "low": lo, "high": hi, "check": check_json(check),
                  "state": check.state})
    return rows


#: a probe row's ``probe`` → the kind of its check
_KIND = {"covariate": "max_covariate_effect", "self_preference": "max_self_preference", "stability": "min_stability",
         "drift": "max_label_drift", "flip": "max_flip_rate"}


def _subject(r: dict[str, Any]) -> Subject:
    """What a probe row's check is about: its slice, the covariate (column and target) or the variant."""
    extra = r.get("extra") or {}
    key = None if r.get("by") is None else str(r["key"])
    if r["probe"] == "covariate":
        return Subject(by=r["by"], key=key, column=extra["column"], target=extra["target"])
    return Subject(by=r.get("by"), key=key, variant=extra.get("variant") if r["probe"] == "flip" else None)
