"""Judges and judge panels: see :mod:`judgekit.judges.base` (specs, registry) and
:mod:`judgekit.judges.panel` (running a panel)."""

from judgekit.judges.base import (
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
