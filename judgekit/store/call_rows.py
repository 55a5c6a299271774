"""The typed rows of the ``calls``, ``judge_batches`` and ``call_leases`` tables and of what is
read from them (:mod:`judgekit.store.calls` owns the tables and every statement on them; these
are only the dataclasses, so a module can name a row without importing the SQL)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


# --------------------------------------------------------------------------- rows
@dataclass(slots=True)
class CallRow:
    """One judge call as stored (a row of ``calls``)."""

    key: str
    judge_id: str
    spec: str
    params: str  #: canonical JSON of what determines the answer (:func:`~judgekit.judges.base.spec_params`)
    rubric: str  #: name@version
    rubric_hash: str
    item_id: str
    item_hash: str
    trial: int
    raw: str | None  #: the raw completion (None when the call failed)
    status: str  #: ok | abstain | error
    label: str | None
    rationale: str | None
    error: str | None  #: why the answer is an abstention or an error
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float | None = None
    attempts: int = 1
    created_at: float = 0.0
    #: probability of the answer's label from the provider's token log-probabilities (None: not
    #: asked, not returned, or not located; :mod:`judgekit.judges.record`)
    confidence: float | None = None


@dataclass(slots=True)
class StoredAnswer:
    """A stored call that was answered (``ok`` or ``abstain``): what the parser made of it."""

    key: str
    status: str
    label: str | None
    rationale: str | None
    error: str | None
    raw: str | None = None  #: only when asked for (:func:`answered` with ``raw=True``)


@dataclass(slots=True)
class ParsedAnswer:
    """A new parse of a stored completion (a re-parse writes it back onto its call)."""

    key: str
    status: str
    label: str | None
    rationale: str | None
    error: str | None


@dataclass(slots=True)
class BatchRow:
    """One provider batch of judge calls (a row of ``judge_batches``)."""

    batch_id: str
    provider: str  #: anthropic | openai
    judge_id: str
    spec: str
    rubric_hash: str
    keys: list[str]  #: the call keys in it (each request's ``custom_id``)
    status: str = "submitted"  #: submitted | collected
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class JudgeUsage:
    """What the stored calls of one judge under one rubric add up to."""

    judge_id: str
    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class JudgeParameters:
    """The spec and parameters of a judge's call (what its identity hash is made of)."""

    spec: str
    params_json: str | None  #: as stored (canonical JSON)

    @property
    def params(self) -> dict[str, Any]:
        return dict(json.loads(self.params_json or "{}"))


@dataclass(slots=True)
class Claim:
    """What :func:`claim` did with each key it was given."""

    claimed: list[str] = field(default_factory=list)  #: leased to the caller now
    answered: list[str] = field(default_factory=list)  #: answered in the store (ok or abstain)
    held: dict[str, str] = field(default_factory=dict)  #: key → owner of another run's live lease
    batched: list[str] = field(default_factory=list)  #: in a submitted provider batch
