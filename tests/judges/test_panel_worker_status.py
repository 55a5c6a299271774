"""Named workers and the whole run's progress: `judgekit judge PANEL --worker NAME` names a run's
leases, `judgekit judge PANEL --status` reads how far the whole run is (answered, pending, leased
by each live worker) from the store without sending anything — on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from judgekit.judges.panel import load_panel
from judgekit.judges.run_progress import progress_of, run_progress
from judgekit.store.calls import (
    CallRow,
    claim,
    describe_owner,
    new_owner,
    owner_gone,
    owner_name,
    write_calls,
)
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer
from judgekit.testing.script import default_script

pytest.register_assert_rewrite("panel_fixtures")

from conftest import one_sentence_error  # noqa: E402
from panel_fixtures import finish, labelled_items, write_items, write_panel  # noqa: E402


def _judge(panel: Path, store: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", str(panel), "--store", store, "--no-progress", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _status(panel: Path, store: str) -> dict:
    code, out, err = finish(_judge(panel, store, "--status", "--json"), timeout=120)
    assert code == 0, err
    return json.loads(out)


def _call(key: str) -> CallRow:
    return CallRow(key=key, judge_id="j", spec="s", params="{}", rubric="refusal@1", rubric_hash="h",
                   item_id=key, item_hash=key, trial=0, raw="{}", status="ok", label="full_refusal",
                   rationale="", error=None)


def test_a_worker_name_is_part_of_its_owner_id_and_said_in_its_description():
    owner = new_owner("gpu:3 node")
    assert owner_name(owner) == "gpu:3 node"
    assert describe_owner(owner) == f"gpu:3 node (pid {os.getpid()} on {describe_owner(new_owner()).split(' on ')[1]})"
    assert not owner_gone(owner)  # the pid is still read from the id: this run is alive
    assert owner_name(new_owner()) == ""


def test_progress_counts_answered_leased_by_each_live_worker_and_pending(store):
    keys = [f"k{i}" for i in range(10)]
    write_calls(store, [_call(k) for k in keys[:3]])  # answered
    error = _call("k3")
    error.status, error.label = "error", None
    write_calls(store, [error])  # an error is asked again: pending
    w1, w2 = new_owner("w1"), new_owner("w2")
    claim(store, w1, keys[4:6], seconds=60)
    claim(store, w2, keys[6:7], seconds=60)
    claim(store, new_owner("late"), keys[7:8], seconds=60, now=time.time() - 120)  # expired
    with subprocess.Popen([sys.executable, "-c", "pass"]) as gone:
        gone.wait()
    dead = f"{new_owner().rsplit(':', 2)[0]}:{gone.pid}:abc~dead"  # a run of this machine that ended
    claim(store, dead, keys[8:9], seconds=60)
    p = progress_of(store, {"j": keys + keys[:2]})  # a key listed twice is one call
    assert (p.calls, p.done, p.leased, p.pending) == (10, 3, 3, 4)
    assert [(w.name, w.leased) for w in p.workers] == [("w1", 2), ("w2", 1)]
    assert p.as_dict()["workers"][0]["worker"].startswith("w1 (pid ")


def test_bad_worker_name_and_status_beside_a_run_option_are_refused(tmp_path):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}], aggregate=None)
    db = str(tmp_path / "s.db")
    code, out, err = finish(_judge(panel, db, "--worker", "a\tb"))
    one_sentence_error((code, out + err), "--worker", "printable")
    assert not Path(db).exists()
    code, out, err = finish(_judge(panel, db, "--status"))
    one_sentence_error((code, out + err), "does not exist")
    code, out, err = finish(_judge(panel, db, "--status", "--dry-run"))
    one_sentence_error((code, out + err), "--status only reads the store")


def test_two_named_workers_share_a_panel_and_status_shows_each(tmp_path, store_target):
    n = 150
    gate = threading.Event()

    def held(req):  # the provider answers nothing until the status is taken
        gate.wait(60)
        return default_script(req)

    Store(store_target).close()  # the schema, once, before the workers start
    with FakeServer(held) as fake:
        write_items(tmp_path, labelled_items(n))
        panel = write_panel(tmp_path, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m",
                                        "concurrency": 4}], aggregate=None)
        try:
            procs = [_judge(panel, store_target, "--worker", name, "--json") for name in ("w-a", "w-b")]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with Store(store_target) as store:
                    if len(run_progress(load_panel(panel), store).workers) == 2:
                        break
                time.sleep(0.1)
            during = _status(panel, store_target)
        finally:
            gate.set()
        results = [finish(p) for p in procs]
        sent = Counter(r.user for r in fake.requests)
    for code, _out, err in results:
        assert code == 0, err
    assert {w["name"] for w in during["workers"]} == {"w-a", "w-b"}, during
    assert all(w["leased"] > 0 for w in during["workers"])
    assert during["calls"] == n and during["done"] + during["leased"] + during["pending"] == n
    assert during["leased"] == sum(w["leased"] for w in during["workers"])
    assert fake.stats.requests == n and len(sent) == n and set(sent.values()) == {1}  # none twice
    reports = [json.loads(out) for _, out, _ in results]
    assert [r["worker"] for r in reports] == ["w-a", "w-b"]
    assert sum(r["judges"][0]["ok"] for r in reports) == n  # each counts its own calls
    for r in reports:
        p = r["progress"]
        assert p["calls"] == n and p["done"] + p["leased"] + p["pending"] == n
    after = _status(panel, store_target)
    assert (after["calls"], after["done"], after["pending"], after["workers"]) == (n, n, 0, [])


def test_a_named_workers_summary_ends_with_the_whole_runs_progress(tmp_path):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}], aggregate=None)
    db = str(tmp_path / "s.db")
    code, out, err = finish(_judge(panel, db, "--worker", "node 7"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Worker node 7:"
    assert lines[-1] == "Whole run: 3 of 3 calls answered (100%), 0 being answered by 0 workers, 0 pending."
    code, out, err = finish(_judge(panel, db, "--status"))
    assert (code, out.splitlines()) == (0, [lines[-1]]), err
