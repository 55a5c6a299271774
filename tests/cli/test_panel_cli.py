"""`judgekit judge` and `judgekit export ratings`: bad input, kill -9 and resume, no key leaks."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402


def invoke(args, env=None):
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


@pytest.mark.parametrize(
    ("judges", "extra", "items", "message"),
    [
        ([{"id": "x", "model": "gemini:pro"}], {}, None, "unknown kind 'gemini'"),
        ([{"id": "x", "model": "anthropic:claude-haiku-4-5"}], {}, None,
         "set the environment variable ANTHROPIC_API_KEY"),
        ([{"id": "x", "model": "openai:gpt-4o"}], {}, None, "OPENAI_API_KEY"),
        ([{"id": "x", "model": "rules:refusal-keywords"}], {}, [{"item_id": "a", "prompt": "p"}],
         "missing column 'response'"),
        ([{"id": "x", "model": "rules:refusal-keywords"}], {"rubric": "refusals"}, None,
         "Rubric 'refusals' does not exist"),
        ([{"id": "x", "model": "rules:refusal-keywords", "concurency": 4}], {}, None,
         "unknown key 'judges[0].concurency'"),
        ([{"id": "x", "model": "rules:refusal-keywords"}], {"itemz": "x"}, None, "unknown key 'itemz'"),
        ([{"id": "x", "model": "rules:refusal-keywords"}, {"id": "x", "model": "rules:refusal-keywords"}],
         {}, None, "judge id 'x' is used twice"),
        ([{"id": "x", "model": "rules:refusal-keywords"}], {"aggregate": {"methods": ["mean"]}}, None,
         "needs an ordinal or interval rubric"),
    ],
)
def test_bad_input_is_one_sentence_exit_2_and_nothing_is_sent(
    tmp_path, fake, monkeypatch, judges, extra, items, message
):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    write_items(tmp_path, items or labelled_items(3))
    panel = write_panel(tmp_path, judges, **extra)
    # a healthy fake-served judge first: a later bad entry must stop the run before any call
    data = panel.read_text()
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db")])
    one_sentence_error(res, message)
    assert fake.stats.requests == 0
    assert data == panel.read_text()
    if (tmp_path / "s.db").exists():
        assert Store(tmp_path / "s.db").ratings().empty


def test_a_bad_judge_after_a_good_one_sends_nothing(tmp_path, fake, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "ok", "model": f"openai-compatible:{fake.openai_url}#m"},
                                   {"id": "bad", "model": "anthropic:claude-haiku-4-5"}])
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db")])
    one_sentence_error(res, "ANTHROPIC_API_KEY")
    assert fake.stats.requests == 0


def test_missing_panel_file(tmp_path):
    res = invoke(["judge", str(tmp_path / "nope.yaml")])
    one_sentence_error(res, "does not exist")


def test_judge_prints_a_summary_and_exit_codes(tmp_path, fake):
    write_items(tmp_path, labelled_items(6))
    fake.inject("500", 2, match="Question 0:")
    panel = write_panel(tmp_path, [
        {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "max_attempts": 2,
         "backoff_s": 0.01},
        {"id": "kw", "model": "rules:refusal-keywords"}])
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output  # a failed call does not fail the run
    first = res.output.splitlines()[0]
    assert first.startswith("Panel over 6 items under refusal@1#")
    assert "0 from cache" in first and "1 errors" in first
    assert "error x1: server error (500) (after 2 attempts)" in res.output
    assert "panel:majority: 6 derived ratings" in res.output
    # not a terminal: no progress bar drawn
    assert "judging" not in res.output
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db"), "--json"])
    summary = json.loads(res.output)
    assert summary["totals"]["called"] == 1 and summary["totals"]["cached"] == 11
    assert summary["complete"] is True
    # a judge that cannot run (bad key) makes the run incomplete: exit 1
    fake.inject("401", 100)
    fresh = labelled_items(6, prefix="new")
    for row in fresh:
        row["response"] += " (new text, so new cache keys)"
    write_items(tmp_path, fresh)
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 1 and "STOPPED: authentication failed (401)" in res.output


def test_reparse_option_makes_no_calls(tmp_path, fake):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m"}])
    invoke(["judge", str(panel), "--store", str(tmp_path / "s.db")])
    n = fake.stats.requests
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db"), "--reparse"])
    assert res.exit_code == 0
    assert "llm: 3 completions, 0 changed" in res.output
    assert fake.stats.requests == n


def test_only_runs_the_named_judges(tmp_path, fake):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m"},
                                   {"id": "kw", "model": "rules:refusal-keywords"}])
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db"), "--only", "kw"])
    assert res.exit_code == 0 and fake.stats.requests == 0
    raters = set(Store(tmp_path / "s.db").ratings()["rater_id"])
    assert raters - {"panel:majority"} == {"kw"}
    res = invoke(["judge", str(panel), "--store", str(tmp_path / "s.db"), "--only", "gpt"])
    one_sentence_error(res, "--only names 'gpt'")


def test_progress_bar_shows_counts_tokens_and_cost(tmp_path, fake):
    from rich.console import Console

    from judgekit.judges.progress import RichProgress

    write_items(tmp_path, labelled_items(5))
    fake.inject("unparseable", 1, match="Question 1:")
    buf = io.StringIO()
    progress = RichProgress(Console(file=buf, force_terminal=True, width=200), enabled=True)
    panel = load_panel(write_panel(tmp_path, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m"}]))
    with Store(tmp_path / "s.db") as store:
        run_panel(panel, store, progress=progress)
    out = buf.getvalue()
    assert "5/5" in out and "1 abstain" in out and "0 error" in out and "tok" in out and "$" in out
    assert progress.done == 5 and progress.abstain == 1 and progress.tokens > 0


def test_export_ratings_with_tokens_and_cost(tmp_path, fake, api_env):
    write_items(tmp_path, labelled_items(4))
    panel = write_panel(tmp_path, [{"id": "gpt", "model": "openai:gpt-4o-mini"},
                                   {"id": "kw", "model": "rules:refusal-keywords"}])
    store = str(tmp_path / "s.db")
    assert invoke(["judge", str(panel), "--store", store]).exit_code == 0
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"r.{fmt}"
        res = invoke(["export", "ratings", "--store", store, "--format", fmt, "--out", str(out)])
        assert res.exit_code == 0 and "Wrote 12 ratings" in res.output  # 2 judges + majority, x 4
        df = {"csv": pd.read_csv, "jsonl": lambda p: pd.read_json(p, lines=True),
              "parquet": pd.read_parquet}[fmt](out)
        for col in ("item_id", "rater_id", "rater_kind", "rubric", "label", "value", "trial",
                    "status", "rationale", "input_tokens", "output_tokens", "cost_usd"):
            assert col in df.columns
        gpt = df[df.rater_id == "gpt"]
        assert (gpt["input_tokens"] > 0).all() and (gpt["cost_usd"] > 0).all()
        assert gpt["judge_spec"].eq("openai:gpt-4o-mini").all()
    res = invoke(["export", "calls", "--store", store, "--judge", "gpt", "--out", str(tmp_path / "c.jsonl")])
    assert res.exit_code == 0 and "Wrote 4 calls" in res.output
    c = pd.read_json(tmp_path / "c.jsonl", lines=True)
    assert (c["judge_id"] == "gpt").all() and c["raw"].str.contains('"label"').all()
    res = invoke(["export", "ratings", "--store", store, "--out", str(tmp_path / "r.txt")])
    one_sentence_error(res, "--format")
    res = invoke(["export", "ratings", "--store", str(tmp_path / "none.db"), "--out", str(tmp_path / "x.csv")])
    one_sentence_error(res, "does not exist")


def test_api_keys_never_reach_store_logs_exports_or_reports(tmp_path, fake):
    planted = {"ANTHROPIC_API_KEY": "sk-ant-PLANTED-KEY-4d1f9a",
               "OPENAI_API_KEY": "sk-oai-PLANTED-KEY-77c2e0",
               "VLLM_KEY": "vllm-PLANTED-KEY-91be33"}
    env = {**planted, "ANTHROPIC_BASE_URL": fake.url, "OPENAI_BASE_URL": fake.openai_url}
    write_items(tmp_path, labelled_items(5))
    fake.inject("401", 1, match="Question 4:")  # an auth error on one call (its text is stored)
    fake.inject("500", 1, match="Question 3:")
    panel = write_panel(tmp_path, [
        {"id": "claude", "model": "anthropic:claude-haiku-4-5", "backoff_s": 0.01},
        {"id": "gpt", "model": "openai:gpt-4o-mini", "backoff_s": 0.01},
        {"id": "vllm", "model": f"openai-compatible:{fake.openai_url}#m", "api_key_env": "VLLM_KEY"}])
    store = tmp_path / "s.db"
    outputs = []
    for args in (["judge", str(panel), "--store", str(store)],
                 ["judge", str(panel), "--store", str(store), "--json"],
                 ["judge", str(panel), "--store", str(store), "--reparse"],
                 ["judge", str(panel), "--store", str(store), "--dry-run"],
                 ["export", "ratings", "--store", str(store), "--out", str(tmp_path / "r.csv")],
                 ["export", "ratings", "--store", str(store), "--out", str(tmp_path / "r.jsonl")],
                 ["export", "calls", "--store", str(store), "--out", str(tmp_path / "c.jsonl")]):
        res = CliRunner().invoke(main, args, env=env)
        outputs.append(res.output)
    assert all(r.has_auth for r in fake.requests)  # the keys were used ...
    assert fake.stats.faults["401"] == 1  # ... one was quoted back by the provider's 401 message
    assert "authentication failed (401)" in outputs[0]
    blobs = [o.encode() for o in outputs]
    for p in tmp_path.iterdir():  # ... and appear nowhere we write
        if p.is_file():
            blobs.append(p.read_bytes())
    for key in planted.values():
        assert not any(key.encode() in b for b in blobs), key
        assert not any(b"PLANTED" in b for b in blobs)


def test_kill_9_loses_at_most_the_calls_in_flight_and_resume_repeats_none(tmp_path):
    n, concurrency = 240, 4
    with FakeServer(latency=0.04) as fake:
        write_items(tmp_path, labelled_items(n))
        panel = write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m",
             "concurrency": concurrency}])
        store = tmp_path / "s.db"
        proc = subprocess.Popen(
            [sys.executable, "-m", "judgekit", "judge", str(panel), "--store", str(store),
             "--no-progress"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + 120
            done = 0
            while done < 40 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
                if store.exists():
                    try:
                        with sqlite3.connect(store, timeout=5) as conn:
                            done = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
                    except sqlite3.OperationalError:
                        pass  # the schema is being created
            assert proc.poll() is None, "the run finished before it could be killed"
            proc.kill()  # SIGKILL, by the PID we started
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        time.sleep(0.2)  # let the server finish answering requests the dead client sent
        sent_before = fake.stats.requests
        with sqlite3.connect(store) as conn:
            stored = conn.execute("SELECT COUNT(*) FROM calls WHERE status = 'ok'").fetchone()[0]
            ratings = conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
        assert 40 <= stored < n and ratings == stored
        # lost = sent but not committed: in flight, or waiting for the next group commit
        assert sent_before - stored <= 2 * concurrency
        with Store(store) as s:
            summary = run_panel(load_panel(panel), s)
            assert summary.totals()["cached"] == stored
            assert fake.stats.requests - sent_before == n - stored  # no completed call repeated
            df = s.ratings(rater_ids=["llm"])
            assert len(df) == n and (df["status"] == "ok").all()


def test_dry_run_counts_calls_and_estimates_cost_without_sending(tmp_path, fake, api_env):
    write_items(tmp_path, labelled_items(10))
    panel = write_panel(tmp_path, [{"id": "gpt", "model": "openai:gpt-4o", "trials": 2,
                                    "max_tokens": 100},
                                   {"id": "kw", "model": "rules:refusal-keywords"}])
    store = str(tmp_path / "s.db")
    res = invoke(["judge", str(panel), "--store", store, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Dry run over 10 items") and "30 calls to make" in res.output
    assert "Nothing was sent" in res.output and fake.stats.requests == 0
    assert Store(store).ratings().empty and Store(store).items().empty
    summary = json.loads(invoke(["judge", str(panel), "--store", store, "--dry-run", "--json"]).output)
    gpt = next(j for j in summary["judges"] if j["id"] == "gpt")
    # gpt-4o: $2.5 / M input, $10 / M output; at most 100 output tokens a call
    assert gpt["max_cost_usd"] == pytest.approx(
        gpt["input_tokens"] * 2.5e-6 + 20 * 100 * 10e-6)
    assert 0 < gpt["estimated_cost_usd"] < gpt["max_cost_usd"]
    # after a real run, nothing is left to do
    invoke(["judge", str(panel), "--store", store])
    res = invoke(["judge", str(panel), "--store", store, "--dry-run"])
    assert "0 calls to make, 30 answered already" in res.output


def test_export_attaches_the_call_behind_each_rating_after_parameters_are_reverted(tmp_path, fake, api_env):
    from judgekit.judges.export import calls_table, ratings_with_calls

    write_items(tmp_path, labelled_items(3))
    store = str(tmp_path / "s.db")
    for temperature in (0.0, 1.0, 0.0):  # the last run is answered from the cache: no call
        panel = write_panel(tmp_path, [{"id": "gpt", "model": "openai:gpt-4o-mini", "temperature": temperature,
                                        "max_tokens": 50 if temperature else 60}])
        assert invoke(["judge", str(panel), "--store", store]).exit_code == 0
    assert fake.stats.requests == 6
    with Store(store) as s:
        rated = ratings_with_calls(s)
        calls = calls_table(s).set_index("key")
        keys = s.rating_call_keys().set_index("item_id")["call_key"]
    # every rating carries the usage of the call it came from (the temperature-0 call), not the
    # latest call of the judge for that item (the temperature-1 one)
    first_run = calls.sort_values("created_at").groupby("item_id").head(1)
    assert set(keys) == set(first_run.index)
    for r in rated.itertuples():
        c = calls.loc[keys[r.item_id]]
        assert (r.input_tokens, r.output_tokens) == (c.input_tokens, c.output_tokens)
        assert r.cost_usd == pytest.approx(c.cost_usd)


def test_dry_run_needs_no_api_key_but_a_real_run_does(tmp_path, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    write_items(tmp_path, labelled_items(4))
    panel = write_panel(tmp_path, [{"id": "haiku", "model": "anthropic:claude-haiku-4-5"},
                                   {"id": "gpt", "model": "openai:gpt-4o-mini"}])
    store = str(tmp_path / "s.db")
    res = invoke(["judge", str(panel), "--store", store, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "8 calls to make" in res.output and "dry-run-no-key" not in res.output
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", store])
    one_sentence_error(res, "ANTHROPIC_API_KEY")
