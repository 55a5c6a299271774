"""The lean gate decides where the full-report path (``run_gate(..., full_report=True)``) decides
and refuses where it refuses.

1. a label outside the rubric (a store written by ``Store.put_ratings``, which does not check
   labels) is refused in one sentence, no verdict written, as the full report refuses it;
2. a store with more raters than SQLite's smallest variable limit (schema.MAX_SQL_VARIABLES) is
   gated and its verdict checked, with the connection held to that limit;
3. a verdict the gate writes loads: ``within_human_noise`` without a human comparison below
   ``checks.min_items`` is inconclusive (the floor of every overall check), as load_verdict
   re-derives it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.gate.run import run_gate
from judgekit.rubric.model import load_rubric
from judgekit.store import digests as gate_sql
from judgekit.store.database import Store
from judgekit.verdict.hashes import current_hashes
from judgekit.verdict.read import load_verdict, store_hashes
from judgekit.verdict.trust import require_trusted

REFUSAL = load_rubric("refusal")
C = REFUSAL.codes
COLS = ["item_id", "rater_id", "rater_kind", "label", "status", "trial"]


def _put(db: Path, rows: list[tuple[Any, ...]], n_items: int, other: int = 0) -> Path:
    items = pd.DataFrame({"item_id": [f"i{k:03d}" for k in range(n_items)], "prompt": ["p"] * n_items,
                          "response": ["r"] * n_items})
    df = pd.DataFrame(rows, columns=COLS)
    df["rubric"], df["rubric_hash"] = REFUSAL.id, REFUSAL.hash
    with Store(db) as s:
        s.put_items(items)
        s.put_ratings(df)  # (no label check: the way a label outside the rubric gets in)
        if other:  # ratings under another rubric, so the gate reads its raters one by one
            rest = load_rubric("restrictiveness")
            o = pd.DataFrame([(f"o{k}", "x", "human", rest.codes[k % 5], "ok", 0) for k in range(other)], columns=COLS)
            o["rubric"], o["rubric_hash"] = rest.id, rest.hash
            s.put_ratings(o)
    return db


def _policy(path: Path, reference: str, extra: str = "") -> Path:
    path.write_text(f"rubric: refusal\njudges: [j1]\nreference: {reference}\nn_resamples: 100\nchecks:\n"
                    f"  min_items: 5\n  metric: kappa\n  min_value: 0.3\n{extra}", encoding="utf-8")
    return path


def _log(db: Path) -> list[Any]:
    with Store(db) as s:
        return s.conn.execute("SELECT * FROM verdicts").fetchall()


# ----------------------------------------------------------------- a label outside the rubric
# j2: a judge the policy does not name (the full report refuses its label too)
@pytest.mark.parametrize(("who", "reference"), [("h1", "h1"), ("j1", "h1"), ("j1", "consensus"), ("h1", "consensus"),
                                                 ("j2", "h1")])
def test_a_label_outside_the_rubric_is_refused_as_the_full_report_refuses_it(tmp_path, monkeypatch, who, reference):
    rows = []
    for k in range(30):
        rows += [(f"i{k:03d}", "h1", "human", C[k % 3], "ok", 0),
                 (f"i{k:03d}", "h2", "human", C[(k + (k % 4 == 0)) % 3], "ok", 0),
                 (f"i{k:03d}", "j1", "judge", C[(k + (k % 5 == 0)) % 3], "ok", 0),
                 (f"i{k:03d}", "j2", "judge", C[k % 2], "ok", 0)]
    rows = [(i, r, kd, "Refused" if (i, r) == ("i000", who) else lab, st, t) for i, r, kd, lab, st, t in rows]
    db = _put(tmp_path / "s.db", rows, 30)
    policy = _policy(tmp_path / "p.yaml", reference)
    with Store(db) as s:
        with pytest.raises(JudgekitError) as old:
            run_gate(s, policy, full_report=True)
        with pytest.raises(JudgekitError) as new:
            run_gate(s, policy)
    assert str(new.value) == str(old.value)
    assert f"Rating of item 'i000' by '{who}' has the label 'Refused', which is not one of the rubric's codes" \
        in str(new.value)
    before = _log(db)
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(db), "--out", str(out)])
    one_sentence_error(res, "'Refused'")
    assert not (out / "verdict.json").exists() and not (tmp_path / "verdict.json").exists()
    assert _log(db) == before  # nothing recorded


# ----------------------------------------------------------------- more raters than SQL variables
def _crowd(db: Path, other: int = 0) -> Path:
    rows = []
    for h in range(600):  # 600 crowd humans, each rating 3 of 120 items
        for t in range(3):
            k = (h * 3 + t) % 120
            rows.append((f"i{k:03d}", f"h{h:03d}", "human", C[k % 3] if (h + t) % 7 else C[(k + 1) % 3], "ok", 0))
    for k in range(120):
        rows.append((f"i{k:03d}", "j1", "judge", C[k % 3] if k % 6 else C[(k + 2) % 3], "ok", 0))
        rows.append((f"i{k:03d}", "j2", "judge", C[(k + 1) % 3], "ok", 0))
    return _put(db, rows, 120, other)


@pytest.mark.parametrize("other", [0, 20_000])  # one table scan; one index read per rater
def test_six_hundred_crowd_humans_under_the_smallest_variable_limit(tmp_path, other):
    db = _crowd(tmp_path / "s.db", other)
    policy = _policy(tmp_path / "p.yaml", "consensus")
    with Store(db) as s:
        s.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        with pytest.raises(sqlite3.OperationalError, match="too many SQL variables"):  # the limit holds
            s.conn.execute(f"SELECT 1 WHERE 1 IN ({','.join('?' * 1000)})", [1] * 1000).fetchall()
        new, _ = run_gate(s, policy)
        assert [c["state"] for c in new["judges"][0]["checks"]] == ["pass", "pass"]
        # κ of j1 against the humans' plurality label per item (a tie: no reference), by sklearn
        ratings = s.ratings(rubric=REFUSAL)
    from collections import Counter

    from sklearn.metrics import cohen_kappa_score

    ref: dict[str, str] = {}
    for item, labels in ratings[ratings.rater_kind == "human"].groupby("item_id")["label"]:
        top = Counter(labels).most_common()
        if len(top) == 1 or top[0][1] > top[1][1]:
            ref[str(item)] = top[0][0]
    j1 = dict(zip(ratings[ratings.rater_id == "j1"].item_id, ratings[ratings.rater_id == "j1"].label, strict=True))
    both = sorted(set(ref) & set(j1))
    kappa = cohen_kappa_score([ref[i] for i in both], [j1[i] for i in both], labels=C)
    checks = {c["name"]: c for c in new["judges"][0]["checks"]}
    assert checks["min_items"]["figure"] == checks["min_kappa"]["n"] == len(both)
    assert checks["min_kappa"]["figure"] == pytest.approx(kappa, abs=1e-6)
    with Store(db) as s:
        s.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        assert require_trusted(new, judge="j1", rubric=REFUSAL, store=s)["state"] == "pass"
        # match_store's hashes read 600 humans + j1 of 602 raters: the SQL forms' values
        sql = store_hashes(s, REFUSAL)
        for judge in ("j1", "j2"):
            now, jh = current_hashes(s, REFUSAL, judge)  # type: ignore[misc]
            assert now == sql and jh == gate_sql.judge_ratings_hash(s, REFUSAL, judge)


def test_the_cli_gates_six_hundred_crowd_humans(tmp_path):
    db = _crowd(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["gate", str(_policy(tmp_path / "p.yaml", "consensus")), "--store", str(db),
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    load_verdict(tmp_path / "o" / "verdict.json")


# ----------------------------------------------------------------- the verdict the gate writes loads
def _one_human(tmp_path: Path) -> Path:
    rows = [(f"i{k:03d}", "h1", "human", C[k % 3], "ok", 0) for k in range(30)]
    rows += [(f"i{k:03d}", "j1", "judge", C[k % 3] if k % 5 else C[(k + 1) % 3], "ok", 0) for k in range(30)]
    return _put(tmp_path / "s.db", rows, 30)


def test_within_human_noise_without_a_comparison_below_min_items_is_inconclusive_and_loads(tmp_path):
    db = _one_human(tmp_path)  # one human: no leave-one-out comparison, n 0 < min_items 5
    policy = _policy(tmp_path / "p.yaml", "h1", "  within_human_noise: {margin: 0.1}\n")
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(db), "--out", str(tmp_path / "o")])
    assert res.exit_code == 3, res.output  # inconclusive, not fail
    path = tmp_path / "o" / "verdict.json"
    v = load_verdict(path)  # was refused: "has state 'fail', but its n 0 is below the policy's min_items 5"
    noise = next(c for c in v["judges"][0]["checks"] if c["name"] == "within_human_noise")
    assert (noise["state"], noise["figure"], noise["n"], noise["threshold"]) == ("inconclusive", None, 0, -0.1)
    assert noise["detail"].startswith("SMALL SAMPLE: n=0 is below min_items 5; no like-for-like human comparison")
    # one human: only a second annotator can decide it, not more items
    assert noise["budget"]["items"] is None
    assert "only a second annotator can decide it" in noise["budget"]["sentence"]
    assert v["judges"][0]["state"] == "inconclusive"
    with Store(db) as s, pytest.raises(UntrustedJudgeError, match=r"did not pass.*inconclusive: within_human_noise"):
        require_trusted(path, judge="j1", rubric=REFUSAL, store=s)
    # the loader's rule is the one the gate follows: a 'fail' here is an edit it refuses
    data = json.loads(path.read_text(encoding="utf-8"))
    ch = next(c for c in data["judges"][0]["checks"] if c["name"] == "within_human_noise")
    ch.update(state="fail", budget=None)
    data["judges"][0].update(state="fail", budget=None)
    data["state"] = "fail"
    with pytest.raises(UntrustedJudgeError, match="its n 0 is below the policy's min_items 5"):
        load_verdict(data)


def test_within_human_noise_undefined_at_or_above_min_items_is_inconclusive_not_a_fail_and_loads(tmp_path):
    # two humans who agree on one label everywhere: κ is undefined on every item (no floor issue)
    rows = [(f"i{k:03d}", h, "human", C[0], "ok", 0) for k in range(30) for h in ("h1", "h2")]
    rows += [(f"i{k:03d}", "j1", "judge", C[k % 2], "ok", 0) for k in range(30)]
    db = _put(tmp_path / "s.db", rows, 30)
    policy = _policy(tmp_path / "p.yaml", "h1", "  within_human_noise: {margin: 0.1}\n")
    with Store(db) as s:
        v, _ = run_gate(s, policy)
    noise = next(c for c in v["judges"][0]["checks"] if c["name"] == "within_human_noise")
    assert noise["figure"] is None and noise["n"] >= 5 and noise["state"] == "inconclusive"  # undefined
    load_verdict(v)
