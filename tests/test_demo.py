"""`judgekit demo` as a user runs it: the console script, offline, twice in the same folder."""

from __future__ import annotations

import json
import os
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
    """Issue 24: what ran, each verdict, where the report is; the tables only with --verbose."""
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
