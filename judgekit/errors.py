"""User-facing errors.

Every error a user can cause (a bad file, an unknown key, a label outside the rubric) is raised as
a :class:`JudgekitError` whose message is one sentence naming the file, row or key and the fix.
The CLI prints that sentence and exits with code 2, without a traceback.

A value quoted in a message is an excerpt (:func:`excerpt`, at most :data:`EXCERPT_CHARS`
characters): a 1M-character label or key gives a one-line message, not a 1 MB one. As a safety
net, :class:`JudgekitError` itself shortens any quoted value longer than :data:`_LONG_QUOTE` in its
message, and a message longer than :data:`MAX_MESSAGE` keeps its start and its end (the fix).
"""

from __future__ import annotations

import re
from typing import Any

#: characters of a value quoted in an error message
EXCERPT_CHARS = 80
#: a quoted run (``'...'`` or ``"..."``, as ``!r`` writes it) longer than this is shortened
_LONG_QUOTE = 120
#: a message longer than this keeps its first and last parts
MAX_MESSAGE = 2000

#: a value quoted as ``!r`` writes it: the opening quote starts a token, the closing one ends it
_QUOTED_RUN = re.compile(
    (r"(?:(?<=[\s(\[{=:,])|^)(?:'((?:[^'\\\n]|\\.){N,})'|\"((?:[^\"\\\n]|\\.){N,})\")"
     r"(?=[\s)\]},.;:!?]|$)").replace("N", str(_LONG_QUOTE + 1))
)


def excerpt(value: Any, limit: int = EXCERPT_CHARS, *, quote: bool = True) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters of the value with "…"
    inside the quotes (``'aaaa…'``); short values are exactly ``repr(value)``. ``quote=False``:
    the text without the quotes (control characters still escaped, so it stays one line)."""
    if isinstance(value, str):
        r = repr(value if len(value) <= limit else value[:limit])
        if len(value) > limit:
            r = f"{r[:-1]}…{r[-1]}"
        return r if quote else r[1:-1]
    r = repr(value)
    return r if len(r) <= limit + 2 else r[: limit + 1] + "…"


def _bound_message(message: str) -> str:
    """``message`` with over-long quoted values shortened (see the module docstring)."""
    if len(message) <= _LONG_QUOTE:
        return message

    def cut(m: re.Match[str]) -> str:
        inner, q = (m.group(1), "'") if m.group(1) is not None else (m.group(2), '"')
        head = inner[:EXCERPT_CHARS]
        if (len(head) - len(head.rstrip("\\"))) % 2:
            head = head[:-1]  # do not leave half an escape
        return f"{q}{head}…{q}"

    message = _QUOTED_RUN.sub(cut, message)
    if len(message) > MAX_MESSAGE:
        keep = MAX_MESSAGE // 2
        message = f"{message[:keep]} … {message[-keep // 2:]}"
    return message


class JudgekitError(Exception):
    """A problem with the user's input, reported as one clear sentence (CLI exit code 2)."""

    exit_code: int = 2

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], str):
            args = (_bound_message(args[0]), *args[1:])
        super().__init__(*args)


class UntrustedJudgeError(JudgekitError):
    """Raised by :func:`judgekit.verdict.trust.require_trusted` when no matching passing verdict exists.

    The message speaks to whoever called the library (no command-line flag in it); ``cli_hint``,
    when set, is what the command line adds after it (e.g. the ``--untrusted`` flag)."""

    def __init__(self, *args: object, cli_hint: str | None = None) -> None:
        super().__init__(*args)
        self.cli_hint = cli_hint
