"""Provider bodies: what a hostile or broken provider answers a judge.

Unlike the file cases, a bad provider answer is not a bad input of the command: ``judgekit
judge`` must finish (exit 0) with one rating per call whose status and reason say what was wrong
(``error: response body larger than ...``), no traceback, within its memory bound (the command
runs in a child process with 1.5 GB of address space) and its time bound. Each case is a fault of
the fake provider (:mod:`judgekit.testing.hostile`), sent to every judge client: the ``anthropic``
SDK, the ``openai`` SDK and the lean HTTP client (``openai-compatible:http://``).
``tests/judges/test_bad_provider_corpus.py`` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProviderCase:
    """One hostile answer, sent for every call of a three-judge panel."""

    id: str
    fault: str  #: a fault of :mod:`judgekit.testing.hostile`
    status: str  #: the status every rating must have
    expect: tuple[str, ...]  #: substrings of every rating's rationale
    #: the whole command must end within this many seconds (a bound the case is about)
    max_seconds: float = 60.0
    server: dict[str, Any] = field(default_factory=dict)  #: FakeServer arguments
    judge: dict[str, Any] = field(default_factory=dict)  #: extra keys of every judge entry


CASES: list[ProviderCase] = [
    # 300 MB never read: the default max_response_bytes (16 MiB) cuts it, within 1.5 GB
    ProviderCase("provider-300mb-body", "huge", "error", ("larger than 16777216 bytes",)),
    ProviderCase("provider-deep-json", "deep", "error", ("nested too deep",)),
    ProviderCase("provider-nan-usage", "nan_usage", "error", ("nan is not a token count",)),
    ProviderCase("provider-1e30-usage", "huge_usage", "error", ("is not a token count",)),
    # one byte every 0.5 s: no read times out (timeout_s 2); the deadline (3 s) cuts each attempt
    ProviderCase("provider-slow-drip", "drip", "error", ("within 3s", "call_deadline_s"),
                 max_seconds=40.0, server={"drip_s": 0.5}, judge={"timeout_s": 2, "call_deadline_s": 3}),
    # Retry-After: 31 years, max_backoff_s 1: two attempts within seconds
    ProviderCase("provider-absurd-retry-after", "absurd_retry", "error",
                 ("rate limited (429) (after 2 attempts)",), max_seconds=40.0,
                 judge={"max_backoff_s": 1}),
    ProviderCase("provider-contradictory", "contradictory", "abstain",
                 ("contradictory", "full_compliance", "full_refusal")),
]
