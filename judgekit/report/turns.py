"""Agreement per turn of a conversation: a first-class slice of the judge report.

Judges misread multi-turn intent (a request that turns harmful at turn 5 reads innocently at
turn 1), so a judge whose agreement is fine over all items can fail on the late turns, and a
signed bias that grows with the turn moves exactly the drift figures a study of conversational
pressure tests. When the items carry a turn column (:data:`TURN_COLUMNS`), the report asks the
agreement report for the ``--by turn`` slices (:func:`judgekit.report.collect.report_by`), and this
module reads them back, in numeric turn order, as

* :func:`agreement_by_turn` — chart series per judge of the report's metric per turn, each
  point with its 95% CI and n, and the human–human ceiling per turn as an overlay layer;
* :func:`bias_by_turn` — the signed bias judge − reference per turn (the issue-10 bias figure);
* :func:`turn_grid` — the table: per turn, items in scope and per judge the metric and the bias
  with their intervals (an undefined figure says why).

Pure functions over ``agreement_report(...).to_dict()``; nothing is escaped here (the HTML and
Markdown renderers escape). Definitions: ``docs/agreement.md``.
"""

from __future__ import annotations

from typing import Any

from judgekit.report.escape import fmt_fig, fmt_int, is_num
from judgekit.report.trust import Grid

__all__ = ["TURN_COLUMNS", "agreement_by_turn", "bias_by_turn", "turn_by", "turn_grid", "turn_slices"]

#: item columns read as the turn index of a conversation (the first one the items carry wins).
TURN_COLUMNS = ("turn", "turn_index")

Points = dict[str, list[tuple[Any, ...]]]


def turn_by(agreement: dict[str, Any]) -> str | None:
    """The slicing column of ``agreement`` that is a turn index, or None."""
    by = [str(b) for b in agreement.get("by") or []]
    return next((c for c in TURN_COLUMNS if c in by), None)


def _x(key: Any) -> float | None:
    try:
        x = float(key)
    except (TypeError, ValueError):
        return None
    return x if is_num(x) else None


def turn_slices(agreement: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-turn slices in numeric turn order (a turn that is not a number, e.g.
    ``(missing)``, is left out: it has no place on a turn axis). Empty when there are fewer
    than two turns: one turn is the whole report again."""
    col = turn_by(agreement)
    if col is None:
        return []
    out = [s for s in agreement.get("slices") or [] if s.get("by") == col and _x(s.get("key")) is not None]
    out.sort(key=lambda s: _x(s.get("key")) or 0.0)
    return out if len(out) >= 2 else []


def _point(x: float, f: dict[str, Any] | None, n: Any = None) -> tuple[Any, ...]:
    f = f or {}
    nn = f.get("n") if is_num(f.get("n")) else n
    why = f.get("undefined")
    if is_num(f.get("value")) and not (is_num(f.get("low")) and is_num(f.get("high"))) and not why:
        why = "no bootstrap interval"
    return (x, f.get("value"), f.get("low"), f.get("high"), int(nn) if is_num(nn) else None, why)


def agreement_by_turn(agreement: dict[str, Any], metric: str) -> tuple[Points, Points]:
    """``(series, overlay)``: per judge, ``metric`` against the reference per turn as chart
    points ``(turn, value, low, high, n, undefined)``; the overlay holds the human–human
    ceiling per turn (``"human–human"``) where the humans rated items of that turn."""
    series: Points = {}
    ceiling: list[tuple[Any, ...]] = []
    for s in turn_slices(agreement):
        x = _x(s.get("key"))
        assert x is not None
        for jid, j in (s.get("judges") or {}).items():
            f = ((j or {}).get("vs_reference") or {}).get(metric)
            series.setdefault(str(jid), []).append(_point(x, f, (j or {}).get("n_rated")))
        c = (s.get("human_ceiling") or {}).get(metric)
        if c and (is_num(c.get("value")) or c.get("undefined")):
            ceiling.append(_point(x, c))
    overlay: Points = {"human–human": ceiling} if any(is_num(p[1]) for p in ceiling) else {}
    return series, overlay


def _bias_figure(b: dict[str, Any], code: str | None) -> tuple[dict[str, Any] | None, str]:
    if b.get("mean_diff") is not None or code is None:
        return b.get("mean_diff"), "mean judge − reference"
    return (b.get("share_diff") or {}).get(str(code)), f"share of {code}: judge − reference"


def bias_by_turn(agreement: dict[str, Any]) -> tuple[str, Points] | None:
    """``(what, series)``: per judge, its signed bias against the reference per turn, with 95%
    CIs. ``what`` is the figure drawn: the mean difference of the rubric's values (ordinal,
    interval) or, for a nominal rubric, the share difference of each judge's most biased label
    over all items (the same label on every turn; named in the series name)."""
    slices = turn_slices(agreement)
    if not slices:
        return None
    overall: dict[str, Any] = next((s for s in agreement.get("slices") or [] if s.get("by") is None), {})
    series: Points = {}
    whats: set[str] = set()
    for jid, j in (overall.get("judges") or {}).items():
        top = (j or {}).get("bias")
        if not top:
            continue
        code = (top.get("max_abs") or {}).get("code")
        _, what = _bias_figure(top, code)
        whats.add(what)
        name = str(jid) if top.get("mean_diff") is not None or code is None else f"{jid} ({code})"
        pts = []
        for s in slices:
            b = ((s.get("judges") or {}).get(jid) or {}).get("bias") or {}
            f, _ = _bias_figure(b, code)
            x = _x(s.get("key"))
            assert x is not None
            pts.append(_point(x, f, b.get("n")))
        series[name] = pts
    if not series:
        return None
    what = whats.pop() if len(whats) == 1 else "share of the most biased label: judge − reference"
    return what, series


def turn_grid(agreement: dict[str, Any], metric: str, metric_name: str) -> Grid | None:
    """Per turn: items in scope, and per judge the metric and the signed bias against the
    reference with their 95% CIs and n (undefined figures say why)."""
    slices = turn_slices(agreement)
    if not slices:
        return None
    judges = [str(j) for j in agreement.get("judges") or []]
    bias = bias_by_turn(agreement)
    bias_pts = bias[1] if bias else {}
    header = ["turn", "items in scope"]
    for j in judges:
        bname = next((name for name in bias_pts if name == j or name.startswith(f"{j} (")), j)
        header += [f"{j}: {metric_name} [95% CI]", f"{j}: n", f"{bname}: bias [95% CI]"]
    rows = []
    for i, s in enumerate(slices):
        row = [str(s.get("key")), fmt_int(s.get("n_in_scope") if is_num(s.get("n_in_scope")) else s.get("n_items"))]
        for j in judges:
            sj = (s.get("judges") or {}).get(j) or {}
            f = (sj.get("vs_reference") or {}).get(metric)
            bp = next((pts[i] for name, pts in bias_pts.items() if name == j or name.startswith(f"{j} (")), None)
            btxt = "—"
            if bp is not None:
                btxt = fmt_fig({"value": bp[1], "low": bp[2], "high": bp[3], "undefined": bp[5]}, 3) \
                    if is_num(bp[1]) or bp[5] else "—"
            row += [fmt_fig(f, 3) if f else "—", fmt_int((f or {}).get("n") if f else sj.get("n_rated")), btxt]
        rows.append(row)
    what = bias[0] if bias else "signed bias"
    if what.startswith("share of the most biased"):
        what += ", the label in brackets after the judge"
    note = (f"{metric_name} of each judge against the reference on the items of each turn, and its signed "
            f"bias ({what}; 0 = none, positive = the judge gives the higher value or the label more "
            "often); bootstrap 95% CIs over "
            "the items of the turn. A judge that reads multi-turn intent wrongly loses agreement, or gains a "
            "bias, on the late turns even when it passes over all items.")
    return Grid(f"Agreement per turn ({turn_by(agreement)})", header, rows, list(range(1, len(header))), note)
