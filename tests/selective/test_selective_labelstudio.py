"""`labelstudio push --escalated` against a real Label Studio server (loopback; marked labelstudio):
the project receives exactly the items the selective cascade escalated, blind to the judge."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from judgekit.cli import main

pytest_plugins = ["labelstudio_fixtures"]
pytestmark = [pytest.mark.labelstudio, pytest.mark.timeout(1800)]


def _run(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def test_push_escalated_to_a_real_server(ls_env, ls_sdk, tmp_path):
    from test_selective import POLICY, _policy_file, _put, worked_rows

    db = tmp_path / "s.db"
    _put(db, worked_rows())
    pol = _policy_file(tmp_path, POLICY.format(alpha=0.1))
    _run("escalate", "calibrate", pol, "--store", db, "--out", tmp_path / "cal.json")
    _run("escalate", "apply", pol, tmp_path / "cal.json", "--store", db, "--record", "sel")
    _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--project", "escalated-sel", "--escalated", "sel",
         "--store", db)
    pid = next(p.id for p in ls_sdk.projects.list() if p.title == "escalated-sel")
    tasks = list(ls_sdk.tasks.list(project=pid))
    assert sorted(t.data["item_id"] for t in tasks) == [f"i{i}" for i in range(65, 70)]
    # blind: no judge label, no confidence in what annotators see
    for t in tasks:
        assert not any(v in str(t.data) for v in ("full_refusal", "partial_refusal", "full_compliance"))
