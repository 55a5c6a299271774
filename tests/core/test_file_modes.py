"""Reports, verdicts, exports and analysis outputs get the mode any new file gets.

They are written atomically (a temp file renamed onto the target); the temp file used to be made
by ``tempfile.mkstemp``, always 0600, so every output was unreadable to the owner's group and
others whatever the umask. Under umask 022 they are 0644, under 077 0600; a file rewritten keeps
the mode its owner gave it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")
RESTR = load_rubric("restrictiveness")


@pytest.fixture(params=[0o022, 0o077], ids=["umask022", "umask077"])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _rating(item, rater, kind, label, rubric=REFUSAL):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": rubric.id,
            "rubric_hash": rubric.hash, "label": label, "value": rubric.values[label], "trial": 0,
            "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


@pytest.fixture()
def small_store(tmp_path) -> Path:
    items, rows = [], []
    codes, rcodes = REFUSAL.codes, RESTR.codes
    for i in range(30):
        truth, wrong = codes[i % 3], codes[(i + 1) % 3]
        items.append({"item_id": f"i{i}", "prompt": "p", "response": "r",
                      "model": "a" if i % 2 else "b", "prompt_id": f"p{i // 3}", "sample": i % 3})
        rows += [_rating(f"i{i}", "h1", "human", truth), _rating(f"i{i}", "h2", "human", truth),
                 _rating(f"i{i}", "j", "judge", truth if i % 5 else wrong),
                 _rating(f"i{i}", "final", "reference", truth),
                 _rating(f"i{i}", "j", "judge", rcodes[i % len(rcodes)], RESTR)]
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.put_items(pd.DataFrame(items))
        s.put_ratings(pd.DataFrame(rows))
    return path


def _run(args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _assert_modes(paths, umask):
    expected = 0o666 & ~umask
    got = {str(p): oct(_mode(p)) for p in paths}
    assert got == {str(p): oct(expected) for p in paths}


def test_verdict_and_agreement_json(tmp_path, small_store, umask):
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"rubric": "refusal", "judges": ["j"], "reference": "final",
                                      "checks": {"min_items": 10, "metric": "kappa",
                                                 "min_lower_bound": 0.1}}), encoding="utf-8")
    res = _run(["gate", policy, "--out", tmp_path / "g", "--store", small_store])
    assert res.exit_code in (0, 1), res.output
    res = _run(["agree", "--rubric", "refusal", "--store", small_store, "--resamples", "100",
                "--json", tmp_path / "agreement.json"])
    assert res.exit_code == 0, res.output
    _assert_modes([tmp_path / "g" / "verdict.json", tmp_path / "g" / "verdict.md",
                   tmp_path / "agreement.json"], umask)


def test_report(tmp_path, small_store, umask):
    res = _run(["report", "--rubric", "refusal", "--store", small_store, "--out", tmp_path / "rep",
                "--resamples", "100"])
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "rep").iterdir())
    assert [p.name for p in files] == ["report.html", "report.json", "report.md"]
    _assert_modes(files, umask)


@pytest.mark.parametrize("ending", ["csv", "jsonl", "parquet"])
def test_export_ratings(tmp_path, small_store, umask, ending):
    out = tmp_path / f"ratings.{ending}"
    res = _run(["export", "ratings", "--store", small_store, "--out", out])
    assert res.exit_code == 0, res.output
    _assert_modes([out], umask)


def test_analysis_outputs(tmp_path, small_store, umask):
    out = tmp_path / "an"
    res = _run(["analyze", "distribution", "--judge", "j", "--rubric", "refusal", "--untrusted",
                "--store", small_store, "--bootstrap", "20", "--quiet", "--out", out])
    assert res.exit_code == 0, res.output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".json", ".md", ".html", ".csv", ".svg"}
    _assert_modes(files, umask)


def test_a_rewritten_file_keeps_the_mode_its_owner_gave_it(tmp_path, small_store):
    out = tmp_path / "rep"
    args = ["report", "--rubric", "refusal", "--store", small_store, "--out", out,
            "--resamples", "100"]
    assert _run(args).exit_code == 0
    (out / "report.md").chmod(0o640)
    (out / "report.html").chmod(0o600)
    assert _run(args).exit_code == 0
    assert _mode(out / "report.md") == 0o640 and _mode(out / "report.html") == 0o600
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp file left


def test_write_functions_directly(tmp_path, umask):
    from judgekit.io.tables import write_table, write_text_atomic

    a = write_text_atomic(tmp_path / "a.txt", "x")
    b = write_table(pd.DataFrame({"x": [1]}), tmp_path / "b.csv")
    _assert_modes([a, b], umask)
    assert a.read_text() == "x" and b.read_text() == "x\n1\n"
