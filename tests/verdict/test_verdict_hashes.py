"""The verdict's hashes from the store's code matrix (judgekit.verdict.hashes over
judgekit.agreement.rating_codes) are gate_sql's (and so main's) values whenever the matrix can give
them, and the matrix declines when it cannot (trials, perturbed copies); the matrix read through
the index (a store where another rubric holds most ratings) is the same as by one table scan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judgekit.agreement.rating_codes import codes_from_store
from judgekit.agreement.report import read_codes
from judgekit.rubric.model import load_rubric
from judgekit.store import digests as gate_sql
from judgekit.store.database import Store
from judgekit.verdict.hashes import matrix_hashes
from judgekit.verdict.read import store_hashes

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes
IDS = ["a", "A", "a b", "a-b", "ab", "é", "e\u0301", "𝔘nicode", "\uff5a-fullwidth", 'z"q', "10", "9", "nullable",
       "back\\slash"]


def _store(db: Path, *, trials: bool = False, other_rubric: int = 0, extra_items: int = 0,
           perturbed: bool = False) -> Path:
    n_items = len(IDS) + extra_items
    ids = [*IDS, *(f"extra-{k}" for k in range(extra_items))]
    if perturbed:  # a probed judge: j~label_order on the items, j~padding on their padded copies
        ids += [f"{iid}~padding" for iid in IDS[:6]]
        n_items += 6
    items = pd.DataFrame({"item_id": [*ids, "judge-only"], "prompt": [f"p {k}" for k in range(n_items + 1)],
                          "response": [f"r {k}" for k in range(n_items + 1)]})
    rows: list[tuple[Any, ...]] = []
    for k, iid in enumerate(IDS):
        rows.append((iid, "h1", "human", CODES[k % 3], "ok", 0))
        rows.append((iid, "h2", "human", None, "abstain", 3) if k % 4 == 1 else
                    (iid, "h2", "human", CODES[(k + 1) % 3], "ok", 0))
        if k % 3:
            rows.append((iid, "ref", "reference", CODES[k % 3], "ok", 0))
        rows.append((iid, "j", "judge", None, "error", 2) if k % 5 == 0 else (iid, "j", "judge", CODES[k % 2], "ok", 0))
        rows.append((iid, "silent", "judge", None, "abstain", 0))
    if trials:
        rows.append(("a", "h1", "human", CODES[2], "ok", 1))
    if perturbed:
        for k, iid in enumerate(IDS[:6]):
            rows.append((iid, "j~label_order", "judge", CODES[(k + 2) % 3], "ok", 0))
            rows.append((f"{iid}~padding", "j~padding", "judge", CODES[(k + 1) % 3], "ok", 0))
            rows.append((f"{iid}~padding", "j", "judge", CODES[k % 3], "ok", 0))
    rows.append(("judge-only", "j", "judge", CODES[2], "ok", 0))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
    ratings["rubric"], ratings["rubric_hash"] = REFUSAL.id, REFUSAL.hash
    with Store(db) as s:
        s.put_items(items)
        s.put_ratings(ratings)
        if other_rubric:
            rest = load_rubric("restrictiveness")
            other = pd.DataFrame([(f"o{k}", "h1", "human", rest.codes[k % 5], "ok", 0) for k in range(other_rubric)],
                                 columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
            other["rubric"], other["rubric_hash"] = rest.id, rest.hash
            s.put_ratings(other)
    return db


def _sql(s: Store) -> dict[str, Any]:
    return {**store_hashes(s, REFUSAL),
            "judges": {j: gate_sql.judge_ratings_hash(s, REFUSAL, j) for j in ("j", "silent", "nobody")}}


def test_matrix_hashes_are_the_sql_hashes(tmp_path):
    for name, kw in (("plain", {}), ("other-rubric", {"other_rubric": 200}), ("many-items", {"extra_items": 300})):
        with Store(_store(tmp_path / f"{name}.db", **kw)) as s:
            mat = codes_from_store(s, REFUSAL, variants=False)
            assert mat.trials is not None
            got = matrix_hashes(s, REFUSAL, mat, ["j", "silent", "nobody"], variants=False)
            assert got == _sql(s), name
            # not vacuous: each hash moves with what it covers, in both forms
            s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'back\\slash' AND rater_id = 'h1'", (CODES[2],))
            mat2 = codes_from_store(s, REFUSAL, variants=False)
            moved = matrix_hashes(s, REFUSAL, mat2, ["j", "silent", "nobody"], variants=False)
            assert moved == _sql(s) and moved is not None
            assert moved["human_ratings_hash"] != got["human_ratings_hash"]
            assert moved["items_hash"] == got["items_hash"] and moved["judges"] == got["judges"]


def test_main_values_on_this_store(tmp_path):
    # computed by main's DataFrame code (0666d98) on this very store; U+FF5A sorts before U+1D518
    # in code point (UTF-8) order, after it in UTF-16 order
    with Store(_store(tmp_path / "s.db")) as s:
        mat = codes_from_store(s, REFUSAL, variants=False)
        got = matrix_hashes(s, REFUSAL, mat, ["j", "silent"], variants=False)
    assert got == {"items_hash": MAIN["items_hash"], "human_ratings_hash": MAIN["human_ratings_hash"],
                   "judges": {"j": MAIN["j"], "silent": MAIN["silent"]}}


MAIN = {"items_hash": "825ff6c309a62cc5", "human_ratings_hash": "b99212a1cba224a4", "j": "9052201fa97b062d",
        "silent": "a703c9eebe40ee59"}


def test_the_matrix_declines_trials_and_perturbed_copies(tmp_path):
    with Store(_store(tmp_path / "s.db", trials=True)) as s:
        assert codes_from_store(s, REFUSAL, variants=False) is None  # several trials: the frame path
        mat = read_codes(s, REFUSAL)  # (trials collapsed)
        assert mat.trials is None and matrix_hashes(s, REFUSAL, mat, ["j"], variants=False) is None
    with Store(_store(tmp_path / "t.db", perturbed=True)) as s:
        mat = codes_from_store(s, REFUSAL, variants=True)
        assert "a~padding" in mat.items and "j~padding" in mat.raters  # the copies are in the matrix
        assert matrix_hashes(s, REFUSAL, mat, ["j"], variants=True) is None
        # without the copies the matrix gives the hashes, the SQL forms' (which leave copies out)
        plain = codes_from_store(s, REFUSAL, variants=False)
        assert "a~padding" not in plain.items and "j~padding" not in plain.raters
        assert matrix_hashes(s, REFUSAL, plain, ["j", "silent", "nobody"], variants=False) == _sql(s)
    # the gate of a policy naming the perturbed judge writes the old path's hashes
    from judgekit.gate.run import run_gate

    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: refusal\njudges: [j, j~label_order]\nreference: ref\nn_resamples: 100\nchecks:\n"
                      "  min_items: 5\n  metric: percent_agreement\n  min_value: 0.01\n", encoding="utf-8")
    with Store(tmp_path / "t.db") as s:
        new, _ = run_gate(s, policy)
        old, _ = run_gate(s, policy, full_report=True)
        keys = ("items_hash", "human_ratings_hash")
        assert {k: new[k] for k in keys} == {k: old[k] for k in keys} == {k: _sql(s)[k] for k in keys}
        got = {j["judge"]: j["judge_ratings_hash"] for j in new["judges"]}
        assert got == {j["judge"]: j["judge_ratings_hash"] for j in old["judges"]}
        assert got["j"] == _sql(s)["judges"]["j"] and got["j~label_order"] == gate_sql.judge_ratings_hash(
            s, REFUSAL, "j~label_order")


def test_the_index_read_is_the_table_scan(tmp_path):
    with Store(_store(tmp_path / "a.db")) as a, Store(_store(tmp_path / "b.db", other_rubric=500)) as b:
        ma = codes_from_store(a, REFUSAL, variants=False)
        mb = codes_from_store(b, REFUSAL, variants=False)  # 500 other ratings: read through the index
        assert ma is not None and mb is not None
        assert (ma.items.tolist(), ma.raters, ma.kinds) == (mb.items.tolist(), mb.raters, mb.kinds)
        assert (ma.labels == mb.labels).all() and (ma.status == mb.status).all()
        assert ma.trials is not None and mb.trials is not None and (ma.trials == mb.trials).all()
        assert list(ma.kinds) == ["h1", "h2", "j", "silent", "ref"]


def test_current_hashes_are_the_sql_forms_and_decline_trials(tmp_path):
    from judgekit.verdict.hashes import current_hashes

    with Store(_store(tmp_path / "s.db", other_rubric=300)) as s:
        sql = _sql(s)
        for judge in ("j", "silent", "nobody", None):
            now, judge_hash = current_hashes(s, REFUSAL, judge)  # type: ignore[misc]
            assert now == {k: sql[k] for k in ("items_hash", "human_ratings_hash")}
            assert judge_hash == (None if judge is None else sql["judges"][judge])
    with Store(_store(tmp_path / "t.db", trials=True)) as s:
        assert current_hashes(s, REFUSAL, "j") is None


def test_a_verdict_is_refused_once_a_judge_or_human_label_changes(tmp_path):
    from judgekit.errors import UntrustedJudgeError
    from judgekit.gate.run import run_gate
    from judgekit.verdict.trust import require_trusted

    db = _store(tmp_path / "s.db")
    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: refusal\njudges: [j]\nreference: ref\nn_resamples: 100\nchecks:\n"
                      "  min_items: 5\n  metric: percent_agreement\n  min_value: 0.01\n", encoding="utf-8")
    with Store(db) as s:
        verdict, _ = run_gate(s, policy)
        assert verdict["state"] == "pass"
        assert require_trusted(verdict, judge="j", rubric=REFUSAL, store=s)["judge"] == "j"
        s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'ab' AND rater_id = 'j'", (CODES[2],))
        with pytest.raises(UntrustedJudgeError, match="judge 'j''s ratings on the items with human"):
            require_trusted(verdict, judge="j", rubric=REFUSAL, store=s)
        s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'ab' AND rater_id = 'j'", (CODES[0],))
        assert require_trusted(verdict, judge="j", rubric=REFUSAL, store=s)["judge"] == "j"
        s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'ab' AND rater_id = 'h2'", (CODES[0],))
        with pytest.raises(UntrustedJudgeError, match="the human ratings under refusal@1 in .* changed"):
            require_trusted(verdict, judge="j", rubric=REFUSAL, store=s)
