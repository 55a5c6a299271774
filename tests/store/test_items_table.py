"""The row path of items (``judgekit.store.items_table``): a panel's items read, checked and stored
without pandas must give exactly what the DataFrame path gives.

* every table file of the bad-input corpus (the ``--items`` cases, the panels' items, the CSV,
  JSONL, JSON and Parquet cases) read both ways: the same error sentence, or the same values;
* the same items stored both ways (fresh and merged into stored items): the same rows;
* an unchanged item is not rewritten (its ``updated_at`` and its place stay), a changed one is.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from corpus.base import build_template, write_files
from corpus.make_corpus import CASES, VALID

from judgekit.errors import JudgekitError
from judgekit.io.tables import read_items, read_table
from judgekit.store.data import validate_items
from judgekit.store.database import Store
from judgekit.store.items_table import ItemTable
from judgekit.store.schema import is_missing

TABLE_ENDINGS = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("items-template")
    build_template(folder)
    return folder


def both_ways(path: Path, need_response: bool = True) -> tuple[object, object]:
    """(frame or error text) of the DataFrame path and of the row path."""
    try:
        old: object = validate_items(read_table(path), source=str(path), need_response=need_response)
    except JudgekitError as exc:
        old = f"error: {exc}"
    try:
        new: object = read_items(path, need_response=need_response).frame()
    except JudgekitError as exc:
        new = f"error: {exc}"
    return old, new


def assert_same(old: object, new: object) -> None:
    if isinstance(old, str) or isinstance(new, str):
        assert old == new
        return
    assert isinstance(old, pd.DataFrame) and isinstance(new, pd.DataFrame)
    assert list(old.columns) == list(new.columns)
    assert [list(map(str, old[c].map(type))) for c in old.columns] == \
        [list(map(str, new[c].map(type))) for c in new.columns]
    assert old.to_dict("list") == new.to_dict("list") or json.dumps(old.to_dict("list"), default=str) == \
        json.dumps(new.to_dict("list"), default=str)  # NaN != NaN: compare the text then
    assert list(old.attrs.get("lines") or []) == list(new.attrs.get("lines") or [])


def corpus_files(template: Path, tmp_path: Path) -> list[Path]:
    out = []
    for k, case in enumerate([*CASES, *VALID]):
        names = [n for n in case.files if Path(n).suffix.lower() in TABLE_ENDINGS]
        if not names:
            continue
        folder = tmp_path / f"c{k}"
        write_files(case.files, folder, template)
        out += [folder / n for n in names if (folder / n).is_file()]
    return out


def test_every_corpus_table_reads_the_same_both_ways(template, tmp_path):
    files = corpus_files(template, tmp_path)
    assert len(files) > 60  # the corpus's CSV, JSONL, JSON, Parquet and --items files
    errors = 0
    for path in files:
        for need_response in (True, False):
            old, new = both_ways(path, need_response)
            assert_same(old, new)
            errors += isinstance(old, str)
    assert errors > 20  # most are broken: the two paths refuse them with the same sentence


ITEM_FILES = {
    "dup.jsonl": ('{"item_id": "a", "prompt": "p", "response": "r"}\n'
                  '{"item_id": "a", "prompt": "q", "response": "r"}\n',
                  "item_id 'a' appears twice; item ids must be unique."),
    "variant.jsonl": ('{"item_id": "x~padding", "prompt": "p", "response": "r"}\n',
                      "ends in a marker judgekit reserves"),
    "noresp.csv": ("item_id,prompt\na,p\n", "missing column 'response' (the file has: 'item_id', 'prompt') (the judge needs the model output to rate)."),
    "notext.csv": ("item_id,response\na,r\n", "needs a 'prompt' or a 'messages' column."),
    "badmsg.csv": ('item_id,messages,response\na,"[{""role"": ""user""}]",r\n',
                   "line 2: messages[0] is"),
    "nomsgrole.jsonl": ('{"item_id": "a", "messages": [{"content": "hi"}], "response": "r"}\n',
                        "line 1: messages[0] has no 'role'"),
    "ctrl.jsonl": ('{"item_id": "a\\u0007", "prompt": "p", "response": "r"}\n', "item_id"),
}


@pytest.mark.parametrize("name", sorted(ITEM_FILES))
def test_bad_items_are_the_same_sentence_both_ways(tmp_path, name):
    body, expect = ITEM_FILES[name]
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    old, new = both_ways(p)
    assert isinstance(old, str) and expect in old, old
    assert old == new


def write_good_items(folder: Path) -> dict[str, Path]:
    rows = [
        {"item_id": "a", "prompt": "Is 5 > 3?", "response": "Yes.", "model": "m1", "n": 3},
        {"item_id": 7, "prompt": "Second?", "response": "I won't.", "model": "m2", "n": 0.25,
         "tags": ["x", "y"], "extra": {"k": 1}},
        {"item_id": "c", "messages": [{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}],
         "response": "Sure", "model": None},
        {"item_id": "d", "prompt": "é ünïcode ✓", "response": "", "flag": True},
    ]
    out = {"jsonl": folder / "items.jsonl", "json": folder / "items.json", "csv": folder / "items.csv"}
    out["jsonl"].write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out["json"].write_text(json.dumps({"data": rows}), encoding="utf-8")
    out["csv"].write_text(
        "item_id,prompt,messages,response,model,n\n"
        "a,Is 5 > 3?,,Yes.,m1,3\n"
        "b,,\"[{\"\"role\"\": \"\"user\"\", \"\"content\"\": \"\"hi\"\"}]\",I won't.,m2,007\n"
        "c,\"multi\nline\",,Sure,,\n", encoding="utf-8")
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    out["parquet"] = folder / "items.parquet"
    pq.write_table(pa.table({"item_id": ["a", "b"], "prompt": ["p", None], "response": ["r", "s"],
                             "messages": [None, [{"role": "user", "content": "hi"}]],
                             "score": [1.5, None]}), out["parquet"])
    return out


def dump(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT item_id, prompt, messages, response, content_hash, meta "
                                 "FROM items ORDER BY rowid"))


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet"])
def test_good_items_read_and_store_the_same_both_ways(tmp_path, fmt):
    path = write_good_items(tmp_path)[fmt]
    old, new = both_ways(path)
    assert_same(old, new)
    assert isinstance(old, pd.DataFrame)
    table = read_items(path)
    # stored into a store that already holds some of them (metadata merged, texts kept)
    for name, items in (("frame", old), ("table", table)):
        db = tmp_path / f"{fmt}-{name}.db"
        with Store(db) as s:
            s.put_items(pd.DataFrame({"item_id": ["a", "zz"], "prompt": ["Is 5 > 3?", "other"],
                                      "response": ["Yes.", "r"], "kept": ["old", "k"]}), source="seed")
            assert s.put_items(items, source=str(path), new_text="if_unlabelled") == len(table)
    assert dump(tmp_path / f"{fmt}-frame.db") == dump(tmp_path / f"{fmt}-table.db")


def test_the_stored_values_are_the_ones_written(tmp_path):
    """Computed here from the rules (not from either path): ids as text, messages as their JSON
    text, metadata merged and sorted, the content hash of what the judge sees."""
    import hashlib

    path = write_good_items(tmp_path)["jsonl"]
    db = tmp_path / "s.db"
    with Store(db) as s:
        s.put_items(read_items(path), source=str(path))
    got = {r[0]: r for r in dump(db)}
    assert list(got) == ["a", "7", "c", "d"]

    def digest(prompt, messages, response):
        msgs = None if messages is None else json.dumps(json.loads(messages), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(json.dumps([prompt, msgs, response], ensure_ascii=False).encode()).hexdigest()[:16]

    assert got["a"][1:] == ("Is 5 > 3?", None, "Yes.", digest("Is 5 > 3?", None, "Yes."), '{"model": "m1", "n": 3}')
    assert got["7"][5] == '{"extra": "{\\"k\\": 1}", "model": "m2", "n": 0.25, "tags": "[\\"x\\", \\"y\\"]"}'
    msgs = ('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": '
            '[{"type": "text", "text": "yo"}]}]')
    assert got["c"][1:4] == (None, msgs, "Sure")
    assert got["c"][4] == digest(None, msgs, "Sure")
    assert got["c"][5] == "{}"  # model: null is no value
    assert got["d"][3] == "" and got["d"][5] == '{"flag": true}'


def test_an_unchanged_item_is_not_rewritten(tmp_path):
    path = tmp_path / "items.jsonl"
    rows = [{"item_id": f"i{k}", "prompt": f"p{k}", "response": f"r{k}"} for k in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "s.db"

    def state() -> list[tuple]:
        with sqlite3.connect(db) as conn:
            return list(conn.execute("SELECT rowid, item_id, response, updated_at FROM items ORDER BY rowid"))

    with Store(db) as s:
        s.put_items(read_items(path), source=str(path))
        s.put_items(pd.DataFrame({"item_id": ["other"], "prompt": ["q"], "response": ["x"]}))
    before = state()
    with Store(db) as s:
        assert s.put_items(read_items(path), source=str(path)) == 3
        assert s.put_items(read_items(path).frame(), source=str(path)) == 3
    assert state() == before  # same rows, same rowids (order), same updated_at
    rows[1]["response"] = "changed"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Store(db) as s:
        s.put_items(read_items(path), source=str(path), new_text="replace")
    after = state()
    assert [r[1:3] for r in after] == [("i0", "r0"), ("i2", "r2"), ("other", "x"), ("i1", "changed")]
    assert [r for r in after if r[1] != "i1"] == [r for r in before if r[1] != "i1"]


def test_an_id_given_twice_is_written_twice_the_last_winning(tmp_path):
    db = tmp_path / "s.db"
    with Store(db) as s:
        s.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]}))
        s.put_items(pd.DataFrame({"item_id": ["a", "a"], "prompt": ["q", "p"], "response": ["r", "r"]}),
                    new_text="replace")
    assert [r[:4] for r in dump(db)] == [("a", "p", None, "r")]


def test_table_from_a_frame_and_back():
    df = validate_items(pd.DataFrame({"item_id": ["a", "b"], "prompt": ["p", "q"], "response": ["r", None],
                                      "n": [1, 2]}), source="t")
    table = ItemTable.from_frame(df)
    assert table.ids == ["a", "b"] and len(table) == 2 and not table.empty
    assert table.column("n") == [1, 2] and table.column("nope") == [None, None]
    sub = table.take([1])
    assert sub.ids == ["b"] and sub.column("prompt") == ["q"] and is_missing(sub.column("response")[0])
    assert list(table.records())[0] == {"item_id": "a", "prompt": "p", "response": "r", "n": 1}
