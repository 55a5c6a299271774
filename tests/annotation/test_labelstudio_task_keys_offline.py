"""Opaque task keys without a server: an item's key is made once and kept, and a pull from an
export file maps keys back to the store's item ids (no item is added under a key)."""

from __future__ import annotations

import json

import pandas as pd

from judgekit.annotation.labelstudio import pull
from judgekit.store.database import Store
from judgekit.store.task_keys import known_keys, task_keys


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


class _Project:
    """A stand-in for a Label Studio server holding one project (what push calls, nothing more)."""

    def __init__(self) -> None:
        self.project: dict | None = None
        self.tasks_data: list[dict] = []

    def whoami(self) -> dict:
        return {"id": 1}

    def find_project(self, title: str) -> dict | None:
        return self.project

    def create_project(self, title: str, config: str, description: str) -> dict:
        self.project = {"id": 7, "title": title, "description": description}
        return self.project

    def tasks(self, pid: int, with_annotations: bool = True) -> list[dict]:
        return [{"id": n, "data": d} for n, d in enumerate(self.tasks_data)]

    def import_tasks(self, pid: int, tasks: list[dict]) -> None:
        self.tasks_data += tasks


def test_pushing_again_with_or_without_ids_adds_no_task_the_project_has(tmp_path) -> None:
    """A project pushed with item ids (before keys, or with --show-ids) gets no second task per
    item when pushed with keys, nor the other way round."""
    import functools

    from judgekit.annotation.labelstudio import push

    ids = ["acme:p1", "zephyr:p1"]
    items = pd.DataFrame({"item_id": ids, "prompt": ["q0", "q1"], "response": ["r0", "r1"]})
    for first, then in ((False, True), (True, False)):
        server = _Project()
        with Store(tmp_path / f"{first}.db") as store:
            store.put_items(items)
            keyed = functools.partial(task_keys, store)
            known = functools.partial(known_keys, store)
            push(server, items, ["refusal"], "blind study", task_keys=keyed if first else None, known_keys=known)
            again = push(server, items, ["refusal"], "blind study", task_keys=keyed if then else None,
                         known_keys=known)
        assert (again.pushed, again.already) == (0, 2)
        assert len(server.tasks_data) == 2


def test_pull_of_keys_this_store_did_not_make_is_refused(tmp_path) -> None:
    """Pulling tasks that carry another store's opaque keys would store the labels under the keys,
    as new items: refused in one sentence naming a key, the store unchanged."""
    import pytest

    from judgekit.errors import JudgekitError

    with Store(tmp_path / "pushed.db") as store:
        store.put_items(pd.DataFrame({"item_id": ["acme:p1"], "prompt": ["q0"], "response": ["r0"]}))
        key = task_keys(store, ["acme:p1"])["acme:p1"]
    export = [{"id": 1, "data": {"item_id": key, "messages": [{"role": "user", "content": "q0"}], "response": "r0"},
               "annotations": [{"id": 1, "completed_by": "ann@example.org", "was_cancelled": False,
                                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                                "result": [{"from_name": "refusal", "to_name": "response", "type": "choices",
                                            "value": {"choices": ["full_refusal"]}}]}]}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    with Store(tmp_path / "other.db") as other:
        other.put_items(pd.DataFrame({"item_id": ["acme:p1"], "prompt": ["q0"], "response": ["r0"]}))
        with pytest.raises(JudgekitError) as err:
            pull(other, from_export=path, rubrics=["refusal"])
        assert key in str(err.value) and str(err.value).count(". ") == 0
        assert sorted(other.item_ids()) == ["acme:p1"] and other.ratings().empty
