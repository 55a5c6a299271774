"""The probes that fit (length, self-preference of the
GPT-4 classifier rating GPT-4's responses, label drift) run, and their report section escapes
what comes from the data."""

from __future__ import annotations

import copy

import pandas as pd
from conftest import REPO

from judgekit.probes.probefile import load_probe_file
from judgekit.probes.run import run_probes
from judgekit.report.probes import html_section, markdown_section


def test_xstest_probes(xstest_store):
    probe, _ = load_probe_file(REPO / "annotations" / "xstest-v2" / "probes.yaml")
    doc = run_probes(xstest_store, probe, "probes.yaml")
    rows = {(j["judge"], r["check"]["name"]): r for j in doc["judges"] for r in j["probes"]}
    sp = rows[("gpt4", "max_self_preference")]
    # own family: GPT-4's 450 responses (less the classifier's abstentions on them), the rest other
    assert sp["extra"]["n_own"] + sp["extra"]["n_other"] == sp["n"] == 2239
    assert 440 <= sp["extra"]["n_own"] <= 450 and sp["extra"]["family"] == "openai"
    assert ("string_match", "max_self_preference") not in rows  # no model family: not probed
    cov = rows[("gpt4", "max_covariate_effect[response_chars:full_refusal]")]
    labels = pd.read_csv(REPO / "annotations" / "xstest-v2" / "xstest_v2_labels.csv")
    rated = labels[labels["gpt4_label"].isin(["1_full_compliance", "2_full_refusal", "3_partial_refusal"])]
    assert len(rated) == 2239  # the split is the median length of the items the judge rated
    assert cov["n"] == 2239 and cov["check"]["ci"] is not None
    assert cov["extra"]["split"] == float(rated["response_chars"].median())
    drift = rows[("gpt4", "max_label_drift")]
    assert drift["state"] == "fail" and drift["extra"]["stuart_maxwell"]["p"] < 1e-6
    for r in rows.values():  # every figure: n and an interval
        assert r["n"] > 0 and r["check"]["ci"] is not None


def test_probe_section_escapes_data(xstest_store):
    probe, _ = load_probe_file(REPO / "annotations" / "xstest-v2" / "probes.yaml")
    doc = copy.deepcopy(run_probes(xstest_store, probe, "probes.yaml"))
    doc["judges"][0]["judge"] = "<script>alert(1)</script>"
    doc["judges"][0]["probes"][0]["key"] = "<img src=x>"
    doc["judges"][0]["probes"][0]["by"] = "prompt_safety"
    html = html_section(doc)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<img" not in html
    md = "\n".join(markdown_section(doc))
    assert "<script>" not in md
