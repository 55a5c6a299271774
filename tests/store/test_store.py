"""The store's own API: nested transactions (savepoints), opening an existing store, samples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import judgekit
from judgekit.errors import JudgekitError
from judgekit.store.database import SampleRow, Store


def _items(*ids: str) -> pd.DataFrame:
    return pd.DataFrame({"item_id": list(ids), "prompt": "p", "response": "r"})


def _ids(store: Store) -> list[str]:
    return store.items()["item_id"].tolist() if not store.items().empty else []


class Boom(Exception):
    pass


def test_inner_failure_rolls_back_only_the_inner_part(tmp_path):
    with Store(tmp_path / "s.db") as store:
        with store.transaction():
            store.put_items(_items("outer-1"))
            with pytest.raises(Boom), store.transaction():
                store.put_items(_items("inner"))
                assert _ids(store) == ["outer-1", "inner"]  # visible inside the savepoint
                raise Boom
            assert _ids(store) == ["outer-1"]
            store.put_items(_items("outer-2"))
        assert _ids(store) == ["outer-1", "outer-2"]
    with Store(tmp_path / "s.db") as again:  # committed, not only visible on this connection
        assert _ids(again) == ["outer-1", "outer-2"]


def test_outer_failure_rolls_back_everything_inner_parts_included(tmp_path):
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(Boom), store.transaction():
            store.put_items(_items("outer"))
            with store.transaction():  # released: part of the outer transaction now
                store.put_items(_items("inner"))
            with store.transaction(), store.transaction():  # two levels deep
                store.put_items(_items("deep"))
            raise Boom
        assert _ids(store) == []
        assert not store.conn.in_transaction
        store.put_items(_items("after"))  # the store is usable afterwards
        assert _ids(store) == ["after"]


def test_a_failed_write_inside_a_transaction_leaves_the_rest(tmp_path):
    # put_ratings opens its own (nested) transaction: its failure does not undo the items
    ratings = pd.DataFrame({"item_id": ["a"], "rater_id": ["x"], "rater_kind": ["human"],
                            "rubric": ["refusal@1"], "rubric_hash": ["h"], "label": ["full_refusal"]})
    with Store(tmp_path / "s.db") as store:
        store.put_ratings(ratings)
        with store.transaction():
            store.put_items(_items("a"))
            with pytest.raises(JudgekitError, match="already a human rater"):
                store.put_ratings(ratings.assign(rater_kind="judge", item_id="b"))
        assert _ids(store) == ["a"]
        assert store.ratings()["item_id"].tolist() == ["a"]


def test_open_existing_does_not_create_a_store(tmp_path):
    missing = tmp_path / "none.db"
    with pytest.raises(JudgekitError, match=r"Store .*none\.db does not exist; import ratings first"):
        Store.open_existing(missing)
    assert not missing.exists()
    Store(tmp_path / "s.db").close()
    with Store.open_existing(tmp_path / "s.db") as store:
        assert store.ratings().empty
    with Store.open_existing(":memory:") as store:
        assert store.items().empty


def test_samples(tmp_path):
    rows = [SampleRow("i1", "random", None, 2.0, 1), SampleRow("i0", "stratum", "tier=1", 1.5, 0)]
    with Store(tmp_path / "s.db") as store:
        assert store.sample_names() == [] and not store.has_sample("b")
        store.put_sample("b", rows)
        store.put_sample("a", rows[:1])
        assert store.sample_names() == ["a", "b"] and store.has_sample("b")
        assert store.sample_rows("b") == rows  # in the order recorded
        store.put_sample("b", rows[1:])  # replaces, does not add
        assert store.sample_rows("b") == rows[1:]
        assert store.sample_rows("nope") == []


def test_importing_the_store_does_not_import_pandas():
    code = "import sys, judgekit.store.database, judgekit.store.schema; print('pandas' in sys.modules)"
    checkout = str(Path(judgekit.__file__).resolve().parents[1])  # this judgekit, not an installed one
    env = {**os.environ, "PYTHONPATH": checkout}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    assert out.stdout.strip() == "False"
