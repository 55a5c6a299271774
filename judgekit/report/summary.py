"""The content of a report, independent of its format.

:func:`summarise` reads an agreement report (``agreement_report(...).to_dict()``), an optional
verdict (``verdict.json`` from ``judgekit gate``) and optional extras (costs, disagreements,
sampling), and decides what the report says: which judge is trusted for which rubric, which check
failed with its figure, threshold and n, and the headline figures per judge. The HTML, Markdown
and JSON renderers all draw from it, so the three formats never disagree.
"""

from __future__ import annotations

import re
from typing import Any

from judgekit.report.escape import fmt_int, fmt_num, is_num
from judgekit.report.trust import assumptions, ceiling_label
from judgekit.verdict.certify import WORD, by_model_phrase

#: how each statistic is named for a reader.
METRIC_NAMES = {
    "kappa": "Cohen's κ",
    "weighted_kappa": "weighted κ",
    "alpha": "Krippendorff's α",
    "ac1": "Gwet's AC1",
    "percent_agreement": "% agreement",
}
_METRIC_SHORT = {
    "kappa": "κ",
    "weighted_kappa": "weighted κ",
    "alpha": "α",
    "ac1": "AC1",
    "percent_agreement": "% agreement",
}


def metric_short(metric: str) -> str:
    """The short symbol of a statistic (``κ``, ``α``, ``AC1``)."""
    return _METRIC_SHORT.get(metric, metric)


def headline_metric(agreement: dict[str, Any], verdict: dict[str, Any] | None) -> str:
    """The statistic the report leads with: the one the gate checks, else κ (nominal) or α.

    The policy's ``metric``, else the first ``metric`` a check records, so the chart shows the
    figure the verdict was decided on.
    """
    if verdict:
        policy = verdict.get("policy")
        checks = policy.get("checks") if isinstance(policy, dict) else None
        if isinstance(checks, dict) and checks.get("metric") in METRIC_NAMES:
            return str(checks["metric"])
        recorded = [c.get("metric") for j in verdict.get("judges") or [] for c in j.get("checks") or []]
        metric = next((m for m in recorded if m in METRIC_NAMES), None)
        if metric is not None:
            return str(metric)
    return "kappa" if agreement.get("level", "nominal") == "nominal" else "alpha"


def n_text(n: Any) -> str:
    """`` · n 254`` beside a figure (its items), or nothing without an n."""
    return f" · n {int(n):,}" if is_num(n) else ""


def comparison_headers(s: dict[str, Any]) -> list[str]:
    """The headers of the judge's headline figure and the human figure beside it: against the
    reference beside the human–human ceiling, or, under a consensus of several humans, against
    the consensus of the other humans beside the humans on the same items (leave-one-out)."""
    sym = metric_short(s["metric"])
    if any(j.get("comparison") == "leave-one-out" for j in s.get("judges") or []):
        return [f"{sym} vs the other humans' consensus (leave-one-out) [95% CI]",
                f"humans on the same items, {sym}"]
    return [f"{sym} vs reference [95% CI]", f"human–human {s['ceiling_name']}"]


def slice_headers(s: dict[str, Any]) -> list[str]:
    """The headers of a judge's table of figures per slice (HTML and Markdown)."""
    return ["slice", "items", "rated", f"{metric_short(s['metric'])} [95% CI]",
            f"human–human {s['ceiling_name']}", "AC1", "% agree", "abstain", "error"]


def fmt_value(x: Any) -> str:
    """A check figure or threshold: whole numbers as integers, others with 3 decimals."""
    if not is_num(x):
        return "—" if x is None else str(x)
    v = float(x)
    return fmt_int(v) if v.is_integer() and abs(v) >= 2 else fmt_num(v, 3)


def comparison(check: dict[str, Any]) -> str:
    """The direction of a check's threshold, read from its recorded rule (``≥`` for ``point>=``
    and ``ci>=``, ``≤`` for ``ci<=``), never from its result; empty without one."""
    rule = check.get("rule")
    return "≤" if rule == "ci<=" else "≥" if rule in ("point>=", "ci>=") else ""


#: a check's or a judge's state as shown in a table; ``inconclusive`` is never pass or fail.
STATE_WORDS = {"pass": "pass", "fail": "FAIL", "inconclusive": "inconclusive"}


def check_state(check: dict[str, Any]) -> str:
    """``pass``, ``fail`` or ``inconclusive``: the check's ``state`` when the verdict has one
    (three-state gate), else from ``passed`` (older verdicts)."""
    st = check.get("state")
    if st in STATE_WORDS:
        return str(st)
    return "pass" if check.get("passed") else "fail"


def judge_state(vj: dict[str, Any]) -> str:
    """A judge's state in a verdict: its ``state``, else any failed check fails it, else any
    inconclusive check makes it inconclusive, else ``passed``."""
    st = vj.get("state")
    if st in STATE_WORDS:
        return str(st)
    states = [check_state(c) for c in vj.get("checks") or []]
    if "fail" in states:
        return "fail"
    if "inconclusive" in states:
        return "inconclusive"
    return "pass" if vj.get("passed") else "fail"


def thousands(text: str) -> str:
    """Counts in ``text`` with thousands separators: a whole number of five or more digits, or
    of four after ``about`` (``about 1250 more`` → ``about 1,250 more``, ``12500 items`` →
    ``12,500 items``); decimals, ids and other four-digit numbers (years) are left as they are."""
    text = re.sub(r"(?<=about )(\d{4})(?![\w.,:]\d|\w)", lambda m: f"{int(m.group(1)):,}", text)
    return re.sub(r"(?<![\w.,:-])(\d{5,})(?![\w.,:]\d|\w)", lambda m: f"{int(m.group(1)):,}", text)


def budget_text(check: dict[str, Any]) -> str:
    """The label-budget sentence of a check (its ``budget``: a sentence, or a dict/list holding
    sentences under ``sentence``/``text``); empty when there is none. The check's name, which the
    gate puts in front (``min_recall[x]: about 9 more …``), is dropped: the report shows the
    budget beside the check already, as a sentence of its own (``About 9 more …``)."""
    name = str(check.get("name") or "")

    def tidy(t: str) -> str:
        t = t.strip()
        if name and t.startswith(name + ": "):
            t = t[len(name) + 2:]
            t = t[:1].upper() + t[1:]
        return thousands(t)

    def one(b: Any) -> str:
        if isinstance(b, str):
            return tidy(b)
        if isinstance(b, dict):
            for key in ("sentence", "text", "message"):
                if isinstance(b.get(key), str):
                    return tidy(str(b[key]))
            return ""
        if isinstance(b, (list, tuple)):
            return " ".join(t for t in (one(x) for x in b) if t)
        return ""

    return one(check.get("budget"))


def detail_text(check: dict[str, Any]) -> str:
    """A check's detail, then its budget sentence, as sentences (``…abstained. About 33 more …``)."""
    detail = str(check.get("detail") or "").strip()
    budget = str(check.get("budget_sentence") or "")
    if detail and budget and not detail.endswith((".", "!", "?")):
        detail += "."
    return " ".join(x for x in (detail, budget) if x)


def judge_budget_text(budget: Any) -> str:
    """A judge's label budget (the gate's ``budget``: ``items``, ``slices``, ``sentence``) as one
    short sentence, without repeating the names of its undecided checks (listed beside it)."""
    if not isinstance(budget, dict):
        return budget_text({"budget": budget})
    items, slices = budget.get("items"), budget.get("slices") or {}
    if isinstance(items, int) and not slices:
        return f"About {items:,} more human-rated items would likely decide it."
    if isinstance(items, int) and isinstance(slices, dict) and all(isinstance(v, int) for v in slices.values()):
        per = ", ".join(f"{k}: {v:,}" for k, v in slices.items())
        return f"About {items:,} more human-rated items would likely decide it (per slice: {per})."
    return budget_text({"budget": budget})


def _certificates(vj: dict[str, Any]) -> dict[str, Any] | None:
    """The judge's figure certificates as the gate stored them (a verdict read back was refused
    unless they are what its checks certify); None when the verdict certifies no figures."""
    return None if vj.get("figures") is None else dict(vj["figures"])


def figures_text(figures: Any) -> str:
    """The figures a verdict certifies for a judge (issue 22), as one sentence: ``Figures: certified
    C, RCE_t, drift; not established drift_tier; UNTRUSTED RCE (UNTRUSTED for m-eroding, m-steady;
    certified for m-stiff).`` Empty without certificates."""
    if not isinstance(figures, dict) or not figures:
        return ""
    parts = []
    for state in ("pass", "inconclusive", "fail"):
        names = []
        for fig, cert in figures.items():
            if isinstance(cert, dict) and cert.get("state") == state:
                per = by_model_phrase(cert)
                names.append(f"{fig} ({per})" if per else str(fig))
        if names:
            parts.append(f"{WORD[state]} {', '.join(names)}")
    return f"Figures: {'; '.join(parts)}." if parts else ""


def ci_text(check: dict[str, Any]) -> str:
    """A check's interval ``[0.57, 0.88]``; empty when it has none (the alt-test decides by its
    own test)."""
    ci = check.get("ci")
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(is_num(x) for x in ci):
        return f"[{fmt_num(ci[0], 3)}, {fmt_num(ci[1], 3)}]"
    if isinstance(ci, dict) and is_num(ci.get("low")) and is_num(ci.get("high")):
        return f"[{fmt_num(ci['low'], 3)}, {fmt_num(ci['high'], 3)}]"
    return ""


#: the columns of a judge's table of gate checks (HTML and Markdown)
CHECK_COLUMNS = ("check", "figure", "CI (95%; fidelity 1 − 2α)", "threshold", "n", "result", "detail")


def check_cells(check: dict[str, Any]) -> list[Any]:
    """A gate check as the cells of :data:`CHECK_COLUMNS`: text, for the caller to escape."""
    return [check.get("name"), fmt_value(check.get("figure")), ci_text(check) or "—",
            f"{comparison(check)} {fmt_value(check.get('threshold'))}".strip(),
            fmt_int(check.get("n")), STATE_WORDS[check["state"]], detail_text(check)]


def check_sentence(check: dict[str, Any]) -> str:
    """One failed/passed check in words: ``min_kappa_lower: 0.520, needs ≥ 0.600 (n = 2,239)``."""
    op = comparison(check)
    need = f"needs {op} {fmt_value(check.get('threshold'))}" if op else f"threshold {fmt_value(check.get('threshold'))}"
    n = check.get("n")
    n_part = f" (n = {fmt_int(n)})" if is_num(n) else ""
    return f"{check.get('name', 'check')}: {fmt_value(check.get('figure'))}, {need}{n_part}"


def slice_name(sl: dict[str, Any]) -> str:
    """A slice of the agreement report in words: ``all items`` or ``model = gpt4``."""
    return "all items" if sl.get("by") is None else f"{sl.get('by')} = {sl.get('key')}"


def _slice_all(agreement: dict[str, Any]) -> dict[str, Any]:
    for s in agreement.get("slices") or []:
        if s.get("by") is None and s.get("key") == "all":
            return s
    slices = agreement.get("slices") or []
    return slices[0] if slices else {"judges": {}, "human_ceiling": {}}


def reference_words(agreement: dict[str, Any]) -> str:
    """The reference in words: ``final (adjudicated)`` or ``human consensus``."""
    ref = agreement.get("reference") or {}
    if ref.get("rater"):
        kind = ref.get("kind") or "reference"
        return f"{ref['rater']} ({kind})"
    return "human consensus (majority)"


def _verdict_applies(agreement: dict[str, Any], verdict: dict[str, Any]) -> str | None:
    """None when the verdict is about these ratings, else why not (one sentence)."""
    v_rub, a_rub = verdict.get("rubric"), agreement.get("rubric")
    v_hash, a_hash = verdict.get("rubric_hash"), agreement.get("rubric_hash")
    if v_rub and a_rub and v_rub != a_rub:
        return (f"The verdict is about rubric {v_rub}, but these ratings are under {a_rub}: it vouches "
                "for no judge here; run `judgekit gate` on this rubric.")
    if v_hash and a_hash and v_hash != a_hash:
        return (f"The verdict was made under {a_rub} with hash {v_hash}, but the rubric has since been "
                f"edited (now {a_hash}): it vouches for no judge here; run `judgekit gate` again.")
    return None


def summarise(
    agreement: dict[str, Any],
    verdict: dict[str, Any] | None,
    extras: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the report says, as plain data (JSON-ready).

    Returns a dict with ``rubric``, ``metric`` (the headline statistic), ``reference``,
    ``verdict`` (``present``, ``applies``, ``passed``, ``headline``, ``problem``) and ``judges``:
    one entry per judge (in the agreement report's order, then any judge only the verdict knows)
    with ``status`` (``trusted`` | ``not trusted`` | ``not gated``), ``sentence``,
    ``failed_checks``, ``checks`` and the headline figures of the "all" slice.
    """
    extras = extras or {}
    rubric = agreement.get("rubric") or (verdict or {}).get("rubric") or "?"
    metric = headline_metric(agreement, verdict)
    top = _slice_all(agreement)
    ceiling = top.get("human_ceiling") or {}
    costs = extras.get("costs") or {}
    n_disagree: dict[str, int] = {}
    for d in extras.get("disagreements") or []:
        jid = str(d.get("judge_id"))
        n_disagree[jid] = n_disagree.get(jid, 0) + 1

    problem = _verdict_applies(agreement, verdict) if verdict else None
    v_judges = {str(j.get("judge")): j for j in (verdict or {}).get("judges") or []}
    current_hashes = extras.get("judge_hashes") or {}
    judge_ids = [str(j) for j in agreement.get("judges") or []]
    judge_ids += [j for j in v_judges if j not in judge_ids]

    rows = []
    for jid in judge_ids:
        stats = (top.get("judges") or {}).get(jid) or {}
        vs_ref = stats.get("vs_reference") or {}
        head = stats.get("headline") or {}
        like, head_humans = head.get("basis") == "leave-one-out", head.get("humans") or {}
        vj = v_judges.get(jid)
        checks = list((vj or {}).get("checks") or [])
        failed = [c for c in checks if check_state(c) == "fail"]
        unsure = [c for c in checks if check_state(c) == "inconclusive"]
        if verdict is None:
            status = "not gated"
            sentence = f"{jid}: no verdict given, so nothing here says it can be trusted for {rubric}."
        elif problem:
            status = "not trusted"
            sentence = f"{jid} is NOT trusted for {rubric}: the verdict does not match these ratings."
        elif vj is None:
            status = "not gated"
            sentence = (f"{jid} is not in the verdict: it is not trusted for {rubric} until "
                        "`judgekit gate` passes it.")
        elif vj.get("judge_hash") and current_hashes.get(jid) not in (None, vj.get("judge_hash")):
            status = "not trusted"
            sentence = (f"{jid} is NOT trusted for {rubric}: it changed since the verdict (its spec or "
                        "parameters differ); run `judgekit gate` again.")
        elif judge_state(vj) == "pass":
            status = "trusted"
            sentence = f"{jid} is trusted to score {rubric}: all {len(checks)} checks passed."
        elif judge_state(vj) == "inconclusive":
            status = "inconclusive"
            sentence = (f"{jid} is NOT YET trusted to score {rubric}. {len(unsure)} of {len(checks)} "
                        f"check{'s are' if len(checks) != 1 else ' is'} undecided: the interval straddles the "
                        "threshold, or there are too few items.")
            jb = judge_budget_text(vj.get("budget"))
            if jb:
                sentence += f" {jb}"
        else:
            status = "not trusted"
            if vj.get("state") == "inconclusive":
                budget = (vj.get("budget") or {}).get("sentence") or ""
                sentence = (f"{jid} is NOT trusted to score {rubric}: the gate is inconclusive (no check "
                            f"fails, {len(failed)} of {len(checks)} cannot be decided yet). {budget}").strip()
            elif failed:
                sentence = (f"{jid} is NOT trusted to score {rubric}: {len(failed)} of {len(checks)} "
                            f"check{'s' if len(checks) != 1 else ''} failed.")
            else:
                sentence = f"{jid} is NOT trusted to score {rubric}: the verdict marks it as failed."
        certs = _certificates(vj) if vj is not None and verdict is not None and not problem else None
        figs = figures_text(certs)
        if figs:
            sentence += f" {figs}"
        rows.append(
            {
                "judge": jid,
                "status": status,
                "sentence": sentence,
                "figures": certs,
                "state": None if vj is None else judge_state(vj),
                "failed_checks": [{**c, "sentence": check_sentence(c)} for c in failed],
                "inconclusive_checks": [{**c, "sentence": check_sentence(c), "budget_sentence": budget_text(c)}
                                        for c in unsure],
                "checks": [{**c, "sentence": check_sentence(c), "state": check_state(c),
                            "budget_sentence": budget_text(c)} for c in checks],
                "judge_hash": (vj or {}).get("judge_hash"),
                "in_agreement": bool(stats),
                "n_items": stats.get("n_items"),
                "n_rated": stats.get("n_rated"),
                "coverage": stats.get("coverage"),
                "abstain_rate": stats.get("abstain_rate"),
                "error_rate": stats.get("error_rate"),
                # like for like: under a consensus of humans the leave-one-out comparison, the judge
                # and the humans on the same items (agreement.headline), each figure with its n
                "comparison": head.get("basis") or "reference",
                "figure": (head if like else vs_ref).get(metric),
                "figure_n": head.get("n") if like else vs_ref.get("n"),
                "ceiling": (head_humans if like else ceiling).get(metric),
                "ceiling_n": head_humans.get("n") if like else ceiling.get("n"),
                "ac1": None if like else vs_ref.get("ac1"),
                "percent_agreement": (head if like else vs_ref).get("percent_agreement"),
                "alpha_delta": stats.get("alpha_delta"),
                "cost": costs.get(jid),
                "n_disagreements_listed": n_disagree.get(jid, 0),
            }
        )

    trusted = [str(r["judge"]) for r in rows if r["status"] == "trusted"]
    if verdict is None:
        headline = (f"No verdict was given: this report shows agreement only, and no judge is trusted "
                    f"for {rubric} yet. Run `judgekit gate POLICY.yaml` and pass its verdict.json.")
    elif problem:
        headline = problem
    elif not rows:
        headline = f"The verdict lists no judge for {rubric}."
    elif trusted:
        headline = (f"{len(trusted)} of {len(rows)} judge{'s' if len(rows) != 1 else ''} trusted to score "
                    f"{rubric}: {', '.join(trusted)}.")
    elif any(r["status"] == "inconclusive" for r in rows):
        undecided = [str(r["judge"]) for r in rows if r["status"] == "inconclusive"]
        headline = (f"No judge is trusted to score {rubric} yet: the verdict is inconclusive for "
                    f"{', '.join(undecided)} (more human labels would decide it)"
                    + ("; the others failed." if len(undecided) < len(rows) else "."))
    else:
        headline = f"No judge is trusted to score {rubric}: every judge failed at least one check."

    return {
        "rubric": rubric,
        "rubric_hash": agreement.get("rubric_hash"),
        "level": agreement.get("level"),
        "labels": list(agreement.get("labels") or []),
        "metric": metric,
        "metric_name": METRIC_NAMES.get(metric, metric),
        "reference": reference_words(agreement),
        "humans": list(agreement.get("humans") or []),
        "n_items": top.get("n_items"),
        "ceiling": ceiling.get(metric),
        "ceiling_name": ceiling_label(top, metric),
        "verdict": {
            "present": verdict is not None,
            "applies": verdict is not None and problem is None,
            "passed": None if verdict is None else bool(verdict.get("passed")) and problem is None,
            "state": None if verdict is None else (verdict.get("state") if verdict.get("state") in STATE_WORDS
                                                   else ("pass" if verdict.get("passed") else "fail")),
            "headline": headline,
            "problem": problem,
            "policy_hash": (verdict or {}).get("policy_hash"),
            "created_at": (verdict or {}).get("created_at"),
            "reference": (verdict or {}).get("reference"),
        },
        "trusted": trusted,
        "judges": rows,
        "warnings": [str(w) for w in agreement.get("warnings") or []],
        "assumptions": assumptions(agreement),
    }


def thresholds_for(verdict: dict[str, Any] | None, judge: str, metric: str) -> dict[str, float]:
    """Gate thresholds on the scale of ``metric`` for ``judge``: line label → threshold.

    The checks of the statistic (kinds ``min_value`` and ``min_lower_bound`` whose ``metric`` is
    ``metric``), and the per-slice floor (kind ``per_slice``, one line). Not ``within_human_noise``:
    its threshold is a margin on the difference judge − humans, not a value on the statistic's axis.
    """
    out: dict[str, float] = {}
    for j in (verdict or {}).get("judges") or []:
        if str(j.get("judge")) != judge:
            continue
        for c in j.get("checks") or []:
            t = c.get("threshold")
            if not is_num(t):
                continue
            if c.get("kind") == "per_slice":
                out.setdefault("per-slice floor", float(t))
            elif c.get("kind") in ("min_value", "min_lower_bound") and c.get("metric") == metric:
                out.setdefault(str(c["name"]), float(t))
    return out
