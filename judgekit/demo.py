"""`judgekit demo`: the whole pipeline, offline, on shipped data.

1. Import the XSTest v2 labels (two human annotators, the adjudicated label, and the authors' two
   automatic judges: prefix string match and zero-shot GPT-4) into a store in the output folder.
2. Agreement of both judges with the humans, overall, by safe/unsafe prompt and by model.
3. Check the published human–human agreement per model (Röttger et al., repository analysis).
4. Gate both judges with the shipped policy → verdict.json.
5. An offline judge panel (rules judges + a judge served by the project's fake provider) over
   items written for this project, in its own store (``panel.db``), fed to the same agreement
   report and gate.
6. The refusal analyses a trusted judge unlocks, on the synthetic multi-turn data set shipped in
   ``annotations/synthetic-multiturn/`` (its own store, ``analysis.db``): gate two judges, run
   the calibration and distribution analyses (what ``judgekit analyze calibration`` and
   ``analyze distribution`` run) with the one that passes, and show that the one that fails is
   refused.
7. Reports: JSON, Markdown and self-contained HTML pages.

Re-running in the same folder is idempotent: imports replace the same ratings and the panel makes
no new calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from judgekit.agreement.report import agreement_report
from judgekit.core.atomic import write_text_atomic
from judgekit.core.console import make_console
from judgekit.gate.run import explain, run_gate
from judgekit.io.ratings import import_ratings
from judgekit.report.escape import md_list
from judgekit.report.terminal import print_agreement, print_verdict
from judgekit.rubric.model import Rubric, load_rubric, shipped_dir
from judgekit.store.database import Store

#: Annotator 1 vs annotator 2 agreement (%) per model, from the authors' repository
#: (paul-rottger/exaggerated-safety, evaluation/analysis.ipynb, stored outputs).
_XSTEST_PUBLISHED_AGREEMENT = {
    "llama2orig": 96.4,
    "llama2new": 95.8,
    "mistralinstruct": 97.6,
    "mistralguard": 93.8,
    "gpt4": 98.4,
}


def _annotations_dir() -> Path:
    """The shipped annotations folder (source tree or installed wheel)."""
    return shipped_dir("annotations")


def _xstest_per_model_agreement(report: dict[str, Any]) -> dict[str, float]:
    """Human–human % agreement per model from an agreement report sliced by model."""
    out = {}
    for s in report["slices"]:
        if s["by"] == "model":
            v = s["human_ceiling"]["percent_agreement"]["value"]
            out[s["key"]] = round(100 * v, 1)
    return out


def run_demo(out_dir: Path, *, console: Console | None = None, n_resamples: int = 1000,
             verbose: bool = True) -> dict[str, Any]:
    """Run the demo; returns a summary dict (also written to ``out_dir/summary.json``).

    ``verbose``: print every step's tables (``judgekit demo --verbose``); else only a short
    summary at the end (:func:`_short_summary`: what ran, each verdict, where the report is)."""
    import io
    import time

    started = time.monotonic()
    if console is None:
        console = make_console()
    shown = console
    if not verbose:  # the steps' tables go nowhere; the short summary goes to the console
        console = make_console(file=io.StringIO(), width=150)
    out_dir.mkdir(parents=True, exist_ok=True)
    ann = _annotations_dir()
    summary: dict[str, Any] = {"out_dir": str(out_dir)}
    with Store(out_dir / "judgekit.db") as store:
        xs = _xstest_steps(store, ann, out_dir, console, n_resamples, summary)
        # Its own store, so the panel's items and raters never mix into the XSTest figures.
        with Store(out_dir / "panel.db") as pstore:
            panel = _panel_steps(pstore, out_dir, console, n_resamples, summary)
        summary["analyses"] = _run_analyses(out_dir, ann, console, n_resamples)  # 6. analyses
        _write_reports(store, out_dir, console, xs, panel)
    write_text_atomic(out_dir / "summary.json", json.dumps(summary, indent=1, default=str))
    if verbose:
        console.rule("In short")
        for line in _recap(summary, xs.verdict, panel.verdict, out_dir):
            console.print(line, markup=False)
    else:
        for line in _short_summary(summary, xs.verdict, panel.verdict, out_dir, time.monotonic() - started):
            shown.print(line, markup=False)
    return summary


@dataclass
class _Xstest:
    """What the XSTest steps produced for the reports."""

    rubric: Rubric
    report: dict[str, Any]
    verdict: dict[str, Any]
    explained: list[str]
    ours: dict[str, float]  # human–human agreement per model, as judgekit computes it
    probes: dict[str, Any]
    selective: dict[str, Any] | None


def _xstest_steps(store: Store, ann: Path, out_dir: Path, console: Console, n_resamples: int,
                  summary: dict[str, Any]) -> _Xstest:
    """Steps 1 to 4: import XSTest v2, agreement, the published figures, the gate, the probes, a
    corrected refusal rate and selective judging."""
    from judgekit.core.console import clean
    from judgekit.probes.demo import xstest_probes
    from judgekit.report.probes import summary_lines

    rubric = load_rubric("refusal")
    console.rule("1. Import XSTest v2 labels (human annotators, adjudicated label, two judges)")
    imp = import_ratings(
        store,
        ann / "xstest-v2" / "xstest_v2_labels.csv",
        rubric,
        raters={"annotation_1": "annotation_1", "annotation_2": "annotation_2"},
        reference={"final": "final_label"},
        judges={"string_match": "strmatch_label", "gpt4": "gpt4_label"},
    )
    for line in imp.lines():
        console.print(line, markup=False)

    console.rule("2. Agreement of the judges with the humans")
    report = agreement_report(
        store, rubric=rubric, by=["prompt_safety", "model"], n_resamples=n_resamples,
        judges=["string_match", "gpt4"], humans=["annotation_1", "annotation_2"], reference="final",
    ).to_dict()
    print_agreement(console, report)
    write_text_atomic(out_dir / "agreement.json", json.dumps(report, indent=1))

    console.rule("3. Published human–human agreement per model (Röttger et al.)")
    ours = _xstest_per_model_agreement(report)
    ok_all = True
    for model, published in _XSTEST_PUBLISHED_AGREEMENT.items():
        ok = ours.get(model) == published
        ok_all &= ok
        console.print(
            f"  {model:<16} published {published:5.1f}%   judgekit {ours.get(model, float('nan')):5.1f}%   "
            + ("[green]reproduced[/green]" if ok else "[red]DIFFERENT[/red]")
        )
    summary["published_reproduced"] = ok_all

    console.rule("4. Gate: may these judges score refusal?")
    verdict, _ = run_gate(store, ann / "xstest-v2" / "policy.yaml")
    lines = explain(verdict)
    print_verdict(console, verdict, lines)
    write_text_atomic(out_dir / "verdict.json", json.dumps(verdict, indent=1))
    summary["verdict"] = {j["judge"]: j["passed"] for j in verdict["judges"]}

    # 4b. probes (docs/probes.md)
    console.rule("4b. Probes: length of the response, the judge's own family, label drift")
    probes_doc = xstest_probes(store, ann)
    for line in summary_lines(probes_doc):
        console.print(clean(line), markup=False)
    write_text_atomic(out_dir / "probes.json", json.dumps(probes_doc, indent=1, default=str))
    summary["probes"] = {j["judge"]: j["state"] for j in probes_doc["judges"]}

    _corrected_step(console, n_resamples, summary)  # 4c
    from judgekit.selective.demo import (
        xstest_selective,  # 4d. selective judging (docs/selective.md)
    )
    summary["selective"], selective_doc = xstest_selective(store, ann, out_dir, console)
    return _Xstest(rubric, report, verdict, lines, ours, probes_doc, selective_doc)


def _corrected_step(console: Console, n_resamples: int, summary: dict[str, Any]) -> None:
    """4c. The judge's error taken out of a refusal rate (docs/analysis.md)."""
    from judgekit.analysis.correction.groups import xstest_corrected

    corr = xstest_corrected(judge="gpt4_label", method="ppi", n_resamples=n_resamples)
    console.print("  refusal rate per model, gpt4 judge, corrected (PPI++) from a random 15% "
                  "labelled per model, vs the adjudicated rate of all items:", markup=False)
    rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()}
                                  for r in corr.to_dict("records")]
    for r in rows:
        console.print(f"  {r['model']:<16} raw {r['raw']:.3f}   corrected {r['corrected']:.3f} "
                      f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]   adjudicated "
                      f"{r['reference_all']:.3f}", markup=False)
    summary["corrected_refusal_rates"] = {
        str(r["model"]): {"raw": round(float(r["raw"]), 4),
                          "corrected": round(float(r["corrected"]), 4),
                          "adjudicated": round(float(r["reference_all"]), 4)} for r in rows}


@dataclass
class _Panel:
    """What the offline panel's steps produced for the reports."""

    summary: dict[str, Any]
    report: dict[str, Any]
    verdict: dict[str, Any] | None
    extras: dict[str, Any]


def _panel_steps(pstore: Store, out_dir: Path, console: Console, n_resamples: int,
                 summary: dict[str, Any]) -> _Panel:
    """Step 5: the offline judge panel, its agreement, its gate and its probes."""
    from judgekit.core.console import clean
    from judgekit.judges.demo import run_demo_panel
    from judgekit.probes.demo import panel_probes
    from judgekit.report.collect import collect_extras
    from judgekit.report.probes import summary_lines

    panel_verdict = None
    console.rule("5. An offline judge panel on items written for judgekit")
    panel_summary = run_demo_panel(pstore, out_dir)
    summary["panel"] = panel_summary
    console.print(_panel_line(panel_summary), markup=False)
    prub = load_rubric(panel_summary.get("rubric", "refusal"))
    panel_report = agreement_report(
        pstore, rubric=prub, judges=panel_summary.get("judges"), n_resamples=n_resamples,
        only_items=panel_summary.get("item_ids"),
    ).to_dict()
    print_agreement(console, panel_report)
    write_text_atomic(out_dir / "panel_agreement.json", json.dumps(panel_report, indent=1))
    policy = panel_summary.get("policy")
    if policy:
        panel_verdict, _ = run_gate(pstore, policy)
        print_verdict(console, panel_verdict, explain(panel_verdict))
        write_text_atomic(out_dir / "panel_verdict.json", json.dumps(panel_verdict, indent=1))
    panel_extras = collect_extras(pstore, prub, panel_report)
    console.rule("5b. Probes of the panel: stability over trials, label order and padding (fake provider)")
    panel_probe_doc = panel_probes(pstore)
    for line in summary_lines(panel_probe_doc):
        console.print(clean(line), markup=False)
    write_text_atomic(out_dir / "panel_probes.json", json.dumps(panel_probe_doc, indent=1, default=str))
    panel_extras["probes"] = panel_probe_doc
    summary["panel_probes"] = {"states": {j["judge"]: j["state"] for j in panel_probe_doc["judges"]},
                               "calls": panel_probe_doc["calls"]}
    return _Panel(panel_summary, panel_report, panel_verdict, panel_extras)


def _write_reports(store: Store, out_dir: Path, console: Console, xs: _Xstest, panel: _Panel) -> None:
    """Step 7: summary.md and the judge reports of XSTest v2 and of the panel."""
    from judgekit.report import write_report
    from judgekit.report.collect import collect_extras

    console.rule("7. Reports")
    # the agreement tables themselves are in report.md / panel_report.md (one renderer)
    md = ["# judgekit demo", "", "Full reports: report.md (XSTest v2), panel_report.md (offline panel), "
          "analysis/ (synthetic multi-turn data).", "", "## Verdict", "", *md_list(xs.explained), ""]
    md += ["## Published human–human agreement per model", "", "| model | published | judgekit |",
           "|---|---:|---:|"]
    md += [f"| {m} | {p:.1f}% | {xs.ours.get(m, float('nan')):.1f}% |"
           for m, p in _XSTEST_PUBLISHED_AGREEMENT.items()]
    md += ["", "# Offline judge panel (items written for judgekit)", "", _panel_line(panel.summary), ""]
    if panel.verdict is not None:
        md += [*md_list(explain(panel.verdict)), ""]
    write_text_atomic(out_dir / "summary.md", "\n".join(md) + "\n")
    written = [out_dir / "agreement.json", out_dir / "verdict.json", out_dir / "summary.md"]
    paths = write_report(out_dir, xs.report, xs.verdict,
                         extras={**collect_extras(store, xs.rubric, xs.report), "probes": xs.probes,
                                 "selective": xs.selective})
    written += list(paths.values())
    paths = write_report(out_dir, panel.report, panel.verdict, extras=panel.extras, stem="panel_report")
    written += list(paths.values())
    for p in written:
        console.print(f"  wrote {p}", markup=False)


def _states(v: dict[str, Any]) -> str:
    words = {"pass": "trusted", "fail": "not trusted", "inconclusive": "inconclusive"}
    return "; ".join(f"{j['judge']} {words.get(str(j.get('state')), 'not trusted')}" for j in v["judges"])


def _short_summary(summary: dict[str, Any], verdict: dict[str, Any], panel_verdict: dict[str, Any] | None,
                  out_dir: Path, seconds: float) -> list[str]:
    """What ``judgekit demo`` prints without ``--verbose``: what ran, each verdict, where the
    report is (the tables are in the reports, and in the terminal with ``--verbose``)."""
    lines = [f"judgekit demo: offline, on shipped data, in {seconds:.0f} s; everything is in {out_dir}/.",
             "1. XSTest v2 (2,250 responses of 5 models, 2 annotators, an adjudicated label, 2 published "
             "judges): human–human agreement per model "
             + ("reproduced exactly." if summary.get("published_reproduced") else "DIFFERS from the published figures."),
             f"   verdict: {_states(verdict)}."]
    if "probes" in summary:
        lines.append("   probes: " + "; ".join(f"{j} {s}" for j, s in summary["probes"].items()) + ".")
    if panel_verdict is not None:
        panel = summary.get("panel", {})
        lines.append(f"2. Offline judge panel ({len(panel.get('item_ids') or [])} items written for judgekit, one "
                     f"judge through the fake provider; {panel.get('calls', 0):,} provider calls this run):")
        lines.append(f"   verdict: {_states(panel_verdict)}.")
    if "analyses" in summary:
        lines.append("3. Synthetic multi-turn data: judge-a passes its gate and the refusal analyses ran with it; "
                     "judge-b fails and the analyses refuse it.")
    lines.append(f"Report: {out_dir / 'report.html'} (also {out_dir / 'panel_report.html'}, "
                 f"{out_dir / 'analysis'}/*/*.html).")
    lines.append("The tables of every step: judgekit demo --verbose.")
    return lines


def _recap(summary: dict[str, Any], verdict: dict[str, Any], panel_verdict: dict[str, Any] | None,
           out_dir: Path) -> list[str]:
    def trusted(v: dict[str, Any]) -> str:
        names = [j["judge"] for j in v["judges"] if j["passed"]]
        return ", ".join(names) if names else "none"

    lines = [
        "XSTest v2: human–human agreement per model "
        + ("reproduced exactly." if summary.get("published_reproduced") else "DIFFERS from the published figures."),
        f"XSTest v2: judges trusted for {verdict['rubric']}: {trusted(verdict)}.",
    ]
    for j in verdict["judges"]:
        failed = [c["name"] for c in j["checks"] if c["state"] == "fail"]
        open_ = [c["name"] for c in j["checks"] if c["state"] == "inconclusive"]
        if failed:
            lines.append(f"  {j['judge']} fails {', '.join(failed)}")
        if open_:
            lines.append(f"  {j['judge']} is inconclusive on {', '.join(open_)}")
    if panel_verdict is not None:
        calls = summary.get("panel", {}).get("calls")
        lines.append(f"Offline panel: judges trusted: {trusted(panel_verdict)}; {calls} provider calls this run.")
        for j in panel_verdict["judges"]:
            if j["budget"]:
                lines.append(f"  {j['budget']['sentence']}")
    if "probes" in summary:
        lines.append("Probes (XSTest v2): " + ", ".join(f"{j} {s}" for j, s in summary["probes"].items())
                     + "; see the Probes section of report.html.")
    if "panel_probes" in summary:
        pp = summary["panel_probes"]
        lines.append("Probes (panel): " + ", ".join(f"{j} {s}" for j, s in pp["states"].items())
                     + f"; {pp['calls']} provider calls for the perturbed variants this run.")
    if "analyses" in summary:
        lines.append(f"Synthetic multi-turn data: analyses ran with the trusted judge in {out_dir / 'analysis'}.")
    lines.append(f"Open {out_dir / 'report.html'} in a browser for the full picture.")
    return lines


def _run_analyses(out_dir: Path, ann: Path, console: Console, n_resamples: int) -> dict[str, Any]:
    """Step 6: gate the synthetic data's judges, then run the analyses with the trusted one.

    The same library calls, printed tables and files as ``judgekit analyze calibration
    --harm-column severity`` and ``judgekit analyze distribution --rubric restrictiveness
    --by severity`` with ``--judge judge-a``, both verdicts and ``--out analysis/<analysis>``.
    """
    from judgekit.analysis import inputs
    from judgekit.analysis.calibration.estimate import calibration
    from judgekit.analysis.distribution.estimate import refusal_distribution
    from judgekit.analysis.options import ItemColumns, Resampling
    from judgekit.analysis.trust import TrustContext
    from judgekit.errors import UntrustedJudgeError
    from judgekit.report.analysis import write_results
    from judgekit.report.analysis_terminal import (
        print_calibration,
        print_distribution,
        written_summary,
    )
    from judgekit.verdict.trust import require_trusted

    console.rule("6. Refusal analyses a trusted judge unlocks (synthetic multi-turn data)")
    syn = ann / "synthetic-multiturn"
    adir = out_dir / "analysis"
    adir.mkdir(exist_ok=True)
    db = out_dir / "analysis.db"
    verdicts: dict[str, Path] = {}
    with Store(db) as store:
        for rub, name in (("restrictiveness", "restrictiveness_ratings.csv"),
                          ("refusal_form", "refusal_form_ratings.csv")):
            imp = import_ratings(store, syn / name, load_rubric(rub), items_path=syn / "items.csv")
            console.print(imp.lines()[0], markup=False)
            verdict, _ = run_gate(store, syn / f"policy-{rub}.yaml")
            verdicts[rub] = write_text_atomic(adir / f"verdict-{rub}.json", json.dumps(verdict, indent=1))
            for line in explain(verdict):
                console.print(line, markup=False)
        try:
            require_trusted(verdicts["restrictiveness"], judge="judge-b", rubric="restrictiveness",
                            store=store)
        except UntrustedJudgeError as exc:
            console.print(f"analyses refuse judge-b: {exc}", markup=False)

    judge = "judge-a"
    rubric = load_rubric("restrictiveness")
    loaded = inputs.load_verdicts([verdicts["restrictiveness"], verdicts["refusal_form"]])
    outputs = {"calibration": adir / "calibration", "distribution": adir / "distribution"}
    with Store(db) as store:
        cal = inputs.calibration_inputs(store, rubric, judge, harm_column="severity")
        result = calibration(cal.ratings, cal.items, cal.harm, rubric=rubric, harm_source=cal.harm_source,
                             trust=TrustContext(loaded, cal.judge_hashes, store=store),
                             resampling=Resampling(n_resamples, 0))
    print_calibration(console, result)
    written = write_results(result, outputs["calibration"])
    console.print(written_summary(written, outputs["calibration"]), markup=False)
    with Store(db) as store:
        dist = inputs.distribution_inputs(store, rubric, judge, form_rubric="refusal_form",
                                          verdicts=loaded)
        result = refusal_distribution(dist.ratings, dist.items, rubric=rubric, forms=dist.form_ratings,
                                      columns=ItemColumns(by=["severity"]),
                                      trust=TrustContext(loaded, dist.judge_hashes, store=store),
                                      resampling=Resampling(n_resamples, 0))
    print_distribution(console, result)
    written = write_results(result, outputs["distribution"])
    console.print(written_summary(written, outputs["distribution"]), markup=False)
    return {"verdicts": {k: str(v) for k, v in verdicts.items()},
            "outputs": {k: str(v) for k, v in outputs.items()}}


def _panel_line(s: dict[str, Any]) -> str:
    keys = ("calls", "cached", "abstentions", "errors", "input_tokens", "output_tokens", "cost_usd")
    return "  panel: " + ", ".join(f"{k}={s[k]}" for k in keys if k in s)

