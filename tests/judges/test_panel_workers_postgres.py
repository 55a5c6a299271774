"""Many workers, one panel: `judgekit judge PANEL` started in four processes against one
PostgreSQL study shares the work through the store's leases — every item rated, each call sent
once, a killed worker's items finished by the others, and the judge's ratings (the digest a
verdict records) the same as the panel run alone on SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.store.digests import judge_ratings_hash
from judgekit.testing.fakeserver import FakeServer

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import finish, labelled_items, write_items, write_panel  # noqa: E402

WORKERS = 4


def _worker(panel: Path, store: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", str(panel), "--store", store, "--no-progress", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def _panel(folder: Path, fake: FakeServer, n: int) -> Path:
    write_items(folder, labelled_items(n))
    return write_panel(folder, [{"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m",
                                 "concurrency": 4}], aggregate=None)


def _alone_on_sqlite(folder: Path, n: int) -> tuple[dict[str, str], str]:
    folder.mkdir()
    with FakeServer(latency=0.0) as fake:
        code, _out, err = finish(_worker(_panel(folder, fake, n), str(folder / "alone.db")), timeout=180)
        assert code == 0, err
    with Store(folder / "alone.db") as store:
        df = store.ratings(rater_ids=["llm"])
        return (dict(zip(df["item_id"], df["label"], strict=True)),
                judge_ratings_hash(store, load_rubric("refusal"), "llm"))


def _rated(url: str) -> tuple[dict[str, str], str, int]:
    with Store(url) as store:
        df = store.ratings(rater_ids=["llm"])
        assert df["item_id"].is_unique and (df["status"] == "ok").all()
        (leases,) = store.conn.execute("SELECT COUNT(*) FROM call_leases").fetchone()
        return (dict(zip(df["item_id"], df["label"], strict=True)),
                judge_ratings_hash(store, load_rubric("refusal"), "llm"), leases)


def test_four_workers_on_one_postgres_study_send_each_call_once(tmp_path, pg_server):
    n = 240
    url = pg_server.new_database()
    Store(url).close()  # the schema, once, before the workers start
    with FakeServer(latency=0.03) as fake:
        panel = _panel(tmp_path, fake, n)
        results = [finish(p) for p in [_worker(panel, url) for _ in range(WORKERS)]]
        for code, _out, err in results:
            assert code == 0, err
        sent = Counter(r.user for r in fake.requests)
        assert fake.stats.requests == n and len(sent) == n and set(sent.values()) == {1}
    summaries = [json.loads(out)["judges"][0] for _, out, _ in results]
    assert sum(s["ok"] for s in summaries) == n  # each worker counts its own calls
    assert sum(s["ok"] > 0 for s in summaries) >= 2, [s["ok"] for s in summaries]  # shared
    labels, digest, leases = _rated(url)
    assert leases == 0  # every worker released its claims
    alone_labels, alone_digest = _alone_on_sqlite(tmp_path / "alone", n)
    assert labels == alone_labels and len(labels) == n
    assert digest == alone_digest


def test_a_killed_workers_items_are_finished_by_the_others(tmp_path, pg_server):
    n = 240
    url = pg_server.new_database()
    Store(url).close()
    with FakeServer(latency=0.05) as fake:
        panel = _panel(tmp_path, fake, n)
        procs = [_worker(panel, url) for _ in range(WORKERS)]
        victim = procs[0]
        deadline = time.monotonic() + 120
        while fake.stats.requests < 30 and time.monotonic() < deadline:
            time.sleep(0.02)
        victim.send_signal(signal.SIGKILL)  # by the PID we started
        victim.wait(timeout=30)
        results = [finish(p) for p in procs[1:]]
        for code, _out, err in results:
            assert code == 0, err
        sent = Counter(r.user for r in fake.requests)
    assert len(sent) == n  # every item reached the provider
    # only what the killed worker had not stored can have been sent twice: its calls in flight
    # (its concurrency, 4) and the answers waiting while its previous commit ran (at most as many)
    assert sum(v - 1 for v in sent.values()) <= 2 * 4
    labels, _digest, _leases = _rated(url)
    assert len(labels) == n
    assert labels == {r["item_id"]: r["truth"] for r in labelled_items(n)}
