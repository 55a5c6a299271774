"""Judges and judge panels: see :mod:`judgekit.judges.base` (the judge protocol, specs,
registry) and :mod:`judgekit.judges.panel` (running a panel)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        from judgekit.lazy import submodule

        return submodule(__name__, name)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
