"""The probe section of the judge report (``judgekit probe``; ``extras["probes"]`` of
:func:`judgekit.report.write_report`): per judge, each probe's effect with its interval against
the null band (a chart and a table: n, interval, Holm level, state), the items that flipped, and a
page of its own (:func:`probe_page`).

Every text from the data (judge ids, slice keys, item ids) is escaped (:mod:`judgekit.report.escape`).
"""

from __future__ import annotations

from typing import Any

from judgekit.probes.bands import fmt_p
from judgekit.report.escape import esc, fmt_int, fmt_num, md_escape
from judgekit.report.page import page, table
from judgekit.report.svg import interval_chart

_WHAT = {
    "covariate": ("Covariate sensitivity", "Δ rate high − low bin, within reference labels"),
    "self_preference": ("Self-preference", "signed bias own family − other families"),
    "stability": ("Stability across trials", "Krippendorff's α over trials"),
    "drift": ("Label-prior drift", "largest share difference judge − reference"),
    "flip": ("Perturbation flip rate", "share of items whose label flips"),
}
_STATE = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def _groups(judge: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in judge.get("probes") or []:
        ex = r.get("extra") or {}
        key = r["probe"] + (f":{ex.get('column')}" + (f" → {ex['target']}" if ex.get("target") else "")
                            if r["probe"] == "covariate" else "")
        out.setdefault(key, []).append(r)
    return out


def _label(r: dict[str, Any]) -> str:
    if r["probe"] == "flip":
        return str(r["extra"]["variant"])
    return "all items" if r.get("by") is None else f"{r['by']}={r['key']}"


def _band(rows: list[dict[str, Any]]) -> tuple[dict[str, float], tuple[float, float], str]:
    r0 = rows[0]
    thr = float(r0["check"]["threshold"])
    if r0["probe"] == "stability":
        return {f"min α {thr:g}": thr}, (min(-0.2, thr - 0.2), 1.0), "α (signed)"
    if r0["probe"] == "flip":
        return {f"max {thr:g}": thr}, (0.0, max(0.5, thr * 2)), "flip rate"
    lim = max([thr * 2.5, *[abs(x) for r in rows for x in (r.get("low"), r.get("high")) if x is not None]])
    return {f"−{thr:g}": -thr, f"+{thr:g}": thr}, (-min(lim, 1.0), min(lim, 1.0)), "effect (signed)"


def _chart(rows: list[dict[str, Any]], title: str) -> str:
    lines, x_range, x_label = _band(rows)
    data = [{"label": _label(r), "value": r.get("estimate"), "low": r.get("low"), "high": r.get("high"),
             "n": r.get("n"), "ceiling": None, "undefined": r["check"]["detail"] if r.get("estimate") is None else None}
            for r in rows]
    return interval_chart(data, title=title, x_range=x_range, reference_lines=lines, x_label=x_label)


def _row_cells(r: dict[str, Any]) -> list[str]:
    lvl = r.get("level")
    return [_label(r), fmt_num(r.get("estimate"), 3),
            "—" if r.get("low") is None else f"{fmt_num(r['low'], 3)} to {fmt_num(r['high'], 3)}",
            fmt_int(r.get("n")), "—" if lvl is None else f"{100 * (1 - 2 * lvl):.2f}%",
            "—" if r.get("p_holm") is None else fmt_p(r["p_holm"]), _STATE[r["state"]]]


_HEAD = ["slice", "estimate", "interval", "n", "interval level (Holm)", "Holm-adjusted p (outside band)", "state"]


def html_section(doc: dict[str, Any]) -> str:
    """The probe section as HTML (charts, tables, flipped items)."""
    parts = [f"<p>{esc(_intro(doc))}</p>"]
    for j in doc.get("judges") or []:
        parts.append(f"<h3>{esc(j['judge'])}: {esc(_STATE[j['state']])}</h3>")
        for key, rows in _groups(j).items():
            name, what = _WHAT[rows[0]["probe"]]
            col = key.partition(":")[2]
            title = f"{name}{f' ({col})' if col else ''} — {what}; band {rows[0]['check']['threshold']:g}"
            parts.append(f"<h4>{esc(title)}</h4>")
            parts.append(_chart(rows, title))
            parts.append(table(_HEAD, [_row_cells(r) for r in rows]))  # table() escapes each cell
            parts.append("<ul>" + "".join(f"<li>{esc(r['check']['detail'])}</li>" for r in rows) + "</ul>")
            flipped = [f for r in rows for f in _flipped(r)]
            if flipped:
                parts.append(f"<p>Items that flip ({len(flipped)} shown): {esc(', '.join(flipped[:60]))}</p>")
    return "\n".join(parts)


def _flipped(r: dict[str, Any]) -> list[str]:
    ex = r.get("extra") or {}
    if r["probe"] == "stability" and r.get("by") is None:
        return [f"{f['item_id']} ({'/'.join(f['labels'])})" for f in ex.get("flipped") or []]
    if r["probe"] == "flip":
        return [str(i) for i in ex.get("flipped") or []]
    return []


def _intro(doc: dict[str, Any]) -> str:
    return (f"Probes of {doc.get('rubric')} against the reference {doc.get('reference')}: each effect with its "
            "interval against its null band (dashed lines). Within one probe and judge the slices form one "
            "family: each slice's interval is at its Holm level (95% when one slice is tested), so a clean "
            "judge does not trip by chance. Pass: the whole interval inside the band; fail: the whole interval "
            "outside it; inconclusive: otherwise, or fewer than "
            f"{doc.get('min_items')} items. See docs/probes.md.")


def markdown_section(doc: dict[str, Any], level: str = "##") -> list[str]:
    """The probe section as Markdown lines."""
    out = [f"{level} Probes", "", md_escape(_intro(doc), table=False)]
    for j in doc.get("judges") or []:
        out += ["", f"{level}# {md_escape(j['judge'])}: {_STATE[j['state']]}"]
        for key, rows in _groups(j).items():
            name, what = _WHAT[rows[0]["probe"]]
            col = key.partition(":")[2]
            out += ["", f"**{name}{f' ({md_escape(col)})' if col else ''}** — {what}; null band "
                        f"{rows[0]['check']['threshold']:g}", ""]
            out += _md_table(_HEAD, [_row_cells(r) for r in rows])
            out += ["", *[f"- {md_escape(r['check']['detail'], table=False)}" for r in rows]]
            flipped = [f for r in rows for f in _flipped(r)]
            if flipped:
                out += ["", f"Items that flip ({len(flipped)}): {md_escape(', '.join(flipped[:60]), table=False)}"]
    return out


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(md_escape(h) for h in head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in rows]


def probe_page(doc: dict[str, Any]) -> str:
    """A self-contained HTML page with the probe section only (``probes.html``)."""
    return page(f"judgekit probes — {doc.get('rubric')}", [("Probes", html_section(doc))],
                subtitle=f"Is the judge moved by things that should not matter? Reference: {doc.get('reference')}.")


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """Plain lines for a terminal: per judge its state and each probe check that did not pass
    (figure, interval, n); the notes (probes that did not apply)."""
    lines = []
    for j in doc.get("judges") or []:
        rows = j.get("probes") or []
        bad = [r for r in rows if r["state"] != "pass"]
        lines.append(f"  {_STATE[j['state']]:<12} {j['judge']}: {len(rows) - len(bad)} of {len(rows)} probe checks pass")
        for r in bad:
            c = r["check"]
            ci = "" if c["ci"] is None else f" [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"
            fig = "n/a" if c["figure"] is None else f"{c['figure']:.3f}"
            lines.append(f"      {_STATE[c['state']].lower()}: {c['name']} {fig}{ci} vs {c['threshold']:g} (n={c['n']})")
    lines += [f"  note: {n}" for n in doc.get("notes") or []]
    return lines


def read_probes(path: Any, rubric_id: str) -> dict[str, Any]:
    """``probes.json`` of ``judgekit probe``, checked before it is rendered (it is a user file):
    every problem is one sentence naming the file and the key."""
    import json
    from pathlib import Path

    from judgekit.errors import JudgekitError
    from judgekit.verdict.check import combine_states

    p = Path(path)
    how = "pass the probes.json that `judgekit probe` wrote"
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgekitError(f"Probes file {p} does not exist; {how}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise JudgekitError(f"Probes file {p} is not valid JSON; {how}.") from None
    except IsADirectoryError:
        raise JudgekitError(f"Probes file {p} is a folder; {how}.") from None

    def bad(key: str, what: str) -> JudgekitError:
        return JudgekitError(f"Probes file {p}: {key} {what}; {how}.")

    def num(x: Any) -> bool:
        return x is None or (isinstance(x, int | float) and not isinstance(x, bool))

    if not isinstance(doc, dict) or not isinstance(doc.get("judges"), list):
        raise bad("'judges'", "is missing or not a list")
    if doc.get("rubric") != rubric_id:
        raise bad("'rubric'", f"is {str(doc.get('rubric'))[:40]!r}, not the report's rubric {rubric_id}")
    for i, j in enumerate(doc["judges"]):
        if not isinstance(j, dict) or not isinstance(j.get("judge"), str) or j.get("state") not in _STATE \
                or not isinstance(j.get("probes"), list):
            raise bad(f"judges[{i}]", "needs a judge name, a state and a probes list")
        for k, r in enumerate(j["probes"]):
            at = f"judges[{i}].probes[{k}]"
            c = r.get("check") if isinstance(r, dict) else None
            if not isinstance(c, dict) or r.get("probe") not in _WHAT or r.get("state") not in _STATE:
                raise bad(at, "needs a probe kind, a state and a check")
            if not (isinstance(c.get("name"), str) and isinstance(c.get("detail"), str)
                    and isinstance(c.get("threshold"), int | float) and num(r.get("n"))):
                raise bad(f"{at}.check", "needs a name, a detail, a numeric threshold and n")
            for key in ("estimate", "low", "high", "level", "p_holm"):
                if not num(r.get(key)):
                    raise bad(f"{at}.{key}", "must be a number or null")
            if not isinstance(r.get("extra", {}), dict) or not all(
                    x is None or isinstance(x, str) for x in (r.get("by"), r.get("key"))):
                raise bad(at, "has a malformed extra, by or key")
            ex = r.get("extra") or {}
            flipped = ex.get("flipped", [])
            if r["probe"] == "flip" and not all(isinstance(f, str) for f in flipped or []):
                raise bad(f"{at}.extra.flipped", "must list item ids")
            if r["probe"] == "stability" and not all(isinstance(f, dict) and isinstance(f.get("labels"), list)
                                                     for f in flipped or []):
                raise bad(f"{at}.extra.flipped", "must list items with their labels")
            if r["probe"] == "flip" and not isinstance(ex.get("variant"), str):
                raise bad(f"{at}.extra.variant", "must be the variant's name")
            _check_state(r, at, doc.get("min_items"), bad)
        states = [r["state"] for r in j["probes"]]
        if j["state"] != combine_states(states):
            raise bad(f"judges[{i}].state", f"is {j['state']!r} but its probe checks give "
                      f"{combine_states(states)!r} (was the file edited?)")
    if "state" in doc and doc["state"] != combine_states([j["state"] for j in doc["judges"]]):
        raise bad("'state'", f"is {str(doc['state'])[:20]!r} but its judges give "
                  f"{combine_states([j['state'] for j in doc['judges']])!r} (was the file edited?)")
    return doc


def _check_state(r: dict[str, Any], at: str, min_items: Any, bad: Any) -> None:
    """Re-derive one probe row's state from its figure, interval, n and threshold
    (:func:`judgekit.verdict.check.read_check`, the one reader of a recorded check) and check the
    row's interval is its check's: a probes.json whose states were edited is refused, never
    rendered as written."""
    from judgekit.stats.intervals import abs_interval
    from judgekit.verdict.check import NEEDS_INTERVAL, CheckProblem, read_check

    c = r["check"]
    try:
        ch = read_check(c, "")
    except CheckProblem as exc:
        raise bad(f"{at}.check", str(exc)) from None
    if ch.kind not in NEEDS_INTERVAL:
        raise bad(f"{at}.check.kind", f"{ch.kind[:40]!r} is not a probe check")
    min_n = min_items if isinstance(min_items, int) and not isinstance(min_items, bool) else None
    if ch.min_n != min_n:
        raise bad(f"{at}.check.min_n", f"is {ch.min_n!r} but the probe's min_items is {min_n!r} (was the file edited?)")
    state, ci = ch.state, ch.ci
    if c.get("state") != state or r["state"] != state:
        raise bad(f"{at}.state", f"is {str(r['state'])[:20]!r} but its figure, interval, n and threshold give "
                  f"{state!r} (was the file edited?)")
    lo, hi = r.get("low"), r.get("high")
    if lo is not None and hi is not None and ci is not None:
        want = abs_interval(lo, hi) if r["probe"] in ("covariate", "self_preference", "drift") else (lo, hi)
        if any(abs(a - b) > 1e-5 for a, b in zip(want, ci, strict=True)):
            raise bad(f"{at}.low", "and high do not match the check's interval (was the file edited?)")
