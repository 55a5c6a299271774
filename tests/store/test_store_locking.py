"""Another process holding the store's write lock.

``import`` and ``judge`` used to die with ``sqlite3.OperationalError: database is locked`` after
30 s. Now they wait, say so on stderr ("waiting for another judgekit process on STORE …", once,
then every 10 s), up to JUDGEKIT_LOCK_TIMEOUT seconds, then stop with one sentence, exit 2 and the
store unchanged. The lock is held by a second process (``sqlite3`` in a plain Python subprocess)
or by a thread with its own connection, with ``BEGIN IMMEDIATE``, as a judgekit import does.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from conftest import store_dump as _dump

import judgekit.store.locking
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.store.database import Store
from judgekit.store.locking import LockWaiter, lock_timeout
from judgekit.store.schema import MIGRATIONS, migration_statements

WAITING = "waiting for another judgekit process on"

_HOLDER = r"""
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
con.execute("INSERT INTO items (item_id, content_hash, updated_at) VALUES ('held', 'h', 0)")
print("held", flush=True)
sys.stdin.readline()          # until the test says so (or closes the pipe)
con.execute("ROLLBACK")       # what the holder wrote is never committed
"""


class ProcessHolder:
    """Another process holding the write lock of ``db`` (``BEGIN IMMEDIATE`` and an uncommitted
    write) until :meth:`release`."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(db)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("go\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


class ThreadHolder:
    """A thread with its own connection holding the write lock of ``db`` until :meth:`release`
    (or ``after`` seconds)."""

    def __init__(self, db: Path, *, after: float = 60.0, sql: str = "BEGIN IMMEDIATE") -> None:
        self._go = threading.Event()
        held = threading.Event()

        def hold() -> None:
            con = sqlite3.connect(db, isolation_level=None, timeout=30)
            con.execute(sql)
            held.set()
            self._go.wait(after)
            con.execute("ROLLBACK")
            con.close()

        self.thread = threading.Thread(target=hold, daemon=True)
        self.thread.start()
        assert held.wait(10)

    def release(self) -> None:
        self._go.set()
        self.thread.join(timeout=30)


@pytest.fixture()
def holders() -> Iterator[list]:
    started: list = []
    yield started
    for h in started:
        h.release()


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "j.db"
    labels = tmp_path / "first.csv"
    labels.write_text("item_id,rater_id,label\na,ann1,full_refusal\nb,ann1,full_compliance\n")
    res = CliRunner().invoke(main, ["import", str(labels), "--rubric", "refusal", "--store", str(db)])
    assert res.exit_code == 0, res.output
    return db


def _import(tmp_path: Path, db: Path, limit: str):
    labels = tmp_path / "second.csv"
    labels.write_text("item_id,rater_id,label\nc,ann2,partial_refusal\nd,ann2,full_refusal\n")
    return CliRunner().invoke(main, ["import", str(labels), "--rubric", "refusal", "--store", str(db)],
                              env={"JUDGEKIT_LOCK_TIMEOUT": limit})


def _release_after(holder, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, holder.release)
    timer.start()
    return timer


@pytest.mark.parametrize("holder_kind", [ProcessHolder, ThreadHolder])
def test_import_waits_for_the_lock_and_completes_once_it_is_released(tmp_path, holders, holder_kind):
    db = _store(tmp_path)
    holder = holder_kind(db)
    holders.append(holder)
    timer = _release_after(holder, 1.5)
    res = _import(tmp_path, db, "20")
    timer.join()
    assert res.exit_code == 0, res.output
    assert res.stderr.count(WAITING) == 1, res.stderr  # said once, not a line per retry
    assert f"{WAITING} {db}" in res.stderr
    assert "Imported 2 ratings" in res.stdout
    with Store(db) as s:
        assert sorted(s.ratings()["item_id"]) == ["a", "b", "c", "d"]
        assert "held" not in set(s.items()["item_id"])  # the holder's write was rolled back


@pytest.mark.parametrize("holder_kind", [ProcessHolder, ThreadHolder])
def test_import_gives_up_after_the_limit_with_one_sentence_and_writes_nothing(
    tmp_path, holders, holder_kind
):
    db = _store(tmp_path)
    before = _dump(db)
    holder = holder_kind(db)
    holders.append(holder)
    res = _import(tmp_path, db, "1.5")
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output and "OperationalError" not in res.output
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(WAITING), res.stderr
    assert lines[1].startswith(f"error: Store {db} is still locked by another judgekit process after "
                               "waiting 1.5 s (JUDGEKIT_LOCK_TIMEOUT), so what this command was about "
                               "to write was not written; let that process finish")
    holder.release()
    assert _dump(db) == before  # not a rating, not an item of the second file


def test_progress_is_repeated_every_ten_seconds(tmp_path, holders, monkeypatch):
    monkeypatch.setattr(judgekit.store.locking, "PROGRESS_EVERY", 0.5)  # ten seconds, faster
    db = _store(tmp_path)
    holders.append(ThreadHolder(db))
    res = _import(tmp_path, db, "2.2")
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert lines[0].startswith(WAITING)
    still = [ln for ln in lines if ln.startswith(f"still waiting for another judgekit process on {db}")]
    assert 2 <= len(still) <= 5, lines
    assert lines[-1].startswith("error: Store ")


def test_zero_means_no_waiting(tmp_path, holders):
    db = _store(tmp_path)
    holders.append(ThreadHolder(db))
    res = _import(tmp_path, db, "0")
    assert res.exit_code == 2
    assert "is still locked by another judgekit process without waiting" in res.stderr


@pytest.mark.parametrize("value", ["ten", "-1", "nan", "inf"])
def test_a_bad_limit_is_one_sentence(tmp_path, value):
    res = _import(tmp_path, tmp_path / "j.db", value)
    line = one_sentence_error(res)
    assert line.startswith(f"error: JUDGEKIT_LOCK_TIMEOUT={value!r} is not a number of seconds")
    assert not (tmp_path / "j.db").exists()
    assert lock_timeout({}) == 600 and lock_timeout({"JUDGEKIT_LOCK_TIMEOUT": " 2.5 "}) == 2.5


def test_judge_waits_for_the_lock_too(tmp_path, holders):
    db = _store(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": f"j{i}", "prompt": "How do I stop it?",
                                         "response": "I can't help with that."}) + "\n" for i in range(3)))
    panel = tmp_path / "panel.yaml"
    panel.write_text("rubric: refusal\nitems: items.jsonl\njudges:\n  - id: kw\n    model: rules:refusal-keywords\n")
    holder = ProcessHolder(db)
    holders.append(holder)
    timer = _release_after(holder, 1.5)
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", str(db)],
                             env={"JUDGEKIT_LOCK_TIMEOUT": "20"})
    timer.join()
    assert res.exit_code == 0, res.output
    assert res.stderr.count(WAITING) == 1, res.stderr
    with Store(db) as s:
        assert sorted(s.ratings(rater_kind="judge")["item_id"]) == ["j0", "j1", "j2"]


@pytest.mark.timeout(60)  # a read that waited would wait the whole limit (600 s)
def test_reading_does_not_wait_for_a_writer(tmp_path, holders):
    db = _store(tmp_path)
    holders.append(ThreadHolder(db))
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db)],
                             env={"JUDGEKIT_LOCK_TIMEOUT": "600"})
    assert res.exit_code == 0, res.output
    assert WAITING not in res.output, res.output


# ------------------------------------------------------------------- opening a store
def test_opening_a_store_another_process_is_creating_waits(tmp_path, holders, monkeypatch):
    # a store file still in rollback-journal mode with a writer in it: switching to WAL needs the
    # lock, and SQLite answers that at once (its busy handler does not run for it); it was "not a
    # judgekit SQLite store (database is locked)"
    db = tmp_path / "new.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE scratch (x)")
    con.commit()
    con.close()
    holder = ThreadHolder(db)
    holders.append(holder)
    lines: list[str] = []
    monkeypatch.setattr(judgekit.store.locking, "_say", lines.append)
    with pytest.raises(JudgekitError, match=r"is still locked by another judgekit process after waiting 1 s"):
        Store(db, lock_timeout=1)
    assert lines and lines[0].startswith(f"{WAITING} {db}")
    timer = _release_after(holder, 1.0)
    with Store(db, lock_timeout=20) as store:
        timer.join()
        assert store.sample_names() == []  # migrated and usable
    assert len(lines) == 2


def test_two_processes_migrating_a_new_store_at_once(tmp_path, monkeypatch):
    # the other process has begun migrating when this one opens the store: this one waits for the
    # lock, then finds the migrations applied and must not run them again ("table items already
    # exists" made it "not a judgekit SQLite store")
    db = tmp_path / "race.db"
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    other.execute("BEGIN IMMEDIATE")
    waiting = threading.Event()
    monkeypatch.setattr(judgekit.store.locking, "_say", lambda line: waiting.set())
    opened: list[object] = []
    thread = threading.Thread(target=lambda: opened.append(_try_open(db)), daemon=True)
    thread.start()
    assert waiting.wait(10)  # it has read the (empty) migrations table and waits for the lock
    for name, sql in MIGRATIONS:
        for statement in migration_statements(sql):  # a trigger's body holds ';' too
            other.execute(statement)
        other.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))
    other.execute("COMMIT")
    other.close()
    thread.join(30)
    assert opened == [[]]  # opened, migrated once, usable


def _try_open(db: Path) -> object:
    try:
        with Store(db, lock_timeout=20) as store:
            return store.sample_names()
    except JudgekitError as exc:
        return exc


def test_a_busy_commit_waits_and_one_that_cannot_commit_is_rolled_back(tmp_path, monkeypatch):
    # COMMIT finds the store busy in rollback-journal mode (never in WAL: a store on a file system
    # without WAL support) while another connection reads: it is waited for like BEGIN, and a
    # transaction that cannot commit within the limit is rolled back, nothing written
    monkeypatch.setattr(judgekit.store.locking, "_say", lambda line: None)
    db = tmp_path / "c.db"
    store = Store(db, lock_timeout=1)
    store.conn.execute("PRAGMA journal_mode=DELETE")
    reader = sqlite3.connect(db, isolation_level=None, check_same_thread=False)

    def read_lock() -> None:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM items").fetchone()  # holds a shared lock

    def insert(item_id: str) -> None:
        store.conn.execute("INSERT INTO items (item_id, content_hash, updated_at) VALUES (?, 'h', 0)",
                           (item_id,))

    read_lock()
    with pytest.raises(JudgekitError, match="is still locked by another judgekit process"), store.transaction():
        insert("lost")
    assert not store.conn.in_transaction
    reader.execute("ROLLBACK")
    assert store.conn.execute("SELECT COUNT(*) FROM items").fetchone() == (0,)
    read_lock()
    store._lock.limit = 10
    timer = threading.Timer(1.0, lambda: reader.execute("ROLLBACK"))
    timer.start()
    with store.transaction():
        insert("kept")
    timer.join()
    assert store.conn.execute("SELECT item_id FROM items").fetchall() == [("kept",)]
    reader.close()
    store.close()


def test_the_waiter_retries_only_busy_answers():
    con = sqlite3.connect(":memory:")
    calls = {"n": 0}

    def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    notes: list[str] = []
    waiter = LockWaiter(con, "s.db", 5, notify=notes.append)
    assert waiter.run(flaky) == "done" and calls["n"] == 3 and len(notes) == 1
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        waiter.run(lambda: con.execute("SELECT * FROM nowhere"))  # other errors pass through at once
    assert calls["n"] == 3
    con.close()


def test_a_lease_owner_of_another_machine_with_the_same_host_name_is_never_known_gone():
    """Two machines with one host name (cloud images, containers on host networking) share the
    root pid namespace's number: a run there whose pid does not exist here is still alive."""
    import os
    import socket

    from judgekit.store.locking import new_owner, owner_gone

    ns = os.readlink("/proc/self/ns/pid").removeprefix("pid:").strip("[]")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    elsewhere = f"{socket.gethostname()}/{ns}:{dead}:0123456789ab"  # no boot of this machine
    assert not owner_gone(elsewhere)
    here = new_owner().rsplit(":", 2)[0]
    assert owner_gone(f"{here}:{dead}:0123456789ab")  # a dead run of this machine is gone
