"""Blind labelling is blind to item ids: a pushed task carries an opaque key, never the item id
(which names the model: `acme:p1`), unless --show-ids; the mapping stays in the store and pull
maps the key back. Against the real Label Studio server (one test: the server starts slowly)."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.store.database import Store

pytest_plugins = ["labelstudio_fixtures"]
pytestmark = [pytest.mark.labelstudio, pytest.mark.timeout(1800)]

IDS = ["acme:p1", "acme:p2", "zephyr:p1", "zephyr:p2"]


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_tasks_carry_opaque_keys_and_pull_maps_them_back(ls_env, ls_sdk, tmp_path):
    db = str(tmp_path / "s.db")
    items_csv = tmp_path / "items.csv"
    pd.DataFrame({"item_id": IDS, "prompt": [f"Question {i}?" for i in range(4)],
                  "response": [f"Answer {i}." for i in range(4)]}).to_csv(items_csv, index=False)
    _run("labelstudio", "push", "--rubric", "refusal", "--items", str(items_csv), "--project", "blind keys",
         "--store", db)
    pid = next(p.id for p in ls_sdk.projects.list() if p.title == "blind keys")
    tasks = list(ls_sdk.tasks.list(project=pid))
    assert len(tasks) == 4
    for t in tasks:  # what any annotator can read in the Data Manager
        assert t.data["item_id"].startswith("t-")
        assert not any(name in str(t.data) for name in ("acme", "zephyr"))
    with Store(db) as s:
        mapping = dict(s.conn.execute("SELECT task_key, item_id FROM task_keys"))
    assert sorted(mapping.values()) == sorted(IDS)
    assert {t.data["item_id"] for t in tasks} == set(mapping)
    # pushing again finds the same tasks: nothing new
    _run("labelstudio", "push", "--rubric", "refusal", "--items", str(items_csv), "--project", "blind keys",
         "--store", db)
    assert len(list(ls_sdk.tasks.list(project=pid))) == 4
    rater = ls_sdk.users.create(username="keyrater", email="keyrater@example.org", password="pw-keyraterkeyrater").id
    for t in tasks:
        ls_sdk.annotations.create(id=t.id, completed_by=rater, result=[
            {"from_name": "refusal", "to_name": "response", "type": "choices",
             "value": {"choices": ["full_refusal"]}}])
    _run("labelstudio", "pull", "--project", "blind keys", "--store", db)
    with Store(db) as s:
        got = s.ratings(rubric="refusal")
    assert sorted(got["item_id"]) == sorted(IDS)
    assert set(got["label"]) == {"full_refusal"}
