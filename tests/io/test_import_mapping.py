"""Importing files as other benchmarks ship them, with one `import` command.

Each file here is written for the test in the shape a real data set has it: ``_id``/``Response``
columns, a JSON object of lists keyed by behaviour, no ids at all, a metadata file joined on
``behavior_id``, nested JSON, judge columns written ``0/1`` and ``yes/no``. The agreement figures
judgekit reports are compared with figures computed here (scikit-learn's ``cohen_kappa_score``,
and percent agreement written out). Bad mappings are in ``tests/corpus/cases_mapping.py``.
"""

from __future__ import annotations

import hashlib
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import HARM_BINARY, one_sentence_error, store_dump
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main
from judgekit.store.database import Store

HARM = HARM_BINARY
CODE = {0: "not_harmful", 1: "harmful", "0": "not_harmful", "1": "harmful", "no": "not_harmful",
        "yes": "harmful"}


@pytest.fixture()
def env(tmp_path):
    rubric = tmp_path / "harm.yaml"
    rubric.write_text(HARM)
    return tmp_path, str(rubric), str(tmp_path / "s.db")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


def agreement(rubric: str, db: str, tmp_path, *extra: str) -> dict:
    out = tmp_path / "agree.json"
    code, output = run("agree", "--rubric", rubric, "--store", db, "--resamples", "20", "--json", str(out),
                       *extra)
    assert code == 0, output
    return json.loads(out.read_text())


def check_judge(report: dict, judge: str, ref: list[str], pred: list[str], key: str = "(all)") -> None:
    """judgekit's κ and % agreement of ``judge`` against the reference = the test's own figures."""
    sl = next(s for s in report["slices"] if s["key"] == key or (key == "(all)" and s["by"] is None))
    v = sl["judges"][judge]["vs_reference"]
    assert v["kappa"]["value"] == pytest.approx(cohen_kappa_score(ref, pred), abs=5e-7)  # the JSON report keeps 6 decimals
    agree = sum(a == b for a, b in zip(ref, pred, strict=True)) / len(ref)
    assert v["percent_agreement"]["value"] == pytest.approx(agree, abs=5e-7)  # the JSON report keeps 6 decimals
    assert v["n"] == len(ref)


def _labels(n: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Reference labels and two judges that agree with it about 80% of the time."""
    rng = random.Random(seed)
    ref = [rng.randint(0, 1) for _ in range(n)]
    j1 = [r if rng.random() < 0.8 else 1 - r for r in ref]
    j2 = [r if rng.random() < 0.75 else 1 - r for r in ref]
    return ref, j1, j2


# ---------------------------------------------------------------------------- --map
def test_underscore_id_and_Response_columns_with_0_1_and_yes_no_judges(env):
    """A judge-validation CSV as shipped: ``_id``, ``goal``, ``Response``, human majority 0/1, a
    judge answering 0/1 and one answering yes/no: one command, and κ is sklearn's."""
    tmp_path, rubric, db = env
    ref, j1, j2 = _labels(40, seed=1)
    rows = ["_id,goal,Response,human_majority,harmbench_cls,llamaguard"]
    for i in range(40):
        response = "42" if i == 0 else f"response {i}, with a comma"
        rows.append(f'{i + 100},goal {i},"{response}",{ref[i]},{j1[i]},{"yes" if j2[i] else "no"}')
    f = tmp_path / "judge_comparison.csv"
    f.write_text("\n".join(rows) + "\n")
    code, output = run("import", str(f), "--rubric", rubric, "--store", db,
                       "--map", "item_id=_id,response=Response,prompt=goal",
                       "--reference", "majority=human_majority", "--judges", "hb=harmbench_cls,lg=llamaguard")
    assert code == 0, output
    assert "Imported 120 ratings of 40 items" in output
    with Store(db) as s:
        items = s.items().set_index("item_id")
    # the mapped columns are read as judgekit's fields: the id and a response "42" stay text
    assert sorted(items.index) == sorted(str(i + 100) for i in range(40))
    assert items.loc["100", "response"] == "42" and items.loc["100", "prompt"] == "goal 0"
    assert items.loc["101", "response"] == "response 1, with a comma"
    report = agreement(rubric, db, tmp_path, "--reference", "majority")
    truth = [CODE[r] for r in ref]
    check_judge(report, "hb", truth, [CODE[v] for v in j1])
    check_judge(report, "lg", truth, [CODE[v] for v in j2])


def test_map_works_for_jsonl_json_and_parquet(env):
    tmp_path, rubric, db = env
    rows = [{"id": f"q{i}", "completion": f"text {i}", "annotator": "yes" if i % 3 else "no",
             "judge": i % 2} for i in range(9)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "a.json").write_text(json.dumps(rows))
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "a.parquet")
    for name in ("a.jsonl", "a.json", "a.parquet"):
        db_n = str(tmp_path / f"{name}.db")
        code, output = run("import", str(tmp_path / name), "--rubric", rubric, "--store", db_n,
                           "--map", "item_id=id,response=completion", "--raters", "annotator",
                           "--judges", "judge")
        assert code == 0, (name, output)
        with Store(db_n) as s:
            r = s.ratings().set_index(["item_id", "rater_id"])["label"]
            assert s.items().set_index("item_id").loc["q4", "response"] == "text 4"
        for row in rows:
            assert r[(row["id"], "annotator")] == CODE[row["annotator"]], name
            assert r[(row["id"], "judge")] == CODE[row["judge"]], name


def test_missing_column_lists_every_column_hidden_ones_too_and_suggests_the_closest(env):
    tmp_path, rubric, db = env
    cols = ["_id", "_split", *[f"c{i}" for i in range(13)], "Response", "llamaguard"]
    f = tmp_path / "wide.csv"
    f.write_text(",".join(cols) + "\n" + ",".join(["x"] * (len(cols) - 1) + ["yes"]) + "\n")
    code, output = run("import", str(f), "--rubric", rubric, "--store", db, "--judges", "llamaguard")
    message = one_sentence_error((code, output))
    assert "missing column 'item_id'" in message
    for col in cols:  # every column, the _-prefixed and the 13th and later ones too
        assert repr(col) in message, col
    assert "the closest is '_id'; name the file's column with --map item_id=_id" in message
    # a file of 70 columns: the first 60 and how many more, never a silent cut
    many = [f"col{i}" for i in range(70)]
    f.write_text(",".join(many) + "\n" + ",".join("x" * 70) + "\n")
    message = one_sentence_error(run("import", str(f), "--rubric", rubric, "--store", db,
                                      "--judges", "col1"))
    assert "'col59', … and 10 more" in message and "'col60'" not in message


# ---------------------------------------------------------------------------- JSON shapes, ids, joins
def test_object_of_lists_without_ids_joined_to_metadata_on_behavior_id(env):
    """``{behavior_id: [record, ...]}`` with no ids, its metadata in a separate CSV named
    otherwise (``BehaviorID``): one import, and agreement by category is sklearn's."""
    tmp_path, rubric, db = env
    rng = random.Random(7)
    behaviors = {f"b{k}": ("cyber" if k % 2 else "chem") for k in range(6)}
    data: dict[str, list[dict]] = {}
    truth: dict[str, list[tuple[str, str]]] = {"cyber": [], "chem": []}
    for b, cat in behaviors.items():
        data[b] = []
        for t in range(5):
            human = rng.randint(0, 1)
            judge = human if rng.random() < 0.7 else 1 - human
            data[b].append({"completion": f"{b} answer {t}", "human": human, "judge": "yes" if judge else "no"})
            truth[cat].append((CODE[human], CODE["yes" if judge else "no"]))
    f = tmp_path / "by_behavior.json"
    f.write_text(json.dumps(data))
    meta = tmp_path / "behaviors.csv"
    meta.write_text("BehaviorID,Behavior,category\n"
                    + "".join(f"{b},do {b},{c}\n" for b, c in behaviors.items()))
    code, output = run("import", str(f), "--rubric", rubric, "--store", db, "--key-column", "behavior_id",
                       "--id-from", "content", "--map", "response=completion", "--reference", "human",
                       "--judges", "judge", "--items", str(meta), "--join-on", "behavior_id=BehaviorID",
                       "--items-map", "prompt=Behavior")
    assert code == 0, output
    assert "(--id-from content)" in output and "'c-" in output  # the user is told how ids were made
    with Store(db) as s:
        items = s.items().set_index("item_id")
    assert len(items) == 30
    first = items.loc[_content_id("do b0", "b0 answer 0")]  # the id: the stored text's, computed here
    assert (first["behavior_id"], first["category"], first["prompt"]) == ("b0", "chem", "do b0")
    report = agreement(rubric, db, tmp_path, "--by", "category")
    for cat, pairs in truth.items():
        check_judge(report, "judge", [a for a, _ in pairs], [b for _, b in pairs], key=cat)


def _content_id(prompt: str | None, response: str, messages: str | None = None) -> str:
    """``c-`` + the first 16 hex digits of SHA-256 of the JSON text [prompt, messages, response]."""
    blob = json.dumps([prompt, messages, response], ensure_ascii=False).encode()
    return "c-" + hashlib.sha256(blob).hexdigest()[:16]


def test_content_ids_are_the_same_in_every_file(env):
    """Humans in one CSV, a judge in a JSONL of another order and naming: --id-from content gives
    the same output the same id, so they meet on the same items."""
    tmp_path, rubric, db = env
    ref, j1, _ = _labels(25, seed=3)
    humans = tmp_path / "humans.csv"
    humans.write_text("prompt,response,ann\n" + "".join(f"p{i},out {i},{ref[i]}\n" for i in range(25)))
    judged = tmp_path / "judged.jsonl"
    order = list(range(25))[::-1]
    judged.write_text("".join(json.dumps({"question": f"p{i}", "answer": f"out {i}", "verdict": j1[i]}) + "\n"
                              for i in order))
    code, output = run("import", str(humans), "--rubric", rubric, "--store", db, "--id-from", "content",
                       "--reference", "ann")
    assert code == 0, output
    code, output = run("import", str(judged), "--rubric", rubric, "--store", db, "--id-from", "content",
                       "--map", "prompt=question,response=answer", "--judges", "verdict")
    assert code == 0, output
    with Store(db) as s:
        ids = set(s.items()["item_id"])
    assert ids == {_content_id(f"p{i}", f"out {i}") for i in range(25)}
    check_judge(agreement(rubric, db, tmp_path), "verdict", [CODE[v] for v in ref], [CODE[v] for v in j1])


def test_id_from_row_and_long_content_ids(env):
    tmp_path, rubric, db = env
    f = tmp_path / "noids.csv"
    f.write_text("response,ann,bot\nsame,1,1\nsame,0,1\nother,1,0\n")  # the same text twice
    code, output = run("import", str(f), "--rubric", rubric, "--store", db, "--id-from", "row",
                       "--raters", "ann", "--judges", "bot")
    assert code == 0, output
    stem = "noids.csv@" + hashlib.sha256(str(f.resolve()).encode()).hexdigest()[:8]
    assert f"'{stem}:1' is the first row under the header, '{stem}:3' the last" in output
    with Store(db) as s:
        r = s.ratings().set_index(["item_id", "rater_id"])["label"]
    assert r[(f"{stem}:2", "ann")] == "not_harmful" and r[(f"{stem}:3", "bot")] == "not_harmful"
    # a long file (one row per rating): content ids group the rows of one output
    long = tmp_path / "long.csv"
    long.write_text("prompt,response,rater_id,label\np,r,ann,yes\np,r,bob,no\np,r2,ann,no\n")
    code, output = run("import", str(long), "--rubric", rubric, "--store", db, "--id-from", "content")
    assert code == 0, output
    with Store(db) as s:
        r = s.ratings()
    assert sorted(r[r["item_id"] == _content_id("p", "r")]["rater_id"]) == ["ann", "bob"]


def test_jsonl_flatten_nested_objects_to_dotted_columns(env):
    tmp_path, rubric, db = env
    ref, j1, _ = _labels(12, seed=5)
    rows = [{"id": i, "output": {"text": f"t{i}", "meta": {"model": f"m{i % 2}"}},
             "labels": {"human": ref[i], "judge": "yes" if j1[i] else "no"}, "tags": ["a", "b"]}
            for i in range(12)]
    f = tmp_path / "nested.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, output = run("import", str(f), "--rubric", rubric, "--store", db, "--flatten",
                       "--map", "item_id=id,response=output.text", "--reference", "human=labels.human",
                       "--judges", "judge=labels.judge")
    assert code == 0, output
    with Store(db) as s:
        items = s.items().set_index("item_id")
    assert items.loc["3", "response"] == "t3" and items.loc["3", "output.meta.model"] == "m1"
    assert items.loc["3", "tags"] == '["a", "b"]'  # a list stays one value
    report = agreement(rubric, db, tmp_path, "--by", "output.meta.model")
    for m in ("m0", "m1"):
        idx = [i for i in range(12) if f"m{i % 2}" == m]
        check_judge(report, "judge", [CODE[ref[i]] for i in idx], [CODE["yes" if j1[i] else "no"] for i in idx],
                    key=m)


def test_parquet_structs_flatten_and_object_with_one_list_of_rows(env):
    tmp_path, rubric, db = env
    rows = [{"item_id": f"i{i}", "response": f"r{i}", "meta": {"source": "s", "k": i}, "ann": i % 2}
            for i in range(4)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "a.parquet")
    code, output = run("import", str(tmp_path / "a.parquet"), "--rubric", rubric, "--store", db, "--flatten",
                       "--raters", "ann")
    assert code == 0, output
    with Store(db) as s:
        items = s.items().set_index("item_id")
    assert items.loc["i3", "meta.k"] == 3 and items.loc["i3", "meta.source"] == "s"
    # {"version": ..., "data": [rows]}: the one list of rows under a key
    (tmp_path / "wrapped.json").write_text(json.dumps({"version": 2, "data": [
        {"item_id": "w1", "response": "x", "ann": "yes"}, {"item_id": "w2", "response": "y", "ann": "no"}]}))
    code, output = run("import", str(tmp_path / "wrapped.json"), "--rubric", rubric, "--store", db,
                       "--raters", "ann")
    assert code == 0, output
    with Store(db) as s:
        r = s.ratings().set_index("item_id")["label"]
    assert (r["w1"], r["w2"]) == ("harmful", "not_harmful")


def test_a_bad_join_stores_nothing(env):
    tmp_path, rubric, db = env
    good = tmp_path / "good.csv"
    good.write_text("item_id,response,ann\na,r,1\n")
    assert run("import", str(good), "--rubric", rubric, "--store", db, "--raters", "ann")[0] == 0
    before = store_dump(db)
    f = tmp_path / "r.csv"
    f.write_text("_id,Response,ann,behavior_id\nx,r1,1,b1\ny,r2,0,b2\n")
    meta = tmp_path / "meta.csv"
    meta.write_text("behavior_id,category\nb1,cyber\n")
    message = one_sentence_error(run("import", str(f), "--rubric", rubric, "--store", db,
                                      "--map", "item_id=_id,response=Response", "--raters", "ann",
                                      "--items", str(meta), "--join-on", "behavior_id"))
    assert "item 'y' has behavior_id 'b2', which is not in" in message and "meta.csv" in message
    assert store_dump(db) == before


def test_items_map_renames_the_items_file_joined_on_item_id(env):
    tmp_path, rubric, db = env
    f = tmp_path / "r.csv"
    f.write_text("item_id,ann\na,1\nb,no\n")
    meta = tmp_path / "meta.jsonl"
    meta.write_text(json.dumps({"id": "a", "text": "ra", "src": "s1"}) + "\n"
                    + json.dumps({"id": "b", "text": "rb", "src": "s2"}) + "\n")
    code, output = run("import", str(f), "--rubric", rubric, "--store", db, "--raters", "ann",
                       "--items", str(meta), "--items-map", "item_id=id,response=text")
    assert code == 0, output
    with Store(db) as s:
        items = s.items().set_index("item_id")
    assert items.loc["b", "response"] == "rb" and items.loc["a", "src"] == "s1"
