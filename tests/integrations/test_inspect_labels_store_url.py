"""Labels written into an Inspect log from a PostgreSQL store: the log and the messages name the
store without the password of its URL. (Inspect's log API is stood in for: what is checked is the
text judgekit hands it.)"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.errors import JudgekitError

_MODULE = "judgekit.integrations.inspect_labels"


@dataclass
class _Sample:
    id: str
    epoch: int = 1


@dataclass
class _Log:
    samples: list[_Sample] = field(default_factory=list)


def _stand_in_for_inspect(monkeypatch: pytest.MonkeyPatch, edits: list) -> None:
    log_mod, scorer_mod = types.ModuleType("inspect_ai.log"), types.ModuleType("inspect_ai.scorer")
    log_mod.ProvenanceData = lambda **kw: kw
    log_mod.edit_score = lambda log, sample_id, score, edit, **kw: edits.append(edit)
    log_mod.read_eval_log = lambda path: _Log([_Sample("a"), _Sample("b")])
    log_mod.recompute_metrics = lambda log: None
    log_mod.write_eval_log = lambda log, path: None
    scorer_mod.ScoreEdit = lambda **kw: kw
    monkeypatch.setitem(sys.modules, "inspect_ai", types.ModuleType("inspect_ai"))
    monkeypatch.setitem(sys.modules, "inspect_ai.log", log_mod)
    monkeypatch.setitem(sys.modules, "inspect_ai.scorer", scorer_mod)
    # the module imported over the stand-ins is dropped after the test (monkeypatch restores
    # whatever was there, the real module or nothing)
    import judgekit.integrations as package

    monkeypatch.setitem(sys.modules, _MODULE, types.ModuleType(_MODULE))
    del sys.modules[_MODULE]
    monkeypatch.setattr(package, "inspect_labels", None, raising=False)


def test_labels_written_into_a_log_never_carry_the_store_password(pg_server, monkeypatch, tmp_path):
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute("ALTER USER judgekit PASSWORD 'pw-in-url'")  # trust auth: any password works
    url = pg_server.new_database().replace("judgekit@", "judgekit:pw-in-url@")
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater_id,rater_kind,label\na,ann1,human,full_refusal\n")
    assert CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--store", url]).exit_code == 0
    edits: list = []
    _stand_in_for_inspect(monkeypatch, edits)
    from judgekit.integrations.inspect_labels import write_human_labels

    assert write_human_labels(tmp_path / "log.json", store=url, rubric="refusal", rater="ann1") == 1
    reason = edits[0]["provenance"]["reason"]
    assert "judgekit:***@" in reason and "pw-in-url" not in reason
    with pytest.raises(JudgekitError) as err:
        write_human_labels(tmp_path / "log.json", store=url, rubric="refusal", rater="nobody")
    assert "judgekit:***@" in str(err.value) and "pw-in-url" not in str(err.value)
