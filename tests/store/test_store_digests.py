"""The verdict's hashes by streamed SQL (judgekit.store.digests) are the values main's DataFrame forms
give: literal digests pinned from main at 0666d98 on a store with awkward values (ids that sort
differently as bytes and as case-folded text, combining and astral characters, a quote,
numeric-looking ids, 12 trials of one human so "10" sorts before "2", abstentions with no label,
errors, a judge with no label at all, perturbed item copies, an item only a judge rated), and the
DataFrame forms themselves (run through a store proxy) on the same store and on XSTest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judgekit.rubric.model import load_rubric
from judgekit.store import digests as gate_sql
from judgekit.store.database import Store
from judgekit.verdict.log import judge_ratings_hash
from judgekit.verdict.read import store_hashes

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes
IDS = ["a", "A", "a b", "a-b", "ab", "é", "e\u0301", "𝔘nicode", 'z"q', "10", "9", "nullable"]


def _build(db: Path) -> Path:
    items = pd.DataFrame({"item_id": [*IDS, "a~padding", "judge-only"],
                          "prompt": [f"p {k}" for k in range(len(IDS) + 2)],
                          "response": [f"r {k}" for k in range(len(IDS) + 2)],
                          "model": ["m1", "m2"] * ((len(IDS) + 2) // 2)})
    rows: list[tuple[Any, ...]] = []
    for k, iid in enumerate(IDS):
        rows.append((iid, "h1", "human", CODES[k % 3], "ok", 0))
        if k % 4 == 1:
            rows.append((iid, "h2", "human", None, "abstain", 0))
        else:
            rows.append((iid, "h2", "human", CODES[(k + 1) % 3], "ok", 0))
        rows.append((iid, "ref", "reference", CODES[k % 3], "ok", 0))
        for t in ((0, 1, 2, 10, 11) if k < 3 else (0,)):
            if (k + t) % 5 == 0:
                rows.append((iid, "j", "judge", None, "error", t))
            else:
                rows.append((iid, "j", "judge", CODES[(k + t) % 3], "ok", t))
        rows.append((iid, "silent", "judge", None, "abstain", 0))
    for t in range(12):
        rows.append(("a", "h3", "human", CODES[t % 3], "ok", t))
    rows.append(("a~padding", "j~padding", "judge", CODES[0], "ok", 0))
    rows.append(("a~padding", "j", "judge", CODES[1], "ok", 0))
    rows.append(("judge-only", "j", "judge", CODES[2], "ok", 0))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
    ratings["rubric"] = REFUSAL.id
    ratings["rubric_hash"] = REFUSAL.hash
    with Store(db) as s:
        s.put_items(items)
        s.put_ratings(ratings)
    return db


class _Proxy:
    """The store behind an object that is not a Store: the DataFrame forms of the hashes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _all(source: Any) -> tuple[dict[str, str], dict[str, str]]:
    return store_hashes(source, REFUSAL), {j: judge_ratings_hash(source, REFUSAL, j) for j in ("j", "silent")}


def test_the_sql_hashes_are_mains_values_on_awkward_data(tmp_path):
    with Store(_build(tmp_path / "s.db")) as s:
        assert gate_sql.plain_store(s) and not gate_sql.plain_store(_Proxy(s))
        sql = _all(s)
        # computed by main's DataFrame code (0666d98, pandas 3.1) on this very store
        assert sql == ({"items_hash": "01aef56beb6f6c6d", "human_ratings_hash": "0a7df08b368e546b"},
                       {"j": "2ca03e67b59261d2", "silent": "e365a75c282aa44d"})
        assert _all(_Proxy(s)) == sql


def test_a_block_boundary_does_not_change_a_hash(tmp_path, monkeypatch):
    with Store(_build(tmp_path / "s.db")) as s:
        whole = _all(s)
        monkeypatch.setattr(gate_sql, "BLOCK", 2)
        assert _all(s) == whole


def test_each_hash_moves_with_what_it_covers(tmp_path):
    db = _build(tmp_path / "s.db")
    with Store(db) as s:
        before = _all(s)
        s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'é' AND rater_id = 'h1'", (CODES[0],))
        after = _all(s)
        assert after[0]["human_ratings_hash"] != before[0]["human_ratings_hash"]
        assert after[0]["items_hash"] == before[0]["items_hash"] and after[1] == before[1]
        s.conn.execute("UPDATE items SET content_hash = 'x' WHERE item_id = '10'")
        assert _all(s)[0]["items_hash"] != after[0]["items_hash"]
        # the judge on a labelled item moves its hash; on the judge-only item it does not
        s.conn.execute("UPDATE ratings SET label = ? WHERE item_id = 'judge-only' AND rater_id = 'j'", (CODES[0],))
        assert _all(s)[1] == after[1]
        s.conn.execute("UPDATE ratings SET status = 'abstain', label = NULL WHERE item_id = '9' AND rater_id = 'j'")
        now = _all(s)
        assert now[1]["j"] != after[1]["j"] and now[1]["silent"] == after[1]["silent"]
        assert now == _all(_Proxy(s))


def test_rater_kinds_and_meta_keys(tmp_path):
    with Store(_build(tmp_path / "s.db")) as s:
        # first-rating order, perturbed copies left out, as store.ratings lists them
        frame = s.ratings(rubric=REFUSAL)
        assert list(gate_sql.rater_kinds(s, REFUSAL).items()) == list(
            dict(zip(frame["rater_id"], frame["rater_kind"], strict=True)).items())
        assert list(gate_sql.rater_kinds(s, REFUSAL)) == ["h1", "h2", "ref", "j", "silent", "h3"]
        assert gate_sql.meta_keys(s) == {"model"}


@pytest.mark.parametrize("judge", ["gpt4", "string_match"])
def test_the_sql_hashes_match_the_dataframe_forms_on_xstest(xstest_store, judge):
    s = xstest_store
    assert store_hashes(s, REFUSAL) == store_hashes(_Proxy(s), REFUSAL)
    assert judge_ratings_hash(s, REFUSAL, judge) == judge_ratings_hash(_Proxy(s), REFUSAL, judge)
    # main's values on the shipped labels (0666d98)
    assert store_hashes(s, REFUSAL) == {"items_hash": "51bf9f5564d018bc", "human_ratings_hash": "53eddcd8793a2346"}
    assert judge_ratings_hash(s, REFUSAL, judge) == {"gpt4": "326fdefbd17df217",
                                                     "string_match": "990dad9eaf493204"}[judge]
