"""`judgekit adjudicate`: a reference rater from several annotators (majority, ties left out and
listed), read like any reference by agree, analyze --correct and escalate; ``consensus`` means the
same majority everywhere; one annotator as the reference while others exist is warned about.

Expected values are computed here from the rows written (Counter, sklearn), never by judgekit."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from annotator_study import annotator_rows, annotator_store, rating_row  # noqa: E402
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement.adjudicate import majority_labels
from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

R = load_rubric("refusal")
C = list(R.codes)
HUMANS = ("a", "b", "c")


_row = rating_row


def _rows(n: int = 120, seed: int = 1) -> list[dict]:
    """Three annotators (c skips every 4th item, so those items have two labels and may tie) and
    one judge."""
    return annotator_rows(HUMANS, n, seed)


def _store(path: Path, rows: list[dict]) -> str:
    return annotator_store(path, rows, lambda i: "m1" if int(i[1:]) % 2 else "m2")


def _hand_majority(rows: list[dict], raters) -> tuple[dict[str, str], set[str]]:
    votes: dict[str, Counter] = {}
    for r in rows:
        if r["rater_id"] in raters:
            votes.setdefault(r["item_id"], Counter())[r["label"]] += 1
    labels, ties = {}, set()
    for item, c in votes.items():
        (top, k), *rest = c.most_common()
        if rest and rest[0][1] == k:
            ties.add(item)
        else:
            labels[item] = top
    return labels, ties


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_majority_leaves_ties_out_and_lists_them() -> None:
    df = pd.DataFrame([
        _row("x", "a", "human", C[0]), _row("x", "b", "human", C[0]), _row("x", "c", "human", C[1]),
        _row("y", "a", "human", C[0]), _row("y", "b", "human", C[1]),
        _row("z", "a", "human", C[2]),
    ])
    adj = majority_labels(df, HUMANS)
    assert adj.labels == {"x": C[0], "z": C[2]}
    assert adj.ties == {"y": {C[0]: 1, C[1]: 1}}
    strict = majority_labels(df, HUMANS, min_raters=2)
    assert strict.labels == {"x": C[0]} and strict.too_few == {"z": 1}


def test_adjudicate_writes_the_majority_as_a_reference_rater(tmp_path) -> None:
    rows = _rows()
    db = _store(tmp_path / "s.db", rows)
    r = run("adjudicate", "--rubric", "refusal", "--raters", "a,b,c", "--as", "maj",
            "--ties", tmp_path / "ties.csv", "--store", db)
    assert r.exit_code == 0, r.output
    labels, ties = _hand_majority(rows, HUMANS)
    assert ties, "the data must hold ties for this test to mean something"
    with Store(db) as s:
        stored = s.ratings(rubric=R, rater_ids=["maj"])
    assert set(stored["rater_kind"]) == {"reference"}
    assert dict(zip(stored["item_id"], stored["label"], strict=True)) == labels
    assert set(pd.read_csv(tmp_path / "ties.csv")["item_id"]) == ties
    assert f"{len(ties)} tie" in r.output
    # a reference like any other: agree reads it, and the gate gates against it
    agree = run("agree", "--rubric", "refusal", "--reference", "maj", "--store", db)
    assert agree.exit_code == 0, agree.output
    policy = tmp_path / "policy.yaml"
    policy.write_text("rubric: refusal\njudges: [j]\nreference: maj\nchecks:\n  min_items: 10\n"
                      "  min_value: 0.5\nn_resamples: 100\n", encoding="utf-8")
    gate = run("gate", policy, "--store", db, "--out", tmp_path / "gate")
    assert gate.exit_code in (0, 1), gate.output  # passed or failed, never refused
    assert json.loads((tmp_path / "gate" / "verdict.json").read_text())["reference"] == "maj"


@pytest.mark.parametrize(("args", "part"), [
    (("--raters", "a,j", "--as", "maj"), "'j' is a judge rater"),
    (("--raters", "a", "--as", "maj"), "at least two"),
    (("--raters", "a,b", "--as", "a"), "--as 'a' is one of --raters"),
    (("--raters", "a,b", "--as", "j"), "'j' already has ratings"),
    (("--raters", "a,zz", "--as", "maj"), "'zz' has no rating"),
    (("--raters", "a,b", "--as", "consensus"), "--as 'consensus'"),
])
def test_adjudicate_refuses_in_one_sentence(tmp_path, args, part) -> None:
    db = _store(tmp_path / "s.db", _rows(40))
    before = store_dump(db)
    one_sentence_error(run("adjudicate", "--rubric", "refusal", *args, "--store", db), part)
    assert store_dump(db) == before


def _corrected(db: str, reference: str) -> tuple[list[dict], str]:
    r = CliRunner().invoke(main, ["analyze", "distribution", "--judge", "j", "--rubric", "refusal",
                                  "--untrusted", "--correct", "ppi", "--reference", reference,
                                  "--quiet", "--store", db, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    text = r.stdout
    return json.loads(text)["tables"]["corrected"]["rows"], r.stderr


def test_consensus_is_the_adjudicated_majority_in_analyze_correct(tmp_path) -> None:
    db = _store(tmp_path / "s.db", _rows())
    consensus, _ = _corrected(db, "consensus")
    assert run("adjudicate", "--rubric", "refusal", "--raters", "a,b,c", "--as", "maj", "--store", db).exit_code == 0
    adjudicated, warned = _corrected(db, "maj")
    assert "warning" not in warned
    strip = [{k: v for k, v in row.items() if k != "reference"} for row in consensus]
    assert strip == [{k: v for k, v in row.items() if k != "reference"} for row in adjudicated]


def test_one_annotator_as_reference_is_warned_with_its_agreement(tmp_path) -> None:
    rows = _rows()
    db = _store(tmp_path / "s.db", rows)
    _, warned = _corrected(db, "a")
    others, _ = _hand_majority(rows, ("b", "c"))
    mine = {r["item_id"]: r["label"] for r in rows if r["rater_id"] == "a"}
    both = sorted(set(mine) & set(others))
    kappa = cohen_kappa_score([mine[i] for i in both], [others[i] for i in both], labels=C)
    assert warned.count("warning:") == 1
    assert f"{kappa:.3f} (n = {len(both)})" in warned
    assert "judgekit adjudicate --raters a,b,c" in warned


def test_consensus_corrects_the_refusal_forms_as_the_adjudicated_majority_does(tmp_path) -> None:
    """`analyze distribution --correct ppi` also corrects the judge's refusal forms against the
    reference's forms: with `--reference consensus` that is the humans' majority under the form
    rubric, as with a majority written by `adjudicate` (the table was silently left out)."""
    form = load_rubric("refusal_form")
    rows = _rows()
    rng = np.random.default_rng(2)
    for k in range(120):
        truth = list(form.codes)[k % len(form.codes)]
        for who, kind in (*((h, "human") for h in HUMANS), ("j", "judge")):
            label = truth if rng.random() < 0.85 else list(form.codes)[(k + 1) % len(form.codes)]
            rows.append({**_row(f"i{k:03d}", who, kind, C[0]), "rubric": form.id, "rubric_hash": form.hash,
                         "label": label, "value": form.values[label]})
    db = _store(tmp_path / "s.db", rows)
    consensus = _tables(db, "consensus")
    for rubric in ("refusal", "refusal_form"):
        assert run("adjudicate", "--rubric", rubric, "--raters", "a,b,c", "--as", "maj", "--store", db).exit_code == 0
    adjudicated = _tables(db, "maj")
    assert "ppi_form_shares" in adjudicated
    strip = [{k: v for k, v in row.items() if k != "reference"} for row in adjudicated["ppi_form_shares"]["rows"]]
    assert [{k: v for k, v in row.items() if k != "reference"}
            for row in consensus.get("ppi_form_shares", {}).get("rows", [])] == strip


def _tables(db: str, reference: str) -> dict:
    r = CliRunner().invoke(main, ["analyze", "distribution", "--judge", "j", "--rubric", "refusal",
                                  "--untrusted", "--correct", "ppi", "--reference", reference,
                                  "--quiet", "--store", db, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["tables"]


def test_an_annotator_named_twice_votes_once() -> None:
    """Naming an annotator twice (a library caller's list) must not give it two votes: b's label
    would then outvote c's on y, and one person would make the reference."""
    df = pd.DataFrame([
        _row("y", "b", "human", C[0]), _row("y", "c", "human", C[1]),
    ])
    adj = majority_labels(df, ("b", "b", "c"))
    assert adj.labels == {} and adj.ties == {"y": {C[0]: 1, C[1]: 1}}
