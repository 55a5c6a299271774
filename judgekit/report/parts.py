"""What every format of the judge report renders from: :class:`ReportParts`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReportParts"]


@dataclass(frozen=True)
class ReportParts:
    """The agreement report, the verdict (or None), their summary, the extras and the report's time."""

    agreement: dict[str, Any]
    verdict: dict[str, Any] | None
    summary: dict[str, Any]
    extras: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
