"""User-facing errors.

Every error a user can cause (a bad file, an unknown key, a label outside the rubric) is raised as
a :class:`JudgekitError` whose message is one sentence naming the file, row or key and the fix.
The CLI prints that sentence and exits with code 2, without a traceback.
"""

from __future__ import annotations


class JudgekitError(Exception):
    """A problem with the user's input, reported as one clear sentence (CLI exit code 2)."""

    exit_code: int = 2


class UntrustedJudgeError(JudgekitError):
    """Raised by :func:`judgekit.gate.require_trusted` when no matching passing verdict exists."""
