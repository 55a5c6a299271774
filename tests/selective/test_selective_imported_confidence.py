"""External judgments with a confidence per rating: `import` stores a `confidence` column of a long
file beside each rating, and `escalate calibrate` with `confidence: {source: imported}` calibrates
on it. Bad confidences are one sentence naming the row."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump

from judgekit.cli import main
from judgekit.rubric.model import load_rubric

C = list(load_rubric("refusal").codes)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _file(tmp_path, confidence=True):
    """100 items labelled by the reference; judge `pub` is sure (0.9) and right on 60 of them,
    unsure (0.4) on 40, right on half of those."""
    rows = []
    for k in range(100):
        item, truth = f"i{k:03d}", C[k % 3]
        rows.append({"item_id": item, "prompt": "p", "response": f"r{k}", "rater_id": "final",
                     "rater_kind": "reference", "label": truth, "confidence": None})
        sure = k < 60
        label = truth if sure or k % 2 else C[(k + 1) % 3]
        rows.append({"item_id": item, "prompt": "p", "response": f"r{k}", "rater_id": "pub",
                     "rater_kind": "judge", "label": label, "confidence": 0.9 if sure else 0.4})
    df = pd.DataFrame(rows)
    if not confidence:
        df = df.drop(columns=["confidence"])
    path = tmp_path / "published.csv"
    df.to_csv(path, index=False)
    return path


def _policy(tmp_path):
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump({"rubric": "refusal", "reference": "final", "alpha": 0.1, "delta": 0.1,
                                 "cascade": [{"judge": "pub", "confidence": {"source": "imported"}}]}))
    return p


def test_imported_confidence_is_calibrated(tmp_path) -> None:
    db = tmp_path / "s.db"
    assert run("import", _file(tmp_path), "--rubric", "refusal", "--store", db).exit_code == 0
    r = run("escalate", "calibrate", _policy(tmp_path), "--out", tmp_path / "c.json", "--store", db)
    assert r.exit_code == 0, r.output
    stage = json.loads((tmp_path / "c.json").read_text())["stages"][0]
    # keeping the 60 sure items: 0 of 60 wrong, Clopper-Pearson upper 1 - 0.1**(1/60) = 0.037 <= 0.1;
    # keeping all 100: 20 wrong, above 0.1. So the threshold lies above 0.4, at most 0.9
    assert 0.4 < stage["threshold"] <= 0.9
    assert stage["n_kept"] == 60


def test_without_imported_confidence_the_judge_keeps_nothing(tmp_path) -> None:
    db = tmp_path / "s.db"
    assert run("import", _file(tmp_path, confidence=False), "--rubric", "refusal", "--store", db).exit_code == 0
    r = run("escalate", "calibrate", _policy(tmp_path), "--out", tmp_path / "c.json", "--store", db)
    assert r.exit_code == 2 and "pub              keeps nothing" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("bad", ["1.5", "-0.1", "high", "nan"])
def test_confidence_outside_0_1_is_one_sentence(tmp_path, bad) -> None:
    db = tmp_path / "s.db"
    first = tmp_path / "first"
    first.mkdir()
    assert run("import", _file(first, confidence=False), "--rubric", "refusal", "--store", db).exit_code == 0
    path = _file(tmp_path)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.loc[3, "confidence"] = bad
    df.to_csv(path, index=False)
    before = store_dump(db)
    one_sentence_error(run("import", path, "--rubric", "refusal", "--store", db), "published.csv",
                       "confidence", "from 0 to 1")
    assert store_dump(db) == before


def test_confidence_column_in_a_wide_file_is_refused(tmp_path) -> None:
    path = tmp_path / "wide.csv"
    pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"], "pub": [C[0]],
                  "confidence": [0.5]}).to_csv(path, index=False)
    one_sentence_error(run("import", path, "--rubric", "refusal", "--judges", "pub=pub",
                           "--store", tmp_path / "s.db"), "wide.csv", "long format",
                      "rename the column")  # item metadata of that name, as before, needs another name


def test_a_confidence_leaves_with_the_label_it_was_imported_with(tmp_path) -> None:
    """A judge's rating replaced by a later import without a confidence, or by any other write
    (a judge's own run), no longer carries the confidence imported for the old label."""
    from judgekit.store.database import Store
    from judgekit.store.rating_confidence import imported_confidences

    db = tmp_path / "s.db"
    base = {"item_id": "a", "prompt": "p", "response": "r", "rater_id": "pub", "rater_kind": "judge"}
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    pd.DataFrame([{**base, "label": C[1], "confidence": 0.9},
                  {**base, "item_id": "b", "response": "s", "label": C[1], "confidence": 0.8}]).to_csv(first, index=False)
    pd.DataFrame([{**base, "label": C[0]}]).to_csv(second, index=False)
    assert run("import", first, "--rubric", "refusal", "--store", db).exit_code == 0
    rubric = load_rubric("refusal")
    with Store(db) as s:
        assert imported_confidences(s, ["pub"], rubric.hash) == {("pub", "a", 0): 0.9, ("pub", "b", 0): 0.8}
    assert run("import", second, "--rubric", "refusal", "--store", db).exit_code == 0
    with Store(db) as s:
        assert imported_confidences(s, ["pub"], rubric.hash) == {("pub", "b", 0): 0.8}
        s.put_ratings(pd.DataFrame([{"item_id": "b", "rater_id": "pub", "rater_kind": "judge", "rubric": rubric.id,
                                     "rubric_hash": rubric.hash, "label": C[2], "value": rubric.values[C[2]],
                                     "trial": 0, "status": "ok", "rationale": None, "created_at": 1.0,
                                     "source": "run"}]))
        assert imported_confidences(s, ["pub"], rubric.hash) == {}
