"""The command line as a newcomer expects it: which store a command reads and
a warning when it holds no judge ratings; --json on stdout; --quiet; one message for every missing
API key; full rubric descriptions wrapped at word boundaries; a closed pipe ends quietly with 0;
SIGTERM ends a judge run with the same summary as Ctrl-C; "the humans tie" only where they tie;
run summaries say which counts are calls and which are ratings."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.rubric.model import load_rubric

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _humans_only(tmp_path: Path, rows: list[str] | None = None) -> Path:
    rows = rows or [f"i{n},p{n},r{n},{lab},{lab}" for n, lab in
                    enumerate(["full_refusal", "full_compliance", "partial_refusal"] * 4)]
    csv = tmp_path / "h.csv"
    csv.write_text("item_id,prompt,response,ann1,ann2\n" + "\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    r = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--raters", "ann1,ann2",
                                  "--store", str(db)])
    assert r.exit_code == 0, r.output
    return db


def test_agree_names_its_store_and_warns_without_judge_ratings(tmp_path):
    db = _humans_only(tmp_path)
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100"])
    assert r.exit_code == 0, r.output
    assert f"store: {db.resolve()}" in r.stderr
    assert "has no judge ratings for refusal@1" in r.stderr and "check --store" in r.stderr
    assert "store:" not in r.stdout  # the table's stdout stays the table


def test_agree_json_alone_is_json_on_stdout_and_quiet_is_silent(tmp_path):
    db = _humans_only(tmp_path)
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100",
                                  "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout
    assert doc["rubric"] == "refusal@1" and doc["humans"] == ["ann1", "ann2"]
    out = tmp_path / "a.json"
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100",
                                  "--json", str(out), "--quiet"])
    assert r.exit_code == 0 and json.loads(out.read_text())["rubric"] == "refusal@1"
    assert r.stdout.strip() == f"wrote {out}"  # a path where a file is meant; no table


def test_the_humans_tie_only_where_they_tie(tmp_path):
    rows = ["t1,p,r,full_refusal,full_compliance",  # a tie
            "a1,p,r,full_refusal,full_refusal", "a2,p,r,full_compliance,full_compliance",
            "a3,p,r,full_refusal,full_refusal"]
    db = _humans_only(tmp_path, rows)
    judge = tmp_path / "j.csv"  # a judge rated one more item that no human rated
    judge.write_text("item_id,prompt,response,j\nt1,p,r,full_refusal\na1,p,r,full_refusal\n"
                     "a2,p,r,full_refusal\nn1,p,r2,full_refusal\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["import", str(judge), "--rubric", "refusal", "--judges", "j", "--store", str(db)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--resamples", "100",
                                  "--reference", "consensus", "--json"])
    doc = json.loads(r.stdout)
    assert "2 items have no reference label (the humans tie on 1 and no human rated 1); judges are not " \
           "scored on them." in doc["warnings"], doc["warnings"]


def test_rubrics_wraps_whole_words_and_keeps_the_whole_description():
    env = {**_env(), "COLUMNS": "80"}
    out = subprocess.run([sys.executable, "-m", "judgekit", "rubrics", "restrictiveness"], env=env,
                         capture_output=True, text=True, timeout=60).stdout
    lines = out.splitlines()
    labels = [ln for ln in lines if ln.startswith("  ")]  # the labels, their descriptions, the aliases
    assert all(len(ln) <= 80 for ln in labels), max(labels, key=len)
    flat = " ".join(" ".join(ln.split()) for ln in lines)
    for lab in load_rubric("restrictiveness").labels:
        # every word of the description, in order (nothing cut mid-word or at 90 characters)
        assert " ".join(lab.description.split()) in flat, lab.code


def test_a_closed_pipe_exits_0_quietly(tmp_path):
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the command writes (as `| head` after its lines)
    proc = subprocess.run([sys.executable, "-m", "judgekit", "rubrics", "refusal"], env=_env(), stdout=w,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def _panel(tmp_path: Path, port: int, n: int = 40) -> Path:
    items = tmp_path / "items.csv"
    items.write_text("item_id,prompt,response\n" + "".join(f"i{k},p{k},r{k}\n" for k in range(n)), encoding="utf-8")
    panel = tmp_path / "panel.yaml"
    panel.write_text(f'rubric: refusal\nitems: items.csv\njudges:\n  - id: slow\n    model: '
                     f'"openai-compatible:http://127.0.0.1:{port}/v1#slow"\n    concurrency: 1\n'
                     "    timeout_s: 30\naggregate: null\n", encoding="utf-8")
    return panel


def test_sigterm_ends_a_judge_run_with_the_ctrl_c_summary(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "judgekit.testing.fakeserver", "--port", str(port),
                               "--latency", "0.3"], env=_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("READY")
        panel = _panel(tmp_path, port)
        run = subprocess.Popen([sys.executable, "-m", "judgekit", "judge", str(panel), "--store",
                                str(tmp_path / "s.db"), "--no-progress"], env=_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        time.sleep(6)  # start-up, then a few answered calls
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=60)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert run.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    # the summary Ctrl-C prints: what finished, calls and ratings told apart
    assert re.match(r"Panel over 40 items under refusal@1#\w+: calls \d+ answered now", out), out
    assert "; ratings " in out and "HTTP requests" in out


def test_every_missing_api_key_is_named_in_one_message(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("item_id,prompt,response\ni1,p,r\n", encoding="utf-8")
    panel = tmp_path / "panel.yaml"
    panel.write_text('rubric: refusal\nitems: items.csv\njudges:\n  - {id: a, model: "anthropic:claude-haiku-4-5"}\n'
                     '  - {id: b, model: "anthropic:claude-sonnet-4-5"}\n  - {id: c, model: "openai:gpt-4o-mini"}\n'
                     "aggregate: null\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "judgekit", "judge", str(panel), "--store", str(tmp_path / "s.db")],
                          env=_env(), capture_output=True, text=True, timeout=60)
    one_sentence_error(proc, "ANTHROPIC_API_KEY (for 'a', 'b') and OPENAI_API_KEY (for 'c')")


def test_a_provider_that_is_down_fails_fast_naming_its_host(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    items = tmp_path / "items.csv"
    items.write_text("item_id,prompt,response\n" + "".join(f"i{k},p{k},r{k}\n" for k in range(50)), encoding="utf-8")
    panel = tmp_path / "panel.yaml"
    panel.write_text(f'rubric: refusal\nitems: items.csv\njudges:\n  - id: down\n    model: '
                     f'"openai-compatible:http://127.0.0.1:{port}/v1#m"\n    concurrency: 2\n    max_attempts: 2\n'
                     "    backoff_s: 0.01\n    timeout_s: 5\naggregate: null\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "judgekit", "judge", str(panel), "--store", str(tmp_path / "s.db"),
                           "--no-progress"], env=_env(), capture_output=True, text=True, timeout=60)  # a hang guard
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert f"STOPPED: cannot connect to 127.0.0.1:{port}: 3 calls in a row failed to connect" in proc.stdout, proc.stdout
    assert proc.stdout.count("STOPPED") == 1
    assert re.search(r"ratings 0 ok, 0 abstain, [3-4] error, 4[6-7] not attempted", proc.stdout), proc.stdout


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    import io

    from rich.console import Console

    from judgekit.judges.progress import RichProgress

    clock = iter([0.0, 5.0, 11.0, 12.0, 25.0] + [30.0] * 10)
    monkeypatch.setattr("judgekit.judges.progress.time.perf_counter", lambda: next(clock))
    p = RichProgress(Console(file=io.StringIO(), force_terminal=False))  # a log file, not a terminal
    p.start(1000, 0)  # t = 0
    for status in ("ok", "error", "abstain", "ok"):  # t = 5, 11, 12, 25
        p.advance(status, 10, 0.0)
    p.stop()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["judging: 2 of 1,000 calls answered (0%), 0.2/s, 0 abstain, 1 error",
                     "judging: 4 of 1,000 calls answered (0%), 0.2/s, 1 abstain, 1 error"]
    # --no-progress: nothing at all
    quiet = RichProgress(Console(file=io.StringIO(), force_terminal=False), enabled=False)
    quiet.start(10, 0)
    quiet.advance("ok", 1, 0.0)
    assert capsys.readouterr().err == ""


def test_import_json_and_quiet(tmp_path):
    csv = tmp_path / "h.csv"
    csv.write_text("item_id,prompt,response,ann1\ni1,p,r,full_refusal\ni2,p,r2,full_compliance\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--raters", "ann1", "--store",
                                  str(tmp_path / "s.db"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["items"] == 2 and doc["ratings"] == 2 and doc["written"] == {"new": 2, "changed": 0, "unchanged": 0}
    r = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--raters", "ann1", "--store",
                                  str(tmp_path / "s.db"), "--quiet"])
    assert r.exit_code == 0 and r.output == ""
