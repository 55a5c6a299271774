"""Imports never crash and never coerce.

Every bad file is one sentence naming the file and the physical line / row / key, exit 2, no
traceback, and the store's rows byte-for-byte as before; every value that imports is kept
exactly as written (ids as text, integers as integers, metadata objects as their JSON text).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sqlite3
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from conftest import store_dump as _dump

from judgekit.cli import main
from judgekit.store.data import item_content_hash

GOOD = "item_id,rater_id,label,model\nkeep,ann,full_refusal,m0\n"


def _write(path: Path, content: str | bytes | pa.Table) -> Path:
    if isinstance(content, pa.Table):
        pq.write_table(content, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        with open(path, "w", encoding="utf-8", newline="") as fh:  # line ends exactly as given
            fh.write(content)
    return path


def _import(path: Path, db: str, *args: str):
    return CliRunner().invoke(main, ["import", str(path), "--rubric", "refusal", "--store", db, *args])


@pytest.fixture()
def db(tmp_path) -> str:
    """A store that already holds one item and one rating."""
    path = str(tmp_path / "s.db")
    res = _import(_write(tmp_path / "good.csv", GOOD), path)
    assert res.exit_code == 0, res.output
    return path


def _refused(tmp_path: Path, db: str, name: str, content, *args: str, expect: list[str]) -> str:
    before = _dump(db)
    path = _write(tmp_path / name, content)
    res = _import(path, db, *args)
    line = one_sentence_error(res, name, *expect)
    assert _dump(db) == before
    return line


def _imported(tmp_path: Path, name: str, content, *args: str):
    """Import into a fresh store; returns (items by id, ratings)."""
    from judgekit.store.database import Store

    db = str(tmp_path / f"{name}.db")
    res = _import(_write(tmp_path / name, content), db, *args)
    assert res.exit_code == 0, res.output
    with Store(db) as s:
        return s.items().set_index("item_id"), s.ratings()


def _meta(tmp_path: Path, name: str, content, *args: str) -> dict[str, dict]:
    """The stored metadata JSON of each item, exactly as the store holds it."""
    db = str(tmp_path / f"{name}.db")
    res = _import(_write(tmp_path / name, content), db, *args)
    assert res.exit_code == 0, res.output
    con = sqlite3.connect(db)
    try:
        return {i: json.loads(m) for i, m in con.execute("SELECT item_id, meta FROM items")}
    finally:
        con.close()


# ---------------------------------------------------------------- ragged CSV rows
RAGGED = [
    # an unquoted line break splits a wide row: today one rating is dropped and item 'line' made up
    ("split_wide.csv", "item_id,note,ann\na,one,full_refusal\nb,multi\nline,full_compliance\n",
     ("--raters", "ann"), ["line 3 has 2 cells where the header has 3"]),
    # a lone carriage return (pandas writes it unquoted) inside a cell
    ("lone_cr.csv", "item_id,note,ann\na,x\ry,full_refusal\nb,z,full_compliance\n",
     ("--raters", "ann"), ["line 2", "carriage return", "double quotes"]),
    ("lone_cr_long.csv", "item_id,rater_id,label,note\na,ann,full_refusal,x\ry\n", (),
     ["line 2", "carriage return"]),
    # the variant that said "item nan appears with different metadata" without a line
    ("nan_item.csv", "item_id,note,ann\na,one\n,two,full_refusal\nb,three\n,four,full_compliance\n",
     ("--raters", "ann"), ["line 2 has 2 cells where the header has 3"]),
    ("extra_cell.csv", "item_id,rater_id,label\na,ann,full_refusal\nb,ann,full_refusal,x\n", (),
     ["line 3 has 4 cells where the header has 3"]),
    # a quoted multi-line cell before the bad row: the physical line is named, not the record
    ("after_multiline.csv",
     'item_id,rater_id,label,note\na,ann,full_refusal,"l1\nl2\nl3"\nb,ann,maybe,x\n', (),
     ["line 5: label 'maybe' is not in rubric"]),
    ("after_blank.csv", "item_id,rater_id,label\n\na,ann,full_refusal\n\nb,ann,maybe\n", (),
     ["line 5: label 'maybe'"]),
    ("unclosed_quote.csv", 'item_id,rater_id,label,note\na,ann,full_refusal,"open\nb,ann,x,y\n',
     (), ["line 2", "never closed"]),
    ("after_quote.csv", 'item_id,rater_id,label,note\na,ann,full_refusal,"x"y\n', (),
     ["line 2", "after the closing double quote"]),
    # an empty id in a wide file was stored as the item 'nan'
    ("blank_wide_id.csv", "item_id,note,ann\na,one,full_refusal\n,two,full_refusal\n",
     ("--raters", "ann"), ["line 3: empty item_id"]),
    # two rows of one item with different metadata: both lines and the column are named
    ("clash.csv", "item_id,rater_id,label,model\na,ann,full_refusal,m1\nb,ann,full_refusal,m1\n"
     "a,bob,full_refusal,m2\n", (), ["line 2 and line 4", "item 'a' has model 'm1'", "'m2'"]),
]


@pytest.mark.parametrize(("name", "content", "args", "expect"), RAGGED, ids=[c[0] for c in RAGGED])
def test_ragged_csv_row_is_refused_naming_its_physical_line(tmp_path, db, name, content, args, expect):
    _refused(tmp_path, db, name, content, *args, expect=expect)


def test_carriage_returns_in_quoted_cells_round_trip_exactly(tmp_path):
    notes = ["x\ry", "x\r\ny", "end\r", "\rstart", "a\n\rb", "tab\tand \"quote\""]
    rows = "".join(
        f'i{k},ann,full_refusal,"{n.replace(chr(34), chr(34) * 2)}","why\r{k}"\r\n'
        for k, n in enumerate(notes)
    )
    items, ratings = _imported(tmp_path, "cr.csv", "item_id,rater_id,label,note,rationale\r\n" + rows)
    assert [items.loc[f"i{k}", "note"] for k in range(len(notes))] == notes
    assert sorted(ratings["rationale"]) == sorted(f"why\r{k}" for k in range(len(notes)))


# ---------------------------------------------------------------- values never coerced
COERCED = [
    ("trial_text.csv", "item_id,rater_id,label,trial\na,ann,full_refusal,abc\n", (),
     ["line 2: trial 'abc' is not a whole number"]),
    ("trial_frac.csv", "item_id,rater_id,label,trial\na,ann,full_refusal,0\na,ann,full_refusal,1.9\n",
     (), ["line 3: trial '1.9' is not a whole number"]),
    ("trial_float.jsonl", '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "trial": 1.0}\n',
     (), ["line 1: trial 1.0 is not a whole number"]),
    ("dup_header.csv", "item_id,rater_id,label,label\na,ann,full_refusal,full_compliance\n", (),
     ["line 1", "names the column 'label' twice (columns 3 and 4)"]),
    ("dup_rater_col.csv", "item_id,ann,ann\na,full_refusal,full_compliance\n", ("--raters", "ann"),
     ["names the column 'ann' twice"]),
    ("trailing_space.csv", "item_id,rater_id,label\na,ann_ws,full_refusal\nb,ann_ws ,full_refusal\n",
     (), ["line 3: rater_id 'ann_ws ' has white space at the end"]),
    ("leading_space.jsonl", '{"item_id": " a", "rater_id": "ann", "label": "full_refusal"}\n', (),
     ["line 1: item_id ' a' has white space at the start"]),
    ("nul.csv", "item_id,rater_id,label\na,ann\x00x,full_refusal\n", (),
     ["line 2: rater_id 'ann\\x00x' contains the control character"]),
    ("escape.csv", "item_id,rater_id,label\na\x1b[2J,ann,full_refusal\n", (),
     ["line 2: item_id", "control character '\\x1b'"]),
    ("float_id.jsonl", '{"item_id": 1, "rater_id": "ann", "label": "full_refusal"}\n'
     '{"item_id": 1.0, "rater_id": "bob", "label": "full_refusal"}\n', (),
     ["line 2: item_id 1.0 is a decimal number"]),
    ("bool_id.jsonl", '{"item_id": true, "rater_id": "ann", "label": "full_refusal"}\n', (),
     ["line 1: item_id True is a bool"]),
    ("nan_label.jsonl", '{"item_id": "a", "rater_id": "ann", "label": NaN}\n', (),
     ["line 1: NaN is not a JSON value"]),
    ("nan_wide.csv", "item_id,ann\na,NaN\nb,full_refusal\n", ("--raters", "ann"),
     ["line 2: label 'NaN' is not in rubric"]),
    ("messages_numbers.jsonl",
     '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "messages": [1, 2], "response": "r"}\n',
     (), ["line 1: messages[0] is 1, not a {role, content} object"]),
    ("messages_text_numbers.csv", 'item_id,rater_id,label,messages,response\na,ann,full_refusal,"[1, 2]",r\n',
     (), ["line 2: messages[0] is 1"]),
    ("messages_content.jsonl",
     '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "messages": [{"role": "user", "content": 5}]}\n',
     (), ["line 1: messages[0] needs 'content' as text"]),
    ("dup_key.jsonl", '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "label": "full_compliance"}\n',
     (), ["line 1: the key 'label' appears twice"]),
    ("no_header_name.csv", ",item_id,rater_id,label\n0,a,ann,full_refusal\n", (),
     ["column 1 has no name"]),
    ("header_space.csv", "item_id,rater_id,label,model \na,ann,full_refusal,m\n", (),
     ["the column name 'model ' has white space at the end"]),
    ("trial_huge.csv", "item_id,rater_id,label,trial\na,ann,full_refusal," + "9" * 5000 + "\n", (),
     ["line 2: trial '9999", "is not a whole number"]),
    ("created_inf.csv", "item_id,rater_id,label,created_at\na,ann,full_refusal,1e400\n", (),
     ["line 2: created_at '1e400' is not a time"]),
    ("huge_int.jsonl", '{"item_id": ' + "1" * 5000 + ', "rater_id": "ann", "label": "full_refusal"}\n', (),
     ["line 1", "fix that line"]),
    ("label_object.jsonl", '{"item_id": "a", "rater_id": "ann", "label": {"code": "full_refusal"}}\n', (),
     ["line 1: label is an object; give one value"]),
]


@pytest.mark.parametrize(("name", "content", "args", "expect"), COERCED, ids=[c[0] for c in COERCED])
def test_a_value_that_would_be_coerced_is_refused(tmp_path, db, name, content, args, expect):
    _refused(tmp_path, db, name, content, *args, expect=expect)


def test_nan_label_in_parquet_is_refused_not_dropped(tmp_path, db):
    table = pa.table({"item_id": ["a", "b"], "ann": pa.array([float("nan"), 0.0], pa.float64())})
    _refused(tmp_path, db, "nan.parquet", table, "--raters", "ann",
             expect=["row 1: label nan is not a number and not a label"])


def test_ids_are_kept_exactly_as_written(tmp_path):
    _, ratings = _imported(tmp_path, "ids.csv", "item_id,rater_id,label\n01,007,full_refusal\n1,7,full_refusal\n")
    assert sorted(zip(ratings["item_id"], ratings["rater_id"], strict=True)) == [("01", "007"), ("1", "7")]
    items, ratings = _imported(
        tmp_path, "ids.jsonl",
        '{"item_id": 1, "rater_id": 7, "label": "full_refusal"}\n'
        '{"item_id": "1.0", "rater_id": "7", "label": "full_refusal", "trial": 1}\n',
    )
    assert sorted(items.index) == ["1", "1.0"]
    assert sorted(zip(ratings["item_id"], ratings["rater_id"], ratings["trial"], strict=True)) == [
        ("1", "7", 0), ("1.0", "7", 1)]
    # Parquet integer ids are their digits; trials are integers
    table = pa.table({"item_id": pa.array([10, 11], pa.int64()), "rater_id": ["ann", "ann"],
                      "label": ["full_refusal", "full_compliance"], "trial": pa.array([0, 2], pa.int32())})
    items, ratings = _imported(tmp_path, "ids.parquet", table)
    assert sorted(items.index) == ["10", "11"]
    assert sorted(ratings["trial"].tolist()) == [0, 2]


def test_csv_metadata_numbers_only_when_written_plainly(tmp_path):
    meta = _meta(tmp_path, "nums.csv",
                 "item_id,rater_id,label,severity,code,price,score,flag\n"
                 "a,ann,full_refusal,3,007,1.50,0.25,true\n"
                 "b,ann,full_refusal,-2,12,2,1e-05,false\n")
    assert meta["a"] == {"severity": 3, "code": "007", "price": "1.50", "score": 0.25, "flag": "true"}
    assert meta["b"] == {"severity": -2, "code": "12", "price": "2", "score": 1e-05, "flag": "false"}


# ---------------------------------------------------------------- no tracebacks
def test_jsonl_messages_as_a_json_list_import(tmp_path):
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
            {"role": "user", "content": [{"type": "text", "text": "and now?"}]}]
    line = {"item_id": "a", "rater_id": "ann", "label": "full_refusal", "messages": msgs, "response": "No."}
    items, ratings = _imported(tmp_path, "msgs.jsonl", json.dumps(line) + "\n")
    assert items.loc["a", "messages"] == msgs
    assert items.loc["a", "content_hash"] == item_content_hash(None, msgs, "No.")
    assert ratings["label"].tolist() == ["full_refusal"]


def test_metadata_objects_are_stored_as_their_json_text(tmp_path):
    line = ('{"item_id": "a", "rater_id": "ann", "label": "full_refusal", '
            '"src": {"z": 1, "a": [1, 2.5, "é"]}, "tags": ["x", "y"], "empty": {}}\n')
    meta = _meta(tmp_path, "obj.jsonl", line)
    assert meta["a"] == {"src": '{"z": 1, "a": [1, 2.5, "é"]}', "tags": '["x", "y"]', "empty": "{}"}


def test_parquet_dates_decimals_structs_are_text_and_binary_is_refused(tmp_path, db):
    table = pa.table({
        "item_id": ["a"], "rater_id": ["ann"], "label": ["full_refusal"],
        "day": pa.array([dt.date(2024, 5, 1)], pa.date32()),
        "at": pa.array([dt.datetime(2024, 5, 1, 10, 30)], pa.timestamp("us")),
        "price": pa.array([decimal.Decimal("1.10")], pa.decimal128(5, 2)),
        "src": pa.array([{"name": "xstest", "row": 4}], pa.struct([("name", pa.string()), ("row", pa.int64())])),
        "tags": pa.array([["a", "b"]], pa.list_(pa.string())),
    })
    meta = _meta(tmp_path, "types.parquet", table)
    assert meta["a"] == {"day": "2024-05-01", "at": "2024-05-01T10:30:00", "price": "1.10",
                         "src": '{"name": "xstest", "row": 4}', "tags": '["a", "b"]'}
    binary = pa.table({"item_id": ["a", "b"], "rater_id": ["ann", "ann"], "label": ["full_refusal"] * 2,
                       "blob": pa.array([None, b"\x00\xff"], pa.binary())})
    _refused(tmp_path, db, "binary.parquet", binary, expect=["row 2: blob holds binary data"])


CREATED_BAD = [
    ("created_text.csv", "item_id,rater_id,label,created_at\na,ann,full_refusal,yesterday\n",
     ["line 2: created_at 'yesterday' is not a time"]),
    ("created_naive.csv", "item_id,rater_id,label,created_at\na,ann,full_refusal,2024-05-01T10:00:00\n",
     ["line 2: created_at '2024-05-01T10:00:00' has no time zone"]),
    ("created_bool.jsonl", '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "created_at": true}\n',
     ["line 1: created_at True is not a time"]),
]


@pytest.mark.parametrize(("name", "content", "expect"), CREATED_BAD, ids=[c[0] for c in CREATED_BAD])
def test_created_at_that_is_not_a_time_is_refused(tmp_path, db, name, content, expect):
    _refused(tmp_path, db, name, content, expect=expect)


def test_created_at_blank_null_number_and_iso_time(tmp_path):
    t0 = time.time()
    _, blank = _imported(tmp_path, "blank.csv", "item_id,rater_id,label,created_at\na,ann,full_refusal,\n"
                         "b,ann,full_refusal,1714000000.5\nc,ann,full_refusal,2024-05-01T10:00:00Z\n")
    got = blank.set_index("item_id")["created_at"]
    assert t0 <= got["a"] <= time.time()  # an empty cell is the import time, as a missing column
    assert got["b"] == 1714000000.5
    assert got["c"] == dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC).timestamp()
    _, null = _imported(tmp_path, "null.jsonl",
                        '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "created_at": null}\n'
                        '{"item_id": "b", "rater_id": "ann", "label": "full_refusal", "created_at": 1714000000}\n')
    got = null.set_index("item_id")["created_at"]
    assert t0 <= got["a"] <= time.time() and got["b"] == 1714000000.0


def test_deeply_nested_json_is_one_sentence(tmp_path, db):
    deep = '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "m": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    _refused(tmp_path, db, "deep.jsonl", deep, expect=["line 1 nests JSON too deeply"])
    _refused(tmp_path, db, "deep.json", "[" + deep.strip() + "]", expect=["nested too deeply"])


# ---------------------------------------------------------------- valid controls
def test_bom_crlf_and_excel_quoting_import_exactly(tmp_path):
    content = ('\ufeffitem_id,rater_id,label,note\r\n'
               'a,ann,full_refusal,"He said ""no"", twice"\r\n'
               'b,ann,full_compliance,""\r\n'
               'c,ann,partial_refusal,"two\r\nlines"\r\n')
    items, ratings = _imported(tmp_path, "excel.csv", content.encode("utf-8"))
    assert items.loc["a", "note"] == 'He said "no", twice'
    assert items.loc["c", "note"] == "two\r\nlines"
    assert "note" not in items.columns or items["note"].isna()["b"]
    assert dict(zip(ratings["item_id"], ratings["label"], strict=True)) == {
        "a": "full_refusal", "b": "full_compliance", "c": "partial_refusal"}


def test_old_mac_line_ends_are_read(tmp_path):
    _, ratings = _imported(tmp_path, "mac.csv", "item_id,rater_id,label\ra,ann,full_refusal\rb,ann,full_compliance\r")
    assert sorted(ratings["item_id"]) == ["a", "b"]


def test_label_variants_the_rubric_accepts_still_import(tmp_path):
    content = ("item_id,rater_id,label\n"
               "a,ann, Full Refusal \nb,ann,FULL-REFUSAL\nc,ann,2_full_refusal\nd,ann,full refusal\n"
               "e,ann,1_full_compliance\nf,ann,0.5\n")
    _, ratings = _imported(tmp_path, "variants.csv", content)
    got = dict(zip(ratings["item_id"], ratings["label"], strict=True))
    assert got == {"a": "full_refusal", "b": "full_refusal", "c": "full_refusal", "d": "full_refusal",
                   "e": "full_compliance", "f": "partial_refusal"}


def test_a_million_character_rationale_is_kept(tmp_path):
    why = "x" * 999_990 + ",\"é\n\r"
    content = 'item_id,rater_id,label,rationale\na,ann,full_refusal,"' + why.replace('"', '""') + '"\n'
    _, ratings = _imported(tmp_path, "long.csv", content)
    assert ratings["rationale"].iloc[0] == why
    _, ratings = _imported(tmp_path, "long.jsonl", json.dumps(
        {"item_id": "a", "rater_id": "ann", "label": "full_refusal", "rationale": why}) + "\n")
    assert ratings["rationale"].iloc[0] == why


def test_export_with_carriage_returns_reads_back_exactly(tmp_path):
    import pandas as pd

    from judgekit.io.tables import read_table, write_table

    df = pd.DataFrame({"item_id": ["a", "b"], "rationale": ["x\ry", "plain, \"quoted\""],
                       "n": [1, 2], "note": [None, "end\r"]})
    back = read_table(write_table(df, tmp_path / "out.csv"))
    assert back.to_dict("list") == {"item_id": ["a", "b"], "rationale": ["x\ry", "plain, \"quoted\""],
                                    "n": [1, 2], "note": [None, "end\r"]}


def test_items_file_and_id_prefix_are_checked_too(tmp_path, db):
    ratings = _write(tmp_path / "r.csv", "item_id,rater_id,label\na,ann,full_refusal\n")
    items = _write(tmp_path / "items.jsonl", '{"item_id": "a", "messages": [1, 2], "response": "r"}\n')
    before = _dump(db)
    res = _import(ratings, db, "--items", str(items))
    one_sentence_error(res, "items.jsonl line 1: messages[0] is 1")
    res = _import(ratings, db, "--id-prefix", "m\x1b]0;x\x07:")
    one_sentence_error(res, "--id-prefix", "control character")
    assert _dump(db) == before


def test_an_error_quotes_a_short_excerpt_of_a_huge_value(tmp_path, db):
    message = _refused(tmp_path, db, "huge_label.csv", "item_id,rater_id,label\na,ann," + "z" * 1_000_000 + "\n",
                       expect=["line 2: label 'zzz", "…", "is not in rubric"])
    assert len(message) < 400
