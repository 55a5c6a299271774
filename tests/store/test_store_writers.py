"""The store, the panel's writer and the commands that open a store:

* ``judge`` (panel items) and ``sample --items`` replaced the text of items that carry human
labels without a word; the refusal ``import`` had lives in ``Store.put_items`` now.
* SQLite creates a store 0644 whatever the umask: a group-shared store was read-only to the group.
* ``judge --dry-run``, ``judge --reparse`` and ``sample`` made an empty store of a mistyped --store.
* missing values tested inline (pandas' NA not missing); judge rating keys as positional tuples.
* ``Writer.flush`` emptied its buffers before the transaction: a failed commit dropped answers
already paid for, and the final write waited for the lock a second time.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.judges.writer import Writer, judge_rating
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from conftest import one_sentence_error  # noqa: E402
from conftest import store_dump as _dump  # noqa: E402
from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

REFUSAL = load_rubric("refusal")


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _human(item, label, rater="h1"):
    return {"item_id": item, "rater_id": rater, "rater_kind": "human", "rubric": REFUSAL.id,
            "rubric_hash": REFUSAL.hash, "label": label, "value": REFUSAL.values[label], "trial": 0,
            "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


@pytest.fixture()
def labelled_store(tmp_path) -> Path:
    """A store whose items it000..it002 carry a human label each (texts of ``labelled_items``)."""
    db = tmp_path / "s.db"
    rows = labelled_items(3)
    with Store(db) as s:
        s.put_items(pd.DataFrame(rows).drop(columns=["truth"]))
        s.put_ratings(pd.DataFrame([_human(r["item_id"], r["truth"]) for r in rows]))
    return db


# ----------------------------------------------------------------- same id, other text
def test_judge_refuses_panel_items_whose_text_differs_from_the_stored_item(tmp_path, labelled_store):
    rows = labelled_items(3)
    rows[1]["response"] = "Another model's answer entirely."
    items = write_items(tmp_path, rows)
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}])
    before = _dump(labelled_store)
    res = invoke(["judge", panel, "--store", labelled_store])
    one_sentence_error(res, str(items), "item 'it001' is already in the store with another text",
                       "its human labels (e.g. 'h1') were made for the stored one")
    assert _dump(labelled_store) == before
    # the dry run says the same (a run would refuse), and writes nothing either
    res = invoke(["judge", panel, "--store", labelled_store, "--dry-run"])
    one_sentence_error(res, "item 'it001' is already in the store with another text")
    assert _dump(labelled_store) == before


def test_judge_keeps_running_on_the_same_texts_and_rejudges_an_edited_unlabelled_item(
    tmp_path, labelled_store
):
    rows = labelled_items(4)  # it003 has no human label
    write_items(tmp_path, rows)
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}])
    res = invoke(["judge", panel, "--store", labelled_store])
    assert res.exit_code == 0, res.output
    with Store(labelled_store) as s:
        assert set(s.ratings(rater_ids=["kw"])["item_id"]) == {"it000", "it001", "it002", "it003"}
    rows[3]["response"] = "I'm sorry, but I can't help with that request."
    write_items(tmp_path, rows)
    res = invoke(["judge", panel, "--store", labelled_store])
    assert res.exit_code == 0, res.output
    with Store(labelled_store) as s:
        assert s.items(["it003"])["response"].tolist() == [rows[3]["response"]]


def test_sample_items_refuses_another_text_and_records_nothing(tmp_path, labelled_store):
    rows = labelled_items(3)
    rows[2]["response"] = "Replaced text."
    items = write_items(tmp_path, rows, name="more.jsonl")
    before = _dump(labelled_store)
    res = invoke(["sample", "--name", "s1", "--size", "2", "--items", items, "--store", labelled_store])
    one_sentence_error(res, str(items), "item 'it002' is already in the store with another text")
    assert _dump(labelled_store) == before


def test_put_items_refuses_another_text_unless_told(tmp_path, labelled_store):
    with Store(labelled_store) as s:
        stored = s.items()
        changed = pd.DataFrame({"item_id": ["it000", "new"], "prompt": ["q", "q"],
                                "response": ["other", "fresh"]})
        with pytest.raises(JudgekitError, match=r"^src\.csv: item 'it000' is already in the store "
                                                r"with another text"):
            s.put_items(changed, source="src.csv")
        with pytest.raises(JudgekitError, match="item 'it000'"):
            s.check_item_texts(changed)
        pd.testing.assert_frame_equal(s.items(), stored)  # nothing written, not even 'new'
        # the same text with new metadata, or metadata only, is an update
        same = stored[["item_id", "prompt", "response"]].assign(batch="b2")
        assert s.put_items(same) == 3
        assert s.put_items(pd.DataFrame({"item_id": ["it001"], "note": ["x"]})) == 1
        got = s.items().set_index("item_id")
        assert list(got["batch"]) == ["b2"] * 3 and got.loc["it001", "note"] == "x"
        assert got["response"].to_dict() == stored.set_index("item_id")["response"].to_dict()
        # an explicit override replaces the text
        with pytest.raises(JudgekitError, match="its human labels .* were made for the stored one"):
            s.put_items(changed, new_text="if_unlabelled")
        s.put_items(changed, new_text="replace")
        assert s.items(["it000"])["response"].tolist() == ["other"]


def test_put_items_gives_a_response_to_an_item_stored_without_one(tmp_path):
    with Store(tmp_path / "s.db") as s:
        s.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"]}))
        s.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]}))
        assert s.items()["response"].tolist() == ["r"]


# ----------------------------------------------------------------- the umask's group bits
def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o002, 0o022, 0o077])
def test_a_new_store_and_its_wal_get_the_umask_mode(tmp_path, mask):
    old = os.umask(mask)
    try:
        db = tmp_path / "shared.db"
        with Store(db) as s:
            s.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]}))
            files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
            assert all(p.exists() for p in files)
            assert {p.name: oct(_mode(p)) for p in files} == {p.name: oct(0o666 & ~mask) for p in files}
    finally:
        os.umask(old)


def test_an_existing_store_keeps_its_mode_and_import_creates_a_group_writable_one(tmp_path):
    old = os.umask(0o002)
    try:
        db = tmp_path / "kept.db"
        Store(db).close()
        db.chmod(0o640)
        with Store(db) as s:
            s.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]}))
        assert _mode(db) == 0o640
        labels = tmp_path / "labels.csv"
        labels.write_text("item_id,prompt,response,label\na,p,r,full_refusal\n", encoding="utf-8")
        made = tmp_path / "made.db"
        res = invoke(["import", labels, "--rubric", "refusal", "--raters", "label",
                      "--store", made])
        assert res.exit_code == 0, res.output
        assert _mode(made) == 0o664
    finally:
        os.umask(old)


# ----------------------------------------------------------------- a mistyped --store
def test_judge_reparse_refuses_a_missing_store_and_creates_none(tmp_path):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}])
    missing = tmp_path / "typo.db"
    res = invoke(["judge", panel, "--store", missing, "--reparse"])
    one_sentence_error(res, f"Store {missing} does not exist")
    assert list(tmp_path.glob("typo.db*")) == []


def test_judge_dry_run_on_a_missing_store_plans_everything_and_creates_none(tmp_path):
    write_items(tmp_path, labelled_items(3))
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}])
    missing = tmp_path / "typo.db"
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", str(missing), "--dry-run",
                                    "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert list(tmp_path.glob("typo.db*")) == []
    import json

    summary = json.loads(res.stdout)
    assert [(j["id"], j["total"], j["cached"]) for j in summary["judges"]] == [("kw", 3, 0)]


def test_sample_without_items_refuses_a_missing_store_and_creates_none(tmp_path):
    missing = tmp_path / "typo.db"
    res = invoke(["sample", "--name", "s1", "--size", "2", "--store", missing])
    one_sentence_error(res, f"Store {missing} does not exist")
    assert list(tmp_path.glob("typo.db*")) == []


# ----------------------------------------------------------------- missing values, typed rows
def test_a_pandas_na_severity_is_an_empty_cell():
    from judgekit.analysis.frames import harm_from_column

    items = pd.DataFrame({"item_id": ["a", "b", "c"], "severity": [pd.NA, 3, None]}, dtype=object)
    got = harm_from_column(items, "severity")
    assert pd.isna(got.iloc[0]) and got.iloc[1] == 0.5 and pd.isna(got.iloc[2])


def test_judge_rating_rows_are_named(tmp_path):
    from judgekit.store.database import JudgeRatingKey, StoredJudgeRating

    with Store(tmp_path / "s.db") as s:
        s.put_items(pd.DataFrame({"item_id": ["a", "b"], "prompt": "p", "response": "r"}))
        w = Writer(s, REFUSAL)
        for iid in ("a", "b"):
            w.add(judge_rating(REFUSAL, item_id=iid, rater_id="j", trial=0, status="ok",
                               label="full_refusal", text=None, call_key=f"k-{iid}"))
        w.flush()
        have = s.judge_rating_calls("j", REFUSAL.id, REFUSAL.hash)
        assert have[("a", 0)] == StoredJudgeRating(label="full_refusal", status="ok", call_key="k-a")
        assert have[("a", 0)].call_key == "k-a"
        s.retire_judge_ratings(REFUSAL.id, REFUSAL.hash,
                               [JudgeRatingKey(item_id="a", rater_id="j", trial=0)], now=1.0)
        assert list(s.judge_rating_calls("j", REFUSAL.id, REFUSAL.hash)) == [("b", 0)]
        assert s.rating_history()["item_id"].tolist() == ["a"]


# ----------------------------------------------------------------- the writer's buffers
def _writer_with_two(tmp_path, **store_kw):
    s = Store(tmp_path / "s.db", **store_kw)
    s.put_items(pd.DataFrame({"item_id": ["a", "b"], "prompt": "p", "response": "r"}))
    w = Writer(s, REFUSAL)
    for iid in ("a", "b"):
        w.add(judge_rating(REFUSAL, item_id=iid, rater_id="j", trial=0, status="ok",
                           label="full_refusal", text=None, call_key=f"k-{iid}"))
    return s, w


def test_a_failed_commit_keeps_the_answers_for_the_next_flush(tmp_path, monkeypatch):
    s, w = _writer_with_two(tmp_path)
    real = s.write_judge_ratings
    calls = {"n": 0}

    def full_disk(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise sqlite3.OperationalError("database or disk is full")
        return real(*args, **kw)

    monkeypatch.setattr(s, "write_judge_ratings", full_disk)
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        w.flush()
    assert s.ratings().empty and len(w.ratings) == 2  # rolled back, nothing dropped
    w.add(judge_rating(REFUSAL, item_id="a", rater_id="j", trial=1, status="ok",
                       label="full_compliance", text=None, call_key="k-a1"))
    w.flush()
    got = s.ratings().sort_values(["item_id", "trial"])
    assert list(zip(got["item_id"], got["trial"], got["label"], strict=True)) == [
        ("a", 0, "full_refusal"), ("a", 1, "full_compliance"), ("b", 0, "full_refusal")]
    assert w.ratings == [] and w.calls == [] and w.retired == []
    s.close()


def test_the_writer_stops_at_the_first_lock_timeout(tmp_path, monkeypatch):
    import judgekit.store.locking

    gave_up: list[object] = []
    real = judgekit.store.locking.LockWaiter._gave_up

    def counted(self):
        gave_up.append(self)
        return real(self)

    monkeypatch.setattr(judgekit.store.locking.LockWaiter, "_gave_up", counted)
    s, w = _writer_with_two(tmp_path, lock_timeout=0.6)
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(JudgekitError, match="still locked by another judgekit process after waiting 0.6 s"
                           ) as first:
            w.flush()
        assert len(gave_up) == 1
        assert len(w.ratings) == 2  # kept, not dropped
        # the final write of the run does not wait for the lock a second time: the first
        # timeout's error again, without another try at the lock
        with pytest.raises(JudgekitError, match="is still locked by another judgekit process") as again:
            w.flush()
        assert again.value is first.value and len(gave_up) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert s.ratings().empty
    s.close()


def test_a_panel_run_waits_for_a_held_lock_once(tmp_path, monkeypatch):
    """The store gets locked by another process while a remote judge answers: the run stops with
    the lock's one sentence, and neither its final write nor the release of its leases waits
    for the lock again."""
    import threading

    import judgekit.store.locking
    from judgekit.judges.panel import load_panel, run_panel
    from judgekit.testing.fakeserver import FakeServer

    gave_up: list[float] = []
    real = judgekit.store.locking.LockWaiter._gave_up

    def counted(self):
        gave_up.append(time.monotonic())
        return real(self)

    monkeypatch.setattr(judgekit.store.locking.LockWaiter, "_gave_up", counted)
    write_items(tmp_path, labelled_items(4))
    db = tmp_path / "s.db"
    with FakeServer(latency=0.3) as fake:
        panel = load_panel(write_panel(tmp_path, [
            {"id": "llm", "model": f"openai-compatible:{fake.openai_url}#m", "concurrency": 1}]))
        holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        locked = threading.Event()

        def lock_when_asked() -> None:
            while fake.stats.requests < 1:
                time.sleep(0.01)
            holder.execute("BEGIN IMMEDIATE")
            locked.set()

        thread = threading.Thread(target=lock_when_asked, daemon=True)
        with Store(db, lock_timeout=1.0) as store:
            thread.start()
            try:
                with pytest.raises(JudgekitError, match="is still locked by another judgekit process"):
                    run_panel(panel, store)
            finally:
                thread.join(5)
                if locked.is_set():
                    holder.execute("ROLLBACK")
                holder.close()
    assert locked.is_set()
    assert len(gave_up) == 1
