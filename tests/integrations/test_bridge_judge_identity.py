"""The integrations identify a judge as its verdict records it: the hash the bridge builds from the
panel entry (without a call) is the one the gate wrote from the judge's calls, and an entry whose
parameters changed since the gate is not trusted under that verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.errors import UntrustedJudgeError
from judgekit.integrations.bridge import gated_judge


def test_the_bridge_hashes_a_judge_as_the_verdict_recorded_it(study: Path) -> None:
    verdict = json.loads((study / "verdict.json").read_text(encoding="utf-8"))
    recorded = next(j for j in verdict["judges"] if j["judge"] == "fj")
    gj = gated_judge(judge="fj", verdict=study / "verdict.json", store=study / "study.db",
                     panel=study / "panel.yaml")
    assert gj.judge_hash == recorded["judge_hash"]


def test_a_judge_whose_parameters_changed_since_the_gate_is_not_trusted(study: Path) -> None:
    panel = study / "panel.yaml"
    panel.write_text(panel.read_text(encoding="utf-8").replace("temperature: 0", "temperature: 0.5"),
                     encoding="utf-8")
    with pytest.raises(UntrustedJudgeError):
        gated_judge(judge="fj", verdict=study / "verdict.json", store=study / "study.db", panel=panel)
