"""`judgekit report`: from a store and a verdict file to report.html/.md/.json; bad input → exit 2."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

pytest_plugins = ["tests.report_fixtures"]


def run(cli, *args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_report_from_the_xstest_store_and_the_real_gate(report_cli, report_xstest_store, xstest_verdict, tmp_path):
    out = tmp_path / "rep"
    r = run(report_cli, "report", "--store", str(report_xstest_store), "--rubric", "refusal",
            "--verdict", str(xstest_verdict), "--by", "model", "--out", str(out), "--resamples", "100")
    assert r.exit_code == 0, r.output
    verdict = json.loads(xstest_verdict.read_text())
    html = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    doc = json.loads((out / "report.json").read_text())
    # what the gate decided is what the report says, judge by judge and check by check
    for j in verdict["judges"]:
        status = "trusted" if j["passed"] else "NOT trusted"
        assert f"{j['judge']} is {status} to score refusal@1" in html
        assert f"{j['judge']} is {status} to score refusal@1" in md
        for c in j["checks"]:
            if not c["passed"]:
                assert c["name"] in html and c["name"].replace("[", "\\[").replace("]", "\\]") in md
                assert f"{c['name']}: " in r.output
    assert doc["trusted"] == [j["judge"] for j in verdict["judges"] if j["passed"]]
    # sliced by model: the five XSTest models, with the human ceiling of each slice
    keys = [s["key"] for s in doc["agreement"]["slices"] if s["by"] == "model"]
    assert keys == ["gpt4", "llama2new", "llama2orig", "mistralguard", "mistralinstruct"]
    for k in keys:
        assert f"model = {k}" in html
    # XSTest labels carry no response text: disagreements are listed by item id, linked
    assert doc["extras"]["disagreements"] and 'href="#item-' in html
    assert "wrote html" in r.output and "wrote markdown" in r.output and "wrote json" in r.output


def test_report_without_verdict_and_to_an_html_file_name(report_cli, report_xstest_store, tmp_path):
    r = run(report_cli, "report", "--store", str(report_xstest_store), "--rubric", "refusal",
            "--out", str(tmp_path / "x" / "refusal.html"), "--resamples", "100", "--disagreements", "3")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("No verdict was given")
    assert r.stderr.startswith("store: ")  # which store the report read
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["refusal.html", "refusal.json", "refusal.md"]
    doc = json.loads((tmp_path / "x" / "refusal.json").read_text())
    per_judge: dict[str, int] = {}
    for d in doc["extras"]["disagreements"]:
        per_judge[d["judge_id"]] = per_judge.get(d["judge_id"], 0) + 1
    assert per_judge == {"string_match": 3, "gpt4": 3}


def test_worst_disagreements_first(report_cli, report_xstest_store, tmp_path):
    r = run(report_cli, "report", "--store", str(report_xstest_store), "--rubric", "refusal",
            "--out", str(tmp_path), "--resamples", "100")
    assert r.exit_code == 0, r.output
    dis = json.loads((tmp_path / "report.json").read_text())["extras"]["disagreements"]
    gpt4 = [d for d in dis if d["judge_id"] == "gpt4"]
    # refusal values: full_compliance 0, partial_refusal 0.5, full_refusal 1 -> distance 1 first
    assert {(d["judge_label"], d["reference"]) for d in gpt4[:5]} <= {
        ("full_compliance", "full_refusal"), ("full_refusal", "full_compliance")}
    assert [d["distance"] for d in gpt4] == sorted((d["distance"] for d in gpt4), reverse=True)
    assert all(d["judge_label"] != d["reference"] for d in dis)


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["--verdict", "{tmp}/nope.json"], "Verdict {tmp}/nope.json: no such file"),
        ("bad_json", ["--verdict", "{tmp}/v.json"], "Verdict {tmp}/v.json: invalid JSON at line 1"),
        ("not_verdict", ["--verdict", "{tmp}/v.json"], "has no 'judges' list"),
        ("out_file", ["--out", "{tmp}/taken"], "{tmp}/taken is a file; --out needs a folder"),
        (None, ["--by", "colour"], "--by 'colour': no item metadata column"),
        (None, ["--rubric", "no_such_rubric"], "no_such_rubric"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(report_cli, report_xstest_store, tmp_path, setup, args, message):
    if setup == "bad_json":
        (tmp_path / "v.json").write_text("{oops")
    elif setup == "not_verdict":
        (tmp_path / "v.json").write_text('{"passed": true}')
    elif setup == "out_file":
        (tmp_path / "taken").write_text("x")
    base = {"--store": str(report_xstest_store), "--rubric": "refusal", "--out": str(tmp_path / "out"),
            "--resamples": "100"}
    extra = [a.replace("{tmp}", str(tmp_path)) for a in args]
    for k in extra[::2]:
        base.pop(k, None)
    argv = ["report", *[x for kv in base.items() for x in kv], *extra]
    r = CliRunner().invoke(report_cli, argv)
    one_sentence_error(r, message.replace("{tmp}", str(tmp_path)))
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_missing_store_is_not_created(report_cli, tmp_path):
    r = CliRunner().invoke(report_cli, ["report", "--store", str(tmp_path / "none.db"), "--rubric", "refusal",
                                        "--out", str(tmp_path / "o")])
    one_sentence_error(r, "does not exist")
    assert not (tmp_path / "none.db").exists()


def test_empty_store_says_how_to_fill_it(report_cli, tmp_path, report_xstest_store):
    from judgekit.store.database import Store

    Store(tmp_path / "empty.db").close()
    r = CliRunner().invoke(report_cli, ["report", "--store", str(tmp_path / "empty.db"), "--rubric", "refusal",
                                        "--out", str(tmp_path / "o")])
    one_sentence_error(r, "judgekit import")


def test_help_has_an_example(report_cli):
    r = run(report_cli, "report", "--help")
    assert r.exit_code == 0 and "Example:" in r.output and "judgekit report --store" in r.output


def test_cli_store_is_not_modified(report_cli, report_xstest_store, tmp_path):
    copy = tmp_path / "copy.db"
    shutil.copy(report_xstest_store, copy)
    r = run(report_cli, "report", "--store", str(copy), "--rubric", "refusal", "--out", str(tmp_path / "o"),
            "--resamples", "100")
    assert r.exit_code == 0, r.output
    from judgekit.store.database import Store

    with Store(copy) as s:
        # 2,250 items x (2 humans + reference + 2 judges), nothing replaced
        assert len(s.ratings()) == 11250 and s.rating_history().empty
        from judgekit.store.calls import call_rows

        assert call_rows(s) == []


def test_consensus_reference(report_cli, report_xstest_store, tmp_path):
    r = run(report_cli, "report", "--store", str(report_xstest_store), "--rubric", "refusal",
            "--reference", "consensus", "--out", str(tmp_path), "--resamples", "100")
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["summary"]["reference"] == "human consensus (majority)"
    dis = doc["extras"]["disagreements"]
    assert dis
    # two humans: a majority exists only where both agree, so each listed reference is theirs
    for d in dis:
        assert d["humans"] == {"annotation_1": d["reference"], "annotation_2": d["reference"]}


def test_a_judge_whose_spec_changed_after_the_gate_is_not_trusted(report_cli, report_xstest_store, tmp_path):
    """The report agrees with `require_trusted`: a verdict about an earlier spec of a judge vouches
    for nothing (analyze refuses such a judge; the report must not call it trusted)."""
    import sqlite3

    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store

    db = tmp_path / "copy.db"
    shutil.copy(report_xstest_store, db)
    policy = tmp_path / "lenient.yaml"
    policy.write_text("rubric: refusal\njudges: [gpt4]\nreference: final\nchecks:\n  min_items: 10\n"
                      "  metric: kappa\n  min_lower_bound: 0.3\n", encoding="utf-8")
    with Store(db) as s:
        verdict, _ = run_gate(s, policy)
    assert verdict["judges"][0]["passed"]
    vpath = tmp_path / "verdict.json"
    vpath.write_text(json.dumps(verdict), encoding="utf-8")
    args = ["report", "--store", str(db), "--rubric", "refusal", "--verdict", str(vpath), "--out",
            str(tmp_path / "rep"), "--resamples", "100", "--disagreements", "1"]
    r = run(report_cli, *args)
    assert r.exit_code == 0, r.output
    assert "gpt4 is trusted to score refusal@1" in (tmp_path / "rep" / "report.html").read_text()
    # gpt4 is re-run through a panel with another model: its identity (spec, params) changes
    from judgekit.rubric.model import load_rubric

    con = sqlite3.connect(db)
    con.execute("INSERT INTO calls (key, judge_id, spec, params, rubric, rubric_hash, item_id, item_hash,"
                " status, created_at) VALUES ('k', 'gpt4', 'openai:gpt-4o-mini', '{}', 'refusal@1', ?,"
                " 'i', 'ih', 'ok', 1.0)", (load_rubric("refusal").hash,))
    con.commit()
    con.close()
    r = run(report_cli, *args)
    assert r.exit_code == 0, r.output
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "gpt4 is NOT trusted for refusal@1: it changed since the verdict" in html
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["trusted"] == []
