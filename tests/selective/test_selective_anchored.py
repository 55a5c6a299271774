"""Selective judging is anchored to people and to the store: a confidence never comes from the
reference or a human rater, the reference is human, a cascade judge is neither its own panel nor a
human, and a calibration file is refused once the store's human labels changed or the file was
edited (a threshold null -> 0.0 keeps every new item otherwise)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump

from judgekit.cli import main
from judgekit.core.hashing import digest
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

R = load_rubric("refusal")
C = list(R.codes)


def _row(item, rater, kind, label, trial=0):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": R.id,
            "rubric_hash": R.hash, "label": label, "value": R.values[label], "trial": trial,
            "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


def _store(path: Path) -> str:
    """80 labelled items (reference final, humans h1 and h2 who agree with it), 20 new ones; judge
    weak is wrong on every other item, judge strong always right (two trials each)."""
    rows = []
    for k in range(100):
        item, truth = f"i{k:03d}", C[k % 3]
        if k < 80:
            rows += [_row(item, who, kind, truth) for who, kind in
                     (("final", "reference"), ("h1", "human"), ("h2", "human"))]
        rows.append(_row(item, "weak", "judge", truth if k % 2 else C[(k + 1) % 3]))
        rows += [_row(item, "strong", "judge", truth, t) for t in range(2)]
    items = sorted({r["item_id"] for r in rows})
    with Store(path) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": "p", "response": [f"r {i}" for i in items]}))
        s.put_ratings(pd.DataFrame(rows))
    return str(path)


def _policy(tmp_path: Path, **over) -> Path:
    raw = {"rubric": "refusal", "reference": "final", "alpha": 0.1, "delta": 0.1,
           "cascade": [{"judge": "weak", "confidence": {"source": "constant", "value": 1.0}},
                       {"judge": "strong", "confidence": {"source": "trials"}}]}
    raw.update(over)
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return p


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _calibrate(tmp_path: Path, db: str, policy: Path) -> Path:
    out = tmp_path / "cal.json"
    r = run("escalate", "calibrate", policy, "--out", out, "--store", db)
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.parametrize(("over", "part"), [
    ({"reference": "strong", "cascade": [{"judge": "weak", "confidence": {"source": "trials"}}]},
     "the reference 'strong' is a judge rater"),
    ({"cascade": [{"judge": "strong", "confidence": {"source": "panel", "with": ["final"]}}]},
     "reads its confidence from the reference 'final'"),
    ({"cascade": [{"judge": "strong", "confidence": {"source": "panel", "with": ["h1"]}}]},
     "reads the panel rater 'h1', which is a human rater"),
    ({"cascade": [{"judge": "h1", "confidence": {"source": "trials"}}]}, "'h1' is a human rater"),
    ({"cascade": [{"judge": "strong", "confidence": {"source": "panel", "with": ["strong", "weak"]}}]},
     "names itself in its panel"),
    ({"cascade": [{"judge": "strong", "confidence": {"source": "panel", "with": ["consensus"]}}]},
     "the human raters' majority"),
    ({"cascade": [{"judge": "consensus", "confidence": {"source": "trials"}}]}, "the human raters' majority"),
])
def test_policy_whose_confidence_or_reference_is_not_anchored_is_refused(tmp_path, over, part) -> None:
    db = _store(tmp_path / "s.db")
    policy = _policy(tmp_path, **over)
    for command in (("calibrate", policy, "--out", tmp_path / "c.json"),):
        one_sentence_error(run("escalate", *command, "--store", db), str(policy), part)
    assert not (tmp_path / "c.json").exists()


def _apply(policy: Path, cal: Path, db: str):
    return run("escalate", "apply", policy, cal, "--store", db)


def test_threshold_edited_from_null_to_zero_is_refused(tmp_path) -> None:
    db = _store(tmp_path / "s.db")
    policy = _policy(tmp_path)
    cal = _calibrate(tmp_path, db, policy)
    data = json.loads(cal.read_text())
    assert data["stages"][0]["threshold"] is None  # weak keeps nothing
    ok = _apply(policy, cal, db)
    assert ok.exit_code == 0 and "kept by weak" not in ok.output
    data["stages"][0]["threshold"] = 0.0
    cal.write_text(json.dumps(data))
    before = store_dump(db)
    one_sentence_error(_apply(policy, cal, db), str(cal), "edited after")
    # the file's hash forged to match the edit: the thresholds are not what the store gives
    data["file_hash"] = digest({k: v for k, v in data.items() if k != "file_hash"})
    cal.write_text(json.dumps(data))
    one_sentence_error(_apply(policy, cal, db), str(cal), "stage 0 (weak) has threshold 0.0", "gives None")
    assert store_dump(db) == before


def test_calibration_is_refused_once_the_human_labels_changed(tmp_path) -> None:
    db = _store(tmp_path / "s.db")
    policy = _policy(tmp_path)
    cal = _calibrate(tmp_path, db, policy)
    with Store(db) as s:
        s.put_ratings(pd.DataFrame([_row("i000", "final", "reference", C[2])]))
    one_sentence_error(_apply(policy, cal, db), str(cal), "the human labels", "changed since it was calibrated")


def test_calibration_without_store_hashes_is_refused(tmp_path) -> None:
    db = _store(tmp_path / "s.db")
    policy = _policy(tmp_path)
    cal = _calibrate(tmp_path, db, policy)
    data = json.loads(cal.read_text())
    del data["items_hash"]
    cal.write_text(json.dumps(data))
    one_sentence_error(_apply(policy, cal, db), str(cal), "no items_hash")


def test_consensus_reference_calibrates_as_the_adjudicated_majority(tmp_path) -> None:
    db = _store(tmp_path / "s.db")
    with Store(db) as s:  # h2 disagrees with h1 on a few items: the majority of two ties there
        s.put_ratings(pd.DataFrame([_row(f"i{k:03d}", "h2", "human", C[(k + 1) % 3]) for k in range(0, 80, 7)]))
    cons = json.loads(_calibrate(tmp_path, db, _policy(tmp_path, reference="consensus")).read_text())
    assert run("adjudicate", "--rubric", "refusal", "--raters", "h1,h2", "--as", "maj", "--store", db).exit_code == 0
    maj = json.loads(_calibrate(tmp_path, db, _policy(tmp_path, reference="maj")).read_text())
    assert cons["n_labelled"] == maj["n_labelled"] == 80 - len(range(0, 80, 7))
    assert [s["threshold"] for s in cons["stages"]] == [s["threshold"] for s in maj["stages"]]


def test_guarantee_edited_with_its_hash_forged_is_refused(tmp_path) -> None:
    """`escalate apply` prints the file's guarantee: one a collaborator rewrote (and re-hashed, as
    anyone can) would vouch for a judge the store's calibration does not."""
    db = _store(tmp_path / "s.db")
    policy = _policy(tmp_path)
    cal = _calibrate(tmp_path, db, policy)
    data = json.loads(cal.read_text())
    forged = "On 100% of items judge weak's expected agreement with the humans is >= 0.99."
    data["guarantee"] = [forged]
    data["file_hash"] = digest({k: v for k, v in data.items() if k != "file_hash"})
    cal.write_text(json.dumps(data))
    before = store_dump(db)
    out = _apply(policy, cal, db)
    assert forged not in out.output
    one_sentence_error(out, str(cal), "guarantee")
    assert store_dump(db) == before


def test_report_section_words_the_target_as_the_expected_agreement(tmp_path) -> None:
    """The report's selective section states the target as the procedure bounds it (expected
    agreement over new items), as the printed guarantee does, not as the agreement realised."""
    from judgekit.report.selective import markdown_section

    db = _store(tmp_path / "s.db")
    doc = json.loads(_calibrate(tmp_path, db, _policy(tmp_path)).read_text())
    target = next(line for line in markdown_section(doc) if "Target" in line)
    assert "Target: expected agreement with the humans (final)" in target and "0.90" in target


def test_calibrate_prints_the_target_as_the_expected_agreement(tmp_path) -> None:
    db = _store(tmp_path / "s.db")
    out = run("escalate", "calibrate", _policy(tmp_path), "--out", tmp_path / "c.json", "--store", db)
    assert "target expected agreement >= 0.90 with probability >= 0.90" in out.output
