"""Opaque task keys without a server: an item's key is made once and kept, and a pull from an
export file maps keys back to the store's item ids (no item is added under a key)."""

from __future__ import annotations

import json

import pandas as pd

from judgekit.annotation.labelstudio import pull
from judgekit.store.database import Store
from judgekit.store.task_keys import task_keys


def test_keys_are_kept_and_exports_map_back(tmp_path) -> None:
    ids = ["acme:p1", "zephyr:p1"]
    with Store(tmp_path / "s.db") as store:
        store.put_items(pd.DataFrame({"item_id": ids, "prompt": ["q0", "q1"], "response": ["r0", "r1"]}))
        keys = task_keys(store, ids)
        assert task_keys(store, ids) == keys and len(set(keys.values())) == 2
        assert all(k.startswith("t-") and "acme" not in k and "zephyr" not in k for k in keys.values())
        export = [{"id": n, "data": {"item_id": keys[i], "messages": [{"role": "user", "content": f"q{n}"}],
                                     "response": f"r{n}"},
                   "annotations": [{"id": n, "completed_by": "ann@example.org", "was_cancelled": False,
                                    "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                                    "result": [{"from_name": "refusal", "to_name": "response", "type": "choices",
                                                "value": {"choices": ["full_refusal"]}}]}]}
                  for n, i in enumerate(ids)]
        path = tmp_path / "export.json"
        path.write_text(json.dumps(export), encoding="utf-8")
        pull(store, from_export=path, rubrics=["refusal"])
        got = store.ratings(rubric="refusal")
        assert sorted(got["item_id"]) == ids
        assert sorted(store.item_ids()) == sorted(ids)  # no item stored under a key
