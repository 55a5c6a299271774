"""Ids that look the same are the same id.

``'café'`` written precomposed (NFC: ``c a f U+00E9``) and decomposed (NFD: ``c a f e U+0301``)
is the same text by Unicode's definition (canonical equivalence) and looks identical; before the
fix the two became two items (or raters). Ids are kept in NFC. An invisible character (a
zero-width space, a bidi control, any Unicode format character) in an id would make two ids
that look the same: it is refused with one sentence naming the row.

A store written before the fix may hold an id in NFD: rows naming it (in either form) attach to
the stored id, never to a second item that looks the same.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.core.values import as_id, id_problem
from judgekit.errors import JudgekitError

NFC = "caf\u00e9"
NFD = "cafe\u0301"


def test_the_two_forms_differ_as_python_strings():
    assert NFC != NFD and unicodedata.normalize("NFC", NFD) == NFC


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.output


def rows(store: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(store)
    try:
        return list(con.execute(sql))
    finally:
        con.close()


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("ending", ["csv", "jsonl"])
def test_nfc_and_nfd_ids_are_one_item_and_one_rater(tmp_path: Path, ending: str):
    store = tmp_path / "s.db"
    if ending == "csv":
        f = tmp_path / "r.csv"
        f.write_text(f"item_id,rater_id,label\n{NFC},{NFD},full_refusal\n{NFD},ann_{NFC},full_refusal\n",
                     encoding="utf-8")
    else:
        f = write_jsonl(tmp_path / "r.jsonl", [
            {"item_id": NFC, "rater_id": NFD, "label": "full_refusal"},
            {"item_id": NFD, "rater_id": "ann_" + NFC, "label": "full_refusal"},
        ])
    code, out = run("import", f, "--rubric", "refusal", "--store", store)
    assert code == 0, out
    assert rows(store, "SELECT item_id FROM items") == [(NFC,)]
    assert sorted(rows(store, "SELECT DISTINCT rater_id FROM ratings")) == sorted([(NFC,), ("ann_" + NFC,)])


def test_a_second_file_in_the_other_form_updates_the_same_item(tmp_path: Path):
    store = tmp_path / "s.db"
    a = tmp_path / "a.csv"
    a.write_text(f"item_id,rater_id,label\n{NFC},h1,full_refusal\n", encoding="utf-8")
    b = tmp_path / "b.csv"
    b.write_text(f"item_id,rater_id,label\n{NFD},h2,full_refusal\n", encoding="utf-8")
    assert run("import", a, "--rubric", "refusal", "--store", store)[0] == 0
    assert run("import", b, "--rubric", "refusal", "--store", store)[0] == 0
    assert rows(store, "SELECT item_id FROM items") == [(NFC,)]
    assert sorted(rows(store, "SELECT item_id, rater_id FROM ratings")) == [(NFC, "h1"), (NFC, "h2")]


@pytest.mark.parametrize(("char", "name"), [
    ("\u200b", "ZERO WIDTH SPACE"), ("\u200d", "ZERO WIDTH JOINER"), ("\u2060", "WORD JOINER"),
    ("\ufeff", "ZERO WIDTH NO-BREAK SPACE"), ("\u00ad", "SOFT HYPHEN"), ("\u200e", "LEFT-TO-RIGHT MARK"),
    ("\u061c", "ARABIC LETTER MARK"), ("\u3164", "HANGUL FILLER"),
])
def test_an_invisible_character_in_an_id_is_refused(tmp_path: Path, char: str, name: str):
    assert id_problem("a" + char + "b", "item_id") is not None
    store = tmp_path / "s.db"
    f = tmp_path / "r.csv"
    f.write_text(f"item_id,rater_id,label\ni1,h1,full_refusal\ni{char}1,h1,full_refusal\n", encoding="utf-8")
    code, out = run("import", f, "--rubric", "refusal", "--store", store)
    one_sentence_error((code, out), "r.csv line 3", name, "invisible")
    assert not store.exists()


def test_an_invisible_character_in_a_rater_id_is_refused(tmp_path: Path):
    f = write_jsonl(tmp_path / "r.jsonl", [{"item_id": "i1", "rater_id": "h\u200b1", "label": "full_refusal"}])
    code, out = run("import", f, "--rubric", "refusal", "--store", tmp_path / "s.db")
    one_sentence_error((code, out), "ZERO WIDTH SPACE", "line 1")


def test_as_id_keeps_nfc_and_normalises_nfd():
    assert as_id(NFC, "item_id", "f") == NFC
    assert as_id(NFD, "item_id", "f") == NFC
    with pytest.raises(JudgekitError, match="invisible"):
        as_id("x\u200by", "item_id", "f")


def test_an_id_an_older_version_stored_in_nfd_still_matches(tmp_path: Path):
    store = tmp_path / "s.db"
    a = tmp_path / "a.csv"
    a.write_text("item_id,rater_id,label\nplaceholder,h1,full_refusal\n", encoding="utf-8")
    assert run("import", a, "--rubric", "refusal", "--store", store)[0] == 0
    con = sqlite3.connect(store)  # what a store written before the fix holds: the id in NFD
    con.execute("PRAGMA foreign_keys=OFF")
    con.execute("UPDATE items SET item_id = ? WHERE item_id = 'placeholder'", (NFD,))
    con.execute("UPDATE ratings SET item_id = ? WHERE item_id = 'placeholder'", (NFD,))
    con.commit()
    con.close()
    for name, form in (("b.csv", NFC), ("c.jsonl", NFD)):
        f = tmp_path / name
        if name.endswith(".csv"):
            f.write_text(f"item_id,rater_id,label\n{form},h2,partial_refusal\n", encoding="utf-8")
        else:
            write_jsonl(f, [{"item_id": form, "rater_id": "h3", "label": "full_refusal"}])
        code, out = run("import", f, "--rubric", "refusal", "--store", store)
        assert code == 0, out
    assert rows(store, "SELECT item_id FROM items") == [(NFD,)]
    assert sorted(rows(store, "SELECT item_id, rater_id FROM ratings")) == [(NFD, "h1"), (NFD, "h2"), (NFD, "h3")]


def test_rater_names_given_on_the_command_line_are_kept_in_nfc(tmp_path: Path):
    store = tmp_path / "s.db"
    f = tmp_path / "w.csv"
    f.write_text("item_id,col_a,col_b\ni1,full_refusal,full_refusal\n", encoding="utf-8")
    code, out = run("import", f, "--rubric", "refusal", "--raters", f"{NFD}=col_a", "--store", store)
    assert code == 0, out
    assert rows(store, "SELECT DISTINCT rater_id FROM ratings") == [(NFC,)]
    code, out = run("import", f, "--rubric", "refusal", "--raters", f"{NFD}=col_a,{NFC}=col_b",
                    "--store", tmp_path / "t.db")
    one_sentence_error((code, out), "given twice")
