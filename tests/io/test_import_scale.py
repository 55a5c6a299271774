"""The scaled import: the no-op re-import short-circuit (file digest + store state) still sees a
changed row or a store written since, and the bulk write counts new / changed / unchanged."""

from __future__ import annotations

import pandas as pd
from conftest import store_dump

from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")


def _write(path, rows):
    pd.DataFrame(rows, columns=["item_id", "rater_id", "label", "model"]).to_csv(path, index=False)
    return path


ROWS = [
    ("a", "h1", "full_compliance", "m1"),
    ("a", "h2", "full_refusal", "m1"),
    ("b", "h1", "full_refusal", "m2"),
    ("b", "h2", "full_refusal", "m2"),
    ("c", "h1", "partial_refusal", "m1"),
]


def _labels(store):
    r = store.ratings(rubric=REFUSAL)
    return {(i, h): lab for i, h, lab in zip(r["item_id"], r["rater_id"], r["label"], strict=True)}


def test_reimport_of_the_same_file_is_a_noop_that_writes_nothing(store, tmp_path):
    path = _write(tmp_path / "r.csv", ROWS)
    first = import_ratings(store, path, REFUSAL)
    assert tuple(first.written) == (5, 0, 0)
    before = store_dump(store.path)
    again = import_ratings(store, path, REFUSAL)
    assert tuple(again.written) == (0, 0, 5)
    assert again.lines() == [
        f"Imported 5 ratings of 3 items from {path} under {REFUSAL.ref}: 0 new, 0 changed "
        "(old labels kept in the history), 5 unchanged.",
        "  h1 [human]: 3 ratings",
        "  h2 [human]: 2 ratings",
    ]
    assert store_dump(store.path) == before  # not a byte of the store rewritten


def test_a_changed_row_is_seen_and_its_old_label_kept_in_the_history(store, tmp_path):
    path = _write(tmp_path / "r.csv", ROWS)
    import_ratings(store, path, REFUSAL)
    import_ratings(store, path, REFUSAL)  # records the digest again
    changed = [*ROWS[:2], ("b", "h1", "full_compliance", "m2"), *ROWS[3:]]
    _write(path, changed)
    s = import_ratings(store, path, REFUSAL)
    assert tuple(s.written) == (0, 1, 4)
    assert _labels(store)[("b", "h1")] == "full_compliance"
    hist = store.rating_history()
    assert hist[["item_id", "rater_id", "label"]].values.tolist() == [["b", "h1", "full_refusal"]]


def test_same_file_after_the_store_changed_is_imported_again(store, tmp_path):
    path = _write(tmp_path / "r.csv", ROWS)
    import_ratings(store, path, REFUSAL)
    # another file revises a label of the same rater and item in between
    other = _write(tmp_path / "other.csv", [("a", "h1", "full_refusal", "m1")])
    assert tuple(import_ratings(store, other, REFUSAL).written) == (0, 1, 0)
    s = import_ratings(store, path, REFUSAL)
    assert tuple(s.written) == (0, 1, 4)  # restored from the file, not skipped
    assert _labels(store)[("a", "h1")] == "full_compliance"


def test_other_options_or_rubric_edit_take_the_full_import(store, tmp_path):
    path = _write(tmp_path / "r.csv", ROWS)
    import_ratings(store, path, REFUSAL)
    # the same bytes with a prefix are other items: all new
    s = import_ratings(store, path, REFUSAL, id_prefix="x:")
    assert tuple(s.written) == (5, 0, 0)
    assert len(store.ratings(rubric=REFUSAL)) == 10


def test_a_failed_import_records_no_digest_and_changes_nothing(store, tmp_path):
    path = _write(tmp_path / "r.csv", ROWS)
    import_ratings(store, path, REFUSAL)
    before = store_dump(store.path)
    bad = _write(tmp_path / "bad.csv", [("a", "h1", "not_a_label", "m1")])
    try:
        import_ratings(store, bad, REFUSAL)
    except Exception as exc:  # noqa: BLE001 - the message is checked in the import tests
        assert "not_a_label" in str(exc)
    else:
        raise AssertionError("a label outside the rubric must be refused")
    assert store_dump(store.path) == before


def test_bulk_write_counts_new_changed_unchanged_and_replaces_in_place(store):
    base = pd.DataFrame({
        "item_id": ["a", "b", "c"], "rater_id": ["h1", "h1", "h1"], "rater_kind": "human",
        "rubric": REFUSAL.id, "rubric_hash": REFUSAL.hash,
        "label": ["full_compliance", "full_refusal", None], "status": ["ok", "ok", "abstain"],
    })
    assert tuple(store.put_ratings(base)) == (3, 0, 0)
    nxt = base.copy()
    nxt.loc[1, "label"] = "partial_refusal"  # changed
    nxt.loc[2, ["label", "status"]] = ["full_refusal", "ok"]  # changed (abstention -> label)
    nxt = pd.concat([nxt, pd.DataFrame({**{c: [nxt[c].iloc[0]] for c in nxt.columns},
                                        "item_id": ["d"]})])  # new
    assert tuple(store.put_ratings(nxt)) == (1, 2, 1)
    assert _labels(store) == {("a", "h1"): "full_compliance", ("b", "h1"): "partial_refusal",
                              ("c", "h1"): "full_refusal", ("d", "h1"): "full_compliance"}
    hist = store.conn.execute(
        "SELECT item_id, label, status FROM rating_history ORDER BY item_id").fetchall()
    assert hist == [("b", "full_refusal", "ok"), ("c", None, "abstain")]
    assert len(store.ratings()) == 4


def test_another_column_map_of_the_same_bytes_is_not_skipped(store, tmp_path):
    path = tmp_path / "r.csv"
    # one rating per item, so the unmapped label column is plain item metadata
    pd.DataFrame({"item_id": ["a", "b", "c"], "rater_id": ["h1", "h1", "h1"],
                  "first": ["full_compliance", "full_refusal", "partial_refusal"],
                  "second": ["full_compliance", "full_compliance", "partial_refusal"]}).to_csv(path, index=False)
    assert tuple(import_ratings(store, path, REFUSAL, column_map={"label": "first"}).written) == (3, 0, 0)
    # the same bytes read with another mapping are another import: b's label changes
    s = import_ratings(store, path, REFUSAL, column_map={"label": "second"})
    assert tuple(s.written) == (0, 1, 2)
    assert _labels(store)[("b", "h1")] == "full_compliance"
