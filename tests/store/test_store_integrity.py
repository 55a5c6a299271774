"""A store another tool edited is refused on open, in one sentence, and left as it was (the
command-line cases are the corpus family ``store``, tests/corpus/cases_store.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.store.database import Store
from tests.corpus.base import dump_store


def _store(tmp_path: Path, *sql: str) -> Path:
    db = tmp_path / "s.db"
    Store(db).close()
    con = sqlite3.connect(db)
    con.execute("PRAGMA ignore_check_constraints = 1")
    con.execute("INSERT INTO items (item_id, content_hash, meta, updated_at) VALUES ('a', 'x', '{}', 0)")
    con.execute("INSERT INTO ratings (item_id, rater_id, rater_kind, rubric, rubric_hash, label, created_at)"
                " VALUES ('a', 'h1', 'human', 'refusal@1', 'h', 'full_refusal', 0)")
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()
    return db


@pytest.mark.parametrize(("sql", "words"), [
    ("INSERT INTO migrations (name, applied_at) VALUES ('010_from_the_future', 0)", "newer judgekit"),
    ("DROP TABLE verdicts", "no table 'verdicts'"),
    ("ALTER TABLE samples DROP COLUMN overlap", "no column 'overlap'"),
    ("CREATE TRIGGER t AFTER INSERT ON items BEGIN DELETE FROM ratings; END", "trigger 't'"),
    ("UPDATE ratings SET trial = 'abc'", "trial 'abc'"),
    ("UPDATE ratings SET trial = 1.5", "trial 1.5"),
    ("UPDATE ratings SET status = 'bogus'", "status 'bogus'"),
    ("UPDATE ratings SET rater_kind = 'robot'", "rater kind 'robot'"),
    ("UPDATE ratings SET label = X'41'", "label b'A'"),
    ("UPDATE items SET meta = '{bad'", "not valid JSON"),
    ("UPDATE items SET meta = '[1]'", "not a JSON object"),
])
def test_a_tampered_store_is_one_sentence_and_is_not_written(tmp_path, sql, words):
    db = _store(tmp_path, sql)
    before = dump_store(db)
    with pytest.raises(JudgekitError) as exc:
        Store(db)
    msg = str(exc.value)
    assert words in msg and str(db) in msg and "\n" not in msg
    assert dump_store(db) == before


def test_an_untouched_store_opens(tmp_path):
    db = _store(tmp_path)
    with Store(db) as s:
        assert list(s.ratings()["label"]) == ["full_refusal"]


def test_a_store_judgekit_wrote_and_another_tool_edited_is_still_scanned(tmp_path):
    """The scan is skipped only while the store is as judgekit left it: the state judgekit
    records when it closes a store it wrote moves with any other tool's update."""
    import pandas as pd

    db = tmp_path / "s.db"
    with Store(db) as s:
        s.put_ratings(pd.DataFrame({"item_id": ["a", "b"], "rater_id": ["h1", "h1"], "rater_kind": ["human"] * 2,
                                    "rubric": ["refusal@1"] * 2, "rubric_hash": ["h"] * 2,
                                    "label": ["full_refusal", "full_compliance"]}))
    state = sqlite3.connect(db).execute("SELECT state FROM store_checks").fetchone()
    assert state is not None  # recorded by judgekit's close after its write
    Store(db).close()
    con = sqlite3.connect(db)
    con.execute("PRAGMA ignore_check_constraints = 1")
    con.execute("UPDATE ratings SET status = 'bogus' WHERE item_id = 'b'")
    con.commit()
    con.close()
    before = dump_store(db)
    with pytest.raises(JudgekitError, match="status 'bogus'"):
        Store(db)
    assert dump_store(db) == before
