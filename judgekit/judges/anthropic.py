"""Anthropic Messages API judge: ``anthropic:<model>``.

The key comes from ``ANTHROPIC_API_KEY`` (or the variable named by ``api_key_env``); the base URL
from the entry's ``base_url`` or ``ANTHROPIC_BASE_URL`` (a gateway, or the fake provider). The
rubric's system prompt is sent as a block with ``cache_control`` (prompt caching of the shared
prefix; cache reads are priced apart), and the answer is requested as JSON with
``output_config`` (``structured: false`` turns that off). ``temperature`` goes in the body as the
API defines it. The SDK's retries are off.
"""

from __future__ import annotations

from typing import Any, cast

from judgekit.judges._http import LazySDKClient, map_error, post_raw
from judgekit.judges.base import (
    BatchJudge,
    Completion,
    JudgeCallError,
    JudgeContext,
    JudgeEntry,
    JudgeRequest,
    api_key,
)
from judgekit.judges.bounds import call_deadline, loads_response, token_count
from judgekit.judges.prices import lookup_price


class AnthropicJudge(LazySDKClient, BatchJudge):
    """A Messages API judge (async client, ``max_retries=0``)."""

    sdk_module = "anthropic"
    client_class = "AsyncAnthropic"

    local = False
    supports_batch = True

    def __init__(
        self, entry: JudgeEntry, ctx: JudgeContext, *, model: str, base_url: str | None, key: str
    ) -> None:
        self.spec = entry.model
        self.model = model
        self.limit_group = f"anthropic:{base_url or 'default'}#{model}"
        self.timeout_s = entry.timeout_s
        self.price = entry.price or lookup_price("anthropic", model)
        # The SDK is imported and its client made on first use: a rerun that sends nothing (every
        # call cached) and a dry run never pay for them.
        self._client_args: dict[str, Any] = {
            "api_key": key, "base_url": base_url, "max_retries": 0, "timeout": entry.timeout_s
        }
        self._client: Any = None
        self._bounds = (entry.max_response_bytes, call_deadline(entry.timeout_s, entry.call_deadline_s))
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": entry.max_tokens,
            "system": [
                {"type": "text", "text": ctx.system, "cache_control": {"type": "ephemeral"}}
            ],
        }
        if entry.structured:
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": ctx.schema}}
        if entry.temperature is not None:
            kwargs["temperature"] = entry.temperature
        self.options = dict(entry.options)  # extra request fields (top_k, ...): part of the key
        kwargs.update(self.options)
        self._kwargs = kwargs
        self._options: Any = {}

    def cache_params(self) -> dict[str, Any]:
        return {"options": self.options} if self.options else {}

    def answer(self, request: JudgeRequest) -> Completion:
        raise TypeError("AnthropicJudge is remote; await complete()")

    async def complete(self, request: JudgeRequest) -> Completion:
        body = {**self._kwargs, "messages": [{"role": "user", "content": request.user}]}
        content = await post_raw(self.client, "/v1/messages", body, self._options, self._sdk,
                                 self.timeout_s)
        return _parse_message(content)

    # ------------------------------------------------------------ batch API
    def batch_entry(self, request: JudgeRequest, key: str) -> dict[str, Any]:
        """One request of a Message Batch (``custom_id`` = the call key)."""
        return {"custom_id": key,
                "params": {**self._kwargs, "messages": [{"role": "user", "content": request.user}]}}

    async def submit_batch(self, entries: list[dict[str, Any]]) -> str:
        try:
            batch = await self.client.messages.batches.create(requests=cast(Any, entries))
        except Exception as exc:  # noqa: BLE001 - classified, never leaked raw
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return str(batch.id)

    async def poll_batch(self, batch_id: str) -> bool:
        """True once the batch has ended."""
        try:
            batch = await self.client.messages.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return batch.processing_status == "ended"

    async def batch_results(self, batch_id: str) -> list[tuple[str, Completion | JudgeCallError]]:
        out: list[tuple[str, Completion | JudgeCallError]] = []
        try:
            async for r in await self.client.messages.batches.results(batch_id):
                res = r.result
                if res.type == "succeeded":
                    out.append((r.custom_id, _completion_from_message(res.message.model_dump())))
                elif res.type == "errored":
                    kind = getattr(getattr(res.error, "error", None), "type", "error")
                    out.append((r.custom_id, JudgeCallError(f"batch request errored ({kind})",
                                                            retryable=True)))
                else:
                    out.append((r.custom_id, JudgeCallError(f"batch request {res.type}",
                                                            retryable=True)))
        except Exception as exc:  # noqa: BLE001
            raise map_error(exc, self._sdk, self.timeout_s) from None
        return out



def _parse_message(content: bytes) -> Completion:
    """The text and usage of a Messages API response body (bounded as
    :func:`~judgekit.judges.openai.parse_chat_completion`)."""
    return _completion_from_message(loads_response(content))


def _completion_from_message(data: Any) -> Completion:
    """The text and usage of a Messages API message (a parsed JSON object)."""
    try:
        blocks = data["content"]
        text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        u = data.get("usage") or {}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise JudgeCallError("malformed response body", retryable=True) from None
    read = token_count(u, "cache_read_input_tokens")
    write = token_count(u, "cache_creation_input_tokens")
    return Completion(
        raw=text,
        input_tokens=token_count(u, "input_tokens") + read + write,
        output_tokens=token_count(u, "output_tokens"),
        cached_tokens=read,
        cache_write_tokens=write,
    )


def make_judge(entry: JudgeEntry, arg: str, ctx: JudgeContext) -> AnthropicJudge:
    """Factory for ``anthropic:<model>``."""
    key = api_key(entry.api_key_env or "ANTHROPIC_API_KEY", ctx, judge_id=entry.id)
    assert key is not None
    base_url = entry.base_url or ctx.env.get("ANTHROPIC_BASE_URL") or None
    return AnthropicJudge(entry, ctx, model=arg, base_url=base_url, key=key)
