"""Concurrent `judgekit judge` runs on one store split the work: pending calls
are claimed (leases in the store), released on exit, and a crashed run's claims are retried."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.judges.jobs import Job
from judgekit.judges.lease import ClaimedJobs, RunLease
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.calls import call_rows, claim, new_owner, owner_gone, release_all
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer, default_script

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import finish, labelled_items, write_items, write_panel  # noqa: E402

#: an owner id of a run on another machine (its pid cannot be checked: only expiry frees it)
FOREIGN = "otherbox:4242:feedc0ffee00"


def judge_proc(panel: Path, store: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", str(panel), "--store", str(store),
         "--no-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )


def leases(store: Path) -> list[tuple[str, str, float]]:
    with sqlite3.connect(store, timeout=10) as conn:
        return conn.execute("SELECT key, owner, expires_at FROM call_leases").fetchall()


def sent_users(fake: FakeServer) -> Counter[str]:
    """How many times each distinct judge request (its user message) reached the provider."""
    return Counter(r.user for r in fake.requests)


def test_two_concurrent_runs_send_each_call_once_and_store_every_rating_once(tmp_path):
    n = 300
    with FakeServer(latency=0.05) as fake:
        write_items(tmp_path, labelled_items(n))
        panel = write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 4}],
            aggregate=None)
        store = tmp_path / "s.db"
        procs = [judge_proc(panel, store), judge_proc(panel, store)]
        results = [finish(p) for p in procs]
        for code, _out, err in results:
            assert code == 0, err
            assert "Traceback" not in err
        # every distinct call made once: no request twice, none missing
        assert fake.stats.requests == n
        sent = sent_users(fake)
        assert len(sent) == n and set(sent.values()) == {1}
    summaries = [json.loads(out)["judges"][0] for _, out, _ in results]
    # each run counts only its own calls; together they answered everything once
    assert sum(s["ok"] for s in summaries) == n
    assert sum(s["attempts"] for s in summaries) == n
    assert all(s["ok"] > 0 for s in summaries), [s["ok"] for s in summaries]  # the work was split
    for s in summaries:
        assert s["ok"] + s["other_run"] + s["left_to_other_run"] + s["cached"] == n
        assert s["error"] == s["not_attempted"] == 0
    with Store(store) as s:
        calls = call_rows(s)
        assert len(calls) == n and {c.status for c in calls} == {"ok"}
        assert {c.attempts for c in calls} == {1}
        df = s.ratings(rater_ids=["llm"])
        assert len(df) == n and df["item_id"].is_unique and (df["status"] == "ok").all()
        truth = {r["item_id"]: r["truth"] for r in labelled_items(n)}
        assert dict(zip(df["item_id"], df["label"], strict=True)) == truth
        assert s.rating_history().empty  # nothing written twice over another run's rating
    assert leases(store) == []  # both runs released their claims at exit


def test_a_killed_runs_leases_expire_and_the_next_run_answers_the_rest_once(tmp_path):
    n, concurrency, lease_s = 240, 4, 1.0
    with FakeServer(latency=0.04) as fake:
        write_items(tmp_path, labelled_items(n))
        panel = write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m",
             "concurrency": concurrency}], aggregate=None)
        store = tmp_path / "s.db"
        env = {"JUDGEKIT_LEASE_S": str(lease_s)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "judgekit", "judge", str(panel), "--store", str(store),
             "--no-progress"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
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
            killed_at = time.time()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        time.sleep(0.2)  # let the server finish answering requests the dead client sent
        sent_before = fake.stats.requests
        left = leases(store)
        # the dead run's claims are still in the store, each lasting the tiny lease at most
        assert left, "the killed run left no claims"
        owners = {owner for _, owner, _ in left}
        assert len(owners) == 1 and f":{proc.pid}:" in next(iter(owners))
        assert all(exp <= killed_at + lease_s + 0.5 for _, _, exp in left)
        # on this machine its process is known to be gone (an immediate rerun takes them over,
        # as tests/cli/test_panel_cli.py's kill -9 test shows); a crash on another machine sharing the
        # store is freed only by the expiry, which is what this test waits for
        assert owner_gone(next(iter(owners)))
        with sqlite3.connect(store) as conn:
            conn.execute("UPDATE call_leases SET owner = ?", (FOREIGN,))
            stored = conn.execute("SELECT COUNT(*) FROM calls WHERE status = 'ok'").fetchone()[0]
        assert 40 <= stored < n
        time.sleep(max(0.0, max(exp for _, _, exp in left) - time.time()) + 0.1)
        res = CliRunner().invoke(main_cli(), ["judge", str(panel), "--store", str(store), "--json"],
                                 env=env, catch_exceptions=False)
        assert res.exit_code == 0, res.output
        summary = json.loads(res.output)["judges"][0]
        assert summary["left_to_other_run"] == 0 and summary["ok"] == n - stored
        assert fake.stats.requests - sent_before == n - stored  # each remaining call once
        with Store(store) as s:
            df = s.ratings(rater_ids=["llm"])
            assert len(df) == n and (df["status"] == "ok").all()
            assert len(call_rows(s)) == n
    assert leases(store) == []


def main_cli():
    from judgekit.cli import main

    return main


def test_calls_a_live_run_holds_are_left_to_it_and_answered_after_its_claims_expire(tmp_path, fake):
    n = 12
    write_items(tmp_path, labelled_items(n))
    panel_path = write_panel(tmp_path, [
        {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 2}],
        aggregate=None)
    panel = load_panel(panel_path)
    store_path = tmp_path / "s.db"
    with Store(store_path) as store:
        # another run (on another machine) has claimed the first 5 calls and is answering them
        keys = _llm_keys(panel, store)
        got = claim(store, FOREIGN, keys[:5], seconds=60)
        assert got.claimed == keys[:5]
    res = CliRunner().invoke(main_cli(), ["judge", str(panel_path), "--store", str(store_path)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "5 calls are being answered by another judgekit run (pid 4242 on otherbox)" in res.output
    assert fake.stats.requests == n - 5
    assert {r.user for r in fake.requests}.isdisjoint(_users(panel, range(5)))
    with Store(store_path) as store:
        assert len(store.ratings(rater_ids=["llm"])) == n - 5
        assert [o for _, o, _ in leases(store_path)] == [FOREIGN] * 5  # theirs stay
        # a rerun while they are live sends nothing; once they expire it answers them, once each
        summary = run_panel(panel, store)
        assert summary.judges[0].left_to_other_run == 5 and fake.stats.requests == n - 5
        store.conn.execute("UPDATE call_leases SET expires_at = ?", (time.time() - 1,))
        summary = run_panel(panel, store)
        j = summary.judges[0]
        assert (j.ok, j.cached, j.left_to_other_run) == (5, n - 5, 0)
        assert fake.stats.requests == n and set(sent_users(fake).values()) == {1}
        assert len(store.ratings(rater_ids=["llm"])) == n
    assert leases(store_path) == []


def _llm_keys(panel, store) -> list[str]:
    """The call keys of the panel's judge, in item order (what the run will claim)."""
    from judgekit.judges.base import JudgeContext, build_judge, spec_params
    from judgekit.judges.jobs import Items
    from judgekit.judges.plan import judge_jobs
    from judgekit.rubric.prompt import answer_schema, system_prompt

    entry = panel.judges[0]
    ctx = JudgeContext(rubric=panel.rubric, system=system_prompt(panel.rubric),
                       schema=answer_schema(panel.rubric), base_dir=str(panel.base_dir))
    params = spec_params(entry, build_judge(entry, ctx))
    return [j.key for j in judge_jobs(params, panel.rubric, entry, Items(panel.items), by_item_id=False)]


def _users(panel, rows) -> set[str]:
    from judgekit.judges.jobs import Items

    items = Items(panel.items)
    return {items.request(i, 0).user for i in rows}


def test_claims_are_renewed_while_the_run_is_alive(tmp_path):
    """A lease shorter than one call: the heartbeat keeps every claim of the run live."""
    store_path = tmp_path / "s.db"
    margins: list[float] = []
    running = threading.Event()

    def watch() -> None:  # how long the soonest claim has left, sampled while the run goes on
        while not running.is_set():
            time.sleep(0.02)
        with sqlite3.connect(store_path, timeout=10) as conn:
            while running.is_set():
                soonest = conn.execute("SELECT MIN(expires_at) FROM call_leases").fetchone()[0]
                if soonest is not None:
                    margins.append(soonest - time.time())
                time.sleep(0.03)

    def script(req):
        running.set()
        return default_script(req)

    watcher = threading.Thread(target=watch)
    with FakeServer(script, latency=0.6) as fake:
        write_items(tmp_path, labelled_items(4))
        panel = load_panel(write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 1}],
            aggregate=None))
        watcher.start()
        try:
            with Store(store_path) as store:
                summary = run_panel(panel, store, env={"JUDGEKIT_LEASE_S": "0.4"})
        finally:
            running.clear()
            watcher.join(timeout=10)
    assert summary.judges[0].ok == 4 and len(margins) > 20
    assert min(margins) > 0, margins  # no claim of the live run ever ran out
    assert leases(store_path) == []


class _Interrupt:
    """A progress sink that stops the run after ``after`` answers (as Ctrl-C would, or a bug)."""

    def __init__(self, after: int, exc: BaseException) -> None:
        self.after, self.exc, self.seen = after, exc, 0

    def start(self, total: int, cached: int) -> None: ...

    def advance(self, status: str, tokens: int, cost: float) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise self.exc

    def stop(self) -> None: ...


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), RuntimeError("a bug")])
def test_claims_are_released_when_a_run_is_interrupted_or_fails(tmp_path, exc):
    with FakeServer(latency=0.02) as fake:
        write_items(tmp_path, labelled_items(40))
        panel = load_panel(write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 2}],
            aggregate=None))
        with Store(tmp_path / "s.db") as store:
            if isinstance(exc, KeyboardInterrupt):
                summary = run_panel(panel, store, progress=_Interrupt(5, exc))
                assert summary.interrupted
            else:
                with pytest.raises(RuntimeError):
                    run_panel(panel, store, progress=_Interrupt(5, exc))
            assert leases(tmp_path / "s.db") == []
            # a run of another process right after needs no wait: everything left is claimable
            other = new_owner()
            try:
                answered = store.conn.execute(
                    "SELECT COUNT(*) FROM calls WHERE status = 'ok'").fetchone()[0]
                got = claim(store, other, _llm_keys(panel, store), seconds=60)
                assert len(got.claimed) == 40 - answered and not got.held
            finally:
                release_all(store, other)


def test_a_frozen_run_does_not_send_calls_another_run_took_over(tmp_path):
    """A run frozen past its leases (suspended, blocked) checks them again before sending."""
    with Store(tmp_path / "s.db") as store:
        lease = RunLease(store, seconds=5)
        run = _fake_run([Job(i, 0, f"k{i:03d}") for i in range(10)])
        jobs = ClaimedJobs(run, lease, store)
        first = jobs.next()
        assert first is not None and first.key == "k000"
        assert len(jobs.ready) == 9
        # frozen: the leases ran out and another run claimed four of the waiting calls
        store.conn.execute("UPDATE call_leases SET expires_at = ?", (time.time() - 1,))
        taken = ["k001", "k002", "k003", "k004"]
        assert claim(store, FOREIGN, taken, seconds=60).claimed == taken
        lease.renewed_at -= 10
        rest = []
        while (job := jobs.next()) is not None:
            rest.append(job.key)
        assert rest == ["k005", "k006", "k007", "k008", "k009"]
        assert set(jobs.elsewhere.held) == set(taken)
        lease.release_all()


def _fake_run(jobs: list[Job]):
    from types import SimpleNamespace

    from judgekit.judges.summary import JudgeSummary

    entry = SimpleNamespace(concurrency=2, id="llm")
    return SimpleNamespace(jobs=jobs, entry=entry, stopped=False, followers={},
                           summary=JudgeSummary(id="llm", spec="x"))


def test_a_bad_lease_duration_is_one_sentence_and_nothing_is_sent(tmp_path, fake):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m"}])
    for bad in ("abc", "0", "-3", "nan", "inf"):
        res = CliRunner().invoke(main_cli(), ["judge", str(panel), "--store", str(tmp_path / "s.db")],
                                 env={"JUDGEKIT_LEASE_S": bad})
        line = one_sentence_error(res)
        assert line.startswith(f"error: JUDGEKIT_LEASE_S={bad!r} is not a number of seconds")
    assert fake.stats.requests == 0
    with Store(tmp_path / "s.db") as s:
        assert s.ratings().empty


# ----------------------------------------------------------------------------- batch mode
def test_two_concurrent_batch_runs_submit_each_call_once(tmp_path, fake):
    n = 60
    write_items(tmp_path, labelled_items(n))
    fake.batch_polls = 3
    panel = write_panel(tmp_path, [
        {"id": "j", "model": "anthropic:claude-haiku-4-5", "batch": True, "batch_poll_s": 0.2}],
        aggregate=None)
    store = tmp_path / "s.db"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-key", "ANTHROPIC_BASE_URL": fake.url}
    procs = [judge_proc(panel, store, env), judge_proc(panel, store, env)]
    results = [finish(p) for p in procs]
    for code, _, err in results:
        assert code == 0, err
    assert fake.stats.batch_requests == n  # no key submitted twice
    assert fake.stats.requests == 0
    summaries = [json.loads(out)["judges"][0] for _, out, _ in results]
    assert sum(s["ok"] for s in summaries) == n
    for s in summaries:
        assert s["ok"] + s["other_run"] + s["left_to_other_run"] + s["cached"] == n
    with Store(store) as s:
        df = s.ratings(rater_ids=["j"])
        assert len(df) == n and (df["status"] == "ok").all()
    assert leases(store) == []


def test_a_batch_another_live_run_collects_is_left_to_it(tmp_path, fake, api_env):
    write_items(tmp_path, labelled_items(6))
    fake.batch_polls = 100  # the batch does not end while the first run looks
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": "anthropic:claude-haiku-4-5", "batch": True, "batch_poll_s": 0.01}],
        aggregate=None))
    with Store(tmp_path / "s.db") as store:
        first = run_panel(panel, store, wait=False)
        assert first.judges[0].batches == 1 and fake.stats.batches == 1
        (bid,) = fake.batches
        # another run (elsewhere) is collecting that batch now
        assert claim(store, FOREIGN, [f"batch:{bid}"], seconds=60).claimed
        polls = fake.batches[bid]["polls"]
        second = run_panel(panel, store, wait=False)
        j = second.judges[0]
        assert (j.batches, j.batch_waiting, j.left_to_other_run) == (0, 0, 6)
        assert fake.batches[bid]["polls"] == polls  # not polled: it is the other run's
        assert any("6 calls are being answered by another judgekit run" in x for x in second.lines())
        # and its keys are not submitted again while the batch is open
        store.conn.execute("DELETE FROM call_leases")
        fake.batch_polls = 0
        third = run_panel(panel, store)
        assert third.judges[0].ok == 6 and fake.stats.batches == 1 and fake.stats.batch_requests == 6


def test_calls_another_run_answers_meanwhile_are_written_from_its_answers_not_sent(tmp_path):
    """The other run (another judge id, same model) answers the calls it held while this run
    works: this run's ratings for them (and for an item with the same text) come from the
    stored answers, with no call."""
    from judgekit.store.calls import CallRow, release, write_calls

    rows = labelled_items(10)
    rows.append({**rows[0], "item_id": "same-text-as-it000"})  # shares it000's call
    write_items(tmp_path, rows)
    store_path = tmp_path / "s.db"
    state: dict[str, object] = {}

    def script(req):
        if "held" in state and "answered" not in state:  # the other run answers its calls now
            with Store(store_path) as other:
                write_calls(other, state["held"])  # type: ignore[arg-type]
                release(other, FOREIGN, [c.key for c in state["held"]])  # type: ignore[attr-defined]
            state["answered"] = True
        return default_script(req)

    with FakeServer(script) as fake:
        panel = load_panel(write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 1}],
            aggregate=None))
        with Store(store_path) as store:
            keys = _llm_keys(panel, store)
            assert keys[10] == keys[0]
            held = [0, 1, 2]
            assert claim(store, FOREIGN, [keys[i] for i in held], seconds=60).claimed
            rubric = panel.rubric
            state["held"] = [
                CallRow(key=keys[i], judge_id="other-id", spec="x", params="{}", rubric=rubric.id,
                        rubric_hash=rubric.hash, item_id=rows[i]["item_id"], item_hash="h",
                        trial=0, raw="{}", status="ok", label=rows[i]["truth"],
                        rationale="from the other run", error=None, created_at=time.time())
                for i in held
            ]
            summary = run_panel(panel, store)
        j = summary.judges[0]
        assert (j.ok, j.other_run, j.left_to_other_run, j.cached) == (7, 4, 0, 0)
        assert fake.stats.requests == 7
        assert not {r.user for r in fake.requests} & _users(panel, held)
        assert "4 answered meanwhile by another judgekit run" in "\n".join(summary.lines())
        with Store(store_path) as store:
            df = store.ratings(rater_ids=["llm"]).set_index("item_id")
            assert len(df) == 11
            truth = {r["item_id"]: r["truth"] for r in rows}
            assert df["label"].to_dict() == truth
            for iid in ("it000", "it001", "it002", "same-text-as-it000"):
                assert df.loc[iid, "rationale"] == "from the other run"
