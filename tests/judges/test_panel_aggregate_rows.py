"""A panel rerun that changes no vote checks its ``panel:majority`` ratings from plain rows and
writes nothing, without pandas; any difference (a vote, a tie rule, a stored rationale) takes the
frame path, which rewrites what changed. pandas is blocked (``sys.modules["pandas"] = None``) to
show which path ran: the row check never imports it, the frame path does."""

from __future__ import annotations

import sqlite3
import sys

import pandas as pd
import pytest

from judgekit.judges.panel_aggregates import write_aggregates
from judgekit.judges.panelfile import panel_from_dict
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")

# item -> [(judge, label, status)] (a judge twice: two trials)
VOTES = {
    "clear": [("a", "full_refusal", "ok"), ("b", "full_refusal", "ok"), ("c", "full_compliance", "ok")],
    "tie": [("a", "full_refusal", "ok"), ("b", "full_compliance", "ok"), ("c", None, "abstain")],
    "split": [("a", "full_refusal", "ok"), ("a", "full_compliance", "ok"), ("b", "full_refusal", "ok"),
              ("c", "partial_refusal", "ok")],
    "few": [("a", "full_refusal", "ok"), ("b", None, "error"), ("c", None, "abstain")],
    "outside": [("a", "full_refusal", "ok"), ("b", "full_refusal", "ok")],  # not a panel item
}


def make(tmp_path, **aggregate):
    (tmp_path / "items.jsonl").write_text("".join(
        f'{{"item_id": "{i}", "prompt": "p {i}", "response": "r {i}"}}\n' for i in VOTES if i != "outside"))
    panel = panel_from_dict({"rubric": "refusal", "items": "items.jsonl", "aggregate": aggregate or {},
                             "judges": [{"id": j, "model": f"rules:refusal-keywords#{j}"} for j in "abc"]},
                            base_dir=tmp_path)
    store = Store(tmp_path / "s.db")
    rows = []
    for iid, votes in VOTES.items():
        trials: dict[str, int] = {}
        for judge, label, status in votes:
            t = trials[judge] = trials.get(judge, -1) + 1
            rows.append({"item_id": iid, "rater_id": judge, "rater_kind": "judge", "rubric": REFUSAL.id,
                         "rubric_hash": REFUSAL.hash, "label": label, "status": status, "trial": t})
    store.put_ratings(pd.DataFrame(rows))
    return panel, store


def state(store):
    with sqlite3.connect(store.path) as conn:
        return (list(conn.execute("SELECT * FROM ratings ORDER BY rowid")),
                list(conn.execute("SELECT * FROM rating_history ORDER BY rowid")))


@pytest.fixture()
def no_pandas(monkeypatch):
    def block():
        monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    return block


@pytest.mark.parametrize("aggregate", [{}, {"tie": "highest"}, {"tie": "lowest", "min_votes": 1},
                                       {"judges": ["a", "b"]}])
def test_an_unchanged_majority_is_checked_without_pandas_and_writes_nothing(tmp_path, no_pandas, aggregate):
    panel, store = make(tmp_path, **aggregate)
    with store:
        first = write_aggregates(panel, store)  # the frame path writes them
        assert first == {"panel:majority": 4}  # every panel item a judge rated, "outside" left out
        before = state(store)
        no_pandas()
        assert write_aggregates(panel, store) == first
        assert state(store) == before


def test_the_stored_aggregates_are_the_frame_paths(tmp_path):
    """What the frame path stores (independent of the row check): the rules of aggregate.py."""
    panel, store = make(tmp_path)
    with store:
        write_aggregates(panel, store)
        got = store.ratings(rater_ids=["panel:majority"]).set_index("item_id")
    assert got.loc["clear", ["label", "status"]].tolist() == ["full_refusal", "ok"]
    assert got.loc["tie", "status"] == "abstain"
    assert got.loc["tie", "rationale"].startswith("tie between full_compliance, full_refusal")
    # a: 1/2 refusal + 1/2 compliance, b: refusal, c: partial -> refusal 1.5
    assert got.loc["split", "label"] == "full_refusal" and "full_refusal=1.5" in got.loc["split", "rationale"]
    assert got.loc["few", "rationale"] == "only 1 of 3 judges gave a label (need 2)"


@pytest.mark.parametrize("tamper", [
    "UPDATE ratings SET rationale = 'edited' WHERE rater_id = 'panel:majority' AND item_id = 'clear'",
    "UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'panel:majority' AND item_id = 'clear'",
    "UPDATE ratings SET status = 'ok' WHERE rater_id = 'panel:majority' AND item_id = 'tie'",
    "DELETE FROM ratings WHERE rater_id = 'panel:majority' AND item_id = 'few'",
    "UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'b' AND item_id = 'clear'",
])
def test_any_difference_takes_the_frame_path_which_rewrites_it(tmp_path, no_pandas, monkeypatch, tamper):
    panel, store = make(tmp_path)
    with store:
        write_aggregates(panel, store)
        store.conn.execute(tamper)
        store.conn.commit()
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "pandas", None)
            with pytest.raises(ImportError):
                write_aggregates(panel, store)  # a difference: the frame path, which needs pandas
        write_aggregates(panel, store)  # rewrites what changed
        after = state(store)
        no_pandas()
        assert write_aggregates(panel, store) == {"panel:majority": 4}  # unchanged again
        assert state(store) == after


def test_mean_and_median_always_take_the_frame_path(tmp_path, monkeypatch):
    (tmp_path / "items.jsonl").write_text('{"item_id": "i", "prompt": "p", "response": "r"}\n')
    panel = panel_from_dict({"rubric": "restrictiveness", "items": "items.jsonl",
                             "aggregate": {"methods": ["majority", "mean"]},
                             "judges": [{"id": j, "model": f"rules:refusal-keywords#{j}"} for j in "ab"]},
                            base_dir=tmp_path)
    with Store(tmp_path / "s.db") as store:
        monkeypatch.setitem(sys.modules, "pandas", None)
        with pytest.raises(ImportError):
            write_aggregates(panel, store)


def test_an_empty_methods_list_writes_no_aggregate(tmp_path):
    """``aggregate: {methods: []}`` asks for no derived rater: nothing returned, nothing stored,
    even where an earlier run stored ``panel:majority`` (``all()`` of nothing is True: the
    majority check must not run then)."""
    panel, store = make(tmp_path, methods=["majority"])
    assert write_aggregates(panel, store) == {"panel:majority": 4}
    empty = panel_from_dict({"rubric": "refusal", "items": "items.jsonl", "aggregate": {"methods": []},
                             "judges": [{"id": j, "model": f"rules:refusal-keywords#{j}"} for j in "abc"]},
                            base_dir=tmp_path)
    assert empty.file.aggregate is not None and empty.file.aggregate.methods == []
    before = state(store)
    assert write_aggregates(empty, store) == {}
    assert state(store) == before
