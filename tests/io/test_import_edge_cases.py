"""Edge cases of the import code: each test failed before its fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import HARM_BINARY, one_sentence_error

from judgekit.cli import main

HARM = HARM_BINARY


@pytest.fixture()
def env(tmp_path):
    rubric = tmp_path / "harm.yaml"
    rubric.write_text(HARM)
    return tmp_path, str(rubric), str(tmp_path / "s.db")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


# ------------------------------------------------------------------ submodules of lazy packages
@pytest.mark.parametrize(("package", "name"), [
    ("judgekit.agreement", "kappa"), ("judgekit.judges", "rules"), ("judgekit.report", "escape"),
    ("judgekit.analysis", "distribution"), ("judgekit.testing", "hostile"),
    ("judgekit.annotation.labelstudio", "redact"), ("judgekit", "rubric"), ("judgekit.rubric", "vocab"), ("judgekit.store", "locking"),
    ("judgekit.verdict", "check"), ("judgekit.gate", "budget"),
])
def test_lazy_packages_still_give_their_submodules_as_attributes(package, name):
    """In a fresh interpreter where the submodule is not imported yet, it is an attribute of its
    package, as before the lazy ``__getattr__``; a name that is neither an export nor a submodule
    is still an AttributeError."""
    code = f"""
import importlib, sys
pkg = importlib.import_module({package!r})
assert {package + '.' + name!r} not in sys.modules, "already imported: the test proves nothing"
print(getattr(pkg, {name!r}).__name__)
try:
    pkg.no_such_thing
except AttributeError as exc:
    assert "no_such_thing" in str(exc), exc
else:
    raise SystemExit("no_such_thing did not raise")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{package}.{name}"


# ------------------------------------------------------------------ row ids tell files apart
def _ids(db: str) -> list[str]:
    from judgekit.store.database import Store

    with Store(db) as s:
        return sorted(s.ratings()["item_id"].unique())


def test_row_ids_of_two_files_of_one_name_do_not_meet(env, monkeypatch):
    """run1/nolabel.csv and run2/nolabel.csv: before, both gave 'nolabel.csv:1' and the second
    import paired its ratings with the first file's unrelated rows. The id is the base name, '@',
    8 hex digits of SHA-256 of the resolved path, and the row number; re-importing the same file
    (from another working directory, by a relative path) gives the same ids."""
    import hashlib

    tmp_path, rubric, db = env
    paths = []
    for run_dir, rows in (("run1", "a,1\nb,0\n"), ("run2", "c,0\nd,1\n")):
        (tmp_path / run_dir).mkdir()
        p = tmp_path / run_dir / "nolabel.csv"
        p.write_text("response,ann\n" + rows)
        paths.append(p)
        code, out = run("import", str(p), "--rubric", rubric, "--store", db, "--id-from", "row",
                        "--raters", "ann")
        assert code == 0, out
    stems = ["nolabel.csv@" + hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:8] for p in paths]
    assert stems[0] != stems[1]
    assert _ids(db) == sorted(f"{s}:{i}" for s in stems for i in (1, 2))
    monkeypatch.chdir(tmp_path / "run1")
    code, out = run("import", "nolabel.csv", "--rubric", rubric, "--store", db, "--id-from", "row",
                    "--raters", "ann")
    assert code == 0, out
    assert "0 new, 0 changed" in out and f"'{stems[0]}:1' is the first row" in out
    assert len(_ids(db)) == 4


def _content_id(prompt: str | None, response: str, messages: str | None = None) -> str:
    """``c-`` + the first 16 hex digits of SHA-256 of the JSON text [prompt, messages, response]."""
    import hashlib

    blob = json.dumps([prompt, messages, response], ensure_ascii=False).encode()
    return "c-" + hashlib.sha256(blob).hexdigest()[:16]


def _store_items(db: str):
    from judgekit.store.database import Store

    with Store(db) as s:
        return s.items().set_index("item_id")


# ------------------------------------------------------------------ content ids after the join
def test_content_ids_are_made_after_the_join_from_the_text_as_stored(env):
    """The docs/import.md example: an object of lists keyed by behaviour, the prompt from
    behaviors.csv. The id is the hash of the stored prompt and response, so the same output in a
    file that carries its prompt itself gets the same id (before: the hash of the response alone)."""
    tmp_path, rubric, db = env
    f = tmp_path / "by_behavior.json"
    f.write_text(json.dumps({"b1": [{"completion": "sure, here", "human": 1, "judge": 1},
                                    {"completion": "no way", "human": 0, "judge": 1}],
                             "b2": [{"completion": "fine", "human": 0, "judge": 0}]}))
    meta = tmp_path / "behaviors.csv"
    meta.write_text("BehaviorID,Behavior,category\nb1,make a bomb,chem\nb2,write a poem,benign\n")
    code, out = run("import", str(f), "--key-column", "behavior_id", "--id-from", "content",
                    "--map", "response=completion", "--reference", "human", "--judges", "judge",
                    "--rubric", rubric, "--store", db, "--items", str(meta),
                    "--join-on", "behavior_id=BehaviorID", "--items-map", "prompt=Behavior")
    assert code == 0, out
    ids = {_content_id("make a bomb", "sure, here"), _content_id("make a bomb", "no way"),
           _content_id("write a poem", "fine")}
    items = _store_items(db)
    assert set(items.index) == ids
    assert items.loc[_content_id("make a bomb", "sure, here"), "prompt"] == "make a bomb"
    assert f"the first row's is {_content_id('make a bomb', 'sure, here')!r}" in out
    # the stored id is the stored content hash: the same output elsewhere meets it
    assert all(iid == "c-" + h for iid, h in items["content_hash"].items())
    other = tmp_path / "other.csv"
    other.write_text("prompt,response,bot\nmake a bomb,sure here,1\nmake a bomb,\"sure, here\",0\n")
    code, out = run("import", str(other), "--id-from", "content", "--judges", "bot",
                    "--rubric", rubric, "--store", db)
    assert code == 0, out
    assert len(_store_items(db)) == 4  # one new output; "sure, here" met its stored item


# ------------------------------------------------------------------ CSV keys as the text written
def test_join_on_csv_keys_written_identically_in_two_csv_files(env):
    """behavior_id `1` in both CSVs: the ratings file's column is all numbers (read as numbers),
    the items file's has a text key `x` too (read as text). Written identically, so they join."""
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,response,ann,behavior_id\na,r1,1,1\nb,r2,0,2\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("behavior_id,category\n1,cyber\n2,chem\nx,bio\n")
    code, out = run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db,
                    "--items", str(meta), "--join-on", "behavior_id")
    assert code == 0, out
    items = _store_items(db)
    assert (items.loc["a", "category"], items.loc["b", "category"]) == ("cyber", "chem")


def test_csv_key_missing_from_the_items_file_claims_no_type_difference(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,response,ann,behavior_id\na,r1,1,1\nb,r2,0,3\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("behavior_id,category\n1,cyber\n2,chem\nx,bio\n")
    code, out = run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db,
                    "--items", str(meta), "--join-on", "behavior_id")
    line = one_sentence_error((code, out))
    assert "item 'b' has behavior_id 3, which is not in" in line and "written as" not in line, line
    assert not Path(db).exists() or _store_items(db).empty


def test_json_keys_stay_type_strict(env):
    """Between JSON files `1` and `"1"` are different keys, and the hint says so."""
    tmp_path, rubric, db = env
    f = tmp_path / "r.jsonl"
    f.write_text('{"item_id": "a", "response": "r", "ann": 1, "behavior_id": 1}\n')
    meta = tmp_path / "meta.jsonl"
    meta.write_text('{"behavior_id": "1", "category": "cyber"}\n')
    code, out = run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db,
                    "--items", str(meta), "--join-on", "behavior_id")
    line = one_sentence_error((code, out))
    assert "(it has '1', written as str, not int)" in line, line


# ------------------------------------------------------------------ 7a: the file's own columns
def test_join_on_a_reference_column_names_the_files_own_columns(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,response,h,beh\na,r1,1,b1\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("h,category\n1,cyber\n")
    line = one_sentence_error(run("import", str(f), "--reference", "h", "--rubric", rubric,
                                   "--store", db, "--items", str(meta), "--join-on", "h"))
    assert line.endswith(f"{f.name}: --join-on 'h': 'h' is a rater's label column "
                    "(--raters/--judges/--reference), not item metadata; join on another column.")


def test_join_on_a_mapped_column_says_what_it_is_read_as(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("_id,response,h,beh\na,r1,1,b1\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("beh,category\nb1,cyber\n")
    line = one_sentence_error(run("import", str(f), "--map", "item_id=_id", "--reference", "h",
                                   "--rubric", rubric, "--store", db, "--items", str(meta),
                                   "--join-on", "_id=beh"))
    assert line.endswith(f"{f.name}: --join-on '_id': its column '_id' is read as item_id "
                    "(--map item_id=_id); give --join-on item_id or join on another column.")


def test_join_on_a_column_the_file_lacks_lists_the_files_columns(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("_id,response,h,beh\na,r1,1,b1\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("behx,category\nb1,cyber\n")
    line = one_sentence_error(run("import", str(f), "--map", "item_id=_id", "--reference", "h",
                                   "--rubric", rubric, "--store", db, "--items", str(meta),
                                   "--join-on", "behx"))
    assert "missing column 'behx' (--join-on) (the file has: '_id', 'response', 'h', 'beh')" in line, line


# ------------------------------------------------------------------ --flatten across rows
ROWS = [{"item_id": "i1", "response": "r1", "ann": 1, "a.b": "real"},
        {"item_id": "i2", "response": "r2", "ann": 0, "a": {"b": "nested"}}]


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_flatten_refuses_a_key_and_a_nested_path_of_one_name_in_two_rows(env, fmt):
    tmp_path, rubric, db = env
    f = tmp_path / f"nested.{fmt}"
    f.write_text("".join(json.dumps(r) + "\n" for r in ROWS) if fmt == "jsonl" else json.dumps(ROWS))
    line = one_sentence_error(run("import", str(f), "--flatten", "--raters", "ann",
                                   "--rubric", rubric, "--store", db))
    where = ("line 1", "line 2") if fmt == "jsonl" else ("row 1", "row 2")
    assert line == (f"error: {f}: --flatten makes the column 'a.b' twice (a key of that name in "
                    f"{where[0]} and a nested one in {where[1]}); rename one of them."), line
    # the other order says the same
    f.write_text("".join(json.dumps(r) + "\n" for r in ROWS[::-1]) if fmt == "jsonl"
                 else json.dumps(ROWS[::-1]))
    line = one_sentence_error(run("import", str(f), "--flatten", "--raters", "ann",
                                   "--rubric", rubric, "--store", db))
    assert f"(a key of that name in {where[1]} and a nested one in {where[0]})" in line, line


def test_flatten_keeps_dotted_keys_that_meet_no_nested_path(env):
    tmp_path, rubric, db = env
    f = tmp_path / "ok.jsonl"
    f.write_text(json.dumps({"item_id": "i1", "response": "r", "ann": 1, "a.b": "x"}) + "\n"
                 + json.dumps({"item_id": "i2", "response": "r2", "ann": 0, "a.b": "y", "c": {"d": 1}}) + "\n")
    code, out = run("import", str(f), "--flatten", "--raters", "ann", "--rubric", rubric, "--store", db)
    assert code == 0, out
    items = _store_items(db)
    assert (items.loc["i1", "a.b"], items.loc["i2", "a.b"], items.loc["i2", "c.d"]) == ("x", "y", 1)


def test_parquet_flatten_clash_says_what_json_says(env):
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp_path, rubric, db = env
    f = tmp_path / "n.parquet"
    pq.write_table(pa.table({"item_id": ["i1"], "response": ["r"], "ann": [1], "a.b": ["real"],
                             "a": [{"b": "nested"}]}), f)
    line = one_sentence_error(run("import", str(f), "--flatten", "--raters", "ann",
                                   "--rubric", rubric, "--store", db))
    assert line == (f"error: {f}: --flatten makes the column 'a.b' twice (a key of that name and a "
                    "nested one); rename one of them."), line


# ------------------------------------------------------------------ no store file after a failure
@pytest.mark.parametrize("case", ["join-on", "key-column-on-csv", "flatten-on-csv", "id-from-with-item-id",
                                  "bad-label"])
def test_a_failed_first_import_leaves_no_store_file(env, case):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,response,ann,behavior_id\na,r1,1,b1\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("behavior_id,category\nb2,cyber\n")
    args = {
        "join-on": ["--items", str(meta), "--join-on", "behavior_id"],
        "key-column-on-csv": ["--key-column", "k"],
        "flatten-on-csv": ["--flatten"],
        "id-from-with-item-id": ["--id-from", "row"],
        "bad-label": [],
    }[case]
    if case == "bad-label":
        f.write_text("item_id,response,ann\na,r1,maybe\n")
    one_sentence_error(run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db, *args))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["harm.yaml", "meta.csv", "r.csv"]


def test_a_good_first_import_creates_the_store_and_a_failed_one_keeps_it(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,response,ann\na,r1,1\n")
    code, out = run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db)
    assert code == 0, out
    assert Path(db).exists() and list(_store_items(db).index) == ["a"]
    one_sentence_error(run("import", str(f), "--raters", "ann", "--rubric", rubric, "--store", db,
                            "--flatten"))
    assert list(_store_items(db).index) == ["a"]
