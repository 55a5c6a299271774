"""The judge protocol, panel entries, spec parsing and the registry of judge kinds.

A judge turns one item (prompt or conversation + response) into a raw completion; the panel
parses it under the rubric (:mod:`judgekit.rubric.prompt`), so every judge kind — an LLM behind an API,
an offline rule, recorded labels — shares one parser and one cache. Specs are strings:

==============================================  ============================================
``anthropic:<model>``                           Anthropic Messages API (async SDK)
``openai:<model>``                              OpenAI Chat Completions (async SDK)
``openai-compatible:<base_url>#<model>``        vLLM, SGLang, Ollama, any compatible server
``rules:<name>``                                offline classifiers (:mod:`judgekit.judges.rules`)
``replay:<file>#<column>``                      labels recorded elsewhere
==============================================  ============================================

New kinds are added without touching the panel: call :func:`register_judge` or expose a factory
under the ``judgekit.judges`` entry-point group (``kind = "package.module:factory"``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import ConfigDict, Field, field_validator

from judgekit.core.config import ConfigModel
from judgekit.core.redact import redact
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric

#: the default ``max_response_bytes`` of a judge: 16 MiB (see :mod:`judgekit.judges.bounds`)
DEFAULT_MAX_RESPONSE_BYTES = 16 * 2**20


# --------------------------------------------------------------------------- panel entries
class Price(ConfigModel):
    """USD per million tokens."""

    model_config = ConfigDict(frozen=True)

    input: float = 0.0
    output: float = 0.0
    cached_input: float | None = None
    cache_write: float | None = None


class JudgeEntry(ConfigModel):
    """One judge of a panel file (unknown keys are errors)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    model: str = Field(min_length=1, description="judge spec, e.g. anthropic:claude-sonnet-4-5")
    trials: int = Field(1, ge=1, le=100)
    concurrency: int = Field(8, ge=1, le=1024)
    max_rpm: float | None = Field(None, gt=0)
    max_tpm: float | None = Field(None, gt=0)
    timeout_s: float = Field(60.0, gt=0)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int = Field(400, ge=1)
    base_url: str | None = None
    api_key_env: str | None = None
    structured: bool = True
    max_attempts: int = Field(5, ge=1, le=20)
    backoff_s: float = Field(1.0, ge=0)
    max_backoff_s: float = Field(30.0, ge=0)
    #: the largest response body read, in bytes; a larger one is an error rating
    max_response_bytes: int = Field(DEFAULT_MAX_RESPONSE_BYTES, ge=1024, le=2**31)
    #: seconds one attempt may take in all (None: 2 x timeout_s + 5); a body still arriving then
    #: (one byte a second) is cut
    call_deadline_s: float | None = Field(None, gt=0, le=86400)
    price: Price | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    #: a rule judge's answer code -> a code of the panel's rubric (``rules:`` judges only)
    codes: dict[str, str] = Field(default_factory=dict)
    #: send through the provider's batch API (Anthropic, OpenAI): half price, results within 24 h
    batch: bool = False
    batch_poll_s: float = Field(30.0, gt=0)

    @field_validator("id")
    @classmethod
    def _id_chars(cls, v: str) -> str:
        if v.startswith("panel:"):
            raise ValueError("judge ids starting with 'panel:' are reserved for panel aggregates")
        if any(ch.isspace() for ch in v):
            raise ValueError(f"judge id {v!r} must not contain spaces")
        return v


# --------------------------------------------------------------------------- protocol
@dataclass(slots=True)
class JudgeRequest:
    """What a judge is asked about one item."""

    item_id: str
    trial: int
    prompt: str | None
    messages: list[dict[str, Any]] | None
    response: str
    user: str  #: the fenced user message (:func:`judgekit.rubric.prompt.user_message`)


@dataclass(slots=True)
class Completion:
    """A judge's raw answer and its usage."""

    raw: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    #: ``(token, logprob)`` of the answer when the provider returned them (``logprobs: true`` in
    #: the entry's options, judges with ``supports_logprobs``); None otherwise
    tokens: list[tuple[str, float]] | None = None


class JudgeCallError(Exception):
    """A failed call. ``retryable`` ones are retried by the panel within its budget;
    ``fatal`` ones (bad key, unknown model) stop the judge: every other call would fail too."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        fatal: bool = False,
        rate_limited: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.fatal = fatal
        self.rate_limited = rate_limited


@runtime_checkable
class Judge(Protocol):
    """Anything that answers a :class:`JudgeRequest`.

    ``local`` judges (rules, replay) answer synchronously through :meth:`answer` and are never
    rate limited; remote ones implement the coroutine :meth:`complete`.

    What a judge can do beyond that is declared as attributes with defaults (as ``llm``'s
    ``Model`` declares ``can_stream``): subclass :class:`Judge` to inherit the defaults and
    override what differs; the panel reads the attributes and never probes for them. A factory
    that returns an object not derived from :class:`Judge` gets the defaults it lacks from
    :func:`build_judge`.
    """

    spec: str
    local: bool
    #: rate-limit group: judges of the same provider and model share one limiter.
    limit_group: str
    #: the answer depends on the item id and not only on its text (``replay:``): the panel keys
    #: calls by id as well, so equal texts do not share an answer.
    by_item_id: bool = False
    #: the spec in the cache key, when it differs from ``spec`` (``openai-compatible:`` drops its
    #: URL, which is transport); None: ``spec`` as written in the panel entry.
    cache_spec: str | None = None
    #: USD per million tokens, for the cost of each call; None: free or unknown.
    price: Price | None = None
    #: the judge is a :class:`BatchJudge` whose provider has a batch API (``batch: true``).
    supports_batch: bool = False
    #: the provider returns token log-probabilities when the request asks (``options: {logprobs:
    #: true}``): each call then records the probability of its answer's label (docs/selective.md).
    supports_logprobs: bool = False

    def cache_params(self) -> dict[str, Any]:
        """Everything besides the spec that changes the answer (goes into the cache key)."""
        ...

    def answer(self, request: JudgeRequest) -> Completion:
        """Local judges: answer at once."""
        ...

    async def complete(self, request: JudgeRequest) -> Completion:
        """Remote judges: one call, raising :class:`JudgeCallError` on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...

    def prepare(self) -> None:
        """Get ready to send: remote judges import their SDK and make its client here. The panel
        calls it once, before the first of this judge's calls is paced, so that start-up is not
        taken out of the rate limit's slots (a client made inside the first call would let the
        calls queued behind it go out together, faster than ``max_rpm``). Default: nothing."""
        return None


def _nothing() -> None:
    return None


@runtime_checkable
class BatchJudge(Judge, Protocol):
    """A remote judge that can also send calls through its provider's batch API (half price,
    answered within 24 hours). ``supports_batch`` says whether this instance can."""

    #: requests per submitted batch at most
    max_batch: int = 10_000

    def batch_entry(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """One request of a batch, carrying the call key as its ``custom_id``."""
        ...

    async def submit_batch(self, entries: list[dict[str, Any]]) -> str:
        """Submit requests made by :meth:`batch_entry`; returns the provider's batch id."""
        ...

    async def poll_batch(self, batch_id: str) -> bool:
        """True once the batch has ended."""
        ...

    async def batch_results(self, batch_id: str) -> list[tuple[str, Completion | JudgeCallError]]:
        """``(call key, completion or the failure)`` of each request of an ended batch."""
        ...


#: the declared capabilities of :class:`Judge` and their defaults
_CAPABILITIES: dict[str, Any] = {
    "by_item_id": Judge.by_item_id,
    "cache_spec": Judge.cache_spec,
    "price": Judge.price,
    "supports_batch": Judge.supports_batch,
    "supports_logprobs": Judge.supports_logprobs,
    "prepare": _nothing,
}


@dataclass
class JudgeContext:
    """What a factory gets besides the entry: the rubric, rendered system prompt and schema."""

    rubric: Rubric
    system: str
    schema: dict[str, Any]
    #: folder relative paths in the panel file are resolved against.
    base_dir: str = "."
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    #: a dry run sends nothing, so it needs no API key (a placeholder stands in for a missing one)
    dry_run: bool = False


Factory = Callable[[JudgeEntry, str, JudgeContext], Judge]


# --------------------------------------------------------------------------- spec parsing
def parse_spec(spec: str) -> tuple[str, str]:
    """``"anthropic:claude-x"`` → ``("anthropic", "claude-x")``; the kind must be registered."""
    kind, sep, arg = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or not arg.strip():
        raise JudgekitError(
            f"Judge spec {spec!r} must look like KIND:ARGUMENT, e.g. anthropic:claude-sonnet-4-5, "
            "openai:gpt-4o, openai-compatible:http://127.0.0.1:8000/v1#my-model, "
            "rules:refusal-keywords or replay:labels.csv#gpt4."
        )
    if kind not in judge_kinds():
        raise JudgekitError(
            f"Judge spec {spec!r}: unknown kind {kind!r}; use one of {', '.join(judge_kinds())} "
            "(or register a plugin under the 'judgekit.judges' entry point)."
        )
    return kind, arg.strip()


_BUILTIN: dict[str, str] = {
    "anthropic": "judgekit.judges.anthropic:make_judge",
    "openai": "judgekit.judges.openai:make_openai_judge",
    "openai-compatible": "judgekit.judges.openai:make_compatible_judge",
    "rules": "judgekit.judges.rules:make_judge",
    "replay": "judgekit.judges.replay:make_judge",
}
_REGISTERED: dict[str, Factory | str] = {}


def register_judge(kind: str, factory: Factory | str) -> None:
    """Register a judge kind: a factory ``(entry, argument, context) -> Judge`` or its
    ``"module:function"`` path (imported when first used)."""
    _REGISTERED[kind.lower()] = factory


@functools.cache
def _plugins() -> dict[str, str]:
    """The plugins' judge kinds (read once a process: scanning the installed packages' entry
    points takes ~15 ms)."""
    from importlib.metadata import entry_points

    return {ep.name.lower(): ep.value for ep in entry_points(group="judgekit.judges")}


def judge_kinds() -> list[str]:
    """All known judge kinds (built in, plugins, registered at run time)."""
    return sorted({*_BUILTIN, *_plugins(), *_REGISTERED})


def _factory(kind: str) -> Factory:
    target = _REGISTERED.get(kind) or _plugins().get(kind) or _BUILTIN[kind]
    if callable(target):
        return target
    module, _, name = target.partition(":")
    fn = getattr(importlib.import_module(module), name)
    return fn


def build_judge(entry: JudgeEntry, ctx: JudgeContext, *, source: str | None = None) -> Judge:
    """Build the judge of a panel entry (checks the spec and, for APIs, the key; sends nothing).

    ``source``: the panel file the entry is in, named in every problem (``Panel file P: Judge
    'kw': unknown rule set ...``)."""
    try:
        return _build_judge(entry, ctx)
    except MissingKeyError:
        raise  # the panel names every missing key at once, with its file
    except JudgekitError as exc:
        # a spec or base URL named in the message may carry a password or token: never shown
        message = redact(str(exc))
        if source is None or source in message:
            raise JudgekitError(message) from None
        raise JudgekitError(f"Panel file {source}: {message}") from None


def _build_judge(entry: JudgeEntry, ctx: JudgeContext) -> Judge:
    kind, arg = parse_spec(entry.model)
    judge = _factory(kind)(entry, arg, ctx)
    _declare_defaults(judge)
    if entry.batch and not judge.supports_batch:
        raise JudgekitError(
            f"Judge {entry.id!r} ({entry.model}) has batch: true, but only anthropic: and openai: "
            "judges can use a provider batch API; remove batch."
        )
    if entry.options.get("logprobs") is not None and not judge.supports_logprobs:
        raise JudgekitError(
            f"Judge {entry.id!r} ({entry.model}) asks for logprobs, but only openai: and "
            "openai-compatible: judges return token log-probabilities; remove options.logprobs."
        )
    return judge


def _declare_defaults(judge: Any) -> None:
    """Give a judge whose class does not derive from :class:`Judge` (a plugin written before the
    capabilities were declared) the default of each capability it lacks."""
    declared = set(dir(judge))
    for name, default in _CAPABILITIES.items():
        if name not in declared:
            setattr(judge, name, default)


# --------------------------------------------------------------------------- keys, secrets
def call_key(spec_params: str, rubric_hash: str, item_hash: str, trial: int) -> str:
    """The cache key of one call: judge spec + parameters, rubric hash, item hash, trial."""
    blob = f"{spec_params}\x1f{rubric_hash}\x1f{item_hash}\x1f{trial}".encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def spec_params(entry: JudgeEntry, judge: Judge) -> str:
    """Canonical JSON of what determines a judge's answer (never a key or a URL's secret)."""
    from judgekit.rubric.prompt import PROMPT_VERSION

    payload = {
        # A judge may name itself without transport details (openai-compatible drops its URL);
        # a credential in a URL is transport too (judgekit.core.redact): never in a key or hash.
        "spec": redact(judge.cache_spec or entry.model),
        "temperature": entry.temperature,
        "max_tokens": entry.max_tokens,
        "structured": entry.structured,
        "prompt": PROMPT_VERSION,
        **judge.cache_params(),
    }
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)


def split_spec(entry: JudgeEntry, arg: str, *, spec: str, form: str, example: str) -> tuple[str, str]:
    """``arg`` split at its last ``#`` into two non-empty parts, else an error naming the judge,
    ``spec`` (what the model string is called), the ``form`` it must take and an ``example``."""
    left, sep, right = arg.rpartition("#")
    if not sep or not left or not right:
        raise JudgekitError(f"Judge {entry.id!r}: {spec} {entry.model!r} must be {form}, e.g. {example}.")
    return left, right


def api_key(env_var: str, ctx: JudgeContext, *, judge_id: str, required: bool = True) -> str | None:
    """The API key from the environment, or one sentence naming the variable to set."""
    value = ctx.env.get(env_var)
    if value:
        return value
    if ctx.dry_run:
        return "dry-run-no-key"
    if required:
        raise MissingKeyError(judge_id, env_var)
    return None


class MissingKeyError(JudgekitError):
    """A judge's API key is not in the environment (:func:`missing_keys_message` names every
    missing one of a panel in one sentence)."""

    def __init__(self, judge_id: str, env_var: str) -> None:
        self.judge_id, self.env_var = judge_id, env_var
        super().__init__(f"Judge {judge_id!r} needs an API key: set the environment variable {env_var} "
                         "(keys are read only from the environment, never from files).")


def missing_keys_message(missing: list[MissingKeyError]) -> str:
    """One sentence naming every missing key variable and the judges that need it."""
    if len(missing) == 1:
        return str(missing[0])
    by_var: dict[str, list[str]] = {}
    for m in missing:
        by_var.setdefault(m.env_var, []).append(m.judge_id)
    parts = [f"{var} (for {', '.join(repr(j) for j in ids)})" for var, ids in by_var.items()]
    return ("The panel's judges need API keys: set " + (" and ".join(parts) if len(parts) < 3
                                                         else ", ".join(parts[:-1]) + " and " + parts[-1])
            + " in the environment (keys are read only from the environment, never from files).")
