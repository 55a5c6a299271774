"""The pandas-free import of a wide CSV (one row per item, one column per rater:
judgekit.io.ratings_stream.stream_wide_csv): the same stored rows, summary and digest as the
whole-file path; anything that path treats specially goes to it and gets its sentence."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import XSTEST_LABELS

import judgekit.io.ratings as ratings_mod
from judgekit.errors import JudgekitError
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")
XSTEST = {
    "raters": {"annotation_1": "annotation_1", "annotation_2": "annotation_2"},
    "reference": {"final": "final_label"},
    "judges": {"string_match": "strmatch_label", "gpt4": "gpt4_label"},
}


def _content(db: Path) -> list[list[tuple]]:
    """Every table's rows in storage order, without the times of the import."""
    con = sqlite3.connect(db)
    try:
        return [
            con.execute("SELECT item_id, rater_id, rater_kind, rubric, rubric_hash, label, value,"
                        " trial, status, rationale, source, call_key FROM ratings ORDER BY rowid"
                        ).fetchall(),
            con.execute("SELECT item_id, prompt, messages, response, content_hash, meta FROM items"
                        " ORDER BY rowid").fetchall(),
            con.execute("SELECT item_id, rater_id, label, status FROM rating_history ORDER BY rowid"
                        ).fetchall(),
            con.execute("SELECT digest, state, summary FROM import_digests ORDER BY rowid").fetchall(),
        ]
    finally:
        con.close()


def _import(monkeypatch, db: Path, path: Path, *, streamed: bool, before: tuple | None = None,
            **kw):
    """Import ``path`` (after ``before``: (path, options)) by one path only; (summary lines,
    stored content)."""
    with monkeypatch.context() as m:
        if streamed:
            m.setattr(ratings_mod, "_import_whole", lambda *a, **k: pytest.fail("whole-file path"))
        else:
            m.setattr(ratings_mod, "_try_stream", lambda *a, **k: None)
        with Store(db) as store:
            if before is not None:
                import_ratings(store, before[0], REFUSAL, **before[1])
            summary = import_ratings(store, path, REFUSAL, **kw)
    return summary.lines(), _content(db)


def _both(tmp_path, monkeypatch, path, before=None, **kw):
    s = _import(monkeypatch, tmp_path / "s.db", path, streamed=True, before=before, **kw)
    w = _import(monkeypatch, tmp_path / "w.db", path, streamed=False, before=before, **kw)
    return s, w


def test_xstest_import_stores_what_the_whole_file_path_stores(tmp_path, monkeypatch):
    (s_lines, s_rows), (w_lines, w_rows) = _both(tmp_path, monkeypatch, XSTEST_LABELS, **XSTEST)
    assert s_lines == w_lines and s_rows == w_rows
    ratings, items, history, digests = s_rows
    # 2,250 responses, each rated by the two annotators, the adjudicated label and two judges
    assert len(items) == 2250 and len(ratings) == 5 * 2250 and history == [] and len(digests) == 1
    assert [r[1] for r in ratings[::2250]] == ["annotation_1", "annotation_2", "string_match",
                                               "gpt4", "final"]  # rater by rater, file order
    assert ratings[0][:9] == ("llama2orig:v2-1", "annotation_1", "human", "refusal@1",
                              REFUSAL.hash, "full_refusal", 1.0, 0, "ok")
    assert items[0][0] == "llama2orig:v2-1"
    assert '"response_chars": 883' in items[0][5]  # a numeric column stored as numbers
    assert s_lines[0].startswith("Imported 11250 ratings of 2250 items from ")


def test_a_changed_reimport_of_xstest_is_history_on_both_paths(tmp_path, monkeypatch):
    text = XSTEST_LABELS.read_text().splitlines(keepends=True)
    text[3] = text[3].replace("1_full_compliance", "3_partial_refusal", 1)  # annotation_1 of v2-3
    changed = tmp_path / "x2.csv"
    changed.write_text("".join(text))
    (s_lines, s_rows), (w_lines, w_rows) = _both(tmp_path, monkeypatch, changed,
                                                 before=(XSTEST_LABELS, XSTEST), **XSTEST)
    assert s_lines == w_lines and s_rows == w_rows
    assert s_lines[0].endswith(": 0 new, 1 changed (old labels kept in the history), 11249 unchanged.")
    assert s_rows[2] == [("llama2orig:v2-3", "annotation_1", "full_compliance", "ok")]


WIDE = ("item_id,model,prompt,response,a,b,j,n\n"
        "i1,m1,p1,r1,full_refusal,full_compliance,refused,1\n"
        "i2,m1,p2,r2,,  ,garbage,2.5\n"          # empty and blank cells: not rated
        "i3,m2,p3,r3,full_compliance,complied,,x\n"
        "i4,m2,p4,r4,,,,\n")                       # an item nobody rated is still stored


@pytest.mark.parametrize("kw", [
    {"raters": {"a": "a", "b": "b"}, "judges": {"j": "j"}},
    {"raters": {"a": "a"}, "reference": {"b": "b"}, "judges": {"j": "j", "n": "n"}},
    {"judges": {"j": "j", "n": "n"}},
    {"raters": {"x": "a", "y": "a"}},
])
def test_wide_cells_texts_and_unparseable_judges_match(tmp_path, monkeypatch, kw):
    path = tmp_path / "w.csv"
    path.write_text(WIDE)
    (s_lines, s_rows), (w_lines, w_rows) = _both(tmp_path, monkeypatch, path, **kw)
    assert s_lines == w_lines and s_rows == w_rows
    ratings, items, _, _ = s_rows
    assert [i[0] for i in items] == ["i1", "i2", "i3", "i4"]
    if "j" in kw.get("judges", {}):
        (junk,) = [r for r in ratings if r[:2] == ("i2", "j")]
        assert junk[5:10] == (None, None, 0, "abstain", "unparseable judge output: garbage")


@pytest.mark.parametrize("text, message", [
    ("item_id,a,j\ni1,refused,refused\ni2,bogus,complied\n",
     "line 3: label 'bogus' is not in rubric refusal@1"),
    ("item_id,a,j\ni1,refused,refused\ni1,complied,complied\n",
     "line 2 and w.csv line 3: duplicate rating of item 'i1' by rater 'a'"),
    ("item_id,a,j\n i1,refused,refused\n", "line 2: item_id ' i1' has white space at the start"),
])
def test_bad_wide_files_get_the_whole_file_paths_sentence(tmp_path, text, message):
    path = tmp_path / "w.csv"
    path.write_text(text)
    with Store(tmp_path / "s.db") as store, pytest.raises(JudgekitError) as err:
        import_ratings(store, path, REFUSAL, raters={"a": "a"}, judges={"j": "j"})
    assert f"w.csv {message}" in str(err.value)
    with Store(tmp_path / "s.db") as store:
        assert store.conn.execute("SELECT count(*) FROM ratings").fetchone() == (0,)


def test_an_item_on_two_rows_takes_the_whole_file_path(tmp_path, monkeypatch):
    """Two rows of one item, each with another rater's cell: the whole-file path reads it."""
    path = tmp_path / "w.csv"
    path.write_text("item_id,model,a,j\ni1,m1,refused,\ni1,m1,,complied\n")
    took: list[str] = []
    whole = ratings_mod._import_whole
    monkeypatch.setattr(ratings_mod, "_import_whole", lambda *a, **k: took.append("whole") or whole(*a, **k))
    with Store(tmp_path / "s.db") as store:
        summary = import_ratings(store, path, REFUSAL, raters={"a": "a"}, judges={"j": "j"})
    assert took == ["whole"] and summary.ratings == 2 and summary.items == 1
