"""Judges and judge panels: see :mod:`judgekit.judges.base` (the judge protocol, specs,
registry) and :mod:`judgekit.judges.panel` (running a panel)."""

from judgekit.judges.base import (
    BatchJudge,
    Completion,
    Judge,
    JudgeCallError,
    JudgeEntry,
    JudgeRequest,
    build_judge,
    judge_kinds,
    parse_spec,
    register_judge,
)

__all__ = [
    "BatchJudge",
    "Completion",
    "Judge",
    "JudgeCallError",
    "JudgeEntry",
    "JudgeRequest",
    "build_judge",
    "judge_kinds",
    "parse_spec",
    "register_judge",
]
