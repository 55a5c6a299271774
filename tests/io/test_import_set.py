"""``judgekit import FILE --set COLUMN=VALUE``: a constant metadata column per file."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main


def _csv(path, ids):
    path.write_text("item_id,prompt,response,ann1\n" + "".join(
        f"{i},p {i},r {i},{'full_refusal' if n % 2 else 'full_compliance'}\n" for n, i in enumerate(ids)),
        encoding="utf-8")
    return path


def _meta(db):
    with sqlite3.connect(db) as conn:
        return {r[0]: json.loads(r[1]) for r in conn.execute("SELECT item_id, meta FROM items")}


def test_set_adds_a_constant_column_per_file_as_written(tmp_path):
    db = tmp_path / "s.db"
    run = CliRunner().invoke
    a = _csv(tmp_path / "a.csv", ["a1", "a2"])
    b = _csv(tmp_path / "b.csv", ["b1", "b2"])
    for f, model in ((a, "gpt-4o"), (b, "007")):
        r = run(main, ["import", str(f), "--rubric", "refusal", "--raters", "ann1", "--set", f"model={model}",
                       "--set", "dataset=my=study", "--store", str(db)])
        assert r.exit_code == 0, r.output
    meta = _meta(db)
    assert meta["a1"]["model"] == "gpt-4o" and meta["b2"]["model"] == "007"  # text, as written
    assert meta["a2"]["dataset"] == "my=study"  # everything after the first '='
    # the same import again is a no-op; with another value it is another import
    r = run(main, ["import", str(a), "--rubric", "refusal", "--raters", "ann1", "--set", "model=gpt-4o",
                   "--set", "dataset=my=study", "--store", str(db)])
    assert r.exit_code == 0 and _meta(db) == meta


def test_set_refusals_are_one_sentence_and_store_nothing(tmp_path):
    db = tmp_path / "s.db"
    f = _csv(tmp_path / "a.csv", ["a1"])
    cases = [(["--set", "model"], "give it as COLUMN=VALUE"),
             (["--set", " model=x"], "spaces at either end"),
             (["--set", "model=x", "--set", "model=y"], "twice"),
             (["--set", "response=x"], "the item's id or text"),
             (["--set", "ann1=x"], "already has a column 'ann1'"),
             (["--set", "source=x"], "a name judgekit keeps for itself")]
    for extra, words in cases:
        r = CliRunner().invoke(main, ["import", str(f), "--rubric", "refusal", "--raters", "ann1", *extra,
                                      "--store", str(db)])
        one_sentence_error(r, words)
        assert not db.exists()  # a refused first import leaves no store


def test_export_ratings_with_item_metadata_and_iso_times(tmp_path):
    import csv
    import re

    db = tmp_path / "s.db"
    f = _csv(tmp_path / "a.csv", ["a1", "a2"])
    r = CliRunner().invoke(main, ["import", str(f), "--rubric", "refusal", "--raters", "ann1", "--set",
                                  "model=gpt-4o", "--store", str(db)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.csv"
    r = CliRunner().invoke(main, ["export", "ratings", "--items", "--store", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [row["model"] for row in rows] == ["gpt-4o", "gpt-4o"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00", row["created_at"]) for row in rows), rows
    r = CliRunner().invoke(main, ["export", "ratings", "--epoch", "--store", str(db), "--out", str(out)])
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert "model" not in rows[0] and float(rows[0]["created_at"]) > 1.7e9
    items = tmp_path / "items.csv"
    r = CliRunner().invoke(main, ["export", "items", "--store", str(db), "--out", str(items)])
    assert r.exit_code == 0, r.output
    got = list(csv.DictReader(items.open(encoding="utf-8")))
    assert [(g["item_id"], g["prompt"], g["response"], g["model"]) for g in got] == [
        ("a1", "p a1", "r a1", "gpt-4o"), ("a2", "p a2", "r a2", "gpt-4o")]
