"""Terminal tables of the commands; they live in :mod:`judgekit.core.console` (the demo prints them too)."""

from __future__ import annotations

from judgekit.report.terminal import f3, pct, print_agreement, print_verdict

__all__ = ["f3", "pct", "print_agreement", "print_verdict"]
