"""`judgekit agree` from the command line: tables, JSON, samples and bad input."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner
from conftest import XSTEST_LABELS, copy_store, one_sentence_error

from judgekit.cli import main
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import SampleRow


def _seed_sample_store(store, tmp_path):
    # 20 items: humans h1/h2 and judge j agree on the 12 random ones; the judge is wrong on the 8
    # chosen because the judges disagreed -> only the random share estimates agreement unbiasedly
    rows = []
    for i in range(20):
        truth = "full_refusal" if i % 2 else "full_compliance"
        wrong = "full_compliance" if i % 2 else "full_refusal"
        rows += [(f"i{i}", "h1", truth), (f"i{i}", "h2", truth), (f"i{i}", "j", truth if i < 12 else wrong)]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "label"])
    df["rater_kind"] = ["judge" if r == "j" else "human" for r in df.rater_id]
    p = tmp_path / "r.csv"
    df.to_csv(p, index=False)
    import_ratings(store, p, load_rubric("refusal"))
    store.put_sample(
        "pilot", [SampleRow(f"i{i}", "random" if i < 12 else "disagreement", None, 1.0, 1) for i in range(20)]
    )


def test_agree_on_the_random_share_of_a_sample(tmp_path, store):
    _seed_sample_store(store, tmp_path)
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--sample", "pilot", "--random-only",
                                    "--store", store.path, "--json", str(out), "--resamples", "100"])
    assert res.exit_code == 0, res.output
    j = json.loads(out.read_text())["slices"][0]["judges"]["j"]["vs_reference"]
    assert j["n"] == 12 and j["percent_agreement"]["value"] == 1.0
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--sample", "pilot",
                                    "--store", store.path, "--json", str(out), "--resamples", "100"])
    assert res.exit_code == 0 and "not a simple random sample" in res.output
    j = json.loads(out.read_text())["slices"][0]["judges"]["j"]["vs_reference"]
    assert j["n"] == 20 and j["percent_agreement"]["value"] == 12 / 20


def test_agree_bad_input(tmp_path, store):
    _seed_sample_store(store, tmp_path)
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--sample", "nope", "--store", store.path])
    one_sentence_error(r, "Sample 'nope' is not in")
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--random-only", "--store", store.path])
    one_sentence_error(r, "--random-only needs --sample")
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(tmp_path / "missing.db")])
    one_sentence_error(r, "does not exist")
    assert not (tmp_path / "missing.db").exists()


def test_agree_prints_tables_by_slice(tmp_path, xstest_store):
    db = copy_store(xstest_store, tmp_path / "x.db")
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--by", "model,prompt_safety",
                                  "--store", db, "--resamples", "100"])
    assert r.exit_code == 0, r.output
    assert "human–human ceiling" in r.output and "By model" in r.output and "By prompt_safety" in r.output
    assert "mistralinstruct" in r.output
    assert XSTEST_LABELS.exists()
