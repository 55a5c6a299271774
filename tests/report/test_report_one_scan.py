"""The report reads the ratings once: the verdict check hashes the agreement report's
code matrix (judgekit.verdict.hashes.current_hashes with ``codes``), and the gate reads that
same scan (judgekit.agreement.report.read_codes). Checked here: the scan gives the very
cells of the DataFrame path (any number of raters) and the very hash values of the SQL forms (which
tests/store/test_store_digests.py pins to main's), on random stores with abstentions, errors, single
non-zero trials, unicode ids, items stored out of id order, items without ratings and ratings
without items; where it cannot (several trials of a cell, a trial over 74) the old reads are
used, with the same values; and `judgekit report` with a verdict reads no rating a second time
while a verdict that no longer matches the store is still refused."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.agreement import rating_codes
from judgekit.agreement.rating_codes import factorize_sorted
from judgekit.agreement.report import read_codes
from judgekit.rubric.model import load_rubric
from judgekit.store import digests as gate_sql
from judgekit.store.database import Store
from judgekit.verdict.hashes import current_hashes, matrix_hashes

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes
ALPHABET = ["a", "b", "Z", "é", "e\u0301", "𝔘", "\uff5a", '"', "\\", " ", "-", "1", "9"]


def test_factorize_sorted_is_pandas_factorize():
    rng = random.Random(5)
    cases: list[list[str]] = [[], ["x"], ["b", "b", "a", "a", "a", "c"], ["a", "b", "a", "b"]]
    for _ in range(200):
        pool = sorted({"".join(rng.choices(ALPHABET, k=rng.randint(1, 4))) for _ in range(rng.randint(1, 30))})
        ids = [x for x in pool for _ in range(rng.randint(1, 4))]  # runs in id order (an import)
        cases.append(ids if rng.random() < 0.5 else rng.sample(ids, len(ids)))
    for ids in cases:
        codes, uniques = factorize_sorted(ids)
        want_codes, want_uniques = pd.factorize(np.asarray(ids, dtype=object), sort=True)
        assert uniques == list(want_uniques), ids
        assert codes.dtype == np.int64 and codes.tolist() == want_codes.tolist(), ids


def _random_store(db: Path, seed: int, *, in_order: bool, trial: int | None = None,
                  duplicate: bool = False) -> Path:
    """Humans h1..h3, a reference, judges j1, j2 (j2 never gives a label); some items without
    ratings, some ratings without an item row; ``trial``: one human rating under that trial;
    ``duplicate``: a judge rated one item twice (trials 0 and 1)."""
    rng = random.Random(seed)
    ids = sorted({"".join(rng.choices(ALPHABET, k=rng.randint(1, 5))) for _ in range(rng.randint(20, 60))})
    stored = ids if in_order else rng.sample(ids, len(ids))
    with_row = [i for i in stored if rng.random() < 0.9] + ["only-an-item"]
    items = pd.DataFrame({"item_id": with_row, "prompt": [f"p {k}" for k in range(len(with_row))],
                          "response": [f"r {rng.random()}" for _ in with_row]})
    rows: list[tuple[Any, ...]] = []
    for iid in stored:
        for rater, kind in (("h1", "human"), ("h2", "human"), ("h3", "human"), ("ref", "reference"),
                            ("j1", "judge"), ("j2", "judge")):
            u = rng.random()
            if u < 0.15 and rater != "h1":
                continue  # not rated by this rater
            if rater == "j2" or u < 0.2:
                rows.append((iid, rater, kind, None, rng.choice(["abstain", "error"]), 0))
            else:
                rows.append((iid, rater, kind, rng.choice(CODES), "ok", 0))
    if trial is not None:
        k = next(n for n, r in enumerate(rows) if r[1] == "h2")
        rows[k] = (*rows[k][:5], trial)
    if duplicate:
        k = next(n for n, r in enumerate(rows) if r[1] == "j1")
        rows.append((*rows[k][:3], CODES[0], "ok", 1))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
    ratings["rubric"], ratings["rubric_hash"] = REFUSAL.id, REFUSAL.hash
    with Store(db) as s:
        s.put_items(items)
        s.put_ratings(ratings)
    return db


def _frame_codes(s: Store) -> rating_codes.RatingCodes:
    """The DataFrame path's matrix of the same ratings (the scan declined)."""
    return rating_codes.codes_from_frame(s.ratings(rubric=REFUSAL), CODES)


def _same(a: rating_codes.RatingCodes, b: rating_codes.RatingCodes) -> None:
    assert a.items.tolist() == b.items.tolist() and a.raters == b.raters and a.kinds == b.kinds
    assert list(a.kinds) == list(b.kinds)  # first-rating order
    assert np.array_equal(a.labels, b.labels) and np.array_equal(a.status, b.status)


def _sql_hashes(s: Store, judge: str | None) -> tuple[dict[str, str], str | None]:
    return ({"items_hash": gate_sql.items_hash(s, REFUSAL), "human_ratings_hash": gate_sql.human_ratings_hash(s, REFUSAL)},
            None if judge is None else gate_sql.judge_ratings_hash(s, REFUSAL, judge))


@pytest.mark.parametrize("seed", range(8))
def test_the_shared_scan_is_the_gates_read_and_hashes_as_the_sql_forms(tmp_path, seed):
    with Store(_random_store(tmp_path / "s.db", seed, in_order=seed % 2 == 0, trial=3 if seed % 3 == 0 else None)) as s:
        codes = read_codes(s, REFUSAL)
        assert codes.trials is not None
        _same(codes, _frame_codes(s))
        for judge in (None, "j1", "j2", "nobody"):
            assert current_hashes(s, REFUSAL, judge, codes=codes) == _sql_hashes(s, judge), judge
        # not vacuous: an edited human label moves the human hash only, a content edit the items hash
        before = _sql_hashes(s, "j1")
        s.conn.execute("UPDATE ratings SET label = CASE label WHEN ? THEN ? ELSE ? END"
                       " WHERE rater_id = 'h1' AND rowid = (SELECT MIN(rowid) FROM ratings WHERE rater_id = 'h1')",
                       (CODES[0], CODES[1], CODES[0]))
        s.conn.execute("UPDATE items SET content_hash = 'edited' WHERE rowid = (SELECT MAX(rowid) FROM items"
                       " WHERE item_id != 'only-an-item')")
        now = current_hashes(s, REFUSAL, "j1", codes=read_codes(s, REFUSAL))
        assert now == _sql_hashes(s, "j1")
        assert now[0]["human_ratings_hash"] != before[0]["human_ratings_hash"] and now[1] == before[1]
        assert now[0]["items_hash"] != before[0]["items_hash"]


@pytest.mark.parametrize("kw", [{"trial": 80}, {"duplicate": True}])
def test_where_the_scan_cannot_hash_the_old_reads_give_the_same_values(tmp_path, kw):
    with Store(_random_store(tmp_path / "s.db", 11, in_order=True, **kw)) as s:
        codes = read_codes(s, REFUSAL)
        assert codes.trials is None  # a trial over 74: unknown; several trials: collapsed
        assert matrix_hashes(s, REFUSAL, codes, ["j1"], variants=False) is None
        _same(codes, _frame_codes(s))
        for judge in (None, "j1"):
            got = current_hashes(s, REFUSAL, judge, codes=codes)
            if got is not None:  # (several trials of a judge: the caller's SQL forms)
                assert got == _sql_hashes(s, judge)


def test_more_raters_than_code_characters_are_read_in_the_one_scan(tmp_path):
    """Past 75 raters the scan reads the rater ids too; its cells are the DataFrame path's and
    its hashes the SQL forms'."""
    rng = random.Random(2)
    ids = [f"i{k:02d}" for k in range(40)]
    rows = [(i, f"h{r:03d}", "human", rng.choice(CODES), "ok", 0) for i in ids for r in range(90) if rng.random() < 0.3]
    rows += [(i, "j1", "judge", rng.choice(CODES), "ok", 0) for i in ids]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
    ratings["rubric"], ratings["rubric_hash"] = REFUSAL.id, REFUSAL.hash
    with Store(tmp_path / "m.db") as s:
        s.put_items(pd.DataFrame({"item_id": ids, "prompt": ids, "response": ids}))
        s.put_ratings(ratings)
        codes = rating_codes.codes_from_store(s, REFUSAL)
        assert codes is not None and len(codes.raters) > 75 and codes.trials is not None
        _same(codes, _frame_codes(s))
        assert current_hashes(s, REFUSAL, "j1") == _sql_hashes(s, "j1")


# ----------------------------------------------------------------------------- the command
POLICY = """rubric: refusal
judges: [j1]
reference: consensus
checks:
  min_items: 5
  metric: kappa
  min_lower_bound: -0.99
"""


def _gate(tmp_path: Path) -> tuple[Path, Path]:
    from judgekit.cli import main

    db = _random_store(tmp_path / "r.db", 3, in_order=True)
    (tmp_path / "policy.yaml").write_text(POLICY)
    r = CliRunner().invoke(main, ["gate", str(tmp_path / "policy.yaml"), "--store", str(db), "--out", str(tmp_path / "v")])
    assert r.exit_code in (0, 1), r.output
    return db, tmp_path / "v" / "verdict.json"


def test_report_reads_the_ratings_once_and_still_refuses_a_stale_verdict(tmp_path, monkeypatch):
    from judgekit.cli import main

    db, verdict = _gate(tmp_path)
    scans: list[int] = []
    real = rating_codes.codes_from_store

    def counted(*a: Any, **k: Any) -> Any:
        scans.append(1)
        return real(*a, **k)

    def no_second_read(*a: Any, **k: Any) -> Any:
        raise AssertionError("the ratings were read again for the verdict check")

    monkeypatch.setattr(rating_codes, "codes_from_store", counted)
    monkeypatch.setattr("judgekit.agreement.report.codes_from_store", counted)
    monkeypatch.setattr(gate_sql, "human_ratings_hash", no_second_read)
    args = ["report", "--store", str(db), "--rubric", "refusal", "--verdict", str(verdict),
            "--resamples", "100", "--disagreements", "2"]
    r = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert scans == [1]
    assert "j1" in r.output and "No verdict" not in r.output
    # an edited human label after the gate: the report refuses the verdict, in one sentence
    with Store(db) as s:
        s.conn.execute("UPDATE ratings SET label = CASE label WHEN ? THEN ? ELSE ? END WHERE rowid ="
                       " (SELECT MIN(rowid) FROM ratings WHERE rater_id = 'h1')", (CODES[0], CODES[1], CODES[0]))
        s.conn.commit()
    r = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "rep2")])
    one_sentence_error(r, "the human ratings under refusal@1", "changed since the verdict")
    assert not (tmp_path / "rep2").exists()
