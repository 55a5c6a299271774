"""Samples that may not be exchangeable: per-prompt counts always stated, --sample-group.

A prompt sampled 5 times with 3 refusals is "not constant (3 of 5)" with its Wilson interval
and the exchangeability caveat; --sample-group reports each group of samples apart.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis.distribution.exchangeability import behaviour
from judgekit.cli import main
from judgekit.stats.intervals import wilson_interval


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture()
def store(tmp_path):
    """Model m: prompt P1 sampled 5 times (3 refusals: 2 on day-1 of 2, 1 on day-2 of 3), P2 5
    times (never refused), P3 once (refused)."""
    items, ratings = [], []
    plan = {"P1": [("day-1", "full_refusal"), ("day-1", "full_refusal"),
                   ("day-2", "full_refusal"), ("day-2", "full_compliance"),
                   ("day-2", "full_compliance")],
            "P2": [("day-1", "full_compliance")] * 2 + [("day-2", "full_compliance")] * 3,
            "P3": [("day-1", "full_refusal")]}
    for p, samples in plan.items():
        for s, (day, label) in enumerate(samples):
            iid = f"m/{p}/s{s}"
            items.append({"item_id": iid, "model": "m", "prompt_id": p, "sample": s,
                          "provenance": day, "response": "x"})
            ratings.append({"item_id": iid, "rater_id": "ann", "rater_kind": "human",
                            "label": label, "status": "ok"})
    pd.DataFrame(items).to_csv(tmp_path / "items.csv", index=False)
    pd.DataFrame(ratings).to_csv(tmp_path / "r.csv", index=False)
    db = tmp_path / "s.db"
    r = run("import", tmp_path / "r.csv", "--rubric", "refusal", "--items",
            tmp_path / "items.csv", "--store", db)
    assert r.exit_code == 0, r.output
    return db


def test_behaviour_words() -> None:
    assert behaviour(3, 5) == "not constant (3 of 5)"
    assert behaviour(1, 2) == "not constant (1 of 2)"
    assert behaviour(0, 5) == "never refused (0 of 5)"
    assert behaviour(5, 5) == "always refused (5 of 5)"
    assert behaviour(1, 1) == "one sample (1 of 1)"
    assert behaviour(0.5, 1) == "not constant (0.5 of 1)"  # one sample, two trials that disagree
    assert behaviour(0, 0) == "no rated sample"


def test_three_of_five_is_not_constant_with_its_interval(store, tmp_path) -> None:
    out = tmp_path / "out"
    r = run("analyze", "distribution", "--judge", "ann", "--no-forms", "--store", store,
            "--quiet", "--bootstrap", "50", "--out", out)
    assert r.exit_code == 0, r.output
    lo, hi = wilson_interval(3, 5)  # Wilson 95%: 0.2307 to 0.8824
    assert (round(float(lo), 4), round(float(hi), 4)) == (0.2307, 0.8824)
    line = next(x for x in r.output.splitlines() if "not constant (3 of 5)" in x)
    assert "P1" in line and f"0.600 [{float(lo):.2f}, {float(hi):.2f}]" in line
    assert "never refused (0 of 5)" in r.output and "one sample (1 of 1)" in r.output
    flat = " ".join(r.output.split())
    assert "1 of 3 prompts not constant" in flat
    assert "assumes its samples are exchangeable" in flat
    data = json.loads((out / "distribution.json").read_text())
    rows = {row["prompt_id"]: row for row in data["tables"]["per_prompt"]["rows"]}
    assert rows["P1"]["behaviour"] == "not constant (3 of 5)"
    assert (rows["P1"]["ci_low"], rows["P1"]["ci_high"]) == pytest.approx((float(lo), float(hi)))
    assert "exchangeable" in data["definitions"]["interval"]


def test_sample_group_reports_each_group(store, tmp_path) -> None:
    out = tmp_path / "g"
    r = run("analyze", "distribution", "--judge", "ann", "--no-forms", "--store", store,
            "--quiet", "--bootstrap", "50", "--sample-group", "provenance", "--out", out)
    assert r.exit_code == 0, r.output
    data = json.loads((out / "distribution.json").read_text())
    rows = {(row["prompt_id"], row["provenance"]): row
            for row in data["tables"]["per_prompt"]["rows"]}
    assert rows[("P1", "day-1")]["behaviour"] == "always refused (2 of 2)"
    assert rows[("P1", "day-2")]["behaviour"] == "not constant (1 of 3)"
    lo, hi = wilson_interval(1, 3)
    assert rows[("P1", "day-2")]["ci_low"] == pytest.approx(float(lo))
    by = {row["provenance"]: row for row in data["tables"]["by_provenance"]["rows"]}
    assert by["day-1"]["pooled_rate"] == pytest.approx(3 / 5)  # P1: 2 of 2, P2: 0 of 2, P3: 1
    assert by["day-2"]["pooled_rate"] == pytest.approx(1 / 6)
    assert any("samples grouped by provenance" in n for n in data["notes"])
    assert "Refusal rate per model and provenance" in r.output


def test_sample_group_unknown_column_is_one_sentence(store) -> None:
    r = CliRunner().invoke(main, ["analyze", "distribution", "--judge", "ann", "--no-forms",
                                  "--store", str(store), "--quiet", "--sample-group", "nope"])
    one_sentence_error(r, "--sample-group", "nope")
