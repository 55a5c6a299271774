"""The trust figures of an agreement report as plain tables, shared by the terminal
(:mod:`judgekit.core.console`), the Markdown and the HTML report, so the three say the same.

Each function reads the dict of ``agreement_report(...).to_dict()`` (older reports without the
issue-10 keys give no table: ``None``) and returns a :class:`Grid`: a title, a header, rows of
plain text (not escaped: each renderer escapes for its medium), the numeric columns and a note.
Slices are kept in the order the agreement report gives them (numeric values in numeric order,
``(missing)`` last; :mod:`judgekit.agreement.slicing`). Definitions: ``docs/agreement.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judgekit.report.escape import fmt_fig, fmt_int, fmt_num, fmt_pct, is_num

__all__ = [
    "Grid", "assumptions", "bias_grid", "bias_series", "ceiling_label", "coverage_grid", "coverage_words",
    "loo_grid", "pairwise_grid", "per_class_grid", "slice_label",
]


@dataclass
class Grid:
    """A table of plain text: each renderer escapes the cells for its medium."""

    title: str
    header: list[str]
    rows: list[list[str]]
    numeric: list[int] = field(default_factory=list)
    note: str = ""


def _f(fig: dict[str, Any] | None, digits: int = 3) -> str:
    return fmt_fig(fig, digits) if fig else "—"


def _v(fig: dict[str, Any] | None, digits: int = 2) -> str:
    """A figure's point value only (for dense tables)."""
    if not fig:
        return "—"
    return fmt_num(fig.get("value"), digits) if is_num(fig.get("value")) else "undef."


def slice_label(sl: dict[str, Any]) -> str:
    """``all items`` or ``turn = 10`` (the key as the report gives it, ``(missing)`` included)."""
    return "all items" if sl.get("by") is None else f"{sl.get('by')} = {sl.get('key')}"


def _all(agreement: dict[str, Any]) -> dict[str, Any]:
    slices = agreement.get("slices") or [{}]
    return next((s for s in slices if s.get("by") is None), slices[0])


def ceiling_label(sl: dict[str, Any], metric: str) -> str:
    """What the pooled human–human figure of ``metric`` is: ``Fleiss κ (3 humans)``,
    ``Cohen κ (2 humans)``, ``mean pairwise quadratic-weighted Cohen κ (3 humans)``."""
    hc = sl.get("human_ceiling") or {}
    k = len(hc.get("raters") or [])
    names = {"kappa": hc.get("kappa_name"), "weighted_kappa": hc.get("weighted_kappa_name"),
             "alpha": "Krippendorff α", "ac1": "Gwet AC1", "percent_agreement": "% agreement"}
    name = names.get(metric) or ("Fleiss κ" if metric == "kappa" and k > 2 else
                                 "Cohen κ" if metric == "kappa" else metric)
    return f"{name} ({k} humans)" if k else str(name)


# ----------------------------------------------------------------------------- humans
def pairwise_grid(agreement: dict[str, Any], sl: dict[str, Any] | None = None) -> Grid | None:
    """The pairwise human–human matrix of a slice: Cohen κ, % agreement and n per pair."""
    sl = sl or _all(agreement)
    pw = sl.get("human_pairwise")
    if not pw or len(pw.get("raters") or []) < 2:
        return None
    raters = [str(r) for r in pw["raters"]]
    weighted = agreement.get("level") in ("ordinal", "interval")
    cells: dict[tuple[str, str], str] = {}
    for p in pw.get("pairs") or []:
        k = p.get("kappa") or {}
        text = f"κ {_v(k, 3)} · {fmt_pct((p.get('percent_agreement') or {}).get('value'))}"
        if weighted and p.get("weighted_kappa"):
            text += f" · wκ {_v(p['weighted_kappa'], 3)}"
        text += f" · n {fmt_int(p.get('n'))}"
        cells[str(p["a"]), str(p["b"])] = cells[str(p["b"]), str(p["a"])] = text
    rows = [[a, *["—" if a == b else cells.get((a, b), "—") for b in raters]] for a in raters]
    defined = [(float(p["kappa"]["value"]), str(p["a"]), str(p["b"])) for p in pw.get("pairs") or []
               if is_num((p.get("kappa") or {}).get("value"))]
    low = min(defined) if defined else None
    note = ("Each cell: Cohen κ of the pair, % agreement" + (", quadratic-weighted κ" if weighted else "")
            + " and n (items both rated).")
    if low is not None and len(raters) > 2:
        note += f" Lowest pair: {low[1]}–{low[2]} (κ {fmt_num(low[0], 3)})."
    return Grid(f"Human–human agreement per pair ({slice_label(sl)})", ["human", *raters], rows,
                list(range(1, len(raters) + 1)), note)


def loo_grid(agreement: dict[str, Any], sl: dict[str, Any] | None = None) -> Grid | None:
    """The leave-one-out ceiling beside each judge: every human and every judge against the
    consensus of the other humans, the judge on the same items as the human."""
    sl = sl or _all(agreement)
    loo = (sl.get("human_ceiling") or {}).get("loo")
    if not loo:
        return None
    weighted = agreement.get("level") in ("ordinal", "interval")
    kname = str(loo.get("kappa_name") or "Cohen κ")
    header = ["", "n", "ties left out", "agreement [95% CI]", f"{kname} [95% CI]"]
    if weighted:
        header.append(f"weighted {kname} [95% CI]")

    def cells(x: dict[str, Any]) -> list[str]:
        out = [_f(x.get("percent_agreement")), _f(x.get("kappa"))]
        return out + ([_f(x.get("weighted_kappa"))] if weighted else [])

    title = f"Leave-one-out human ceiling and the judges beside it ({slice_label(sl)})"
    if loo.get("undefined"):
        return Grid(title, header, [], [], f"Undefined: {loo['undefined']}.")
    rows = [[f"{p.get('human')} vs the other humans", fmt_int(p.get("n")), fmt_int(p.get("n_ties")),
             *cells(p)] for p in loo.get("per_human") or []]
    mean = loo.get("mean") or {}
    rows.append([f"LOO ceiling: mean of {fmt_int(mean.get('n_humans'))} humans", fmt_int(mean.get("n")), "",
                 *cells(mean)])
    for jid, j in (sl.get("judges") or {}).items():
        vs = (j or {}).get("vs_loo")
        if not vs:
            continue
        m = vs.get("mean") or {}
        rows.append([f"{jid} vs the same consensus", fmt_int(m.get("n")), "", *cells(m)])
        rows.append([f"  the humans on {jid}'s items", fmt_int(m.get("n")), "", *cells(m.get("human_same_items") or {})])
        rows.append([f"  difference {jid} − humans", fmt_int(m.get("n")), "", *cells(m.get("difference") or {})])
    note = (f"{kname} of one rater against the consensus (plurality) of the other humans; items where "
            "they tie are left out and counted. A judge is compared on the same items as each human, so "
            "the difference is like for like (paired bootstrap CI).")
    return Grid(title, header, rows, list(range(1, len(header))), note)


# ----------------------------------------------------------------------------- judges
def coverage_words(cov: dict[str, Any] | None) -> str:
    """``rated 250 of 300`` (of the items in scope, never of the items rated)."""
    if not cov:
        return "—"
    return f"rated {fmt_int(cov.get('rated'))} of {fmt_int(cov.get('in_scope'))}"


def coverage_grid(agreement: dict[str, Any], sl: dict[str, Any] | None = None) -> Grid | None:
    sl = sl or _all(agreement)
    judges = {j: v for j, v in (sl.get("judges") or {}).items() if (v or {}).get("coverage")}
    if not judges:
        return None
    rows = []
    for jid, j in judges.items():
        c = j["coverage"]
        rows.append([jid, coverage_words(c), _f(c.get("share")), fmt_int(c.get("abstained")),
                     fmt_int(c.get("errored")), fmt_int(c.get("not_attempted")), fmt_int(c.get("rated_out_of_scope"))])
    note = ("In scope: the items with a reference label or a human rating. Share rated with a Wilson 95% "
            "interval; rated + abstained + errored + not attempted = in scope. Items rated outside the "
            "scope are validated by nothing here.")
    return Grid(f"Coverage ({slice_label(sl)})", ["judge", "rated of in scope", "share [95% CI]", "abstained",
                                                  "errored", "not attempted", "rated, out of scope"],
                rows, [2, 3, 4, 5, 6], note)


def bias_grid(agreement: dict[str, Any], sl: dict[str, Any] | None = None) -> Grid | None:
    """Signed bias judge − reference per judge: the mean difference on the rubric's values
    (ordinal/interval) and the difference of each label's share."""
    sl = sl or _all(agreement)
    judges = {j: v for j, v in (sl.get("judges") or {}).items() if (v or {}).get("bias")}
    if not judges:
        return None
    labels = [str(c) for c in agreement.get("labels") or []]
    numeric = agreement.get("level") in ("ordinal", "interval")
    header = ["judge", "n"] + (["mean judge − reference [95% CI]"] if numeric else [])
    header += [f"share {c}: judge − ref." for c in labels]
    rows = []
    for jid, j in judges.items():
        b = j["bias"]
        row = [jid, fmt_int(b.get("n"))] + ([_f(b.get("mean_diff"))] if numeric else [])
        row += [_f((b.get("share_diff") or {}).get(c)) for c in labels]
        rows.append(row)
    note = ("Positive: the judge gives the higher value (or the label more often) than the reference; "
            "bootstrap 95% CIs over items.")
    return Grid(f"Signed bias against the reference ({slice_label(sl)})", header, rows,
                list(range(1, len(header))), note)


def bias_series(agreement: dict[str, Any], judge: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The bias of ``judge`` per slice for a chart: (what is drawn, interval-chart rows). The
    figure is the mean difference (ordinal/interval) or, for a nominal rubric, the share
    difference of the label with the largest overall bias, the same label on every slice."""
    slices = [s for s in agreement.get("slices") or [] if judge in (s.get("judges") or {})]
    if len(slices) < 2 or not (slices[0]["judges"][judge] or {}).get("bias"):
        return None
    top = slices[0]["judges"][judge]["bias"]
    code = (top.get("max_abs") or {}).get("code")
    numeric = top.get("mean_diff") is not None or code is None
    what = "mean judge − reference" if numeric else f"share of {code}: judge − reference"
    rows = []
    for s in slices:
        b = (s["judges"][judge] or {}).get("bias") or {}
        f = b.get("mean_diff") if numeric else (b.get("share_diff") or {}).get(str(code))
        f = f or {}
        rows.append({"label": slice_label(s), "value": f.get("value"), "low": f.get("low"), "high": f.get("high"),
                     "n": b.get("n"), "undefined": f.get("undefined")})
    return what, rows


def per_class_grid(agreement: dict[str, Any], judge: str, *, wide: bool = True) -> Grid | None:
    """Per-slice precision, recall and F1 per class of ``judge`` against the reference, with
    accuracy (% agreement) and macro F1: a paper's "F1 / Acc / Prec / Recall per slice" table.
    ``wide``: one column per figure and class (else one ``P / R / F1`` column per class). For a
    binary rubric the positive class comes first, marked "(positive)"."""
    slices = [s for s in agreement.get("slices") or [] if (s.get("judges") or {}).get(judge, {}).get("per_class")]
    if not slices:
        return None
    pc0 = slices[0]["judges"][judge]["per_class"]
    labels = [str(c) for c in agreement.get("labels") or pc0.get("classes") or []]
    pos = pc0.get("positive")
    if pos in labels:
        labels = [str(pos)] + [c for c in labels if c != pos]
    name = {c: f"{c} (positive)" if c == pos else c for c in labels}
    header = ["slice", "rated", "accuracy"]
    if wide:
        for c in labels:
            header += [f"{name[c]} P", f"{name[c]} R", f"{name[c]} F1"]
    else:
        header += [f"{name[c]} P / R / F1" for c in labels]
    header.append("macro F1")
    rows = []
    for s in slices:
        sj = s["judges"][judge]
        pc = sj["per_class"]
        row = [slice_label(s), fmt_int(sj.get("n_rated")), _v((sj.get("vs_reference") or {}).get("percent_agreement"))]
        for c in labels:
            k = (pc.get("classes") or {}).get(c) or {}
            vals = [_v(k.get("precision")), _v(k.get("recall")), _v(k.get("f1"))]
            row += vals if wide else [" / ".join(vals)]
        row.append(_v(pc.get("macro_f1")))
        rows.append(row)
    note = ("Against the reference, on the items the judge rated that carry a reference label; "
            "P = precision, R = recall; undef.: the label never occurs on that side. CIs in the JSON.")
    return Grid(f"{judge}: precision, recall and F1 per class and slice", header, rows,
                list(range(1, len(header))), note)


# ----------------------------------------------------------------------------- limits
def assumptions(agreement: dict[str, Any]) -> list[str]:
    """What the figures rest on and what they do not establish, in sentences."""
    ref = agreement.get("reference") or {}
    sl = _all(agreement)
    conf = agreement.get("confidence", 0.95)
    n_res = agreement.get("n_resamples")
    if ref.get("rater") and ref.get("kind") == "adjudicated":
        ref_s = f"The reference ({ref['rater']}, adjudicated) is taken as the truth; its own errors count against the judges."
    elif ref.get("rater"):
        ref_s = (f"The reference is one human ({ref['rater']}), taken as the truth; its disagreements with the "
                 "other humans count against the judges.")
    else:
        ref_s = ("The reference is the majority of the humans, taken as the truth; items where they tie have "
                 "no reference and are not scored.")
    out = [
        ref_s,
        "Items are the units: each item counts once, and items are treated as independent (items from one "
        "conversation, prompt template or source are not clustered).",
        "A judge asked several times (trials) is reduced to its majority label per item; a tie between trials "
        "counts as an abstention.",
        f"Intervals are {fmt_pct(conf, 0)} percentile bootstrap intervals over items "
        f"({fmt_int(n_res)} resamples), Wilson intervals for shares (coverage, precision, recall); they cover "
        "sampling of items only, not of annotators or of judge randomness.",
        "Agreement is computed on the items a judge rated: abstentions and errors are reported as coverage, "
        "not as disagreements.",
    ]
    outside = {j: (v.get("coverage") or {}).get("rated_out_of_scope") for j, v in (sl.get("judges") or {}).items()}
    outside = {j: n for j, n in outside.items() if is_num(n) and n > 0}
    if outside:
        out.append("Not established: how the judges do on items no human rated ("
                   + ", ".join(f"{j} rated {fmt_int(n)}" for j, n in outside.items())
                   + "); e.g. target models or prompt sources the humans never saw.")
    else:
        out.append("Not established: how the judges do on target models, prompt sources or label mixes the "
                   "humans never rated; the figures hold for items like these.")
    small = [slice_label(s) for s in agreement.get("slices") or [] if is_num(s.get("n_in_scope"))
             and s.get("n_in_scope", 0) < 30]
    if small:
        out.append(f"Small samples (fewer than 30 items in scope): {', '.join(small)}; their intervals are wide "
                   "and their point estimates unreliable.")
    out.append("Agreement with humans does not show that the humans, or the rubric, are right: it bounds how "
               "far the judge can be trusted to stand in for these annotators on this rubric.")
    return out
