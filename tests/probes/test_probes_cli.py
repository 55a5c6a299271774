"""The offline probes on synthetic judges each built with one defect (each probe flags
its own defect and not the others; a clean judge passes every probe), `judgekit probe` (exit
codes, files, bad probe files), and the gate's probe checks (verdict consistency on reading)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump
from probe_fixtures import PROBES, write_store

from judgekit.cli import main
from judgekit.core.config import load_yaml
from judgekit.errors import JudgekitError
from judgekit.gate.run import run_gate
from judgekit.probes.probefile import ProbeFile
from judgekit.probes.run import run_probes
from judgekit.store.database import Store
from judgekit.verdict.read import validate_verdict


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory) -> Path:
    return write_store(tmp_path_factory.mktemp("probes"))


def _states(doc: dict) -> dict[str, dict[str, str]]:
    return {j["judge"]: {r["probe"]: r["state"] for r in j["probes"]} for j in doc["judges"]}


def test_each_probe_flags_its_own_defect_and_a_clean_judge_passes(synthetic_db):
    with Store(synthetic_db) as s:
        doc = run_probes(s, ProbeFile(**load_yaml(PROBES)), "probes.yaml")
    st = _states(doc)
    assert st["clean"] == {"covariate": "pass", "self_preference": "pass", "stability": "pass", "drift": "pass"}
    assert st["long"] == {"covariate": "fail", "self_preference": "pass", "stability": "pass", "drift": "pass"}
    assert st["selfish"] == {"covariate": "pass", "self_preference": "fail", "stability": "pass", "drift": "pass"}
    assert st["flaky"] == {"covariate": "pass", "self_preference": "pass", "stability": "fail", "drift": "pass"}
    rows = {(j["judge"], r["probe"]): r for j in doc["judges"] for r in j["probes"]}
    assert rows[("long", "covariate")]["estimate"] > 0.3  # long responses: more full refusals
    assert rows[("selfish", "self_preference")]["estimate"] < -0.15  # its own family: less refusing
    flaky = rows[("flaky", "stability")]
    assert flaky["estimate"] < 0.6 and flaky["extra"]["flip_share"] > 0.3
    assert len(flaky["extra"]["flipped"]) == round(flaky["extra"]["flip_share"] * flaky["n"])
    for r in rows.values():  # every figure has n and an interval
        assert r["n"] > 0 and r["check"]["ci"] is not None and r["check"]["n"] == r["n"]
    assert doc["state"] == "fail" and doc["reference"] == "ref"


def test_holm_over_slices_keeps_the_clean_judge_passing(synthetic_db):
    text = PROBES.replace("n_resamples: 200\n", "n_resamples: 200\nby: [model]\n").replace(
        "judges: [clean, long, selfish, flaky]", "judges: [clean]")
    with Store(synthetic_db) as s:
        doc = run_probes(s, ProbeFile(**load_yaml(text)), "probes.yaml")
    rows = doc["judges"][0]["probes"]
    cov = [r for r in rows if r["probe"] == "covariate"]
    assert [r["check"]["name"] for r in cov] == [
        "max_covariate_effect[response_chars:full_refusal]", "max_covariate_effect[response_chars:full_refusal|model=model-a]",
        "max_covariate_effect[response_chars:full_refusal|model=model-b]", "max_covariate_effect[response_chars:full_refusal|model=model-c]"]
    # four slices tested: the levels are Holm's (α/4 ... α for the smallest to largest p)
    assert sorted(r["level"] for r in cov) == pytest.approx([0.025 / 4] * 4)
    assert all(r["state"] == "pass" for r in rows)


def _write(tmp: Path, text: str, name: str = "probes.yaml") -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def test_probe_cli_exit_codes_and_files(synthetic_db, tmp_path):
    runner = CliRunner()
    clean = _write(tmp_path, PROBES.replace("judges: [clean, long, selfish, flaky]", "judges: [clean]"), "clean.yaml")
    res = runner.invoke(main, ["probe", str(clean), "--store", str(synthetic_db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o" / "probes.json").read_text())
    assert doc["state"] == "pass"
    html = (tmp_path / "o" / "probes.html").read_text()
    assert html.count("<svg") == 4 and "Holm" in html
    md = (tmp_path / "o" / "probes.md").read_text()
    assert "| all items |" in md and "Stability across trials" in md
    bad = _write(tmp_path, PROBES, "all.yaml")
    assert runner.invoke(main, ["probe", str(bad), "--store", str(synthetic_db), "--out", str(tmp_path / "o2")]).exit_code == 1
    # 20 items: every slice below min_items 30 is inconclusive (exit 3)
    few = _write(tmp_path, PROBES.replace("judges: [clean, long, selfish, flaky]", "judges: [clean]")
                 + "min_items: 5000\n", "few.yaml")
    res = runner.invoke(main, ["probe", str(few), "--store", str(synthetic_db), "--out", str(tmp_path / "o3")])
    assert res.exit_code == 3, res.output
    assert "SMALL SAMPLE" in res.output


@pytest.mark.parametrize(("edit", "key_parts"), [
    (lambda t: t.replace("rubric: refusal\n", ""), ["rubric"]),
    (lambda t: t + "stabilty: {min_alpha: 0.8}\n", ["stabilty"]),
    (lambda t: t.replace("margin: 0.1}\n", "margin: '0.1'}\n", 1), ["margin"]),
    (lambda t: t.replace("column: response_chars", "column: lenght"), ["covariates[0].column", "lenght"]),
    (lambda t: t.replace("target: full_refusal", "target: refusal"), ["covariates[0].target"]),
    (lambda t: t.replace("column: response_chars", "column: model"), ["not numeric", "high"]),
    (lambda t: t.replace("model-c: C}", "model-x: C}"), ["families.models", "model-c"]),
    (lambda t: t.replace("reference: ref", "reference: nobody"), ["reference", "nobody"]),
    (lambda t: t.replace("[clean, long, selfish, flaky]", "[clean, ghost]"), ["ghost"]),
    (lambda t: t.replace("families:\n", "famlies:\n"), ["famlies"]),
    (lambda t: t + "perturb: {panel: p.yaml, variants: [shuffle]}\n", ["shuffle"]),
    (lambda t: "- a list\n", ["Probe file"]),
])
def test_bad_probe_files_are_one_sentence_and_change_nothing(synthetic_db, tmp_path, edit, key_parts):
    db = tmp_path / "copy.db"
    db.write_bytes(Path(synthetic_db).read_bytes())
    before = store_dump(db)
    p = _write(tmp_path, edit(PROBES))
    res = CliRunner().invoke(main, ["probe", str(p), "--store", str(db), "--out", str(tmp_path / "o")])
    line = one_sentence_error(res)
    assert str(p) in line
    for part in key_parts:
        assert part in line, line
    assert store_dump(db) == before
    assert not (tmp_path / "o").exists()


POLICY = """\
rubric: refusal
judges: [clean, long, selfish, flaky]
reference: ref
n_resamples: 200
checks:
  min_items: 30
  metric: kappa
  min_value: 0.0
  max_covariate_effect: {column: response_chars, target: full_refusal, max: 0.1}
  max_self_preference:
    max: 0.1
    column: model
    judges: {clean: A, long: A, selfish: A, flaky: A}
    models: {model-a: A, model-b: B, model-c: C}
  min_stability: {min: 0.8}
"""


def test_gate_probe_checks_and_verdict_consistency(synthetic_db, tmp_path):
    pol = _write(tmp_path, POLICY, "policy.yaml")
    with Store(synthetic_db) as s:
        verdict, _ = run_gate(s, pol)
    states = {j["judge"]: {c["name"]: c["state"] for c in j["checks"]} for j in verdict["judges"]}
    probe = ("max_covariate_effect[response_chars:full_refusal]", "max_self_preference", "min_stability")
    assert [states["clean"][n] for n in probe] == ["pass", "pass", "pass"]
    assert [states["long"][n] for n in probe] == ["fail", "pass", "pass"]
    assert [states["selfish"][n] for n in probe] == ["pass", "fail", "pass"]
    assert [states["flaky"][n] for n in probe] == ["pass", "pass", "fail"]
    assert verdict["judges"][0]["state"] == "pass"
    back = validate_verdict(json.loads(json.dumps(verdict)))  # re-derived on reading: consistent
    assert back["state"] == "fail"
    # an edited probe check is refused on reading
    forged = copy.deepcopy(verdict)
    ch = next(c for c in forged["judges"][1]["checks"] if c["name"] == "max_covariate_effect[response_chars:full_refusal]")
    ch["state"], ch["passed"] = "pass", True
    with pytest.raises(JudgekitError, match=r"max_covariate_effect\[response_chars:full_refusal\].*state 'pass'"):
        validate_verdict(forged)
    forged = copy.deepcopy(verdict)
    ch = next(c for c in forged["judges"][0]["checks"] if c["name"] == "min_stability")
    ch["threshold"] = 0.5
    with pytest.raises(JudgekitError, match="threshold 0.5"):
        validate_verdict(forged)


def test_gate_flip_check_without_perturbed_ratings_is_inconclusive(synthetic_db, tmp_path):
    pol = _write(tmp_path, POLICY.replace("judges: [clean, long, selfish, flaky]", "judges: [clean]")
                 + "  max_flip_rate: {max: 0.1, variants: [label_order]}\n", "policy.yaml")
    with Store(synthetic_db) as s:
        verdict, _ = run_gate(s, pol)
    ch = next(c for c in verdict["judges"][0]["checks"] if c["name"] == "max_flip_rate[label_order]")
    assert ch["state"] == "inconclusive" and ch["figure"] is None and "judgekit probe" in ch["detail"]
    assert ch["budget"] is not None
    assert verdict["judges"][0]["state"] == "inconclusive"
    validate_verdict(json.loads(json.dumps(verdict)))
    res = CliRunner().invoke(main, ["gate", str(pol), "--store", str(synthetic_db), "--out", str(tmp_path)])
    assert res.exit_code == 3, res.output


def test_bad_probe_check_in_a_policy_is_one_sentence(synthetic_db, tmp_path):
    pol = _write(tmp_path, POLICY.replace("column: response_chars", "column: nope"), "policy.yaml")
    res = CliRunner().invoke(main, ["gate", str(pol), "--store", str(synthetic_db), "--out", str(tmp_path)])
    line = one_sentence_error(res)
    assert "checks.max_covariate_effect.column" in line and "nope" in line


def test_report_takes_the_probe_section_and_refuses_a_bad_probes_file(synthetic_db, tmp_path):
    runner = CliRunner()
    clean = _write(tmp_path, PROBES.replace("judges: [clean, long, selfish, flaky]", "judges: [clean]"))
    assert runner.invoke(main, ["probe", str(clean), "--store", str(synthetic_db), "--out", str(tmp_path / "p")]).exit_code == 0
    pj = tmp_path / "p" / "probes.json"
    args = ["report", "--store", str(synthetic_db), "--rubric", "refusal", "--resamples", "100"]
    res = runner.invoke(main, [*args, "--probes", str(pj), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Probes</h2>" in html and "Stability across trials" in html
    assert "## Probes" in (tmp_path / "r" / "report.md").read_text()
    doc = json.loads(pj.read_text())
    doc["judges"][0]["probes"][0]["estimate"] = "0.1"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    res = runner.invoke(main, [*args, "--probes", str(bad), "--out", str(tmp_path / "r2")])
    line = one_sentence_error(res)
    assert str(bad) in line and "judges[0].probes[0].estimate" in line
    assert not (tmp_path / "r2").exists()
    doc = json.loads(pj.read_text())
    doc["rubric"] = "restrictiveness@1"
    bad.write_text(json.dumps(doc))
    line = one_sentence_error(
        runner.invoke(main, [*args, "--probes", str(bad), "--out", str(tmp_path / "r2")]))
    assert "'rubric'" in line


def test_probe_json_alone_is_json_on_stdout_path_writes_a_file_and_quiet_is_silent(synthetic_db, tmp_path):
    clean = _write(tmp_path, PROBES.replace("judges: [clean, long, selfish, flaky]", "judges: [clean]"), "clean.yaml")
    base = ["probe", str(clean), "--store", str(synthetic_db)]
    r = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "a"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout: no table, no "wrote"
    assert doc["state"] == "pass" and [j["judge"] for j in doc["judges"]] == ["clean"]
    assert doc == json.loads((tmp_path / "a" / "probes.json").read_text())  # the same document as the file
    assert "PASS" not in r.stdout
    out = tmp_path / "p.json"
    r = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "b"), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["state"] == "pass"
    assert "PASS" in r.stdout and f"wrote {out}" in r.stdout  # the table as usual, and where the JSON went
    r = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "c"), "--quiet"])
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""
    assert json.loads((tmp_path / "c" / "probes.json").read_text())["state"] == "pass"  # files still written
    # a failing probe keeps its exit code under --json
    r = CliRunner().invoke(main, ["probe", str(_write(tmp_path, PROBES, "all.yaml")), "--store", str(synthetic_db),
                                  "--out", str(tmp_path / "d"), "--json"])
    assert r.exit_code == 1 and json.loads(r.stdout)["state"] == "fail"
