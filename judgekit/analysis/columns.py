"""How an analysis table's columns are shown to a reader: intervals folded into their figure,
readable headers, and the points a chart draws with their 95% CIs.

The tables an analysis returns keep one machine-readable column per number (``C``,
``C_ci_low``, ``C_ci_high``): the JSON and CSV files hold them as they are. The Markdown and HTML
pages show them through :func:`display_table`: a figure and its interval become one column,
``C [95% CI]``, written ``0.930 [0.910, 0.950]``, and the other columns get readable names
(``n_units`` → ``prompt units``).

The convention, for every analysis (and for other parts adding columns): a figure ``X`` with
columns ``X_ci_low`` and ``X_ci_high`` is one interval; the few older names that do not follow
it are listed in :data:`CI_ALIASES`. A figure whose interval is missing prints as
``0.930 (no CI)``; a missing figure as ``—``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = [
    "CI_ALIASES", "HEADERS", "ci_columns", "display_table", "header", "interval_text", "points",
]

#: figure column → (low, high) columns, where the names do not follow ``X_ci_low``/``X_ci_high``.
CI_ALIASES: dict[str, tuple[str, str]] = {
    "mean_rate": ("ci_low", "ci_high"),
    "rate": ("ci_low", "ci_high"),
    "value": ("ci_low", "ci_high"),
    "corrected": ("ci_low", "ci_high"),
    "share_not_constant": ("not_constant_ci_low", "not_constant_ci_high"),
    "drift_last_turn": ("drift_last_ci_low", "drift_last_ci_high"),
    "over_refusal_rate": ("over_ci_low", "over_ci_high"),
    "signed_error": ("signed_ci_low", "signed_ci_high"),
}

#: column → the header a reader sees (columns not listed keep their name).
HEADERS: dict[str, str] = {
    "model": "model", "turn": "turn", "tier": "tier",
    "n_clusters": "clusters", "n_units": "prompt units", "n_samples": "samples",
    "n_pairs": "pairs", "n_prompts": "prompts", "n_rated": "rated samples",
    "n_unrated": "unrated samples", "n": "n",
    "C": "C", "C_half": "C (ties = ½)", "tied_share": "tied pairs", "somers_d": "Somers' D",
    "RCE": "RCE", "signed_error": "E[R − H]", "drift": "Drift(t)", "drift_last_turn": "Drift(last turn)",
    "mean_R": "mean R", "over_refusal_rate": "over-refusal rate",
    "mean_rate": "mean refusal rate", "rate": "refusal rate", "pooled_rate": "pooled rate",
    "samples_per_prompt": "samples per prompt (median)", "always_refused": "always refused",
    "never_refused": "never refused", "prompts_multi_sample": "prompts with ≥ 2 samples",
    "share_not_constant": "not constant", "single_sample_prompts": "1-sample prompts",
    "refusals": "refusals", "constant": "constant", "value": "value",
    "raw": "raw (judge only)", "corrected": "corrected", "n_total": "n", "n_labelled": "labelled",
    "n_unit": "n counts",
    "n_labelled_positive": "labelled positives", "reference_labelled": "reference (labelled)",
    "judge_error": "judge's miss (raw − corrected)", "human": "human-only",
    "effective_labels": "effective labels", "lam": "λ",
}


def ci_columns(frame: pd.DataFrame, figure: str) -> tuple[str, str] | None:
    """The (low, high) columns of ``figure`` in ``frame``, or None when it has no interval."""
    cols = set(map(str, frame.columns))
    own = (f"{figure}_ci_low", f"{figure}_ci_high")
    if own[0] in cols and own[1] in cols:
        return own
    alias = CI_ALIASES.get(figure)
    if alias and alias[0] in cols and alias[1] in cols:
        # a bare ci_low/ci_high belongs to the first aliased figure present (mean_rate, rate, value)
        owner = next((f for f, a in CI_ALIASES.items() if a == alias and f in cols), None)
        return alias if owner == figure else None
    return None


def _num(v: Any) -> float | None:
    if v is None or v is pd.NA or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _fmt(v: float, digits: int) -> str:
    return f"{v:.{digits}f}" if abs(v) >= 0.5 * 10**-digits else f"{0.0:.{digits}f}"


def interval_text(value: Any, low: Any, high: Any, digits: int = 3, bound_digits: int | None = None) -> str:
    """``0.930 [0.910, 0.950]``; ``0.930 (no CI)`` without bounds; ``—`` without a value.
    ``bound_digits`` (default ``digits``) is for the terminal's narrower ``0.930 [0.91, 0.95]``."""
    v, lo, hi = _num(value), _num(low), _num(high)
    bd = digits if bound_digits is None else bound_digits
    if v is None:
        return "—"
    if lo is None or hi is None:
        return f"{_fmt(v, digits)} (no CI)"
    return f"{_fmt(v, digits)} [{_fmt(lo, bd)}, {_fmt(hi, bd)}]"


def header(col: str) -> str:
    """The readable header of column ``col``."""
    return HEADERS.get(col, col)


def display_table(frame: pd.DataFrame) -> tuple[list[str], list[list[Any]], list[int]]:
    """``(headers, rows, numeric column indexes)`` for a page: each figure with an interval as
    one ``X [95% CI]`` column of text, its bound columns dropped, other cells as they are (the
    renderer formats them)."""
    cols = [str(c) for c in frame.columns]
    pairs: dict[str, tuple[str, str]] = {}
    for c in cols:
        found = ci_columns(frame, c)
        if found is not None:
            pairs[c] = found
    bounds = {b for p in pairs.values() for b in p}
    shown = [c for c in cols if c not in bounds or c in pairs]
    heads = [f"{header(c)} [95% CI]" if c in pairs else header(c) for c in shown]
    numeric = [i for i, c in enumerate(shown) if c in pairs or (
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]))]
    rows: list[list[Any]] = []
    for rec in frame.to_dict("records"):
        row: list[Any] = []
        for c in shown:
            if c in pairs:
                lo, hi = pairs[c]
                row.append(interval_text(rec[c], rec[lo], rec[hi]))
            else:
                row.append(rec[c])
        rows.append(row)
    return heads, rows, numeric


def points(frame: pd.DataFrame, group: str, y: str, *, x: str = "turn",
           n: str | None = "n_units") -> dict[str, list[tuple[Any, ...]]]:
    """Chart points per value of ``group``: ``(x, y, low, high, n)`` with the interval of ``y``
    (:func:`ci_columns`; None bounds when it has none), in x order; rows without a y are left
    out, and a point whose interval is missing carries the reason as its sixth element."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    if frame.empty or y not in frame.columns:
        return out
    ci = ci_columns(frame, y)
    for key, grp in frame.groupby(group, sort=True):
        pts: list[tuple[Any, ...]] = []
        for rec in grp.to_dict("records"):
            xv, yv = _num(rec.get(x)), _num(rec.get(y))
            if xv is None or yv is None:
                continue
            lo = _num(rec.get(ci[0])) if ci else None
            hi = _num(rec.get(ci[1])) if ci else None
            nv = _num(rec.get(n)) if n else None
            why = None if lo is not None and hi is not None else (
                "no bootstrap interval (no resample defined it, or none were drawn)" if ci else "no interval computed")
            pts.append((xv, yv, lo, hi, int(nv) if nv is not None else None, why))
        if pts:
            out[str(key)] = sorted(pts, key=lambda p: p[0])
    return out
