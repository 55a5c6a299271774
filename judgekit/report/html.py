"""The judge report in HTML.

:func:`render_html` is the judge report: the verdict in plain words at the top, a table of every
judge at a glance, then one section per judge (confusion heatmap, agreement per slice against the
human–human ceiling and the gate threshold, abstentions and errors, label distribution beside the
humans', tokens and cost, the worst disagreements linked to their items).

The page itself (:func:`page`, :func:`table`, :func:`esc`) lives in :mod:`judgekit.report.page`;
the names are importable from here too.
"""

from __future__ import annotations

import json
import math
from typing import Any

from judgekit import __version__
from judgekit.report import svg, trust
from judgekit.report.escape import anchor, esc, excerpt, fmt_fig, fmt_int, fmt_num, fmt_pct, is_num
from judgekit.report.page import page, table
from judgekit.report.parts import ReportParts
from judgekit.report.summary import (
    CHECK_COLUMNS,
    check_cells,
    comparison_headers,
    metric_short,
    n_text,
    slice_headers,
    slice_name,
    thresholds_for,
)
from judgekit.report.turn_page import turn_section

__all__ = ["esc", "page", "render_html", "table"]


def _against(s: dict[str, Any]) -> str:
    """What the overview chart compares each judge with (its ``comparison``, summary.py)."""
    like = any(j.get("comparison") == "leave-one-out" for j in s.get("judges") or [])
    return "the other humans' consensus (leave-one-out; ceiling: the humans on the same items)" if like \
        else "the reference"


def _n_line(n: Any) -> str:
    """A figure's n on its own small line under it (the cell stays as narrow as the figure)."""
    return f'<br><span class="small muted">{esc(n_text(n).lstrip(" ·"))}</span>' if is_num(n) else ""


def fig_cell(f: dict[str, Any] | None) -> str:
    """A figure as table-cell HTML; an undefined one says so, with its reason underneath."""
    if f and not is_num(f.get("value")):
        reason = f.get("undefined")
        return "undefined" + (f'<br><span class="small muted">{esc(reason)}</span>' if reason else "")
    return esc(fmt_fig(f))


def html_grid(grid: trust.Grid | None, heading: str = "h3") -> str:
    """A :class:`judgekit.report.trust.Grid` as a heading, a table and its note (escaped)."""
    if grid is None:
        return ""
    out = f"<{heading}>{esc(grid.title)}</{heading}>"
    if grid.rows:
        out += table(grid.header, grid.rows, numeric=grid.numeric)
    if grid.note:
        out += f'<p class="small muted">{esc(grid.note)}</p>'
    return out


def _pill(status: str) -> str:
    cls = {"trusted": "pass", "not trusted": "fail", "inconclusive": "warn"}.get(status, "none")
    return f'<span class="pill {cls}">{esc(status)}</span>'


def _judge_anchor(judge: str) -> str:
    return anchor("judge", judge)


def _item_anchor(item_id: Any) -> str:
    return anchor("item", item_id)


def _cost_cells(cost: dict[str, Any] | None) -> list[str]:
    if not cost:
        return ["—", "—", "—", "—"]
    usd = cost.get("cost_usd")
    return [
        fmt_int(cost.get("calls")),
        fmt_int(cost.get("input_tokens")),
        fmt_int(cost.get("output_tokens")),
        f"${float(usd):,.4f}" if is_num(usd) else "—",
    ]


# ----------------------------------------------------------------------------- sections
def _verdict_section(s: dict[str, Any]) -> str:
    v = s["verdict"]
    if not v["present"]:
        cls = "none"
    elif v["applies"] and not s["trusted"] and any(j["status"] == "inconclusive" for j in s["judges"]):
        cls = "mixed"
    elif not v["applies"] or not s["trusted"]:
        cls = "fail"
    else:
        cls = "pass" if len(s["trusted"]) == len(s["judges"]) else "mixed"
    items = []
    for j in s["judges"]:
        link = f'<a href="#{_judge_anchor(j["judge"])}">{esc(j["judge"])}</a>'
        sentence = esc(j["sentence"]).replace(esc(j["judge"]), link, 1)
        checks = ""
        if j["failed_checks"]:
            checks = "<ul class=checks>" + "".join(
                f"<li><code>{esc(c.get('name'))}</code>: {esc(c['sentence'].split(': ', 1)[-1])}"
                + (f' <span class="muted">— {esc(c.get("detail"))}</span>' if c.get("detail") else "")
                + "</li>" for c in j["failed_checks"]) + "</ul>"
        if j.get("inconclusive_checks"):
            checks += "<ul class=checks>" + "".join(
                f"<li><code>{esc(c.get('name'))}</code> inconclusive: {esc(c['sentence'].split(': ', 1)[-1])}."
                + (f" {esc(c['budget_sentence'])}" if c.get("budget_sentence") else "")
                + "</li>" for c in j["inconclusive_checks"]) + "</ul>"
        items.append(f"<li>{_pill(j['status'])} {sentence}{checks}</li>")
    body = [f'<div class="banner {cls}" role="status"><p class="big">{esc(v["headline"])}</p>']
    if items:
        body.append("<ul>" + "".join(items) + "</ul>")
    body.append("</div>")
    facts = [f"Rubric <code>{esc(s['rubric'])}</code> (hash <code>{esc(s['rubric_hash'])}</code>, {esc(s['level'])})",
             f"reference: {esc(s['reference'])}"]
    if s["humans"]:
        facts.append("humans: " + ", ".join(f"<code>{esc(h)}</code>" for h in s["humans"]))
    if is_num(s.get("n_items")):
        facts.append(f"{fmt_int(s['n_items'])} items")
    if v["present"]:
        facts.append(f"verdict of {esc(v.get('created_at') or '?')}, policy <code>{esc(v.get('policy_hash') or '?')}</code>")
    body.append(f'<p class="small muted">{"; ".join(facts)}.</p>')
    if s["warnings"]:
        body.append('<div class="note"><strong>Notes from the agreement report</strong><ul>'
                    + "".join(f"<li>{esc(w)}</li>" for w in s["warnings"]) + "</ul></div>")
    return "".join(body)


def _glance_section(s: dict[str, Any], agreement: dict[str, Any], verdict: dict[str, Any] | None) -> str:
    m = s["metric"]
    header = ["judge", "verdict", *comparison_headers(s), "AC1",
              "% agree", "abstain / error", "rated of in scope"]
    with_cost = any(j.get("cost") for j in s["judges"])
    if with_cost:
        header.append("cost (USD)")
    rows = []
    for j in s["judges"]:
        cost = j.get("cost") or {}
        usd = cost.get("cost_usd")
        row = [
            f'<a href="#{_judge_anchor(j["judge"])}">{esc(j["judge"])}</a>',
            _pill(j["status"]),
            fig_cell(j.get("figure")) + _n_line(j.get("figure_n")),
            fig_cell(j.get("ceiling")) + _n_line(j.get("ceiling_n")),
            fig_cell(j.get("ac1")),
            esc(fmt_pct((j.get("percent_agreement") or {}).get("value"))),
            esc(f"{fmt_pct(j.get('abstain_rate'))} / {fmt_pct(j.get('error_rate'))}"),
            esc(trust.coverage_words(j["coverage"]) if j.get("coverage")
                else f"{fmt_int(j.get('n_rated'))} of {fmt_int(j.get('n_items'))}"),
        ]
        if with_cost:
            row.append(esc(f"${usd:,.2f}") if is_num(usd) else "—")
        rows.append(row)
    out = [table(header, rows, numeric=list(range(2, len(header))), raw=list(range(len(header))))]
    # one chart: every judge on all items, against the ceiling and its own gate threshold
    chart_rows = []
    lines: dict[str, float] = {}
    for j in s["judges"]:
        f = j.get("figure") or {}
        chart_rows.append({"label": j["judge"], "value": f.get("value"), "low": f.get("low"), "high": f.get("high"),
                           "n": f.get("n"), "ceiling": (j.get("ceiling") or {}).get("value"),
                           "undefined": f.get("undefined")})
        for name, t in thresholds_for(verdict, j["judge"], m).items():
            lines.setdefault(f"gate {name}", t)
    if chart_rows:
        out.append("<figure>" + svg.interval_chart(
            chart_rows, title=f"{s['metric_name']} of each judge vs {_against(s)}, all items",
            x_range=_x_range(chart_rows, lines), reference_lines=lines, x_label=f"{s['metric_name']} (1 = perfect, 0 = chance)",
            width=1000) + f"<figcaption>{esc(_interval_caption(chart_rows, lines, s))}</figcaption></figure>")
    out.append(html_grid(trust.pairwise_grid(agreement)))
    out.append(html_grid(trust.loo_grid(agreement)))
    out.append(html_grid(trust.coverage_grid(agreement)))
    out.append(html_grid(trust.bias_grid(agreement)))
    return "".join(out)


def _interval_caption(rows: list[dict[str, Any]], lines: dict[str, float], s: dict[str, Any]) -> str:
    """The caption of an interval chart, naming only the marks that are drawn."""
    has_ceiling = any(is_num(r.get("ceiling")) for r in rows)
    parts = ["Dot: the judge's estimate; bar: its 95% CI."]
    if has_ceiling:
        parts.append(f"Hollow purple diamond: how well the humans agree with each other ({s['ceiling_name']}); "
                     "a useful judge sits near it.")
    else:
        parts.append("No human–human ceiling is drawn: it is undefined here (fewer than two humans rated the "
                     "same items).")
    if lines:
        parts.append("A judge passes a gate line only when its whole interval clears the dashed line.")
    return " ".join(parts)


def _x_range(rows: list[dict[str, Any]], lines: dict[str, float]) -> tuple[float, float]:
    vals = [float(r[k]) for r in rows for k in ("value", "low", "high", "ceiling") if is_num(r.get(k))]
    vals += list(lines.values())
    lo = min(vals, default=0.0)
    # start at 0 unless something is below chance; then only as far down as needed
    return (max(-1.0, math.floor(lo * 4) / 4), 1.0) if lo < 0 else (0.0, 1.0)


def _judge_section(j: dict[str, Any], s: dict[str, Any], agreement: dict[str, Any],
                   verdict: dict[str, Any] | None, disagreements: list[dict[str, Any]]) -> str:
    jid = j["judge"]
    m = s["metric"]
    sym = metric_short(m)
    out = [f'<div id="{_judge_anchor(jid)}"></div>']
    out.append(f"<p>{_pill(j['status'])} {esc(j['sentence'])}</p>")
    if j["checks"]:
        rows = [check_cells(c) for c in j["checks"]]
        classes = [{"pass": None, "fail": "bad", "inconclusive": "warn"}[c["state"]] for c in j["checks"]]
        out.append("<h3>Gate checks</h3>" + table(list(CHECK_COLUMNS), rows, numeric=[1, 2, 3, 4],
                                                  row_classes=classes))
    slices = [sl for sl in agreement.get("slices") or [] if jid in (sl.get("judges") or {})]
    if not slices:
        out.append('<p class="muted">This judge has no ratings in the agreement report.</p>')
        return "".join(out)
    top = slices[0]
    st = top["judges"][jid]
    vs_ref = st.get("vs_reference") or {}
    conf = vs_ref.get("confusion") or {}
    charts = []
    if conf.get("matrix"):
        charts.append("<figure>" + svg.heatmap(
            conf["matrix"], row_labels=[str(x) for x in conf.get("labels") or []],
            col_labels=[str(x) for x in conf.get("labels") or []],
            title=f"{jid} vs {s['reference']}: counts", row_title="reference", col_title=f"judge {jid}")
            + "<figcaption>Rows: the reference label; columns: the judge's. The diagonal is agreement; "
              "shading is the share of the row.</figcaption></figure>")
    dist = st.get("label_distribution") or {}
    hdist = top.get("human_label_distribution") or {}
    labels = list(agreement.get("labels") or dist.keys())
    # with no human ratings (a reference only) the comparison is the reference, not an empty humans bar
    other, odist = (("humans", hdist) if agreement.get("ceiling_raters") or agreement.get("humans")
                    else ("reference", top.get("reference_label_distribution") or {}))
    if dist or odist:
        groups: dict[str, dict[str, float | None]] = {
            str(lab): {f"judge {jid}": dist.get(lab), other: odist.get(lab)} for lab in labels  # None: no bar
        }
        charts.append("<figure>" + svg.bar_chart(groups, title=f"Label distribution: {jid} vs {other}")
                      + f"<figcaption>A judge that over-calls a label has a taller bar than the {other} there."
                        "</figcaption></figure>")
    if charts:
        out.append('<h3>What it says vs the reference</h3><div class="charts">' + "".join(charts) + "</div>")
    if conf.get("precision"):
        prf = [[lab, fmt_num((conf.get("precision") or {}).get(lab)), fmt_num((conf.get("recall") or {}).get(lab)),
                fmt_num((conf.get("f1") or {}).get(lab)), fmt_int((conf.get("support") or {}).get(lab))]
               for lab in conf.get("labels") or []]
        out.append(table(["label", "precision", "recall", "F1", "support (reference)"], prf, numeric=[1, 2, 3, 4],
                         caption="Per label, the judge against the reference."))

    # agreement per slice
    lines = {f"gate {k}": v for k, v in thresholds_for(verdict, jid, m).items()}
    chart_rows, rows = [], []
    for sl in slices:
        sj = sl["judges"][jid]
        f = (sj.get("vs_reference") or {}).get(m) or {}
        ceil = (sl.get("human_ceiling") or {}).get(m) or {}
        chart_rows.append({"label": slice_name(sl), "value": f.get("value"), "low": f.get("low"),
                           "high": f.get("high"), "n": f.get("n"), "ceiling": ceil.get("value"),
                           "undefined": f.get("undefined")})
        vr = sj.get("vs_reference") or {}
        rows.append([esc(slice_name(sl)), esc(fmt_int(sl.get("n_items"))), esc(fmt_int(sj.get("n_rated"))),
                     fig_cell(f), fig_cell(ceil), fig_cell(vr.get("ac1")),
                     esc(fmt_pct((vr.get("percent_agreement") or {}).get("value"))),
                     esc(fmt_pct(sj.get("abstain_rate"))), esc(fmt_pct(sj.get("error_rate")))])
    out.append(f"<h3>Agreement per slice ({esc(s['metric_name'])}, 95% CI)</h3>")
    out.append("<figure>" + svg.interval_chart(
        chart_rows, title=f"{jid}: {s['metric_name']} vs the reference, per slice",
        x_range=_x_range(chart_rows, lines), reference_lines=lines, width=1000) + "</figure>")
    out.append(table(slice_headers(s), rows, numeric=[1, 2, 3, 4, 5, 6, 7, 8], raw=list(range(9))))
    if len(slices) > 1:
        out.append(html_grid(trust.per_class_grid(agreement, jid)))
        series = trust.bias_series(agreement, jid)
        if series:
            what, brows = series
            vals = [float(r[k]) for r in brows for k in ("value", "low", "high") if is_num(r.get(k))]
            span = max([abs(v) for v in vals] + [0.05])
            span = math.ceil(span * 20) / 20
            out.append(f"<h3>Signed bias per slice ({esc(what)})</h3><figure>" + svg.interval_chart(
                brows, title=f"{jid}: {what}, per slice", x_range=(-span, span), reference_lines={"no bias": 0.0},
                x_label=f"{what} (0 = no bias)", width=1000)
                + "<figcaption>Dot: the signed bias on the slice; bar: its bootstrap 95% CI; the dashed line is 0. "
                  "A bias that moves across slices shows as dots drifting off the line.</figcaption></figure>")
    out.append(f'<p class="small muted">Abstentions ({fmt_int(st.get("n_abstain"))}) and errors '
               f'({fmt_int(st.get("n_error"))}) on all items are counted apart from disagreements: '
               f"{esc(sym)} is computed on the items the judge rated.</p>")

    # vs each human and the change in alpha
    vh = st.get("vs_humans") or {}
    if vh:
        hrows = [[esc(h), esc(fmt_int(x.get("n"))), fig_cell(x.get("kappa")),
                  esc(fmt_pct((x.get("percent_agreement") or {}).get("value")))] for h, x in vh.items()]
        out.append("<h3>Against each human</h3>" + table(["human", "n", "κ [95% CI]", "% agree"], hrows,
                                                         numeric=[1, 2, 3], raw=[0, 1, 2, 3]))
        d = st.get("alpha_delta")
        if is_num(d):
            word = "raises" if float(d) > 0 else ("lowers" if float(d) < 0 else "leaves unchanged")
            out.append(f"<p>Adding {esc(jid)} to the human raters {word} Krippendorff's α: "
                       f"{esc(fmt_fig(st.get('alpha_humans')))} → {esc(fmt_fig(st.get('alpha_with_judge')))} "
                       f"(Δα = {esc(fmt_num(d, 3))}).</p>")

    # cost
    cost = j.get("cost")
    if cost:
        cells = _cost_cells(cost)
        per = ""
        n_items = st.get("n_items")
        if is_num(cost.get("cost_usd")) and is_num(n_items) and n_items:
            per = f"${1000 * float(cost['cost_usd']) / float(n_items):,.3f}"
        out.append("<h3>Tokens and cost</h3>" + table(["calls", "input tokens", "output tokens", "cost (USD)",
                                                       "per 1,000 items"], [[*cells, per or "—"]], numeric=[0, 1, 2, 3, 4]))

    # worst disagreements
    mine = [d for d in disagreements if str(d.get("judge_id")) == jid]
    out.append("<h3>Worst disagreements</h3>")
    if mine:
        has_h = any(d.get("humans") for d in mine)
        has_r = any(d.get("rationale") for d in mine)
        header = ["item", "reference", f"{jid} said"] + (["humans"] if has_h else []) + ([f"{jid}'s rationale"] if has_r else [])
        rows = []
        for d in mine:
            link = f'<a href="#{_item_anchor(d.get("item_id"))}">{esc(d.get("item_id"))}</a>'
            row = [link, esc(d.get("reference")), esc(d.get("judge_label"))]
            if has_h:
                row.append(esc(", ".join(f"{k}: {v}" for k, v in (d.get("humans") or {}).items())))
            if has_r:
                row.append(esc(excerpt(d.get("rationale"), 400)) if d.get("rationale") else "—")
            rows.append(row)
        items_link = anchor("s", "Items behind the disagreements")
        has_text = any(d.get("prompt_excerpt") or d.get("response_excerpt") for d in mine)
        what = "prompt and response are" if has_text else "labels are (the data has no prompt or response text)"
        out.append(f'<p class="small muted">Each item\'s {what} under '
                   f'<a href="#{items_link}">Items behind the disagreements</a>, once.</p>')
        out.append(table(header, rows, raw=list(range(len(header))), text_cols=[len(header) - 1] if has_r else [],
                         table_id=anchor("disagreements", jid)))
    else:
        out.append('<p class="muted">None listed (either none were found, or the report was built without '
                   "item texts).</p>")
    return "".join(out)


def _items_section(disagreements: list[dict[str, Any]]) -> str:
    by_item: dict[str, list[dict[str, Any]]] = {}
    for d in disagreements:
        by_item.setdefault(str(d.get("item_id")), []).append(d)
    out = ['<p class="small muted">Every item listed in a disagreement table, once, with what each rater said.</p>']
    for item_id, ds in by_item.items():
        first = ds[0]
        said = "; ".join(f"{d.get('judge_id')}: {d.get('judge_label')}" for d in ds)
        humans = first.get("humans") or {}
        out.append(f'<div class="item" id="{_item_anchor(item_id)}"><p><strong><code>{esc(item_id)}</code></strong> '
                   f"— reference <strong>{esc(first.get('reference'))}</strong>; judges {esc(said)}"
                   + (f"; humans {esc(', '.join(f'{k}: {v}' for k, v in humans.items()))}" if humans else "")
                   + "</p>")
        if first.get("prompt_excerpt"):
            out.append(f'<p class="small"><span class="muted">prompt:</span> {esc(excerpt(first["prompt_excerpt"], 600))}</p>')
        if first.get("response_excerpt"):
            out.append(f'<p class="small"><span class="muted">response:</span> {esc(excerpt(first["response_excerpt"], 1200))}</p>')
        out.append("</div>")
    return "".join(out)


def _generic(value: Any) -> str:
    """Any JSON-like value as safe HTML (for ``extras["sampling"]`` and similar)."""
    if isinstance(value, dict):
        rows = [[k, _generic(v) if isinstance(v, (dict, list)) else esc(_scalar(v))] for k, v in value.items()]
        return table(["", ""], rows, raw=[1])
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            keys: list[str] = []
            for v in value:
                keys += [k for k in v if k not in keys]
            return table(keys, [[_scalar(v.get(k)) for k in keys] for v in value])
        return "<ul>" + "".join(f"<li>{_generic(v) if isinstance(v, (dict, list)) else esc(_scalar(v))}</li>" for v in value) + "</ul>"
    return f"<p>{esc(_scalar(value))}</p>"


def _scalar(v: Any) -> str:
    if isinstance(v, float):
        return fmt_num(v, 3)
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, default=str)
    return "" if v is None else str(v)


def _provenance(s: dict[str, Any], agreement: dict[str, Any], verdict: dict[str, Any] | None, created_at: str) -> str:
    rows = [["report made", created_at], ["judgekit", __version__], ["rubric", f"{s['rubric']} #{s['rubric_hash']}"],
            ["reference", s["reference"]], ["slices by", ", ".join(agreement.get("by") or []) or "—"]]
    if is_num(agreement.get("n_resamples")):
        rows.append(["bootstrap", f"{fmt_int(agreement['n_resamples'])} resamples of items, "
                                  f"{fmt_pct(agreement.get('confidence', 0.95), 0)} intervals"])
    if verdict:
        for k in ("created_at", "policy_hash", "rubric", "rubric_hash", "reference", "items_hash", "human_ratings_hash",
                  "judgekit_version"):
            if verdict.get(k) is not None:
                rows.append([f"verdict {k}", _scalar(verdict.get(k))])
        for jv in verdict.get("judges") or []:
            if jv.get("judge_hash"):
                rows.append([f"verdict judge {jv.get('judge')}", f"hash {jv.get('judge_hash')}"])
        if verdict.get("policy"):
            rows.append(["verdict policy", _scalar(verdict.get("policy"))])
    return table(["", ""], rows, text_cols=[1])


def render_html(parts: ReportParts) -> str:
    """The judge report as one self-contained HTML page (see the module docstring)."""
    agreement, verdict, summary = parts.agreement, parts.verdict, parts.summary
    extras, created_at = parts.extras, parts.created_at
    disagreements = [d for d in extras.get("disagreements") or [] if isinstance(d, dict)]
    sections: list[tuple[str, str]] = [
        ("Verdict", _verdict_section(summary)),
        ("All judges at a glance", _glance_section(summary, agreement, verdict)),
    ]
    per_turn = turn_section(agreement, summary)
    if per_turn:
        sections.append(("Agreement per turn", per_turn))
    if extras.get("between"):
        from judgekit.report import between as _between

        notes = "".join(f"<li>{esc(w)}</li>" for w in _between.between_warnings(extras["between"]))
        header, rows, numeric = _between.between_table(extras["between"])
        sections.append((_between.TITLE, f"<p>{esc(_between.INTRO)}</p>"
                         + table(header, rows, numeric=numeric)
                         + (f"<ul>{notes}</ul>" if notes else "")))
    for j in summary["judges"]:
        sections.append((f"Judge {j['judge']}", _judge_section(j, summary, agreement, verdict, disagreements)))
    if disagreements:
        sections.append(("Items behind the disagreements", _items_section(disagreements)))
    if extras.get("sampling") is not None:
        sections.append(("Sampling", _generic(extras["sampling"])))
    if isinstance(extras.get("probes"), dict):  # judgekit probe (judgekit.report.probes)
        from judgekit.report.probes import html_section

        sections.append(("Probes", html_section(extras["probes"])))
    if isinstance(extras.get("selective"), dict):  # judgekit escalate (judgekit.report.selective)
        from judgekit.report import selective as _selective

        sections.append((_selective.TITLE, _selective.html_section(extras["selective"])))
    if isinstance(extras.get("fidelity"), dict):
        from judgekit.report.fidelity import fidelity_grid

        fid = extras["fidelity"]
        sections.append(("Analysis fidelity", html_grid(fidelity_grid(fid)) if fid.get("rows")
                         else f"<p>{esc(fid.get('error') or 'no fidelity figures')}</p>"))
    sections.append(("Provenance", _provenance(summary, agreement, verdict, created_at)))
    sections.append(("Assumptions and what this report does not establish",
                     "<ul>" + "".join(f"<li>{esc(a)}</li>" for a in summary.get("assumptions") or []) + "</ul>"))
    subtitle = f"Can these judges be trusted to score {summary['rubric']}? Reference: {summary['reference']}."
    return page(f"judgekit report — {summary['rubric']}", sections, subtitle=subtitle)
