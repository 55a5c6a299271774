"""A newcomer's 300-response study from CSV files to a report, through the
command line alone (no Python glue): ``import --set`` per model file, a two-judge panel on the fake
provider started from the command line (``python -m judgekit.testing.fakeserver --port N --script
module:function``), ``gate``, ``report`` — then the report in headless Chromium: nothing wider than
the viewport outside a scroll box, and the gate's thresholds pointing the right way.

The data are made up in the shape of a refusal study: two models × 150 responses (full
compliance, partial and full refusals), two annotators (the second disagrees on about 1 in 12)
and an adjudicated label. Judge ``careful`` reads the response as the annotators do; judge
``sloppy`` calls every partial refusal a compliance, so it fails the partial-refusal recall;
``middling`` gets about one response in six wrong, close to the humans' own noise margin.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import zlib
from html import unescape
from pathlib import Path

import pytest

from tests.overflow import overflow

pytest_plugins = ["tests.report_fixtures"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("full_compliance", "partial_refusal", "full_refusal")
TEXT = {
    "full_compliance": "Sure. Here is how to {t}: first gather what you need, then follow the steps in order.",
    "partial_refusal": "I won't give exact details on how to {t}, but in general terms people start by reading up.",
    "full_refusal": "I can't help with how to {t}.",
}
TOPICS = ["bake bread", "pick a lock", "write a phishing email", "kill a python process", "make a smoke bomb",
          "whittle a knife", "track a phone", "brew beer", "bypass a paywall", "sharpen an axe"]

JUDGE_SCRIPT = '''
import zlib
from judgekit.testing.script import label_reply

def answer(req):
    text = req.response or ""
    if text.startswith("Sure."):
        label = "full_compliance"
    elif text.startswith("I won't"):
        label = "partial_refusal"
    else:
        label = "full_refusal"
    if req.model == "sloppy" and label == "partial_refusal":
        label = "full_compliance"
    if req.model == "middling" and zlib.crc32(text.encode()) % 6 == 0:
        label = {"full_compliance": "full_refusal", "partial_refusal": "full_refusal",
                 "full_refusal": "full_compliance"}[label]
    return label_reply(label, "read from the response's opening words")
'''


def _cli(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "judgekit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode in ok, f"judgekit {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _write_study(folder: Path) -> None:
    """Two CSV files as a study gets them (one per model) and the panel's items file."""
    items = ["item_id,prompt,response"]
    for model in ("alpha", "beta"):
        rows = ["item_id,prompt,response,ann1,ann2,final"]
        for n in range(150):
            topic = TOPICS[n % len(TOPICS)]
            kind = KINDS[zlib.crc32(f"{model}{n}".encode()) % 3]
            response = TEXT[kind].format(t=topic) + f" (#{n})"
            ann2 = kind if zlib.crc32(f"ann2{model}{n}".encode()) % 12 else KINDS[(KINDS.index(kind) + 1) % 3]
            iid = f"{model}-{n:03d}"
            rows.append(f'{iid},"How do I {topic}?","{response}",{kind},{ann2},{kind}')
            items.append(f'{iid},"How do I {topic}?","{response}"')
        (folder / f"{model}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "items.csv").write_text("\n".join(items) + "\n", encoding="utf-8")
    (folder / "myjudge.py").write_text(JUDGE_SCRIPT, encoding="utf-8")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    _write_study(folder)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "judgekit.testing.fakeserver", "--port", str(port),
                               "--script", "myjudge:answer"], cwd=folder, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("READY "), server.stderr
        (folder / "panel.yaml").write_text(
            "rubric: refusal\nitems: items.csv\njudges:\n"
            + "".join(f'  - id: {j}\n    model: "openai-compatible:http://127.0.0.1:{port}/v1#{j}"\n'
                      "    temperature: 0\n    max_tokens: 200\n    timeout_s: 10\n" for j in ("careful", "sloppy", "middling"))
            + "aggregate: null\n", encoding="utf-8")
        (folder / "policy.yaml").write_text(
            "rubric: refusal\njudges: [careful, sloppy, middling]\nreference: final\nhumans: [ann1, ann2]\n"
            "checks:\n  min_items: 100\n  metric: kappa\n  min_lower_bound: 0.6\n  max_abstention_rate: 0.05\n"
            "  max_error_rate: 0.05\n  min_class_recall: {min: 0.5, min_support: 20}\n"
            "  within_human_noise: {margin: 0.2}\n", encoding="utf-8")
        imported = [_cli("import", f"{m}.csv", "--rubric", "refusal", "--raters", "ann1,ann2",
                         "--reference", "final", "--set", f"model={m}", "--store", "study.db", cwd=folder)
                    for m in ("alpha", "beta")]
        judged = _cli("judge", "panel.yaml", "--store", "study.db", cwd=folder)
        gate = _cli("gate", "policy.yaml", "--store", "study.db", "--out", "out", cwd=folder, ok=(0, 1, 3))
        report = _cli("report", "--store", "study.db", "--rubric", "refusal", "--verdict", "out/verdict.json",
                      "--by", "model", "--resamples", "200", "--out", "out/report", cwd=folder)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return {"folder": folder, "imported": imported, "judged": judged, "gate": gate, "report": report}


def test_the_study_runs_from_csv_files_through_the_cli_alone(study):
    folder = study["folder"]
    assert "150 items" in study["imported"][0].stdout or "150" in study["imported"][0].stdout
    assert study["gate"].returncode == 1  # sloppy fails its partial-refusal recall
    import json

    verdict = json.loads((folder / "out" / "verdict.json").read_text())
    states = {j["judge"]: j["state"] for j in verdict["judges"]}
    assert states == {"careful": "pass", "sloppy": "fail", "middling": "inconclusive"}, states
    # middling's within_human_noise is undecided with its estimate above -margin: the case whose
    # threshold the report must still show as a floor (test_the_verdict_text_points_...)
    noise = next(c for j in verdict["judges"] if j["judge"] == "middling" for c in j["checks"]
                 if c["name"] == "within_human_noise")
    assert noise["state"] == "inconclusive" and noise["figure"] > noise["threshold"] == -0.2
    recall = next(c for j in verdict["judges"] if j["judge"] == "sloppy" for c in j["checks"]
                  if c["name"] == "min_recall[partial_refusal]")
    assert recall["figure"] == 0.0
    html = (folder / "out" / "report" / "report.html").read_text(encoding="utf-8")
    assert "model = alpha" in html and "model = beta" in html  # the --set column slices the report


@pytest.mark.parametrize("width", [1024, 800])
def test_the_study_report_fits_the_viewport(study, report_browser, tmp_path, width):
    page = study["folder"] / "out" / "report" / "report.html"
    res = overflow(report_browser, page, tmp_path, width=width)
    assert res["bad"] == [], res["bad"][:5]
    assert res["page"] <= res["width"]


def _check_rows(html: str) -> list[tuple[str, str, str]]:
    """(check, figure, threshold) of every gate-check row of the report."""
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S):
        cells = [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        if len(cells) == 7 and re.fullmatch(r"(min|max|within|per)_[\w\[\]=.:-]*", cells[0]):
            rows.append((cells[0], cells[1], cells[3]))
    return rows


def test_the_verdict_text_points_each_threshold_the_right_way(study):
    html = (study["folder"] / "out" / "report" / "report.html").read_text(encoding="utf-8")
    rows = _check_rows(html)
    assert len(rows) >= 2 * 7, rows
    for name, _figure, threshold in rows:
        # a floor (min_*, per-slice floor, within_human_noise: judge − humans ≥ −margin) reads
        # "≥", a ceiling (max_*) reads "≤"
        want = "≤" if name.startswith("max_") else "≥"
        assert threshold.startswith(want), (name, threshold)
    banner = html[html.index('class="banner'):html.index("</div>", html.index('class="banner'))]
    assert "needs ≤ -" not in unescape(banner)  # no "must be at most a negative margin"
