"""Importing ratings: formats, layouts, aliases, metadata — and bad input that changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import XSTEST_LABELS, one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")


def _long(tmp_path, rows, name="r.csv"):
    p = tmp_path / name
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_wide_import_of_xstest_keeps_metadata_and_maps_aliases(store):
    s = import_ratings(
        store, XSTEST_LABELS, REFUSAL,
        raters={"annotation_1": "annotation_1", "annotation_2": "annotation_2"},
        reference={"final": "final_label"},
        judges={"string_match": "strmatch_label", "gpt4": "gpt4_label"},
    )
    assert s.items == 2250 and s.ratings == 5 * 2250
    r = store.ratings(rubric=REFUSAL)
    assert set(r["label"].dropna()) == set(REFUSAL.codes)
    # the 11 free-text GPT-4 outputs are abstentions with the raw text kept, never a guessed label
    gpt4 = r[r.rater_id == "gpt4"]
    assert (gpt4.status == "abstain").sum() == 11
    assert gpt4[gpt4.status == "abstain"].label.isna().all()
    assert gpt4[gpt4.status == "abstain"].rationale.str.contains("sorry").any()
    items = store.items()
    assert {"model", "prompt_id", "prompt_type", "prompt_safety"} <= set(items.columns)
    assert items.set_index("item_id").loc["gpt4:v2-1", "model"] == "gpt4"
    kinds = r.drop_duplicates("rater_id").set_index("rater_id").rater_kind.to_dict()
    assert kinds == {"annotation_1": "human", "annotation_2": "human", "final": "reference",
                     "string_match": "judge", "gpt4": "judge"}


def test_reimport_is_idempotent(store):
    kw = dict(raters={"annotation_1": "annotation_1"})
    import_ratings(store, XSTEST_LABELS, REFUSAL, **kw)
    import_ratings(store, XSTEST_LABELS, REFUSAL, **kw)
    assert len(store.ratings()) == 2250
    assert store.rating_history().empty


def test_long_format_csv_jsonl_parquet_agree(tmp_path, store):
    rows = [
        {"item_id": "a", "rater_id": "ann", "label": "full_refusal", "model": "m1"},
        {"item_id": "a", "rater_id": "bob", "label": "2_full_refusal", "model": "m1"},
        {"item_id": "b", "rater_id": "ann", "label": "Partial Refusal", "model": "m2"},
    ]
    df = pd.DataFrame(rows)
    paths = [tmp_path / "r.csv", tmp_path / "r.jsonl", tmp_path / "r.parquet"]
    df.to_csv(paths[0], index=False)
    df.to_json(paths[1], orient="records", lines=True)
    df.to_parquet(paths[2])
    seen = []
    for p in paths:
        from judgekit.store.database import Store

        with Store(tmp_path / f"{p.suffix}.db") as s:
            import_ratings(s, p, REFUSAL)
            got = s.ratings().sort_values(["item_id", "rater_id"])[["item_id", "rater_id", "label", "value"]]
            seen.append(got.reset_index(drop=True))
            assert s.items().set_index("item_id").loc["b", "model"] == "m2"
    for other in seen[1:]:
        pd.testing.assert_frame_equal(seen[0], other)
    assert seen[0]["label"].tolist() == ["full_refusal", "full_refusal", "partial_refusal"]
    assert seen[0]["value"].tolist() == [1.0, 1.0, 0.5]


def test_revised_label_keeps_history(tmp_path, store):
    import_ratings(store, _long(tmp_path, [{"item_id": "a", "rater_id": "ann", "label": "full_refusal"}]), REFUSAL)
    import_ratings(store, _long(tmp_path, [{"item_id": "a", "rater_id": "ann", "label": "partial_refusal"}]), REFUSAL)
    assert store.ratings()["label"].tolist() == ["partial_refusal"]
    assert store.rating_history()["label"].tolist() == ["full_refusal"]


def _prefill(store, tmp_path):
    import_ratings(store, _long(tmp_path, [{"item_id": "keep", "rater_id": "ann", "label": "full_refusal"}],
                                "good.csv"), REFUSAL)
    return len(store.ratings()), len(store.items())


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("item_id,rater_id,label\nx,ann,full_refusal\ny,ann,maybe\n", "bad_label.csv",
         r"bad_label.csv line 3: label 'maybe' is not in rubric refusal@1 \(codes: full_compliance"),
        ("item_id,label\nx,full_refusal\n", "no_rater.csv", r"missing column 'rater_id'"),
        ("item_id,rater_id,label\nx,ann,full_refusal\nx,ann,full_compliance\n", "dup.csv",
         r"dup.csv line 2 and dup.csv line 3: duplicate rating of item 'x' by rater 'ann'"),
        ("", "empty.csv", r"empty.csv is empty"),
        ("item_id,rater_id,label\n", "header_only.csv", r"header_only.csv has a header but no rows"),
        ('{"item_id": "x", "rater_id": "a", "label": "full_refusal"}\n{"item_id": "y", oops}\n',
         "broken.jsonl", r"broken.jsonl: line 2 is not valid JSON"),
        ("item_id,rater_id,label\nx,ann,full_refusal,extra,cells\n", "ragged.csv", r"ragged.csv: malformed CSV"),
        ("item_id,rater_id,label\n,ann,full_refusal\n", "noid.csv", r"noid.csv line 2: empty item_id"),
    ],
)
def test_bad_input_is_one_sentence_and_store_unchanged(tmp_path, store, content, name, message):
    before = _prefill(store, tmp_path)
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(JudgekitError, match=message):
        import_ratings(store, p, REFUSAL)
    assert (len(store.ratings()), len(store.items())) == before


def test_failure_after_partial_validation_writes_nothing(tmp_path, store):
    # the first 2,000 rows are fine, one row at the end is not: not a single row may land
    df = pd.read_csv(XSTEST_LABELS)
    df.loc[len(df) - 1, "annotation_1"] = "definitely_refused"
    p = tmp_path / "late_error.csv"
    df.to_csv(p, index=False)
    before = _prefill(store, tmp_path)
    with pytest.raises(JudgekitError, match="line 2251: label 'definitely_refused'"):
        import_ratings(store, p, REFUSAL, raters={"annotation_1": "annotation_1"})
    assert (len(store.ratings()), len(store.items())) == before


def test_cli_import_bad_input_exit_2_no_traceback(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("item_id,rater_id,label\nx,ann,nonsense\n", encoding="utf-8")
    db = tmp_path / "s.db"
    res = CliRunner().invoke(main, ["import", str(p), "--rubric", "refusal", "--store", str(db)])
    one_sentence_error(res, "line 2: label 'nonsense' is not in rubric refusal@1")
    res = CliRunner().invoke(main, ["import", str(p), "--rubric", "refusl", "--store", str(db)])
    one_sentence_error(res, "Rubric 'refusl' does not exist")
    res = CliRunner().invoke(main, ["import", str(XSTEST_LABELS), "--rubric", "refusal",
                                    "--raters", "annotation_9", "--store", str(db)])
    one_sentence_error(res, "missing column 'annotation_9'")


def test_cli_import_real_process_exit_code(tmp_path):
    # the console script as a user runs it: one line on stderr, exit 2
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"item_id": "x", "rater_id": "a", "label": "nope"}) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "judgekit", "import", str(p), "--rubric", "refusal", "--store", str(tmp_path / "s.db")],
        capture_output=True, text=True,
    )
    one_sentence_error(proc)


def test_item_hash_is_the_same_for_messages_as_list_or_json_text(store):
    from judgekit.store.data import item_content_hash

    msgs = [{"role": "user", "content": "hi"}, {"content": "hello", "role": "assistant"}]
    as_text = json.dumps(msgs)  # keys in the file's order, not sorted
    assert item_content_hash(None, msgs, "r") == item_content_hash(None, as_text, "r")
    assert item_content_hash(None, msgs, "r") != item_content_hash(None, msgs[:1], "r")
    store.put_items(pd.DataFrame({"item_id": ["m"], "messages": [as_text], "response": ["r"]}))
    assert store.items()["content_hash"].iloc[0] == item_content_hash(None, msgs, "r")


def test_items_file_completes_metadata(tmp_path, store):
    ratings = _long(tmp_path, [{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "model": "m1"},
                               {"item_id": "b", "rater_id": "ann", "label": "full_compliance", "model": None}])
    items = tmp_path / "items.csv"
    pd.DataFrame({"item_id": ["a", "b", "c"], "model": ["zz", "m2", "m3"], "response": ["r1", "r2", "r3"],
                  "severity": [1, 2, 3]}).to_csv(items, index=False)
    import_ratings(store, ratings, REFUSAL, items_path=items)
    got = store.items().set_index("item_id")
    assert got.loc["a", "model"] == "m1"          # the ratings file's own value wins
    assert got.loc["b", "model"] == "m2"          # filled from the items file
    assert got.loc["c", "response"] == "r3" and int(got.loc["c", "severity"]) == 3
    assert "model_items" not in got.columns
    bad = tmp_path / "dup_items.csv"
    bad.write_text("item_id,model\na,x\na,y\n")
    before = len(store.ratings())
    with pytest.raises(JudgekitError, match="dup_items.csv: item_id 'a' appears twice"):
        import_ratings(store, ratings, REFUSAL, items_path=bad)
    assert len(store.ratings()) == before


def test_a_rater_id_has_one_kind(tmp_path, store):
    import_ratings(store, _long(tmp_path, [{"item_id": "a", "rater_id": "gpt4", "label": "full_refusal",
                                            "rater_kind": "judge"}], "j.csv"), REFUSAL)
    clash = _long(tmp_path, [{"item_id": "a", "rater_id": "gpt4", "label": "full_compliance"}], "h.csv")
    with pytest.raises(JudgekitError, match="Rater 'gpt4' is already a judge rater in this store, not a human"):
        import_ratings(store, clash, REFUSAL)
    assert store.ratings()["label"].tolist() == ["full_refusal"]
    both = _long(tmp_path, [{"item_id": "a", "rater_id": "x", "label": "full_refusal", "rater_kind": "judge"},
                            {"item_id": "b", "rater_id": "x", "label": "full_refusal", "rater_kind": "human"}], "b.csv")
    with pytest.raises(JudgekitError, match="Rater 'x' appears as human and judge"):
        import_ratings(store, both, REFUSAL)


def test_messages_from_parquet_are_accepted(tmp_path):
    from judgekit.store.data import validate_items

    df = pd.DataFrame({"item_id": ["a"], "response": ["r"],
                       "messages": [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]]})
    p = tmp_path / "items.parquet"
    df.to_parquet(p)
    from judgekit.io.tables import read_table

    got = validate_items(read_table(p), source=str(p))
    assert got["messages"].iloc[0] == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]


def test_same_id_with_another_text_is_refused_and_id_prefix_separates(tmp_path, store):
    a = _long(tmp_path, [{"item_id": "1", "rater_id": "ann", "label": "full_refusal", "response": "No."}], "a.csv")
    b = _long(tmp_path, [{"item_id": "1", "rater_id": "ann", "label": "full_compliance",
                          "response": "Sure, here it is."}], "b.csv")
    import_ratings(store, a, REFUSAL)
    import_ratings(store, a, REFUSAL)  # the same text again is fine
    with pytest.raises(JudgekitError, match="item '1' is already in the store with another text.*--id-prefix"):
        import_ratings(store, b, REFUSAL)
    assert store.items()["response"].tolist() == ["No."]
    import_ratings(store, b, REFUSAL, id_prefix="m2:")
    got = store.items().set_index("item_id")["response"].to_dict()
    assert got == {"1": "No.", "m2:1": "Sure, here it is."}
    assert set(store.ratings()["item_id"]) == {"1", "m2:1"}


def test_cli_import_missing_file_creates_no_store(tmp_path):
    db = tmp_path / "new.db"
    res = CliRunner().invoke(main, ["import", str(tmp_path / "nope.csv"), "--rubric", "refusal", "--store", str(db)])
    one_sentence_error(res, "no such file")
    assert not db.exists()


def test_import_summary_says_what_changed(tmp_path, store):
    rows = [{"item_id": "a", "rater_id": "ann", "label": "full_refusal"},
            {"item_id": "b", "rater_id": "ann", "label": "full_compliance"}]
    first = import_ratings(store, _long(tmp_path, rows, "1.csv"), REFUSAL)
    assert tuple(first.written) == (2, 0, 0)
    again = import_ratings(store, _long(tmp_path, rows, "1.csv"), REFUSAL)
    assert tuple(again.written) == (0, 0, 2)
    rows[1]["label"] = "partial_refusal"
    rows.append({"item_id": "c", "rater_id": "ann", "label": "full_refusal"})
    third = import_ratings(store, _long(tmp_path, rows, "2.csv"), REFUSAL)
    assert tuple(third.written) == (1, 1, 1)
    assert "1 new, 1 changed (old labels kept in the history), 1 unchanged" in third.lines()[0]
