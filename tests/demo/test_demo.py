"""`judgekit demo` as a user runs it: the console script, offline, twice in the same folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _judgekit() -> list[str]:
    exe = Path(sys.executable).with_name("judgekit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "judgekit"]


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    runs = [
        subprocess.run([*_judgekit(), "demo", "--out", str(out), "--resamples", "200", *flags],
                       capture_output=True, text=True, timeout=300, env=env)
        for flags in (["--verbose"], ["--verbose"], [])  # the third as a newcomer runs it: no flag
    ]
    yield out, runs
    shutil.rmtree(out, ignore_errors=True)


def test_demo_runs_offline_and_writes_its_outputs(demo_runs):
    out, (first, _, _) = demo_runs
    assert first.returncode == 0, first.stderr[-2000:]
    for name in ("agreement.json", "verdict.json", "summary.md", "report.html", "report.md", "report.json",
                 "panel_report.html", "panel_verdict.json", "judgekit.db", "panel.db"):
        assert (out / name).exists(), name
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html.lower() or "Content-Security-Policy" in html


def test_demo_reproduces_published_human_agreement(demo_runs):
    out, (first, _, _) = demo_runs
    for model, pct in (("llama2orig", "96.4"), ("llama2new", "95.8"), ("mistralinstruct", "97.6"),
                       ("mistralguard", "93.8"), ("gpt4", "98.4")):
        section = first.stdout[first.stdout.index("3. Published"):first.stdout.index("4. Gate")]
        line = next(ln for ln in section.splitlines() if ln.strip().startswith(model + " "))
        assert line.count(pct) == 2 and "reproduced" in line, line
    assert json.loads((out / "summary.json").read_text())["published_reproduced"] is True


def test_demo_gate_shows_string_match_failing_partial_refusals(demo_runs):
    out, (first, _, _) = demo_runs
    v = json.loads((out / "verdict.json").read_text())
    sm = next(j for j in v["judges"] if j["judge"] == "string_match")
    check = next(c for c in sm["checks"] if c["name"] == "min_recall[partial_refusal]")
    assert check["figure"] == 0.0 and not check["passed"]
    assert "min_recall[partial_refusal]: 0.000" in first.stdout


def test_demo_rerun_is_idempotent_and_makes_no_calls(demo_runs):
    out, (first, second, _) = demo_runs
    assert second.returncode == 0, second.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["panel"]["calls"] == 0
    a1 = first.stdout[first.stdout.index("2. Agreement"):first.stdout.index("5. An offline")]
    a2 = second.stdout[second.stdout.index("2. Agreement"):second.stdout.index("5. An offline")]
    assert a1 == a2


def test_demo_runs_the_probes_and_a_rerun_makes_no_probe_calls(demo_runs):
    out, (first, second, _) = demo_runs
    assert "4b. Probes" in first.stdout and "5b. Probes of the panel" in first.stdout
    xs = json.loads((out / "probes.json").read_text())
    gpt4 = next(j for j in xs["judges"] if j["judge"] == "gpt4")
    names = {r["check"]["name"] for r in gpt4["probes"]}
    assert {"max_self_preference", "max_covariate_effect[response_chars:full_refusal]", "max_label_drift"} <= names
    panel = json.loads((out / "panel_probes.json").read_text())
    llm = next(j for j in panel["judges"] if j["judge"] == "scripted-llm")
    assert {r["probe"] for r in llm["probes"]} == {"covariate", "stability", "drift", "flip"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["panel_probes"]["calls"] == 0  # the second run: every variant call cached
    for page in ("report.html", "panel_report.html"):
        assert "Probes</h2>" in (out / page).read_text(encoding="utf-8")


def test_demo_without_verbose_prints_a_short_summary(demo_runs):
    """What ran, each verdict, where the report is; the tables only with --verbose."""
    out, (first, _, third) = demo_runs
    assert third.returncode == 0, third.stderr[-2000:]
    short = third.stdout.splitlines()
    assert 5 <= len(short) <= 15, third.stdout
    assert len(first.stdout.splitlines()) > 100  # --verbose: every step's tables
    text = third.stdout
    assert "┃" not in text and "━" not in text  # no table drawn
    assert "verdict: gpt4 not trusted; string_match not trusted." in text
    assert str(out / "report.html") in text
    assert "--verbose" in text
    panel = json.loads((out / "panel_verdict.json").read_text())
    for j in panel["judges"]:  # each panel judge's verdict, as the gate wrote it
        assert f"{j['judge']} {'inconclusive' if j['state'] == 'inconclusive' else ''}".strip() in text


def _items_in(db: Path) -> int:
    from judgekit.store.database import Store

    with Store.open_existing(str(db)) as store:
        return len(store.items())


_ABOUT = re.compile(r"about ([\d,]+) more ")


def test_every_label_budget_the_demo_prints_fits_its_data_or_says_undecidable(demo_runs):
    """Every label budget of the demo is below the size of the data it is computed on, or
    says "undecidable" with the reason — in each verdict, each report and the console."""
    out, (first, _, _) = demo_runs
    sizes = {"verdict.json": _items_in(out / "judgekit.db"), "panel_verdict.json": _items_in(out / "panel.db")}
    for v in sorted((out / "analysis").glob("verdict-*.json")):
        sizes[f"analysis/{v.name}"] = _items_in(out / "analysis.db")
    seen = 0
    for name, size in sizes.items():
        verdict = json.loads((out / name).read_text())
        for j in verdict["judges"]:
            for b in [j.get("budget")] + [c.get("budget") for c in j["checks"]]:
                if not b:
                    continue
                seen += 1
                if b["items"] is None:  # undecidable: the sentence says so, and why
                    assert any(w in b["sentence"] for w in ("undecidable", "unlikely to decide", "cannot be"
                                                            " decided with this study")), (name, b)
                else:
                    assert b["items"] < size, (name, size, b)
    assert seen >= 10  # the demo's panel and XSTest judges are inconclusive on many checks

    def check(text: str, size: int, where: str) -> None:
        # every "about N more …" either fits the data or sits in an "undecidable: …" clause that
        # names what the data holds
        for m in _ABOUT.finditer(text):
            n = int(m.group(1).replace(",", ""))
            clause = text[max(0, m.start() - 160):m.end() + 120]
            assert n < size or ("cannot be decided with this study" in clause and "the study holds" in clause), (
                where, clause)

    check(first.stdout, max(sizes.values()), "console")
    for page in ("report.md", "report.html", "summary.md"):
        check((out / page).read_text(encoding="utf-8"), sizes["verdict.json"], page)
    for page in ("panel_report.md", "panel_report.html"):
        check((out / page).read_text(encoding="utf-8"), sizes["panel_verdict.json"], page)


def test_readme_policy_decides_rates_on_the_judges_calls(demo_runs):
    """README's sample policy (annotations/xstest-v2/policy.yaml, which the demo gates)
    never asks humans to decide an error or abstention rate: they are counted on every call of
    the judge (2,250 XSTest responses), and a budget for them asks for judge calls."""
    out, _ = demo_runs
    verdict = json.loads((out / "verdict.json").read_text())
    rates = [c for j in verdict["judges"] for c in j["checks"]
             if c["name"] in ("max_error_rate", "max_abstention_rate")]
    assert len(rates) == 2 * len(verdict["judges"])
    for c in rates:
        assert c["n"] == 2250, c
        assert "human" not in str((c.get("budget") or {}).get("sentence", "")).lower(), c
