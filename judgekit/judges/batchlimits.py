"""How large one batch of judge requests may be, and the one function that splits requests into
batches within those bounds (by count AND by size).

Providers cap a batch both ways: OpenAI's Batch API takes at most 50,000 requests and a 200 MB
input file (https://platform.openai.com/docs/guides/batch), Anthropic's Message Batches at most
100,000 requests and 256 MB (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing).
``vllm run-batch`` has no bound of its own; a batch file judgekit writes keeps OpenAI's, so the
same file can go to either. Megabytes are counted as 10^6 bytes (the smaller reading of "MB").

Both the provider batch path (:mod:`~judgekit.judges.batch`) and the batch files
(:mod:`~judgekit.judges.batchfile`) split with :func:`split_batches`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """The most requests and bytes one batch may hold."""

    max_requests: int
    max_bytes: int

    def __post_init__(self) -> None:
        if self.max_requests < 1 or self.max_bytes < 1:
            raise ValueError("a batch must be allowed at least one request and one byte")

    def at_most(self, requests: int) -> BatchLimits:
        """These limits with at most ``requests`` requests a batch."""
        return BatchLimits(min(self.max_requests, requests), self.max_bytes)


#: OpenAI Batch API: 50,000 requests, 200 MB input file; also the bound of an emitted batch file
OPENAI_LIMITS = BatchLimits(50_000, 200_000_000)
#: Anthropic Message Batches: 100,000 requests, 256 MB
ANTHROPIC_LIMITS = BatchLimits(100_000, 256_000_000)

_PROVIDER_LIMITS = {"openai": OPENAI_LIMITS, "anthropic": ANTHROPIC_LIMITS}


def provider_limits(provider: str) -> BatchLimits:
    """The bounds of ``provider``'s batch API (``"openai"``, ``"anthropic"``); OpenAI's for any
    other (a plugin's, a compatible server's: the stricter common bound)."""
    return _PROVIDER_LIMITS.get(provider, OPENAI_LIMITS)


def jsonl_line(entry: dict[str, Any]) -> bytes:
    """One request as a line of a JSONL batch file (UTF-8, ending in a newline): its size is what
    the request adds to a batch."""
    return (json.dumps(entry, ensure_ascii=False) + "\n").encode()


def split_batches(sizes: Sequence[int], limits: BatchLimits) -> list[range]:
    """Consecutive runs of requests (as index ranges into ``sizes``, each request's bytes) such
    that no batch holds more than ``limits.max_requests`` requests or ``limits.max_bytes`` bytes.

    Greedy, in order: a batch is closed when the next request would take it past either bound. A
    single request larger than ``max_bytes`` goes alone in its own batch (it cannot be split; the
    provider refuses that batch, and only that one)."""
    out: list[range] = []
    start, used = 0, 0
    for i, size in enumerate(sizes):
        if i > start and (i - start >= limits.max_requests or used + size > limits.max_bytes):
            out.append(range(start, i))
            start, used = i, 0
        used += size
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


__all__ = [
    "ANTHROPIC_LIMITS", "OPENAI_LIMITS", "BatchLimits", "jsonl_line", "provider_limits",
    "split_batches",
]
