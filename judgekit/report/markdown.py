"""The judge report in Markdown: the same content as the HTML page, as tables, for papers, pull
requests and CI logs. Every piece of data text is escaped (:func:`md_escape`), so a response
containing ``<script>`` or ``|`` renders as text and cannot break a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from judgekit import __version__
from judgekit.report import trust, turns
from judgekit.report.escape import excerpt, fmt_fig, fmt_int, fmt_num, fmt_pct, is_num, md_escape
from judgekit.report.summary import (
    CHECK_COLUMNS,
    check_cells,
    comparison_headers,
    n_text,
    slice_headers,
    slice_name,
)

if TYPE_CHECKING:
    from judgekit.report.parts import ReportParts

__all__ = ["md_table", "render_markdown"]

_STATUS = {"trusted": "**TRUSTED**", "not trusted": "**NOT TRUSTED**", "not gated": "**NOT GATED**",
           "inconclusive": "**INCONCLUSIVE**"}


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric: Sequence[int] = (),
             raw: Sequence[int] = ()) -> str:
    """A GitHub-flavoured Markdown table; cells are escaped unless their column is in ``raw``."""
    num, rawset = set(numeric), set(raw)
    lines = ["| " + " | ".join(md_escape(h) for h in header) + " |",
             "|" + "|".join("---:" if i in num else "---" for i in range(len(header))) + "|"]
    for row in rows:
        cells = [str(v) if i in rawset else md_escape(v) for i, v in enumerate(row)]
        lines.append("| " + " | ".join(c if c else " " for c in cells) + " |")
    return "\n".join(lines)


def md_grid(grid: trust.Grid | None, level: str = "###") -> list[str]:
    """A :class:`judgekit.report.trust.Grid` as a heading, a table and its note (escaped)."""
    if grid is None:
        return []
    out = ["", f"{level} {md_escape(grid.title)}", ""]
    if grid.rows:
        out.append(md_table(grid.header, grid.rows, numeric=grid.numeric))
    if grid.note:
        out += ["", md_escape(grid.note)]
    return out


def render_markdown(parts: ReportParts) -> str:
    """The judge report as Markdown (see the module docstring)."""
    agreement, verdict, summary = parts.agreement, parts.verdict, parts.summary
    extras, created_at = parts.extras, parts.created_at
    s = summary
    m = s["metric"]
    out: list[str] = [f"# judgekit report — {md_escape(s['rubric'])}", ""]
    out.append(f"Rubric {md_escape(s['rubric'])} #{md_escape(s['rubric_hash'])} ({md_escape(s['level'])}); "
               f"reference: {md_escape(s['reference'])}; {fmt_int(s.get('n_items'))} items; made {md_escape(created_at)}.")
    out += ["", "## Verdict", "", f"**{md_escape(s['verdict']['headline'])}**", ""]
    for j in s["judges"]:
        out.append(f"- {_STATUS.get(j['status'], j['status'])} {md_escape(j['sentence'])}")
        for c in j["failed_checks"]:
            detail = f" — {md_escape(c['detail'])}" if c.get("detail") else ""
            out.append(f"  - failed {md_escape(c['sentence'])}{detail}")
        for c in j.get("inconclusive_checks") or []:
            budget = f" {md_escape(c['budget_sentence'])}" if c.get("budget_sentence") else ""
            out.append(f"  - inconclusive {md_escape(c['sentence'])}.{budget}")
    if s["warnings"]:
        out += ["", "Notes:"] + [f"- {md_escape(w)}" for w in s["warnings"]]

    out += ["", "## All judges at a glance", ""]
    rows = []
    for j in s["judges"]:
        usd = (j.get("cost") or {}).get("cost_usd")
        rows.append([j["judge"], j["status"], fmt_fig(j.get("figure")) + n_text(j.get("figure_n")),
                     fmt_fig(j.get("ceiling")) + n_text(j.get("ceiling_n")), fmt_fig(j.get("ac1")),
                     fmt_pct((j.get("percent_agreement") or {}).get("value")), fmt_pct(j.get("abstain_rate")),
                     fmt_pct(j.get("error_rate")),
                     trust.coverage_words(j["coverage"]) if j.get("coverage")
                     else f"{fmt_int(j.get('n_rated'))} / {fmt_int(j.get('n_items'))}",
                     f"${float(usd):,.2f}" if is_num(usd) else "—"])
    out.append(md_table(["judge", "verdict", *comparison_headers(s), "AC1",
                         "% agree", "abstain", "error", "rated of in scope", "cost (USD)"], rows,
                        numeric=[2, 3, 4, 5, 6, 7, 8, 9]))
    out += md_grid(trust.pairwise_grid(agreement))
    out += md_grid(trust.loo_grid(agreement))
    out += md_grid(trust.coverage_grid(agreement))
    out += md_grid(trust.bias_grid(agreement))

    out += md_grid(turns.turn_grid(agreement, m, s["metric_name"]), "##")
    if extras.get("between"):
        from judgekit.report import between as _between

        header, rows, numeric = _between.between_table(extras["between"])
        out += ["", f"## {_between.TITLE}", "", _between.INTRO, "",
                md_table(header, rows, numeric=numeric)]
        out += [f"- {md_escape(w)}" for w in _between.between_warnings(extras["between"])]
    if isinstance(extras.get("fidelity"), dict):
        from judgekit.report.fidelity import fidelity_grid

        fid = extras["fidelity"]
        out += ["", "## Analysis fidelity", ""]
        out += md_grid(fidelity_grid(fid)) if fid.get("rows") else [md_escape(fid.get("error") or "no fidelity figures")]

    disagreements = [d for d in extras.get("disagreements") or [] if isinstance(d, dict)]
    for j in s["judges"]:
        jid = j["judge"]
        out += ["", f"## Judge {md_escape(jid)}", "", f"{_STATUS.get(j['status'], j['status'])} {md_escape(j['sentence'])}"]
        if j["checks"]:
            out += ["", md_table(CHECK_COLUMNS, [check_cells(c) for c in j["checks"]],
                                 numeric=[1, 2, 3, 4])]
        slices = [sl for sl in agreement.get("slices") or [] if jid in (sl.get("judges") or {})]
        if not slices:
            out += ["", "This judge has no ratings in the agreement report."]
            continue
        st = slices[0]["judges"][jid]
        conf = (st.get("vs_reference") or {}).get("confusion") or {}
        labels = [str(x) for x in conf.get("labels") or []]
        if conf.get("matrix"):
            out += ["", f"### Confusion matrix (rows: reference {md_escape(s['reference'])}; columns: {md_escape(jid)})", ""]
            crow = [[lab, *[fmt_int(v) for v in r], fmt_int(sum(int(v) for v in r if is_num(v)))]
                    for lab, r in zip(labels, conf["matrix"], strict=False)]
            out.append(md_table(["reference \\ judge", *labels, "n"], crow, numeric=list(range(1, len(labels) + 2))))
            if conf.get("precision"):
                out += ["", md_table(["label", "precision", "recall", "F1", "support"],
                                     [[lab, fmt_num(conf["precision"].get(lab)), fmt_num((conf.get("recall") or {}).get(lab)),
                                       fmt_num((conf.get("f1") or {}).get(lab)), fmt_int((conf.get("support") or {}).get(lab))]
                                      for lab in labels], numeric=[1, 2, 3, 4])]
        out += ["", f"### Agreement per slice ({md_escape(s['metric_name'])}, 95% CI)", ""]
        srows = []
        for sl in slices:
            sj = sl["judges"][jid]
            vr = sj.get("vs_reference") or {}
            srows.append([slice_name(sl), fmt_int(sl.get("n_items")), fmt_int(sj.get("n_rated")), fmt_fig(vr.get(m)),
                          fmt_fig((sl.get("human_ceiling") or {}).get(m)), fmt_fig(vr.get("ac1")),
                          fmt_pct((vr.get("percent_agreement") or {}).get("value")), fmt_pct(sj.get("abstain_rate")),
                          fmt_pct(sj.get("error_rate"))])
        out.append(md_table(slice_headers(s), srows, numeric=[1, 2, 3, 4, 5, 6, 7, 8]))
        if len(slices) > 1:
            out += md_grid(trust.per_class_grid(agreement, jid))
            series = trust.bias_series(agreement, jid)
            if series:
                what, brows = series
                out += ["", f"### Signed bias per slice ({md_escape(what)}, 95% CI)", "",
                        md_table(["slice", "n", "bias [95% CI]"],
                                 [[r["label"], fmt_int(r["n"]), fmt_fig(r, 3) if is_num(r["value"]) else "undefined"]
                                  for r in brows], numeric=[1, 2])]
        dist = st.get("label_distribution") or {}
        hdist = slices[0].get("human_label_distribution") or {}
        rdist = slices[0].get("reference_label_distribution") or {}
        if dist:
            out += ["", "### Label distribution", ""]
            lab_order = list(agreement.get("labels") or dist)
            # no human ratings (a reference only): no empty humans column
            has_h = bool(agreement.get("ceiling_raters") or agreement.get("humans"))
            header = ["label", f"judge {jid}"] + (["humans"] if has_h else []) + (["reference"] if rdist else [])
            out.append(md_table(header, [[lab, fmt_pct(dist.get(lab))] + ([fmt_pct(hdist.get(lab))] if has_h else [])
                                         + ([fmt_pct(rdist.get(lab))] if rdist else []) for lab in lab_order],
                                numeric=[1, 2, 3]))
        vh = st.get("vs_humans") or {}
        if vh:
            out += ["", "### Against each human", ""]
            out.append(md_table(["human", "n", "κ [95% CI]", "% agree"],
                                [[h, fmt_int(x.get("n")), fmt_fig(x.get("kappa")),
                                  fmt_pct((x.get("percent_agreement") or {}).get("value"))] for h, x in vh.items()],
                                numeric=[1, 2, 3]))
            if is_num(st.get("alpha_delta")):
                out += ["", f"α of the humans {fmt_fig(st.get('alpha_humans'))} → with {md_escape(jid)} "
                            f"{fmt_fig(st.get('alpha_with_judge'))} (Δα = {fmt_num(st.get('alpha_delta'), 3)})."]
        cost = j.get("cost")
        if cost:
            usd = cost.get("cost_usd")
            out += ["", "### Tokens and cost", "",
                    md_table(["calls", "input tokens", "output tokens", "cost (USD)"],
                             [[fmt_int(cost.get("calls")), fmt_int(cost.get("input_tokens")), fmt_int(cost.get("output_tokens")),
                               f"${float(usd):,.4f}" if is_num(usd) else "—"]], numeric=[0, 1, 2, 3])]
        mine = [d for d in disagreements if str(d.get("judge_id")) == jid]
        if mine:
            out += ["", "### Worst disagreements", ""]
            out.append(md_table(["item", "reference", f"{jid} said", f"{jid}'s rationale", "response (excerpt)"],
                                [[d.get("item_id"), d.get("reference"), d.get("judge_label"),
                                  excerpt(d.get("rationale"), 200) or "—",
                                  excerpt(d.get("response_excerpt"), 200)] for d in mine]))
    if isinstance(extras.get("probes"), dict):  # judgekit probe (judgekit.report.probes)
        from judgekit.report.probes import markdown_section

        out += ["", *markdown_section(extras["probes"])]
    if isinstance(extras.get("selective"), dict):  # judgekit escalate (judgekit.report.selective)
        from judgekit.report.selective import markdown_section as selective_section

        out += ["", *selective_section(extras["selective"])]
    out += ["", "## Provenance", ""]
    prov = [["judgekit", __version__], ["rubric", f"{s['rubric']} #{s['rubric_hash']}"],
            ["slices by", ", ".join(agreement.get("by") or []) or "—"]]
    if verdict:
        for k in ("created_at", "policy_hash", "items_hash", "human_ratings_hash"):
            if verdict.get(k) is not None:
                prov.append([f"verdict {k}", str(verdict.get(k))])
    out.append(md_table(["", ""], prov))
    out += ["", "## Assumptions and what this report does not establish", ""]
    out += [f"- {md_escape(a)}" for a in s.get("assumptions") or []]
    return "\n".join(out) + "\n"
