"""The streamed import of a long CSV (judgekit.io.ratings_stream): the same stored rows as the
whole-file path, chunk by chunk in one transaction; a problem in the last chunk stores nothing
and is reported in the whole-file path's sentence; per-source no-op re-imports; migration 008."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump

import judgekit.io.ratings as ratings_mod
import judgekit.io.ratings_stream as stream_mod
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.store.schema import MIGRATIONS

REFUSAL = load_rubric("refusal")
LABELS = ("full_compliance", "partial_refusal", "full_refusal")


def _csv(path, header, rows, newline="\n"):
    path.write_text(newline.join([",".join(header), *(",".join(r) for r in rows)]) + newline,
                    newline="")
    return path


def _rows(n_items, *, judge_junk=False):
    """Five raters per item (three humans, two judges), a numeric and a text metadata column."""
    rows = []
    for i in range(n_items):
        for k, (rater, kind) in enumerate((("h1", "human"), ("h2", "human"), ("h3", "human"),
                                           ("j1", "judge"), ("j2", "judge"))):
            label = LABELS[(i + k) % 3]
            if judge_junk and kind == "judge" and i % 7 == 0:
                label = "no idea"  # a judge output outside the rubric: an abstention
            rows.append((f"it-{i:04d}", rater, kind, label, str(i % 4), f"model_{i % 3}"))
    return rows


HEADER = ("item_id", "rater_id", "rater_kind", "label", "turns", "model")


def _content(db):
    """Ratings, items and history as stored, without the times of the import."""
    con = Store(db).conn  # either backend
    try:
        return (
            con.execute("SELECT item_id, rater_id, rater_kind, rubric, rubric_hash, label, value,"
                        " trial, status, rationale, source, call_key FROM ratings ORDER BY rowid"
                        ).fetchall(),
            con.execute("SELECT item_id, prompt, messages, response, content_hash, meta FROM items"
                        " ORDER BY rowid").fetchall(),
            con.execute("SELECT item_id, rater_id, label, status FROM rating_history ORDER BY rowid"
                        ).fetchall(),
        )
    finally:
        con.close()


@pytest.fixture()
def streamed_only(monkeypatch):
    """The streamed path must take the import: the whole-file path fails the test."""
    def whole(*args, **kwargs):
        raise AssertionError("took the whole-file path")

    monkeypatch.setattr(ratings_mod, "_import_whole", whole)


@pytest.fixture()
def whole_only(monkeypatch):
    """The whole-file path takes the import (the reference the streamed one is checked against)."""
    monkeypatch.setattr(ratings_mod, "_try_stream", lambda *a, **k: None)


@pytest.fixture()
def small_chunks(monkeypatch):
    monkeypatch.setattr(stream_mod, "CHUNK_ROWS", 7)  # 7 rows a chunk: items span chunks


def _import_both(tmp_path, monkeypatch, path, **kw):
    """Import ``path`` streamed (chunks of 7 rows) and whole-file into two stores; their content."""
    out = []
    for name, streamed in (("s.db", True), ("w.db", False)):
        with monkeypatch.context() as m:
            if streamed:
                m.setattr(stream_mod, "CHUNK_ROWS", 7)
                m.setattr(ratings_mod, "_import_whole", lambda *a, **k: pytest.fail("whole-file"))
            else:
                m.setattr(ratings_mod, "_try_stream", lambda *a, **k: None)
            with Store(tmp_path / name) as store:
                summary = import_ratings(store, path, REFUSAL, **kw)
        out.append((summary.lines(), _content(tmp_path / name)))
    return out


def test_streamed_import_stores_what_the_whole_file_path_stores(tmp_path, monkeypatch):
    path = _csv(tmp_path / "r.csv", HEADER, _rows(12, judge_junk=True))
    (s_lines, s_rows), (w_lines, w_rows) = _import_both(tmp_path, monkeypatch, path)
    assert s_rows == w_rows and s_lines == w_lines
    ratings, items, _ = s_rows
    assert len(ratings) == 60 and len(items) == 12
    # `turns` holds only plain numbers over the whole file: stored as numbers, `model` as text
    assert items[5] == ("it-0005", None, None, None, items[5][4], '{"model": "model_2", "turns": 1}')
    # a judge label outside the rubric is an abstention with the raw text kept
    junk = [r for r in ratings if r[0] == "it-0007" and r[1] == "j1"][0]
    assert junk[5:10] == (None, None, 0, "abstain", "unparseable judge output: no idea")
    assert s_lines[0].endswith(": 60 new, 0 changed (old labels kept in the history), 0 unchanged.")
    assert "  j1 [judge]: 12 ratings (2 abstentions)" in s_lines


def test_a_column_numeric_in_early_chunks_only_stays_text(tmp_path, monkeypatch):
    rows = _rows(6)
    rows[-1] = (*rows[-1][:4], "3.50", rows[-1][5])  # not a number's plain form, in the last chunk
    rows[-2] = (*rows[-2][:4], "3.50", rows[-2][5])  # the same item's other rows agree
    rows[-3] = (*rows[-3][:4], "3.50", rows[-3][5])
    rows[-4] = (*rows[-4][:4], "3.50", rows[-4][5])
    rows[-5] = (*rows[-5][:4], "3.50", rows[-5][5])
    path = _csv(tmp_path / "r.csv", HEADER, rows)
    (_, s_rows), (_, w_rows) = _import_both(tmp_path, monkeypatch, path)
    assert s_rows == w_rows
    assert s_rows[1][0][5] == '{"model": "model_0", "turns": "0"}'  # text: "0", not 0


def test_optional_rating_columns_and_item_texts_match_the_whole_file_path(tmp_path, monkeypatch):
    header = ("item_id", "prompt", "response", "rater_id", "label", "trial", "status",
              "rationale", "created_at", "lang")
    rows = []
    for i in range(5):
        for t in range(3):
            rows.append((f"q{i}", f"prompt {i}", f"answer {i}", "judge_a", LABELS[(i + t) % 3],
                         str(t), "error" if (i, t) == (2, 1) else "", f"why {i}.{t}",
                         "2024-05-01T10:00:00Z" if t else "1714000000", "en" if i % 2 else ""))
    path = _csv(tmp_path / "r.csv", header, rows)
    (s_lines, s_rows), (w_lines, w_rows) = _import_both(tmp_path, monkeypatch, path,
                                                         rater_kind="judge")
    assert s_rows == w_rows and s_lines == w_lines
    ratings, items, _ = s_rows
    assert [r[7] for r in ratings[:3]] == [0, 1, 2]
    assert ratings[7][5:9] == (None, None, 1, "error")
    assert items[1][1:4] == ("prompt 1", None, "answer 1") and items[1][5] == '{"lang": "en"}'
    con = sqlite3.connect(tmp_path / "s.db")
    times = [r[0] for r in con.execute("SELECT created_at FROM ratings ORDER BY rowid LIMIT 2")]
    con.close()
    assert times == [1714000000.0, 1714557600.0]  # 2024-05-01T10:00:00Z


def test_a_changed_row_in_a_multi_chunk_reimport_is_history(tmp_path, monkeypatch, store,
                                                            streamed_only, small_chunks):
    rows = _rows(10)
    path = _csv(tmp_path / "r.csv", HEADER, rows)
    assert tuple(import_ratings(store, path, REFUSAL).written) == (50, 0, 0)
    before = _content(store.path)[0]
    k = 31  # item 6, rater h2: in the fifth chunk
    old = rows[k][3]
    new = LABELS[(LABELS.index(old) + 1) % 3]
    rows[k] = (*rows[k][:3], new, *rows[k][4:])
    _csv(path, HEADER, rows)
    s = import_ratings(store, path, REFUSAL)
    assert tuple(s.written) == (0, 1, 49)
    after, _, history = _content(store.path)
    assert history == [("it-0006", "h2", old, "ok")]
    assert [r[5] for r in after] == [r[5] for r in before[:k]] + [new] + [r[5] for r in before[k + 1:]]


def test_a_new_rater_into_a_rubric_with_stored_raters_keeps_the_file_order(
        tmp_path, monkeypatch, store, streamed_only, small_chunks):
    rows = _rows(4)
    humans = _csv(tmp_path / "h.csv", HEADER, [r for r in rows if r[1] == "h1"])
    import_ratings(store, humans, REFUSAL)
    # j9 is new (direct insert), h1 comes later in the file and is stored (compare)
    mixed = [(r[0], "j9", "judge", *r[3:]) for r in rows if r[1] == "j1"] + \
            [r for r in rows if r[1] == "h1"]
    path = _csv(tmp_path / "m.csv", HEADER, mixed)
    s = import_ratings(store, path, REFUSAL)
    assert tuple(s.written) == (4, 0, 4)
    stored = [(r[0], r[1]) for r in _content(store.path)[0]]
    assert stored == [(r[0], r[1]) for r in mixed]  # the file's order, the re-written h1 last


def _bad_last_chunk_cases():
    rows = _rows(6)  # 30 rows: chunks of 7 rows, the last row in the fifth chunk
    bad_label = [*rows[:-3], (*rows[-3][:3], "maybe", *rows[-3][4:]), *rows[-2:]]  # h3's
    dup = [*rows, rows[2]]
    clash = [*rows[:-1], (*rows[-1][:5], "model_9")]
    return [
        (bad_label, "r.csv line 29: label 'maybe' is not in rubric refusal@1"),
        (dup, "r.csv line 4 and r.csv line 32: duplicate rating of item 'it-0000' by rater 'h3'"),
        (clash, "r.csv line 27 and line 31: item 'it-0005' has model 'model_2' on one row and "
                "'model_9' on the other"),
    ]


@pytest.mark.parametrize("rows,message", _bad_last_chunk_cases())
def test_a_bad_row_in_the_last_chunk_stores_nothing(tmp_path, store, small_chunks, rows, message):
    first = _csv(tmp_path / "first.csv", HEADER, _rows(2))
    import_ratings(store, first, REFUSAL)
    before = store_dump(store.path)
    path = _csv(tmp_path / "r.csv", HEADER, rows)
    with pytest.raises(JudgekitError) as err:
        import_ratings(store, path, REFUSAL)
    assert message in str(err.value).replace(str(tmp_path) + "/", "")
    assert store_dump(store.path) == before


def test_cli_a_failed_first_streamed_import_exits_2_and_leaves_no_store(tmp_path, small_chunks):
    rows = _rows(6)
    rows[-3] = (*rows[-3][:3], "maybe", *rows[-3][4:])  # a human's row in the last chunk
    path = _csv(tmp_path / "r.csv", HEADER, rows)
    db = tmp_path / "new.db"
    res = CliRunner().invoke(main, ["import", str(path), "--rubric", "refusal", "--store", str(db)])
    one_sentence_error(res, "line 29: label 'maybe' is not in rubric refusal@1")
    assert not db.exists() and not (tmp_path / "new.db-wal").exists()


def test_cr_only_csv_with_a_quoted_line_feed_is_read(tmp_path, store):
    path = tmp_path / "cr.csv"
    path.write_bytes(b'item_id,rater_id,label,note\ri1,h1,full_compliance,"two\nlines"\r'
                     b"i2,h1,full_refusal,plain\r")
    s = import_ratings(store, path, REFUSAL)
    assert tuple(s.written) == (2, 0, 0)
    assert store.item_values("note") == {"i1": "two\nlines", "i2": "plain"}


def test_each_file_of_a_study_reimports_as_a_noop(tmp_path, store, streamed_only):
    rows = _rows(5)
    humans = _csv(tmp_path / "humans.csv", HEADER, [r for r in rows if r[2] == "human"])
    judges = _csv(tmp_path / "judges.csv", HEADER, [r for r in rows if r[2] == "judge"])
    import_ratings(store, humans, REFUSAL)
    import_ratings(store, judges, REFUSAL)
    before = store_dump(store.path)
    for path, n in ((humans, 15), (judges, 10), (humans, 15)):
        s = import_ratings(store, path, REFUSAL)
        assert tuple(s.written) == (0, 0, n)
    assert store_dump(store.path) == before  # skipped: nothing rewritten
    # one changed row of the humans' file is still seen
    changed = [r for r in rows if r[2] == "human"]
    changed[4] = (*changed[4][:3], "full_refusal" if changed[4][3] != "full_refusal"
                  else "full_compliance", *changed[4][4:])
    _csv(humans, HEADER, changed)
    assert tuple(import_ratings(store, humans, REFUSAL).written) == (0, 1, 14)


def test_a_write_by_anything_else_ends_every_noop(tmp_path, store):
    rows = _rows(3)
    humans = _csv(tmp_path / "humans.csv", HEADER, [r for r in rows if r[2] == "human"])
    judges = _csv(tmp_path / "judges.csv", HEADER, [r for r in rows if r[2] == "judge"])
    import_ratings(store, humans, REFUSAL)
    import_ratings(store, judges, REFUSAL)
    # another tool revises a label of the humans' file in the store
    store.conn.execute("UPDATE ratings SET label = 'partial_refusal', rowid = rowid + 1000"
                       " WHERE item_id = 'it-0000' AND rater_id = 'h1'")
    s = import_ratings(store, humans, REFUSAL)
    assert tuple(s.written) == (0, 1, 8)  # not skipped: the file's label restored
    # a file that replaces another file's ratings drops that file's digest
    import_ratings(store, judges, REFUSAL)  # digests of both files hold again
    other = _csv(tmp_path / "other.csv", HEADER, [(r[0], r[1], r[2], "full_refusal", *r[4:])
                                                   for r in rows if r[2] == "judge"])
    import_ratings(store, other, REFUSAL)
    s = import_ratings(store, judges, REFUSAL)
    assert s.written is not None and s.written.changed > 0  # not skipped


def test_migration_008_keeps_rows_and_rowids_and_the_checks(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, sql in MIGRATIONS:
        if name.startswith("008"):
            break
        for statement in sql.split(";"):
            if statement.strip():
                con.execute(statement)
        con.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    con.executemany(
        "INSERT INTO ratings (rowid, item_id, rater_id, rater_kind, rubric, rubric_hash, label,"
        " value, trial, status, rationale, created_at, source, call_key)"
        " VALUES (?, ?, 'h1', 'human', 'refusal@1', 'x', ?, NULL, 0, ?, NULL, 1.0, 's', NULL)",
        [(5, "a", "full_refusal", "ok"), (9, "b", None, "abstain"), (7, "c", "full_compliance", "ok")],
    )
    con.commit()
    con.close()
    with Store(db) as store:
        rows = store.conn.execute(
            "SELECT rowid, item_id, label, status FROM ratings ORDER BY rowid").fetchall()
        assert rows == [(5, "a", "full_refusal", "ok"), (7, "c", "full_compliance", "ok"),
                        (9, "b", None, "abstain")]
        for kind, status in (("robot", "ok"), ("human", "maybe")):
            with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint failed"):
                store.conn.execute(
                    "INSERT INTO ratings (item_id, rater_id, rater_kind, rubric, rubric_hash,"
                    " status, created_at) VALUES ('z', 'r', ?, 'x', 'y', ?, 1.0)", (kind, status))
        index = store.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'ratings_by_rubric'").fetchone()[0]
        assert index == "CREATE INDEX ratings_by_rubric ON ratings (rubric, rubric_hash, rater_id)"


def test_each_jsonl_file_of_a_study_reimports_as_a_noop_too(tmp_path, store):
    import json

    def jsonl(path, rows):
        path.write_text("".join(json.dumps(dict(zip(HEADER, r, strict=True))) + "\n" for r in rows))
        return path

    rows = _rows(4)
    humans = jsonl(tmp_path / "humans.jsonl", [r for r in rows if r[2] == "human"])
    judges = jsonl(tmp_path / "judges.jsonl", [r for r in rows if r[2] == "judge"])
    import_ratings(store, humans, REFUSAL)
    import_ratings(store, judges, REFUSAL)
    before = store_dump(store.path)
    assert tuple(import_ratings(store, humans, REFUSAL).written) == (0, 0, 12)
    assert tuple(import_ratings(store, judges, REFUSAL).written) == (0, 0, 8)
    assert store_dump(store.path) == before  # both skipped
    # a third file with new raters that changes an item's metadata drops the other digests
    third = jsonl(tmp_path / "third.jsonl", [("it-0000", "x1", "human", "full_refusal", "0",
                                              "model_9")])
    import_ratings(store, third, REFUSAL)
    after = store_dump(store.path)
    assert tuple(import_ratings(store, humans, REFUSAL).written) == (0, 0, 12)
    assert store_dump(store.path) != after  # not skipped: the humans' file wrote its items again
    assert store.item_values("model")["it-0000"] == "model_0"


def test_the_streamed_path_imports_no_pandas():
    import subprocess
    import sys

    code = ("import sys, judgekit.io.ratings_stream, judgekit.store.stream, judgekit.store.rating_input;"
            " print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
