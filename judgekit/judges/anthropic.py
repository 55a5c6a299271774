"""Anthropic Messages API judge: ``anthropic:<model>``.

The key comes from ``ANTHROPIC_API_KEY`` (or the variable named by ``api_key_env``); the base URL
from the entry's ``base_url`` or ``ANTHROPIC_BASE_URL`` (a gateway, or the fake provider). The
rubric's system prompt is sent as a block with ``cache_control`` (prompt caching of the shared
prefix; cache reads are priced apart), and the answer is requested as JSON with
``output_config`` (``structured: false`` turns that off). ``temperature`` is passed through
``extra_body`` (this SDK version has no such parameter). The SDK's retries are off.
"""

from __future__ import annotations

from typing import Any

from judgekit.judges._http import map_error
from judgekit.judges.base import (
    Completion,
    JudgeCallError,
    JudgeContext,
    JudgeEntry,
    JudgeRequest,
    api_key,
)
from judgekit.judges.prices import lookup_price


class AnthropicJudge:
    """A Messages API judge (async client, ``max_retries=0``)."""

    local = False

    def __init__(
        self, entry: JudgeEntry, ctx: JudgeContext, *, model: str, base_url: str | None, key: str
    ) -> None:
        import anthropic

        self._sdk = anthropic
        self.spec = entry.model
        self.model = model
        self.limit_group = f"anthropic:{base_url or 'default'}#{model}"
        self.timeout_s = entry.timeout_s
        self.price = entry.price or lookup_price("anthropic", model)
        self.client = anthropic.AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=0, timeout=entry.timeout_s
        )
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
            kwargs["extra_body"] = {"temperature": entry.temperature}
        self._kwargs = kwargs

    def cache_params(self) -> dict[str, Any]:
        return {}

    def answer(self, request: JudgeRequest) -> Completion:
        raise TypeError("AnthropicJudge is remote; await complete()")

    async def complete(self, request: JudgeRequest) -> Completion:
        try:
            r = await self.client.messages.create(
                messages=[{"role": "user", "content": request.user}], **self._kwargs
            )
        except Exception as exc:  # noqa: BLE001 - classified, never leaked raw
            raise map_error(exc, self._sdk, self.timeout_s) from None
        content = getattr(r, "content", None)
        if content is None:
            raise JudgeCallError("malformed response body (no content)", retryable=True)
        text = "".join(getattr(b, "text", "") or "" for b in content if getattr(b, "type", "") == "text")
        u = r.usage
        read = getattr(u, "cache_read_input_tokens", 0) or 0
        write = getattr(u, "cache_creation_input_tokens", 0) or 0
        return Completion(
            raw=text,
            input_tokens=(u.input_tokens or 0) + read + write,
            output_tokens=u.output_tokens or 0,
            cached_tokens=read,
            cache_write_tokens=write,
        )

    async def aclose(self) -> None:
        await self.client.close()


def make_judge(entry: JudgeEntry, arg: str, ctx: JudgeContext) -> AnthropicJudge:
    """Factory for ``anthropic:<model>``."""
    key = api_key(entry.api_key_env or "ANTHROPIC_API_KEY", ctx, judge_id=entry.id)
    assert key is not None
    base_url = entry.base_url or ctx.env.get("ANTHROPIC_BASE_URL") or None
    return AnthropicJudge(entry, ctx, model=arg, base_url=base_url, key=key)
