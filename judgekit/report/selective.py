"""The selective-judging section of a report (``extras["selective"]``: the calibration JSON of
``judgekit escalate calibrate``, :meth:`judgekit.selective.calibrate.SelectiveCalibration.to_dict`):
the guarantee in words, the thresholds and coverage per judge, the held-out check, the cost per
kept label and the coverage-agreement chart. Every text from the data is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgekit.report.escape import esc, md_escape
from judgekit.report.page import table
from judgekit.report.svg.lines import LineStyle, line_chart

TITLE = "Selective judging"
_HEAD = ["judge", "threshold", "items seen", "kept", "coverage (all items)", "agreement", "bound on disagreement"]


def _num(v: Any, fmt: str = ".3f") -> str:
    return "—" if v is None else format(float(v), fmt)


def _rows(doc: dict[str, Any]) -> list[list[str]]:
    return [[str(s["judge"]), _num(s["threshold"], ".4f"), str(s["n_seen"]), str(s["n_kept"]),
             f"{100 * float(s['coverage']):.1f}%", _num(s["agreement"]), _num(s["upper_bound"])]
            for s in doc.get("stages") or []]


def _facts(doc: dict[str, Any]) -> list[str]:
    a, d = float(doc["alpha"]), float(doc["delta"])
    out = [
        f"Target: expected agreement with the humans ({doc['reference']}) >= {1 - a:.2f} on the items each judge "
        f"keeps, with probability >= {1 - d:.2f}; thresholds by fixed-sequence testing with the exact "
        f"Clopper-Pearson bound ({doc['rule']}) on {doc['n_calibration']} of {doc['n_labelled']} "
        "labelled items. Valid for new items exchangeable with the calibration items.",
        *[str(g) for g in doc.get("guarantee") or []],
        f"Cascade: {100 * float(doc['coverage']):.1f}% of items kept, "
        f"{100 * (1 - float(doc['coverage'])):.1f}% escalated to people.",
    ]
    if doc.get("held_out_coverage") is not None:
        out.append(f"Held out ({doc['n_held_out']} labelled items): coverage "
                   f"{100 * float(doc['held_out_coverage']):.1f}%, agreement on kept items "
                   f"{_num(doc.get('held_out_agreement'))}.")
    from judgekit.selective.calibrate import cost_sentence

    sentence = cost_sentence(doc.get("cost") or {})
    if sentence:
        out.append(sentence)
    return out


def html_section(doc: dict[str, Any]) -> str:
    """The section as HTML."""
    chart = _coverage_agreement_chart(doc.get("curves") or {}, doc.get("cascade_curve") or [],
                                     target=1 - float(doc["alpha"]))
    facts = "".join(f"<li>{esc(f)}</li>" for f in _facts(doc))
    return f"<ul>{facts}</ul>" + table(_HEAD, _rows(doc), numeric=[1, 2, 3, 4, 5, 6]) + chart


def markdown_section(doc: dict[str, Any], level: str = "##") -> list[str]:
    """The section as Markdown lines."""
    out = [f"{level} {TITLE}", ""]
    out += [f"- {md_escape(f, table=False)}" for f in _facts(doc)]
    out += ["", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    out += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in _rows(doc)]
    return out


__all__ = [
    "TITLE", "html_section", "markdown_section",
]


# The coverage-agreement chart of selective judging: for each judge of a cascade, its agreement
# with the humans on the items it keeps against the share it keeps, as its confidence threshold
# falls; the cascade's points at several targets; the target ``1 - alpha`` as a dashed line.

def _coverage_agreement_chart(
    curves: Mapping[str, Sequence[Mapping[str, Any]]],
    cascade: Sequence[Mapping[str, Any]],
    *,
    target: float,
    title: str = "Coverage and agreement with the humans (calibration items)",
) -> str:
    """``curves``: judge -> points ``{"coverage", "agreement"}``; ``cascade``: the cascade's
    ``{"coverage", "agreement"}`` at several alphas. Names are escaped by :func:`line_chart`."""
    series: dict[str, list[tuple[float, float]]] = {
        str(name): sorted((float(p["coverage"]), float(p["agreement"])) for p in pts)
        for name, pts in curves.items() if pts
    }
    if cascade:
        series["cascade (calibrated at each alpha)"] = sorted(
            (float(p["coverage"]), float(p["agreement"])) for p in cascade)
    low = min([target, *[y for pts in series.values() for _, y in pts]], default=target)
    return line_chart(series, title=title, x_label="coverage (share of items kept)",
                      y_label="agreement on kept items", y_range=(max(0.0, low - 0.05), 1.0),
                      hline=target, style=LineStyle(ci="none"))


