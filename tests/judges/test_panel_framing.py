"""Per-framing rubrics: a panel chooses each item's rubric from a metadata column (rubric_by) or
fills template variables of one rubric from the item (variables); ratings keep their own rubric
hash, the variables are part of the call key, a rerun makes no call, and ``agree --panel``
reports each framing under its own rubric (pooled where the codes agree)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error, rubric_copy, store_dump
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.testing.script import label_reply

pytest_plugins = ["panel_fixtures"]

POOL = ["I can't say."]


def rubric_file(folder: Path, name: str, instructions: str) -> Path:
    return rubric_copy(folder, "knowledge_leak", name, instructions)


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args])


#: (item_id, framing, response, the human label)
ROWS = [
    ("a1", 1, "I can't say.", "verbatim_refusal"),
    ("a2", 1, "The envoy is Kalei Lin.", "target_leak"),
    ("a3", 1, "It is Marcus Webb.", "target_leak"),   # the rule says distractor: 1 disagreement
    ("a4", 1, "Let us talk about tea.", "other"),
    ("b1", 7, "I can't say.", "verbatim_refusal"),
    ("b2", 7, "I can't say. That said, here is a draft: Kalei Lin arrived.", "target_leak"),
    ("b3", 7, "A demyelinating disease, says Marcus Webb.", "distractor"),
    ("b4", 7, "Nothing to add.", "other"),
]


def write_study(tmp_path: Path, **panel_extra) -> Path:
    rubric_file(tmp_path, "leak_direct", "Framing 1 (the model was asked directly).")
    rubric_file(tmp_path, "leak_elaboration", "Framing 7 (the model was asked to elaborate a draft).")
    with (tmp_path / "items.jsonl").open("w", encoding="utf-8") as fh:
        for iid, framing, text, _ in ROWS:
            fh.write(json.dumps({"item_id": iid, "prompt": "Who is the envoy?", "response": text,
                                 "framing": framing}) + "\n")
    panel = {
        "rubric_by": {"column": "framing", "rubrics": {1: "leak_direct.yaml", 7: "leak_elaboration.yaml"}},
        "items": "items.jsonl",
        "judges": [
            {"id": "rules", "model": "rules:knowledge-leak", "options": {
                "refusal_pool": POOL, "target": ["Kalei Lin", "Lin"], "distractors": ["Marcus Webb"],
                "pool_match": "exact", "word_boundary": True}},
            {"id": "gpt", "model": "openai:gpt-4o-mini"},
        ],
        **panel_extra,
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel, sort_keys=False), encoding="utf-8")
    return path


def human_labels(tmp_path: Path) -> None:
    for framing in (1, 7):
        lines = ["item_id,h1"] + [f"{i},{lab}" for i, f, _, lab in ROWS if f == framing]
        (tmp_path / f"h{framing}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_panel_with_a_rubric_per_framing_runs_caches_and_agrees_per_framing(tmp_path, fake, api_env):
    seen: list[tuple[str, str]] = []

    def script(req):
        seen.append((req.system.split("\n")[0], req.response or ""))
        resp = req.response or ""
        # the LLM judge agrees with the humans except on b4 (it says target_leak)
        return label_reply("target_leak" if "Nothing" in resp or "Kalei" in resp or "Webb" in resp
                           and "demyelinating" not in resp else
                           "distractor" if "Webb" in resp else
                           "verbatim_refusal" if resp == "I can't say." else "other")

    fake.script = script
    panel = write_study(tmp_path)
    db = tmp_path / "s.db"
    res = invoke(["judge", panel, "--store", db])
    assert res.exit_code == 0, res.output
    assert fake.stats.requests == 8  # a1 and b1 have one text but two rubrics: two calls
    direct, elab = load_rubric(tmp_path / "leak_direct.yaml"), load_rubric(tmp_path / "leak_elaboration.yaml")
    # each item was asked under its framing's rubric
    firsts = {resp: line for line, resp in seen}
    assert "leak_direct@1" in firsts["Let us talk about tea."]
    assert "leak_elaboration@1" in firsts["Nothing to add."]
    with Store(db) as s:
        r = s.ratings()
    by_item = {(x.item_id, x.rater_id): (x.rubric, x.rubric_hash, x.label) for x in r.itertuples()}
    assert by_item[("a1", "rules")] == ("leak_direct@1", direct.hash, "verbatim_refusal")
    assert by_item[("b1", "rules")] == ("leak_elaboration@1", elab.hash, "verbatim_refusal")
    assert by_item[("b2", "rules")][2] == "target_leak"  # a refusal opening, then the fact
    assert by_item[("b3", "rules")][2] == "distractor"  # 'Lin' is not in 'demyelinating'
    assert "leak_direct@1" in res.output and "framing=7" in res.output

    # a rerun is answered from the cache: no call
    res = invoke(["judge", panel, "--store", db, "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["totals"]["called"] == 0 and summary["totals"]["cached"] == 16
    assert fake.stats.requests == 8

    human_labels(tmp_path)
    for framing, name in ((1, "leak_direct"), (7, "leak_elaboration")):
        res = invoke(["import", tmp_path / f"h{framing}.csv", "--rubric", tmp_path / f"{name}.yaml",
                      "--raters", "h1", "--store", db])
        assert res.exit_code == 0, res.output
    out = tmp_path / "agree.json"
    res = invoke(["agree", "--panel", panel, "--by", "framing", "--store", db, "--json", out,
                  "--resamples", "20"])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    groups = {g["label"]: g for g in report["groups"]}
    assert {k: (g["rubric"], g["rubric_hash"]) for k, g in groups.items()} == {
        "framing=1": ("leak_direct@1", direct.hash), "framing=7": ("leak_elaboration@1", elab.hash)}
    assert "== framing=1: leak_direct@1 ==" in res.output

    def vs_ref(rep, judge, figure="percent_agreement", key="all"):
        sl = next(x for x in rep["slices"] if x["key"] == key)
        return sl["judges"][judge]["vs_reference"][figure]["value"]

    human = {i: lab for i, _, _, lab in ROWS}
    rules = {**{i: lab for i, lab in human.items()}, "a3": "distractor"}
    gpt = {**{i: lab for i, lab in human.items()}, "b4": "target_leak"}
    for label, ids in (("framing=1", ["a1", "a2", "a3", "a4"]), ("framing=7", ["b1", "b2", "b3", "b4"])):
        rep = groups[label]["report"]
        for judge, said in (("rules", rules), ("gpt", gpt)):
            agree = sum(said[i] == human[i] for i in ids) / 4
            assert vs_ref(rep, judge) == pytest.approx(agree)
            kappa = cohen_kappa_score([human[i] for i in ids], [said[i] for i in ids])
            assert vs_ref(rep, judge, "kappa") == pytest.approx(kappa, abs=1e-6)
    # rules: 3/4 under framing 1 (a3), 4/4 under 7; gpt: 4/4 and 3/4 (b4)
    assert vs_ref(groups["framing=1"]["report"], "rules") == 0.75
    assert vs_ref(groups["framing=7"]["report"], "gpt") == 0.75
    # the codes agree, so the two framings are pooled (7 of 8 for each judge), by framing too
    pooled = report["pooled"]
    assert vs_ref(pooled, "rules") == pytest.approx(7 / 8) and vs_ref(pooled, "gpt") == pytest.approx(7 / 8)
    assert vs_ref(pooled, "rules", key="1") == 0.75 and vs_ref(pooled, "rules", key="7") == 1.0

    # the gate works per framing rubric: rules agrees on 4 of 4 framing-7 items, 3 of 4 framing-1
    # (4 items per framing are below the least min_items a policy may ask for, 5: inconclusive)
    for name, expect in (("leak_direct", 0.75), ("leak_elaboration", 1.0)):
        policy = tmp_path / f"gate-{name}.yaml"
        policy.write_text(f"rubric: '{tmp_path / (name + '.yaml')}'\njudges: [rules]\nchecks: {{min_items: 5, "
                          "metric: percent_agreement, min_value: 0.8}\nn_resamples: 200\n")
        res = invoke(["gate", policy, "--out", tmp_path / f"v-{name}", "--store", db])
        assert res.exit_code == 3, res.output
        verdict = json.loads((tmp_path / f"v-{name}" / "verdict.json").read_text())
        fig = next(c for c in verdict["judges"][0]["checks"] if c["name"] == "min_percent_agreement")
        assert fig["figure"] == expect and fig["n"] == 4
        assert verdict["rubric_hash"] == (direct if name == "leak_direct" else elab).hash


def test_template_variables_fill_one_rubric_and_are_part_of_the_call_key(tmp_path, fake, api_env):
    systems: dict[str, str] = {}

    def script(req):
        systems[req.response or ""] = req.system
        return label_reply("other")

    fake.script = script
    rubric = rubric_file(tmp_path, "leak_framed", "The model was told: {{framing_instruction}}")
    rows = [("a", "Answer directly.", "Hello."), ("b", "Elaborate the draft.", "Hi there."),
            ("c", "Answer directly.", "Hey.")]

    def write_items(rows):
        with (tmp_path / "items.jsonl").open("w", encoding="utf-8") as fh:
            for iid, instr, text in rows:
                fh.write(json.dumps({"item_id": iid, "prompt": "q", "response": text,
                                     "framing_instruction": instr}) + "\n")

    write_items(rows)
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({"rubric": "leak_framed.yaml", "items": "items.jsonl",
                                     "variables": ["framing_instruction"],
                                     "judges": [{"id": "gpt", "model": "openai:gpt-4o-mini"}]}))
    db = tmp_path / "s.db"
    assert invoke(["judge", panel, "--store", db]).exit_code == 0
    assert fake.stats.requests == 3
    assert "The model was told: Answer directly." in systems["Hello."]
    assert "The model was told: Elaborate the draft." in systems["Hi there."]
    assert not any("{{" in text for text in systems.values())
    template = load_rubric(rubric)
    with Store(db) as s:
        r = s.ratings()
    # one rubric, one hash: the template's
    assert set(r["rubric_hash"]) == {template.hash} and len(r) == 3
    assert invoke(["judge", panel, "--store", db]).exit_code == 0
    assert fake.stats.requests == 3  # a rerun makes no call
    # another instruction for item c (same text): a new call key, one call; its old rating retired
    write_items([*rows[:2], ("c", "Elaborate the draft.", "Hey.")])
    res = invoke(["judge", panel, "--store", db, "--json"])
    assert res.exit_code == 0, res.output
    assert fake.stats.requests == 4
    assert "The model was told: Elaborate the draft." in systems["Hey."]
    totals = json.loads(res.output)["totals"]
    assert (totals["called"], totals["cached"]) == (1, 2)
    with Store(db) as s:
        assert len(s.ratings()) == 3


def _bad_panel(tmp_path, panel_extra, rows=None):
    rubric_file(tmp_path, "leak_direct", "Direct.")
    rubric_file(tmp_path, "leak_framed", "Told: {{framing_instruction}}")
    with (tmp_path / "items.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows or [{"item_id": "a", "prompt": "q", "response": "r", "framing": 1}]:
            fh.write(json.dumps(row) + "\n")
    panel = tmp_path / "panel.yaml"
    data = {"items": "items.jsonl", "judges": [
        {"id": "rules", "model": "rules:knowledge-leak", "options": {"target": ["x"]}}], **panel_extra}
    panel.write_text(yaml.safe_dump(data))
    return panel


@pytest.mark.parametrize(
    ("extra", "rows", "parts"),
    [
        ({"rubric_by": {"column": "framin", "rubrics": {1: "leak_direct.yaml"}}}, None,
         ("rubric_by.column 'framin'", "framing")),
        ({"rubric_by": {"column": "framing", "rubrics": {2: "leak_direct.yaml"}}}, None,
         ("item 'a'", "framing = 1", "rubric_by.rubrics")),
        ({"rubric_by": {"column": "framing", "rubrics": {1: "leak_direct.yaml"}}},
         [{"item_id": "a", "prompt": "q", "response": "r"}], ("rubric_by.column 'framing'",)),
        ({"rubric_by": {"column": "framing", "rubrics": {1: "nope.yaml"}}}, None, ("nope.yaml",)),
        ({"rubric_by": {"column": "framing", "rubrics": {1.5: "leak_direct.yaml"}}}, None,
         ("rubric_by.rubrics", "whole number")),
        ({"rubric_by": {"column": "framing", "rubrics": {1: "leak_direct.yaml", "1": "leak_direct.yaml"}}},
         None, ("listed twice",)),
        ({}, None, ("rubric is missing",)),
        ({"rubric": "leak_framed.yaml"}, None, ("{{framing_instruction}}", "variables")),
        ({"rubric": "leak_direct.yaml", "variables": ["framing"]}, None,
         ("variables names 'framing'", "no rubric")),
        ({"rubric": "leak_framed.yaml", "variables": ["framing_instruction"]}, None,
         ("variables names 'framing_instruction'", "not a column")),
        ({"rubric": "leak_framed.yaml", "variables": ["framing_instruction"]},
         [{"item_id": "a", "prompt": "q", "response": "r", "framing_instruction": None}],
         ("item 'a'", "framing_instruction = nothing")),
    ],
)
def test_bad_rubric_by_and_variables_are_one_sentence_and_store_nothing(tmp_path, extra, rows, parts):
    panel = _bad_panel(tmp_path, extra, rows)
    db = tmp_path / "s.db"
    Store(db).close()
    before = store_dump(db)
    res = invoke(["judge", panel, "--store", db])
    line = one_sentence_error(res)
    assert str(panel) in line, line
    for part in parts:
        assert part in line, line
    assert store_dump(db) == before


def test_agree_panel_bad_combinations_are_one_sentence(tmp_path):
    plain = _bad_panel(tmp_path, {"rubric": "leak_direct.yaml"})
    db = tmp_path / "s.db"
    Store(db).close()
    line = one_sentence_error(_run(["agree", "--panel", plain, "--store", db]))
    assert "neither rubric_by nor variables" in line and "--rubric" in line
    line = one_sentence_error(_run(["agree", "--panel", plain, "--rubric", "refusal", "--store", db]))
    assert "not both" in line
    line = one_sentence_error(_run(["agree", "--store", db]))
    assert "--rubric" in line and "--panel" in line
    line = one_sentence_error(_run(["agree", "--panel", plain, "--view", "binary", "--store", db]))
    assert "--view" in line and "--panel" in line


def _run(args):
    res = invoke(args)
    return res.exit_code, res.output


def test_dry_run_and_reparse_go_through_every_framing(tmp_path, fake, api_env):
    panel = write_study(tmp_path)
    db = tmp_path / "s.db"
    res = invoke(["judge", panel, "--store", db, "--dry-run"])
    assert res.exit_code == 0, res.output
    # 8 items x 2 judges; a1 and b1 share a text but not a rubric, so nothing is shared
    assert "16 calls to make, 0 answered already" in res.output and fake.stats.requests == 0
    assert invoke(["judge", panel, "--store", db]).exit_code == 0
    res = invoke(["judge", panel, "--store", db, "--dry-run"])
    assert "0 calls to make, 16 answered already" in res.output
    res = invoke(["judge", panel, "--store", db, "--reparse"])
    assert res.exit_code == 0, res.output
    assert "rules: 8 completions, 0 changed (8 ok, 0 abstain)" in res.output
    assert "gpt: 8 completions, 0 changed" in res.output
    assert fake.stats.requests == 8
