"""The agreement report's container: its figures as a dict in the report's layout (``slices``,
each with its ``judges``), and lookups by slice and judge. The report of every figure
and the gate's (the figures its policy's checks read, ``agreement_report(wanted=...)``) share it;
imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgreementReport:
    """The result of :func:`judgekit.agreement.report.agreement_report`; ``to_dict()`` is the
    JSON form."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.data, "warnings": list(self.warnings)}

    def slice(self, by: str | None = None, key: str = "all") -> dict[str, Any]:
        for s in self.data["slices"]:
            if s["by"] == by and s["key"] == key:
                return s
        raise KeyError((by, key))

    def judge(self, judge: str, by: str | None = None, key: str = "all") -> dict[str, Any]:
        return self.slice(by, key)["judges"][judge]
