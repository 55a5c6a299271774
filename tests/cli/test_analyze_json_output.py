"""`--json` alone writes the result as JSON to stdout (no table),
`--json PATH` into that file (the tables are still printed)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main

pytest_plugins = ["tests.analysis_fixtures"]


def test_criteria_json_on_stdout_and_into_a_file(synthetic_store, tmp_path):
    from tests.analysis_fixtures import SYNTH

    args = ["analyze", "criteria", str(SYNTH / "criteria.yaml"),
            "--verdict", synthetic_store["restrictiveness"], "--verdict", synthetic_store["refusal_form"],
            "--store", synthetic_store["store"]]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 1, r.output  # the shipped file has criteria the drifting model fails
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout
    rows = doc["tables"]["criteria"]["rows"]
    assert doc["kind"] == "criteria" and {row["result"] for row in rows} >= {"PASS", "FAIL"}
    assert "criteria FAIL" in r.stderr
    path = tmp_path / "crit.json"
    r2 = CliRunner().invoke(main, [*args, "--json", str(path)])
    assert r2.exit_code == 1
    assert "Experiment criteria" in r2.stdout and f"wrote {path}" in r2.stdout
    assert json.loads(path.read_text())["tables"]["criteria"]["rows"] == rows


def test_json_to_a_special_file_is_refused_up_front(synthetic_store):
    r = CliRunner().invoke(main, ["analyze", "calibration", "--judge", "judge-a", "--harm-column", "severity",
                                  "--store", synthetic_store["store"], "--untrusted", "--json", "/dev/null"])
    one_sentence_error(r, "/dev/null")
