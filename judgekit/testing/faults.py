"""The faults the fake server injects: their names, scripted injections and random rates."""

from __future__ import annotations

import random
from dataclasses import dataclass

from judgekit.testing.hostile import HOSTILE

__all__ = ["FAULTS", "UNPARSEABLE", "Injection", "check_kind", "pick_fault"]

#: the faults; the last ones are the hostile answers of :mod:`judgekit.testing.hostile`
FAULTS = ("429", "500", "529", "401", "hang", "malformed", "disconnect", "unparseable", *HOSTILE)

#: the text of an ``unparseable`` answer: well-formed, but not a label.
UNPARSEABLE = "I would need more context before I could say anything about this."


@dataclass
class Injection:
    """A fault for the next ``remaining`` requests whose user message contains ``match``."""

    kind: str
    remaining: int
    match: str | None
    retry_after: float


def check_kind(kind: str) -> None:
    """Raise ``ValueError`` unless ``kind`` is one of :data:`FAULTS`."""
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; use one of {', '.join(FAULTS)}")


def pick_fault(
    injected: list[Injection], rates: dict[str, float], rng: random.Random, retry_after: float, user: str
) -> tuple[str | None, float]:
    """The fault for one request (user message ``user``) and its retry-after, or ``(None, 0.0)``.

    A pending injection that matches wins (and is used up); else a random draw against ``rates``.
    Used-up injections are dropped from ``injected`` (in place).
    """
    for inj in injected:
        if inj.remaining > 0 and (inj.match is None or inj.match in user):
            inj.remaining -= 1
            return inj.kind, inj.retry_after
    injected[:] = [i for i in injected if i.remaining > 0]
    if rates:
        x = rng.random()
        acc = 0.0
        for kind, p in rates.items():
            acc += p
            if x < acc:
                return kind, retry_after
    return None, 0.0
