"""Judges and judge panels: see :mod:`judgekit.judges.base` (the judge protocol, specs,
registry) and :mod:`judgekit.judges.panel` (running a panel)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported on first use (pydantic and the judge registry): `import judgekit.judges.<module>`
# loads only what that module needs.
_LAZY = {
    "BatchJudge": "base",
    "Completion": "base",
    "Judge": "base",
    "JudgeCallError": "base",
    "JudgeEntry": "base",
    "JudgeRequest": "base",
    "build_judge": "base",
    "judge_kinds": "base",
    "parse_spec": "base",
    "register_judge": "base",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
