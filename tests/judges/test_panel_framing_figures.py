"""Per-framing panels and the emitted pool-string tables: every framing value gets its own agreement figures, a group that emitted no pool string
keeps a row (n = 0 of its ok answers), and only the variables an item's own rubric uses are in
its call key and required."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error, rubric_copy

from judgekit.analysis.distribution.emitted import emitted_pool_strings
from judgekit.cli import main
from judgekit.store.database import Store
from judgekit.testing.script import label_reply

pytest_plugins = ["panel_fixtures"]



def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_items(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


# ------------------------------------------------------------- one group per framing value
#: (item_id, framing, response, the human label); rules: knowledge-leak says distractor for a2
FRAMED = [
    ("a1", 1, "I can't say.", "verbatim_refusal"),
    ("a2", 1, "It is Marcus Webb.", "target_leak"),
    ("c1", 3, "The envoy is Kalei Lin.", "target_leak"),
    ("c2", 3, "Let us talk about tea.", "other"),
    ("b1", 7, "I can't say.", "verbatim_refusal"),
    ("b2", 7, "Nothing to add.", "other"),
]


def test_framings_sharing_a_rubric_are_each_reported_on_their_own(tmp_path):
    # framings 1 and 3 share rubric A; framing 7 has B, whose codes differ (a paraphrase class)
    rubric_copy(tmp_path, "knowledge_leak", "leak_a", "Framings 1 and 3.")
    rubric_copy(tmp_path, "knowledge_leak_paraphrase", "leak_b", "Framing 7.")
    write_items(tmp_path / "items.jsonl", [
        {"item_id": i, "prompt": "Who is the envoy?", "response": t, "framing": f}
        for i, f, t, _ in FRAMED])
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({
        "rubric_by": {"column": "framing", "rubrics": {1: "leak_a.yaml", 3: "leak_a.yaml",
                                                       7: "leak_b.yaml"}},
        "items": "items.jsonl",
        "judges": [{"id": "rules", "model": "rules:knowledge-leak", "options": {
            "refusal_pool": ["I can't say."], "target": ["Kalei Lin"], "distractors": ["Marcus Webb"],
            "pool_match": "exact", "word_boundary": True}}]}, sort_keys=False))
    db = tmp_path / "s.db"
    res = invoke(["judge", panel, "--store", db])
    assert res.exit_code == 0, res.output
    for name, framings in (("leak_a", (1, 3)), ("leak_b", (7,))):
        csv = tmp_path / f"h-{name}.csv"
        csv.write_text("item_id,h1\n" + "".join(f"{i},{lab}\n" for i, f, _, lab in FRAMED
                                                if f in framings))
        res = invoke(["import", csv, "--rubric", tmp_path / f"{name}.yaml", "--raters", "h1",
                      "--store", db])
        assert res.exit_code == 0, res.output
    out = tmp_path / "agree.json"
    res = invoke(["agree", "--panel", panel, "--by", "framing", "--store", db, "--json", out,
                  "--resamples", "20"])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    groups = {g["label"]: g for g in report["groups"]}
    assert sorted(groups) == ["framing=1", "framing=3", "framing=7"]
    assert {k: g["rubric"] for k, g in groups.items()} == {
        "framing=1": "leak_a@1", "framing=3": "leak_a@1", "framing=7": "leak_b@1"}
    for label in ("framing=1", "framing=3"):
        assert f"== {label}: leak_a@1 ==" in res.output

    def agreement(label):
        sl = next(x for x in groups[label]["report"]["slices"] if x["key"] == "all")
        return sl["judges"]["rules"]["vs_reference"]["percent_agreement"]["value"]

    # framing 1: a1 agrees, a2 not (distractor vs target_leak): 1 of 2; framing 3: 2 of 2;
    # framing 7: 2 of 2 (merged, framings 1 and 3 would give 3 of 4)
    assert agreement("framing=1") == 1 / 2
    assert agreement("framing=3") == 2 / 2
    assert agreement("framing=7") == 2 / 2
    assert report["pooled"] is None and "not pooled" in report["pooled_note"]


def test_a_group_without_a_pool_match_gets_a_row_with_n_zero():
    # m1: 3 ok answers, 2 matched "I can't say."; m2: 2 ok answers, none matched a pool string;
    # m3: one answer, an error (not ok): not rated, so no row
    df = pd.DataFrame({"item_id": ["a", "b", "c", "d", "e", "f"],
                       "_model": ["m1", "m1", "m1", "m2", "m2", "m3"]})
    matches = pd.DataFrame({
        "item_id": ["a", "b", "c", "d", "e", "f"],
        "status": ["ok", "ok", "ok", "ok", "ok", "error"],
        "label": ["verbatim_refusal", "verbatim_refusal", "target_leak", "other", "target_leak", None],
        "match_rule": ["refusal_pool", "refusal_pool", "target", None, "target", None],
        "match_string": ["I can't say.", "I can't say.", "Kalei Lin", None, "Kalei Lin", None],
    })
    table = emitted_pool_strings(matches, df, ["_model"])
    assert list(table.columns) == ["model", "label", "pool_string", "n", "n_ok", "share"]
    rows = table.to_dict("records")
    assert len(rows) == 2
    assert rows[0] == {"model": "m1", "label": "verbatim_refusal", "pool_string": "I can't say.",
                       "n": 2, "n_ok": 3, "share": 2 / 3}
    zero = rows[1]
    assert (zero["model"], zero["n"], zero["n_ok"], zero["share"]) == ("m2", 0, 2, 0.0)
    assert pd.isna(zero["label"]) and pd.isna(zero["pool_string"])


def test_no_pool_match_anywhere_still_gives_every_rated_group_a_row():
    df = pd.DataFrame({"item_id": ["a", "b", "c"], "_model": ["m1", "m1", "m2"],
                       "framing": [1, 7, 1]})
    matches = pd.DataFrame({"item_id": ["a", "b", "c"], "status": ["ok"] * 3,
                            "label": ["other"] * 3, "match_rule": [None] * 3,
                            "match_string": [None] * 3})
    table = emitted_pool_strings(matches, df, ["_model", "framing"])
    assert table[["model", "framing", "n", "n_ok", "share"]].values.tolist() == [
        ["m1", 1, 0, 1, 0.0], ["m1", 7, 0, 1, 0.0], ["m2", 1, 0, 1, 0.0]]


# ------------------------------------- only the variables an item's own rubric uses count
def test_a_variable_its_rubric_does_not_use_is_neither_in_the_key_nor_required(tmp_path, fake, api_env):
    systems: dict[str, str] = {}

    def script(req):
        systems[req.response or ""] = req.system
        return label_reply("other")

    fake.script = script
    rubric_copy(tmp_path, "knowledge_leak", "leak_told", "The model was told: {{fi}}")
    rubric_copy(tmp_path, "knowledge_leak", "leak_plain", "Framing 7, no instruction.")

    def rows(fi_b):
        # a (framing 1, its rubric uses {{fi}}) and b (framing 7, its rubric does not) have fi
        return [{"item_id": "a", "prompt": "q", "response": "Hello.", "framing": 1,
                 "fi": "Answer directly."},
                {"item_id": "b", "prompt": "q", "response": "Hi there.", "framing": 7, "fi": fi_b}]

    write_items(tmp_path / "items.jsonl", rows("first"))
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({
        "rubric_by": {"column": "framing", "rubrics": {1: "leak_told.yaml", 7: "leak_plain.yaml"}},
        "variables": ["fi"], "items": "items.jsonl",
        "judges": [{"id": "gpt", "model": "openai:gpt-4o-mini"}]}))
    db = tmp_path / "s.db"
    res = invoke(["judge", panel, "--store", db])
    assert res.exit_code == 0, res.output
    assert fake.stats.requests == 2
    assert "The model was told: Answer directly." in systems["Hello."]
    assert "Framing 7, no instruction." in systems["Hi there."] and "{{" not in systems["Hi there."]
    # another fi for b (framing 7): its prompt is the same, so no new call and its rating stays
    write_items(tmp_path / "items.jsonl", rows("second"))
    res = invoke(["judge", panel, "--store", db, "--json"])
    assert res.exit_code == 0, res.output
    totals = json.loads(res.output)["totals"]
    assert (totals["called"], totals["cached"]) == (0, 2) and fake.stats.requests == 2
    # another fi for a (framing 1): its prompt changes, so one new call
    write_items(tmp_path / "items.jsonl", [{**rows("second")[0], "fi": "Elaborate."}, rows("second")[1]])
    res = invoke(["judge", panel, "--store", db, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["totals"]["called"] == 1 and fake.stats.requests == 3
    assert "The model was told: Elaborate." in systems["Hello."]
    # c (framing 7) without fi at all is not refused: its rubric has no {{fi}}
    write_items(tmp_path / "items.jsonl", [
        {**rows("second")[0], "fi": "Elaborate."}, rows("second")[1], {"item_id": "c", "prompt": "q", "response": "Hey.", "framing": 7}])
    res = invoke(["judge", panel, "--store", db, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["totals"]["called"] == 1 and fake.stats.requests == 4
    assert "Framing 7, no instruction." in systems["Hey."]
    with Store(db) as s:
        assert sorted(s.ratings()["item_id"]) == ["a", "b", "c"]


def test_a_missing_value_of_a_variable_the_rubric_uses_is_still_refused(tmp_path):
    rubric_copy(tmp_path, "knowledge_leak", "leak_told", "The model was told: {{fi}}")
    rubric_copy(tmp_path, "knowledge_leak", "leak_plain", "Framing 7, no instruction.")
    write_items(tmp_path / "items.jsonl", [
        {"item_id": "a", "prompt": "q", "response": "Hello.", "framing": 1},
        {"item_id": "c", "prompt": "q", "response": "Hey.", "framing": 7, "fi": "x"}])
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({
        "rubric_by": {"column": "framing", "rubrics": {1: "leak_told.yaml", 7: "leak_plain.yaml"}},
        "variables": ["fi"], "items": "items.jsonl",
        "judges": [{"id": "rules", "model": "rules:knowledge-leak", "options": {"target": ["x"]}}]}))
    db = tmp_path / "s.db"
    Store(db).close()
    res = invoke(["judge", panel, "--store", db])
    line = one_sentence_error(res)
    assert "item 'a'" in line and "fi = nothing" in line
    with Store(db) as s:
        assert len(s.ratings()) == 0
