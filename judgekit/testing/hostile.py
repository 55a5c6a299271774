"""Hostile provider answers for the fake server (issue 20 item 7-8): what a broken or malicious
provider can send a judge, each one written straight onto the connection.

==================  ===================================================================
``huge``            a 200 whose body never ends (``huge_bytes``, 300 MB by default, no
                    ``Content-Length``, streamed 64 KiB at a time until the client hangs up)
``deep``            a 200 whose body is JSON nested 200,000 levels deep
``nan_usage``       a well-formed completion whose token counts are ``NaN``
``huge_usage``      a well-formed completion whose token counts are 10^30
``drip``            a well-formed completion sent one byte every ``drip_s`` seconds
``contradictory``   a well-formed completion whose text is two JSON answers that disagree
``absurd_retry``    a 429 with ``Retry-After: 1000000000`` (31 years)
==================  ===================================================================
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgekit.testing.transport import send_json, send_raw

__all__ = [ "DEEP_LEVELS", "FAULTS", "HOSTILE", "Injection",
    "UNPARSEABLE", "check_kind", "pick_fault", "send_hostile",
]

HOSTILE = ("huge", "deep", "nan_usage", "huge_usage", "drip", "contradictory", "absurd_retry")
#: how deep the ``deep`` body is nested
DEEP_LEVELS = 200_000
#: the token counts of a ``huge_usage`` answer
_HUGE_USAGE = 10**30
#: the ``Retry-After`` of an ``absurd_retry`` answer, in seconds
_ABSURD_RETRY_AFTER = 1_000_000_000
_BLOCK = b" " * 65536


def _contradictory_text(codes: list[str]) -> str:
    """Two JSON answers, one after the other, with different labels (the first and the last code
    offered): which one is the judge's?"""
    first, last = (codes[0], codes[-1]) if len(codes) > 1 else ("full_refusal", "full_compliance")
    return json.dumps({"label": first}) + json.dumps({"label": last})


def _usage_to(body: dict[str, Any], value: Any) -> dict[str, Any]:
    """``body`` with every token count of its ``usage`` (nested ones too) set to ``value``."""

    def walk(d: dict[str, Any]) -> dict[str, Any]:
        return {k: walk(v) if isinstance(v, dict) else (value if isinstance(v, int) else v)
                for k, v in d.items()}

    return {**body, "usage": walk(body.get("usage") or {})}


async def send_hostile(
    writer: asyncio.StreamWriter, fault: str, api: str, completion: Callable[[str | None], dict[str, Any]],
    *, huge_bytes: int, drip_s: float, codes: list[str],
) -> bool:
    """Write the hostile answer ``fault`` (one of :data:`HOSTILE`); ``completion(text)`` builds a
    well-formed completion body (with the script's text when ``text`` is None). Returns whether
    the connection may be kept."""
    if fault == "absurd_retry":
        from judgekit.testing.providers import error_body

        hdr = {"retry-after": str(_ABSURD_RETRY_AFTER)}
        return await send_json(writer, 429, error_body(api, "rate_limit_error", "rate limited"), hdr)
    if fault == "deep":
        levels = DEEP_LEVELS
        return await send_raw(writer, 200, b'{"choices":' + b"[" * levels + b"]" * levels + b"}")
    if fault in ("nan_usage", "huge_usage"):
        body = _usage_to(completion(None), float("nan") if fault == "nan_usage" else _HUGE_USAGE)
        return await send_raw(writer, 200, json.dumps(body).encode())  # NaN as Python writes it
    if fault == "contradictory":
        return await send_json(writer, 200, completion(_contradictory_text(codes)))
    if fault == "drip":
        raw = json.dumps(completion(None)).encode()
        writer.write(f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(raw)}"
                     "\r\n\r\n".encode())
        for i in range(len(raw)):
            writer.write(raw[i : i + 1])
            await writer.drain()
            await asyncio.sleep(drip_s)
        return True
    if fault == "huge":
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
                     b'{"id": "huge", "pad": "')
        sent = 0
        while sent < huge_bytes:  # until the client hangs up (ConnectionError ends the handler)
            writer.write(_BLOCK)
            await writer.drain()
            sent += len(_BLOCK)
        writer.write(b'"}')
        await writer.drain()
        return False
    raise ValueError(f"not a hostile answer: {fault!r}")


# The faults the fake server injects: their names, scripted injections and random rates.


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
