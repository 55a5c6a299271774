"""Certified figures in an analysis result: keep what the verdict certifies, leave out the rest.

A judge that did not pass every check of its gate may still be trusted for the figures its verdict
certifies (:func:`judgekit.verdict.certify.certify`, read by
:func:`judgekit.analysis.trust.check_trust` with ``figures=``). :func:`apply_figures` then goes
through the result: each column of a table and each chart belongs to one figure (the maps below,
in the names the certificates use: ``C``, ``RCE_t``, ``drift``, ``drift_tier``, …) or to none
(e.g. the tied share, the benign look-alikes, the ``--by`` slices: no certificate covers them).
A column of a figure that is not certified is emptied (its values become missing, the column
stays so the tables keep their shape), a chart of one is removed, and a table that belongs to no
figure is removed — unless the analysis is forced with ``untrusted``: then they stay, stamped
UNTRUSTED with the certificate's sentence ("not established (would need …)", "UNTRUSTED (… fail)").
The result says which: a note per judge, and ``meta["figures"]`` (figure → state, sentence,
``shown``: whether its values are in the result).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit.analysis.result import UNTRUSTED, AnalysisResult
from judgekit.analysis.trust import TrustReport


@dataclass(frozen=True)
class FigureMap:
    """Which figure each column and chart of an analysis shows.

    ``tables``: table key → column → figure (None: a judge-derived column no figure covers);
    columns not named are structure (model, turn, counts) and always kept. A table whose key is
    not named belongs to no figure. ``charts``: chart key prefix → figure; a chart matching none
    belongs to no figure. ``figures``: every figure name of the analysis."""

    figures: tuple[str, ...]
    tables: dict[str, dict[str, str | None]] = field(default_factory=dict)
    charts: dict[str, str] = field(default_factory=dict)


def _cols(figure: str | None, *names: str) -> dict[str, str | None]:
    return dict.fromkeys(names, figure)


#: :func:`judgekit.analysis.calibration.estimate.calibration`
CALIBRATION = FigureMap(
    figures=("C", "C_half", "RCE", "signed_error", "C_t", "RCE_t", "mean_R_t", "drift", "drift_tier"),
    tables={
        "summary": {
            **_cols("C", "C", "C_ci_low", "C_ci_high"),
            **_cols("C_half", "C_half", "C_half_ci_low", "C_half_ci_high", "somers_d"),
            **_cols("RCE", "RCE", "RCE_ci_low", "RCE_ci_high"),
            **_cols("signed_error", "signed_error", "signed_ci_low", "signed_ci_high"),
            **_cols("drift", "drift_last_turn", "drift_last_ci_low", "drift_last_ci_high"),
            **_cols(None, "tied_share"),
        },
        "by_turn": {
            **_cols("C_t", "C", "C_ci_low", "C_ci_high"),
            **_cols("RCE_t", "RCE", "RCE_ci_low", "RCE_ci_high"),
            **_cols("mean_R_t", "mean_R"),
            **_cols("drift", "drift", "drift_ci_low", "drift_ci_high"),
            **_cols(None, "tied_share", "C_half", "signed_error"),
        },
        "by_tier_turn": {
            **_cols("drift_tier", "drift", "drift_ci_low", "drift_ci_high"),
            **_cols(None, "mean_R", "RCE", "RCE_ci_low", "RCE_ci_high", "signed_error"),
        },
    },
    charts={"c_by_turn": "C_t", "drift_by_turn": "drift", "drift_by_tier_": "drift_tier"},
)

#: :func:`judgekit.analysis.distribution.estimate.refusal_distribution` (``refusal_rate`` is the mean over
#: prompts of the per-prompt rate, as :mod:`judgekit.analysis.fidelity` computes it)
DISTRIBUTION = FigureMap(
    figures=("refusal_rate", "refusal_rate_t", "share_not_constant"),
    tables={
        "by_model": {
            **_cols("refusal_rate", "mean_rate", "ci_low", "ci_high"),
            **_cols("share_not_constant", "share_not_constant", "not_constant_ci_low", "not_constant_ci_high"),
            **_cols(None, "pooled_rate", "always_refused", "never_refused"),
        },
        "by_turn": {
            **_cols("refusal_rate_t", "mean_rate", "ci_low", "ci_high"),
            **_cols(None, "share_not_constant", "not_constant_ci_low", "not_constant_ci_high",
                    "pooled_rate", "always_refused", "never_refused"),
        },
    },
    charts={"rate_by_turn": "refusal_rate_t"},
)


def _chart_figure(fmap: FigureMap, key: str) -> str | None:
    return next((fig for prefix, fig in fmap.charts.items()
                 if key == prefix or (prefix.endswith("_") and key.startswith(prefix))), None)


def _stamp(title: str) -> str:
    return title if title.startswith(UNTRUSTED) else f"{UNTRUSTED} — {title}"


def apply_figures(result: AnalysisResult, trust: TrustReport, fmap: FigureMap, *, untrusted: bool) -> AnalysisResult:
    """Keep the certified figures of ``result``, leave out (or, with ``untrusted``, stamp) the
    others (module doc). Nothing changes when every judge passed its gate outright."""
    if not trust.figures:
        return result
    certs = trust.figures

    def ok(fig: str | None) -> bool:
        return fig is not None and all(c.get(fig, {}).get("state") == "pass" for c in certs.values())

    kept = []
    for t in result.tables:
        spec = fmap.tables.get(t.key)
        if spec is None:  # no figure covers this table
            if untrusted:
                t.title = _stamp(t.title)
                kept.append(t)
            continue
        bad = [c for c in t.frame.columns if c in spec and not ok(spec[c])]
        if bad and untrusted:
            t.title = _stamp(t.title)
        elif bad:
            t.frame = t.frame.copy()
            for c in bad:
                t.frame[c] = np.nan if t.frame[c].dtype.kind in "fiub" else None
        kept.append(t)
    result.tables = kept
    charts = []
    for chart in result.charts:
        if ok(_chart_figure(fmap, chart.key)):
            charts.append(chart)
        elif untrusted:
            chart.title = _stamp(chart.title)
            charts.append(chart)
    result.charts = charts

    states: dict[str, dict[str, Any]] = {}
    for fig in fmap.figures:
        per = [cert[fig] for cert in certs.values() if fig in cert]
        worst = next((p for p in per if p["state"] != "pass"), per[0] if per else None)
        if worst is not None:
            states[fig] = {"state": worst["state"], "sentence": worst["sentence"],
                           "shown": ok(fig) or untrusted}
    result.meta["figures"] = states
    open_ = [s["sentence"] for s in states.values() if s["state"] != "pass"]
    for key, cert in certs.items():
        good = [f for f in fmap.figures if cert.get(f, {}).get("state") == "pass"]
        result.notes.append(f"The verdict of {key} certifies {', '.join(good)} only; "
                            + ("the other figures are shown stamped UNTRUSTED."
                               if untrusted else
                               "the other figures, the tables no certificate covers and their charts "
                               "are left out of this result (run untrusted to see them stamped UNTRUSTED)."))
    unchecked = [f for f, s in states.items() if s["state"] == "unchecked"]
    if unchecked:
        result.notes.append(f"Not certified (the verdict's policy does not check them): {', '.join(unchecked)}.")
    result.notes.extend(f"Not certified: {s['sentence']}." for s in states.values()
                        if s["state"] not in ("pass", "unchecked"))
    stamped = any(t.title.startswith(UNTRUSTED) for t in result.tables)
    if untrusted and (open_ or stamped):
        shown = [f for f, st in states.items() if st["state"] != "pass"] or ["tables no certificate covers"]
        result.mark_untrusted(f"figures the verdict does not certify are shown ({', '.join(shown)}; "
                              "the notes say why).")
    return result


def guard_result(result: AnalysisResult, trust: TrustReport, fmap: FigureMap, *,
                 untrusted: bool) -> AnalysisResult:
    """The trust guard's last step on a finished ``result``: keep the figures the verdicts
    certify (:func:`apply_figures`), and stamp it UNTRUSTED when a judge had no matching passing
    verdict (forced with ``untrusted``)."""
    apply_figures(result, trust, fmap, untrusted=untrusted)
    if not trust.ok:
        result.stamp_untrusted(trust.reason())
    return result
