"""OpenAI Chat Completions judges: ``openai:<model>`` and ``openai-compatible:<base_url>#<model>``.

``openai-compatible:`` is how a judge served on one's own GPUs is used: vLLM
(``vllm serve MODEL`` → ``openai-compatible:http://gpu-node:8000/v1#MODEL``), SGLang, Ollama
(``http://127.0.0.1:11434/v1``), or the fake provider in tests. Its key is optional: name an
environment variable with ``api_key_env`` if the server wants one (vLLM ``--api-key``).
``openai:`` reads ``OPENAI_API_KEY``; its base URL can be overridden by the panel entry's
``base_url`` or ``OPENAI_BASE_URL`` (a gateway, a proxy or the fake provider).

The system prompt goes first (providers cache the shared prefix); the answer is requested with
``response_format`` = the rubric's JSON schema (``structured: false`` in the entry turns that off
for servers without it). The SDK's own retries are off: the panel retries.
"""

from __future__ import annotations

import json
import math
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.judges._http import LazySDKClient, map_error, post_raw, retry_after
from judgekit.judges.base import (
    BatchJudge,
    Completion,
    JudgeCallError,
    JudgeContext,
    JudgeEntry,
    JudgeRequest,
    api_key,
    split_spec,
)
from judgekit.judges.bounds import (
    CallDeadline,
    ResponseTooLarge,
    call_deadline,
    loads_response,
    token_count,
)
from judgekit.judges.lean_http import LeanHTTP, LeanHTTPError, LeanRedirect, lean_usable
from judgekit.judges.prices import lookup_price


class OpenAIJudge(LazySDKClient, BatchJudge):
    """A Chat Completions judge (async client, ``max_retries=0``)."""

    sdk_module = "openai"
    client_class = "AsyncOpenAI"

    local = False
    supports_logprobs = True

    def __init__(
        self,
        entry: JudgeEntry,
        ctx: JudgeContext,
        *,
        model: str,
        base_url: str | None,
        key: str,
        compatible: bool,
    ) -> None:
        self.spec = entry.model
        self.model = model
        self.base_url = base_url
        self.limit_group = f"openai:{base_url or 'default'}#{model}"
        self.timeout_s = entry.timeout_s
        self.compatible = compatible
        #: the OpenAI Batch API; a compatible server (vLLM, Ollama, ...) has none
        self.supports_batch = not compatible
        self.price = entry.price or (None if compatible else lookup_price("openai", model))
        # The SDK is imported and its client made on first use: a rerun that sends nothing (every
        # call cached) and a dry run never pay for them.
        self._client_args: dict[str, Any] = {
            "api_key": key, "base_url": base_url, "max_retries": 0, "timeout": entry.timeout_s
        }
        self._client: Any = None
        self._bounds = (entry.max_response_bytes, call_deadline(entry.timeout_s, entry.call_deadline_s))
        self._system = {"role": "system", "content": ctx.system}
        kwargs: dict[str, Any] = {"model": model}
        # Official OpenAI reasoning models only take max_completion_tokens; servers such as vLLM
        # and Ollama know max_tokens.
        kwargs["max_tokens" if compatible else "max_completion_tokens"] = entry.max_tokens
        if entry.temperature is not None:
            kwargs["temperature"] = entry.temperature
        if entry.structured:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgement", "schema": ctx.schema, "strict": True},
            }
        # Extra request fields (seed, top_p, ...) from the entry's options: part of the cache key.
        self.options = dict(entry.options)
        kwargs.update(self.options)
        self._kwargs = kwargs
        # The base URL is transport: the same model behind another URL (a restarted vLLM on a
        # new port, another node of the cluster) answers the same, so it reuses the cache.
        self.cache_spec = f"openai-compatible:{model}" if compatible else entry.model
        self._options: Any = {"security": {"bearer_auth": True}}
        # A compatible server over plain http (vLLM, Ollama, the fake provider) is called
        # without the SDK (judgekit.judges.lean_http): no SDK import, less CPU a call.
        self._lean: LeanHTTP | None = None
        if compatible and base_url and lean_usable(base_url, ctx.env):
            self._lean = LeanHTTP(base_url, {"Authorization": f"Bearer {key}",
                                             "User-Agent": "judgekit"}, entry.timeout_s,
                                  max_body=self._bounds[0], deadline_s=self._bounds[1])

    def cache_params(self) -> dict[str, Any]:
        return {"options": self.options} if self.options else {}

    def answer(self, request: JudgeRequest) -> Completion:
        raise TypeError("OpenAIJudge is remote; await complete()")

    def prepare(self) -> None:
        if self._lean is None:
            super().prepare()

    async def aclose(self) -> None:
        if self._lean is not None:
            await self._lean.aclose()
        await super().aclose()

    async def complete(self, request: JudgeRequest) -> Completion:
        body = {**self._kwargs, "messages": [self._system, {"role": "user", "content": request.user}]}
        if self._lean is not None:
            return await self._complete_lean(body)
        return await self._complete_sdk(body)

    async def _complete_sdk(self, body: dict[str, Any]) -> Completion:
        content = await post_raw(self.client, "/chat/completions", body, self._options, self._sdk,
                                 self.timeout_s)
        return parse_chat_completion(content)

    async def _complete_lean(self, body: dict[str, Any]) -> Completion:
        """One call through :class:`~judgekit.judges.lean_http.LeanHTTP`, its failures classified
        as :func:`~judgekit.judges._http.map_error` classifies the SDK's (the same reasons: every
        transport failure is the SDK's ``APIConnectionError``; a body or header httpx cannot
        encode, a ``ValueError``, is ``malformed response body``); a redirect to another host
        is sent through the SDK, which follows it."""
        assert self._lean is not None
        try:
            # the body exactly as the SDK (openapi_dumps, httpx's encode_json) serialises it
            payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                                 allow_nan=False).encode()
            status, headers, content = await self._lean.post("/chat/completions", payload)
        except (ResponseTooLarge, CallDeadline) as exc:
            raise JudgeCallError(exc.reason, retryable=isinstance(exc, CallDeadline)) from None
        except TimeoutError:
            raise JudgeCallError(f"timeout after {self.timeout_s:g}s", retryable=True) from None
        except LeanRedirect:
            return await self._complete_sdk(body)
        except LeanHTTPError:
            raise JudgeCallError("connection error (APIConnectionError)", retryable=True) from None
        except ValueError:
            raise JudgeCallError("malformed response body", retryable=True) from None
        if status >= 300:
            raise _status_error(status, headers)
        return parse_chat_completion(content)

    # ------------------------------------------------------------ batch API
    _ENDED = ("completed", "failed", "expired", "cancelled")

    def batch_entry(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """One line of a Batch API input file (``custom_id`` = the call key)."""
        body = {**self._kwargs, "messages": [self._system, {"role": "user", "content": request.user}]}
        return {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}

    async def submit_batch(self, entries: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries).encode()
        try:
            f = await self.client.files.create(file=("judgekit-batch.jsonl", data), purpose="batch")
            batch = await self.client.batches.create(
                input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h"
            )
        except Exception as exc:  # noqa: BLE001 - classified, never leaked raw
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return str(batch.id)

    async def poll_batch(self, batch_id: str) -> bool:
        """True once the batch has ended (completed, failed, expired or cancelled)."""
        try:
            batch = await self.client.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return batch.status in self._ENDED

    async def batch_results(self, batch_id: str) -> list[tuple[str, Completion | JudgeCallError]]:
        out: list[tuple[str, Completion | JudgeCallError]] = []
        try:
            batch = await self.client.batches.retrieve(batch_id)
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                content = await self.client.files.content(file_id)
                for line in content.text.splitlines():
                    if line.strip():
                        row = _batch_row(line)
                        if row is not None:  # unreadable: its call has no result (an error)
                            out.append(row)
        except Exception as exc:  # noqa: BLE001
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return out



def _batch_row(line: str) -> tuple[str, Completion | JudgeCallError] | None:
    """One line of a batch's output or error file, or None when it cannot be read (not JSON,
    nested too deep, not an object with a ``custom_id``)."""
    try:
        row = loads_response(line)
        if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
            return None
        return batch_output_result(row)
    except (JudgeCallError, AttributeError, TypeError):
        return None


def batch_output_result(row: dict[str, Any]) -> tuple[str, Completion | JudgeCallError]:
    """``(custom_id, completion or failure)`` of one line of an OpenAI Batch output or error file,
    as ``vllm run-batch`` writes it too (its ``error`` a string, OpenAI's an object): a 200 without
    an error is parsed as a streamed answer is (:func:`parse_chat_completion`)."""
    cid = str(row.get("custom_id"))
    resp = row.get("response") or {}
    error = row.get("error")
    if resp.get("status_code") == 200 and not error:
        try:
            return cid, parse_chat_completion(json.dumps(resp.get("body")).encode())
        except JudgeCallError as exc:
            return cid, exc
    code = resp.get("status_code") or (error.get("code") if isinstance(error, dict) else None) or "error"
    return cid, JudgeCallError(f"batch request failed ({code})", retryable=True)


def _status_error(status: int, headers: dict[str, str]) -> JudgeCallError:
    """An HTTP status other than 2xx classified as :func:`~judgekit.judges._http.map_error`
    classifies the SDK's ``APIStatusError`` (same reasons, same retry rules)."""
    if status == 429:
        return JudgeCallError("rate limited (429)", retryable=True, retry_after=retry_after(headers),
                              rate_limited=True)
    if status in (401, 403):
        return JudgeCallError(f"authentication failed ({status}): check the API key", retryable=False,
                              fatal=True)
    if status == 404:
        return JudgeCallError("not found (404): check the model name and base URL", retryable=False,
                              fatal=True)
    if status >= 500 or status in (408, 409):
        return JudgeCallError(f"server error ({status})", retryable=True, retry_after=retry_after(headers))
    return JudgeCallError(f"request rejected ({status})", retryable=False)


def read_token_logprobs(choice: Any) -> list[tuple[str, float]] | None:
    """``(token, logprob)`` of ``choice.logprobs.content`` (OpenAI's Chat Completions), or None
    when the answer has none or they are malformed (a token not a string, a log-probability not a
    finite number <= 0): an untrusted field is refused whole, never repaired; the answer stands."""
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list) or not content:
        return None
    out: list[tuple[str, float]] = []
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        value = entry.get("logprob") if isinstance(entry, dict) else None
        if (not isinstance(token, str) or isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value > 0):
            return None
        out.append((token, float(value)))
    return out


def parse_chat_completion(content: bytes) -> Completion:
    """The text and usage of a Chat Completions response body (bounded: JSON nested too deep and
    token counts that are not whole numbers are a :class:`JudgeCallError` with the reason)."""
    data = loads_response(content)
    try:
        text = data["choices"][0]["message"].get("content")
        usage = data.get("usage") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise JudgeCallError("malformed response body", retryable=True) from None
    if text is not None and not isinstance(text, str):
        raise JudgeCallError("malformed response body: the message content is not text", retryable=True)
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    return Completion(
        raw=text,
        input_tokens=token_count(usage, "prompt_tokens"),
        output_tokens=token_count(usage, "completion_tokens"),
        cached_tokens=token_count(details or {}, "cached_tokens"),
        tokens=read_token_logprobs(data["choices"][0]),
    )


def make_openai_judge(entry: JudgeEntry, arg: str, ctx: JudgeContext) -> OpenAIJudge:
    """Factory for ``openai:<model>`` (key from ``OPENAI_API_KEY``)."""
    key = api_key(entry.api_key_env or "OPENAI_API_KEY", ctx, judge_id=entry.id)
    assert key is not None
    base_url = entry.base_url or ctx.env.get("OPENAI_BASE_URL") or None
    return OpenAIJudge(entry, ctx, model=arg, base_url=base_url, key=key, compatible=False)


def make_compatible_judge(entry: JudgeEntry, arg: str, ctx: JudgeContext) -> OpenAIJudge:
    """Factory for ``openai-compatible:<base_url>#<model>``."""
    base_url, model = split_spec(entry, arg, spec="spec", form="openai-compatible:<base_url>#<model>",
                                 example="openai-compatible:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct")
    if not base_url.startswith(("http://", "https://")):
        raise JudgekitError(
            f"Judge {entry.id!r}: the base URL {base_url!r} in {entry.model!r} must start with "
            "http:// or https:// (e.g. http://127.0.0.1:8000/v1)."
        )
    if entry.base_url:
        raise JudgekitError(
            f"Judge {entry.id!r}: an openai-compatible spec carries its base URL; remove base_url."
        )
    key = "EMPTY"
    if entry.api_key_env:
        key = api_key(entry.api_key_env, ctx, judge_id=entry.id) or "EMPTY"
    return OpenAIJudge(entry, ctx, model=model, base_url=base_url, key=key, compatible=True)


__all__ = [
    "OpenAIJudge", "batch_output_result", "make_compatible_judge", "make_openai_judge",
    "parse_chat_completion",
]
