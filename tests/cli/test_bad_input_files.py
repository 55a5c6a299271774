"""Bad input files are one sentence and exit 2, never a traceback, and nothing stored changes:

* a lone surrogate escape ("\\ud83d") in JSON input (tables, Inspect logs, verdicts);
* file-system errors (a name component too long, an --out that cannot be created);
* list-valued and all-empty slice columns in `analyze`;
* a rubric's judge.template outside the rubric's folder;
* reserved columns on import (value, rubric, content_hash, rubric_hash, call_key, source).
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import one_sentence_error
from conftest import store_dump as dump

from judgekit.cli import main

pytest_plugins = ["tests.analysis_fixtures"]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "annotations" / "demo-panel"
GOOD = "item_id,rater_id,label,model\nkeep,ann,full_refusal,m0\n"


def cli(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    """A store that already holds one item and one rating."""
    path = tmp_path / "s.db"
    (tmp_path / "good.csv").write_text(GOOD, encoding="utf-8")
    r = cli("import", tmp_path / "good.csv", "--rubric", "refusal", "--store", path)
    assert r.exit_code == 0, r.output
    return path


def refused_import(db: Path, path: Path, *parts: str, args: tuple[str, ...] = ()) -> str:
    before = dump(db)
    line = one_sentence_error(cli("import", path, "--rubric", "refusal", "--store", db, *args),
                               path.name, *parts)
    assert dump(db) == before
    return line


# ------------------------------------------------------------------ lone surrogates
LONE = "the lone surrogate escape"


def test_a_lone_surrogate_in_a_jsonl_table_names_the_line_and_key(tmp_path, db):
    p = tmp_path / "r.jsonl"
    p.write_text('{"item_id": "a", "rater_id": "ann", "label": "full_refusal"}\n'
                 '{"item_id": "b", "rater_id": "ann", "label": "full_refusal", "note": "hi \\ud83d"}\n',
                 encoding="utf-8")
    refused_import(db, p, "line 2", "key 'note'", LONE, "\\ud83d")


def test_a_lone_surrogate_in_a_json_table_names_the_line_and_key(tmp_path, db):
    p = tmp_path / "r.json"
    p.write_text('[\n{"item_id": "a", "rater_id": "ann", "label": "full_refusal"},\n'
                 '{"item_id": "b", "rater_id": "ann", "label": "full_refusal", "response": "x\\udc00"}\n]\n',
                 encoding="utf-8")
    refused_import(db, p, "line 3", "key 'response'", LONE, "\\udc00")


def test_a_surrogate_pair_and_an_escaped_backslash_are_kept(tmp_path, db):
    p = tmp_path / "ok.jsonl"
    p.write_text('{"item_id": "a", "rater_id": "ann", "label": "full_refusal", '
                 '"response": "\\ud83d\\ude00 and \\\\ud83d"}\n', encoding="utf-8")
    r = cli("import", p, "--rubric", "refusal", "--store", db)
    assert r.exit_code == 0, r.output
    con = sqlite3.connect(db)
    try:
        (text,) = con.execute("SELECT response FROM items WHERE item_id = 'a'").fetchone()
    finally:
        con.close()
    assert text == "\U0001f600 and \\ud83d"


SPEC = {"eval_id": "e1", "run_id": "r1", "created": "2025-05-01T10:00:00+00:00", "task": "probe",
        "task_id": "t1", "task_version": 0, "dataset": {"name": "probe", "samples": 1},
        "model": "openai/gpt-4o-mini", "config": {"epochs": 1}}


def _log(completion: str) -> dict[str, Any]:
    sample = {"id": 1, "epoch": 1, "input": "question", "target": "", "messages": [],
              "output": {"model": "m", "completion": completion}, "metadata": {},
              "store": {}, "events": [], "model_usage": {}, "attachments": {},
              "scores": {"grader": {"value": "full_refusal", "explanation": "declines"}}}
    return {"version": 2, "status": "success", "eval": copy.deepcopy(SPEC), "plan": {},
            "results": {}, "stats": {}, "samples": [sample]}


@pytest.mark.parametrize("fmt", ["json", "eval"])
def test_a_lone_surrogate_in_an_inspect_log_is_one_sentence(tmp_path, db, fmt):
    log = _log("answer \ud83d")  # json.dumps writes it as the escape \ud83d
    p = tmp_path / f"log.{fmt}"
    if fmt == "json":
        p.write_text(json.dumps(log, indent=1), encoding="utf-8")
        parts = ["key 'completion'", LONE, "line "]
    else:
        with zipfile.ZipFile(p, "w") as zf:
            zf.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
            zf.writestr("samples/1_epoch_1.json", json.dumps(log["samples"][0]))
        parts = ["entry samples/1_epoch_1.json", "key 'completion'", LONE]
    refused_import(db, p, *parts)


PANEL = 'rubric: refusal\nitems: items.jsonl\njudges:\n  - id: keywords\n    model: "rules:refusal-keywords"\n'
POLICY = """rubric: refusal
judges: [keywords]
reference: demo_final
humans: [demo_ann_a, demo_ann_b]
checks:
  min_items: 30
  metric: kappa
  min_value: 0.3
n_resamples: 100
"""


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdict")
    shutil.copy(DEMO / "items.jsonl", root / "items.jsonl")
    (root / "panel.yaml").write_text(PANEL, encoding="utf-8")
    (root / "policy.yaml").write_text(POLICY, encoding="utf-8")
    db = root / "s.db"
    r = cli("import", DEMO / "human_labels.csv", "--rubric", "refusal", "--raters", "demo_ann_a,demo_ann_b",
            "--reference", "demo_final=demo_final", "--items", root / "items.jsonl", "--store", db)
    assert r.exit_code == 0, r.output
    assert cli("judge", root / "panel.yaml", "--store", db).exit_code == 0
    r = cli("gate", root / "policy.yaml", "--store", db, "--out", root / "pass")
    assert r.exit_code == 0, r.output
    return root


def test_a_lone_surrogate_in_a_verdict_is_one_sentence_for_report(gated, tmp_path):
    text = (gated / "pass" / "verdict.json").read_text(encoding="utf-8")
    verdict = json.loads(text)
    verdict["judges"][0]["checks"][0]["detail"] = "fine \ud800"
    p = tmp_path / "verdict.json"
    p.write_text(json.dumps(verdict, indent=1), encoding="utf-8")
    before = dump(gated / "s.db")
    r = cli("report", "--store", gated / "s.db", "--rubric", "refusal", "--verdict", p,
            "--out", tmp_path / "rep", "--resamples", "100", "--disagreements", "1")
    one_sentence_error(r, str(p), "key 'detail'", LONE, "\\ud800", "line ")
    assert dump(gated / "s.db") == before


# ------------------------------------------------------------------ file-system errors
LONG = "x" * 300
TOO_LONG = "file name too long"


def test_a_table_name_too_long_is_one_sentence(tmp_path, db):
    before = dump(db)
    line = one_sentence_error(cli("import", tmp_path / f"{LONG}.csv", "--rubric", "refusal", "--store", db),
                               TOO_LONG, "use a shorter name")
    assert "xxx…'" in line and len(line) < 250  # the name excerpted, not 300 characters
    assert dump(db) == before


def test_a_store_name_too_long_is_one_sentence(tmp_path):
    one_sentence_error(cli("agree", "--rubric", "refusal", "--store", tmp_path / f"{LONG}.db"),
                        TOO_LONG, "use a shorter name")


def test_panel_items_name_too_long_is_one_sentence(tmp_path):
    panel = tmp_path / "panel.yaml"
    panel.write_text(f'rubric: refusal\nitems: {LONG}.jsonl\njudges:\n  - id: keywords\n'
                     '    model: "rules:refusal-keywords"\n', encoding="utf-8")
    one_sentence_error(cli("judge", panel, "--store", tmp_path / "s.db"), TOO_LONG)


def test_export_to_an_impossible_path_is_one_sentence(tmp_path, db):
    blocker = tmp_path / "afile"
    blocker.write_text("", encoding="utf-8")
    for out in (blocker / "x.csv", tmp_path / f"{LONG}.csv"):
        line = one_sentence_error(cli("export", "ratings", "--store", db, "--out", out), "cannot")
        assert "afile" in line or TOO_LONG in line
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_agree_json_to_an_impossible_path_is_one_sentence(tmp_path, db):
    blocker = tmp_path / "afile"
    blocker.write_text("", encoding="utf-8")
    r = cli("agree", "--rubric", "refusal", "--store", db, "--json", blocker / "a.json")
    # the table is printed before the JSON file is written: one error line after it
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "afile" in errors[0] and "cannot create this folder" in errors[0], r.output


def test_gate_out_to_an_impossible_path_is_one_sentence(gated, tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("", encoding="utf-8")
    before = dump(gated / "s.db")
    r = cli("gate", gated / "policy.yaml", "--store", gated / "s.db", "--out", blocker / "v")
    one_sentence_error(r, "afile")
    assert dump(gated / "s.db") == before


# ------------------------------------------------------------------ slice columns in analyze
def _distribution(synthetic_store, out: Path, *extra: str) -> Result:
    return cli("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness",
               "--verdict", synthetic_store["restrictiveness"], "--verdict",
               synthetic_store["refusal_form"], "--store", synthetic_store["store"],
               "--bootstrap", "50", "--quiet", "--out", out, *extra)


def _calibration(synthetic_store, out: Path, *extra: str) -> Result:
    return cli("analyze", "calibration", "--judge", "judge-a", "--verdict",
               synthetic_store["restrictiveness"], "--harm-column", "severity", "--bootstrap", "50",
               "--store", synthetic_store["store"], "--out", out, *extra)


@pytest.mark.parametrize("command", ["distribution", "calibration"])
@pytest.mark.parametrize("option", ["--by", "--prompt-column"])
def test_a_list_valued_slice_column_is_one_sentence(synthetic_store, tmp_path, command, option):
    run = _distribution if command == "distribution" else _calibration
    r = run(synthetic_store, tmp_path / "out", option, "messages")
    one_sentence_error(r, f"{option} 'messages'", "lists or objects")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["distribution", "calibration"])
def test_an_all_empty_by_column_is_one_sentence(synthetic_store, tmp_path, command):
    run = _distribution if command == "distribution" else _calibration
    r = run(synthetic_store, tmp_path / "out", "--by", "prompt")  # no item has a prompt text
    one_sentence_error(r, "--by 'prompt': every item's 'prompt' is empty")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ judge.template stays inside
def _rubric_with_template(folder: Path, template: str) -> Path:
    from judgekit.rubric.model import shipped_rubric_dir

    base = (shipped_rubric_dir() / "refusal.yaml").read_text(encoding="utf-8")
    assert "answer_format: json" in base
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tpl.yaml"
    path.write_text(base.replace("answer_format: json", f"answer_format: json\n  template: '{template}'"),
                    encoding="utf-8")
    return path


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text("API_KEY=hunter2 {item}", encoding="utf-8")
    return secret


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked_folder"])
def test_a_template_outside_the_rubrics_folder_is_refused(tmp_path, db, how):
    from judgekit.errors import JudgekitError
    from judgekit.rubric.model import load_rubric

    secret = _secret(tmp_path)
    folder = tmp_path / "rubrics" / "mine"
    if how == "dotdot":
        rubric, expect = _rubric_with_template(folder, "../../secret.txt"), "outside the rubric's folder"
    elif how == "absolute":
        rubric, expect = _rubric_with_template(folder, str(secret)), "an absolute path"
    elif how == "symlink":
        rubric, expect = _rubric_with_template(folder, "link.txt"), "outside the rubric's folder"
        (folder / "link.txt").symlink_to(secret)
    else:
        rubric, expect = _rubric_with_template(folder, "sub/secret.txt"), "outside the rubric's folder"
        (folder / "sub").symlink_to(tmp_path)
    with pytest.raises(JudgekitError, match="judge.template names") as info:
        load_rubric(rubric)
    assert expect in str(info.value) and "hunter2" not in str(info.value)
    before = dump(db)
    line = one_sentence_error(cli("import", tmp_path / "good.csv", "--rubric", rubric, "--store", db),
                               "tpl.yaml", "judge.template names", expect)
    assert "hunter2" not in line
    assert dump(db) == before


def test_a_template_inside_the_folder_still_loads(tmp_path):
    from judgekit.rubric.model import load_rubric

    folder = tmp_path / "rubrics"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "t.txt").write_text("Rate: {item}", encoding="utf-8")
    (folder / "alias.txt").symlink_to(folder / "prompts" / "t.txt")
    for template in ("prompts/t.txt", "prompts/../prompts/t.txt", "alias.txt"):
        assert load_rubric(_rubric_with_template(folder, template)).template_text == "Rate: {item}"


# ------------------------------------------------------------------ reserved columns on import
def _stored(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    ("name", "content", "parts"),
    [
        ("value.csv", "item_id,rater_id,label,value\nz,ann,full_refusal,0.0\n",
         ["line 2", "value 0.0 disagrees", "full_refusal has the value 1.0"]),
        ("value_text.csv", "item_id,rater_id,label,value\nz,ann,full_refusal,high\n",
         ["line 2", "value 'high' disagrees"]),
        ("value_abstain.jsonl",
         '{"item_id": "z", "rater_id": "ann", "label": null, "status": "abstain", "value": 0.5}\n',
         ["line 1", "value 0.5 disagrees", "no label"]),
        ("rubric.jsonl",
         '{"item_id": "z", "rater_id": "ann", "label": "full_refusal", "rubric": "restrictiveness@1"}\n',
         ["line 1", "rubric 'restrictiveness@1' is not refusal@1", "--rubric"]),
        ("rubric_hash.csv", "item_id,rater_id,label,rubric_hash\nz,ann,full_refusal,0123abcd\n",
         ["line 2", "rubric_hash '0123abcd' is not the hash of refusal@1"]),
        ("content_hash.csv", "item_id,rater_id,label,content_hash\nz,ann,full_refusal,abc\n",
         ["'content_hash' is a name judgekit keeps for itself"]),
        ("call_key.csv", "item_id,rater_id,label,call_key\nz,ann,full_refusal,k1\n",
         ["'call_key' is a name judgekit keeps for itself"]),
        ("source.csv", "item_id,rater_id,label,source\nz,ann,full_refusal,crowd\n",
         ["'source' is a name judgekit keeps for itself", "rename it"]),
    ],
)
def test_reserved_columns_are_refused_not_dropped(tmp_path, db, name, content, parts):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    refused_import(db, p, *parts)


def test_wide_value_and_rubric_columns_are_refused(tmp_path, db):
    p = tmp_path / "wide.csv"
    p.write_text("item_id,ann,value\nz,full_refusal,0\n", encoding="utf-8")
    refused_import(db, p, "'value' column has no single label", args=("--raters", "ann=ann"))
    p = tmp_path / "wide_rubric.csv"
    p.write_text("item_id,ann,rubric\nz,full_refusal,restrictiveness@1\n", encoding="utf-8")
    refused_import(db, p, "line 2", "rubric 'restrictiveness@1' is not refusal@1", args=("--raters", "ann=ann"))


def test_a_reserved_column_in_the_items_file_is_refused(tmp_path, db):
    ratings = tmp_path / "r.csv"
    ratings.write_text("item_id,rater_id,label\nz,ann,full_refusal\n", encoding="utf-8")
    items = tmp_path / "items.csv"
    items.write_text("item_id,response,content_hash\nz,hello,abc\n", encoding="utf-8")
    before = dump(db)
    one_sentence_error(cli("import", ratings, "--rubric", "refusal", "--store", db, "--items", items),
                        "items.csv", "'content_hash' is a name judgekit keeps for itself")
    assert dump(db) == before


def test_matching_value_rubric_and_hash_columns_still_import(tmp_path, db):
    from judgekit.rubric.model import load_rubric

    h = load_rubric("refusal").hash
    p = tmp_path / "ok.csv"
    p.write_text("item_id,rater_id,label,value,rubric,rubric_hash\n"
                 f"z,ann,full_refusal,1.0,refusal@1,{h}\ny,ann,full_compliance,0,refusal,\n",
                 encoding="utf-8")
    r = cli("import", p, "--rubric", "refusal", "--store", db)
    assert r.exit_code == 0, r.output
    rows = _stored(db, "SELECT item_id, label, value, rubric FROM ratings WHERE item_id IN ('y', 'z') "
                       "ORDER BY item_id")
    assert rows == [("y", "full_compliance", 0.0, "refusal@1"), ("z", "full_refusal", 1.0, "refusal@1")]
    assert _stored(db, "SELECT meta FROM items WHERE item_id = 'z'") == [("{}",)]
