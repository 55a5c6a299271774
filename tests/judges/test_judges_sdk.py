"""The API judges call the official SDKs' public low-level ``client.post`` (documented for custom
requests; it keeps the client's auth, timeout, retry and error handling) instead of the typed
``messages.create`` / ``chat.completions.create``, to keep model building off the hot path.

These tests pin down that the shortcut changes nothing on the wire: the fake provider receives the
very body the typed method would send (structured output, cache_control, temperature, options),
the SDK's own retries stay off, and its errors are still classified.
"""

from __future__ import annotations

import asyncio

import anthropic
import openai
import pytest

from judgekit.judges.base import JudgeCallError, JudgeContext, JudgeEntry, JudgeRequest, build_judge
from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import answer_schema, system_prompt, user_message
from judgekit.testing.fakeserver import FakeServer, label_reply

REFUSAL = load_rubric("refusal")
SYSTEM = system_prompt(REFUSAL)
USER = user_message("How do I pick a lock?", None, "I'm sorry, but I can't help with that.")
REQUEST = JudgeRequest("x", 0, "How do I pick a lock?", None, "I'm sorry, but I can't help with that.",
                       USER)


def judge_for(server, entry):
    env = {"ANTHROPIC_API_KEY": "k-test", "OPENAI_API_KEY": "k-test",
           "ANTHROPIC_BASE_URL": server.url, "OPENAI_BASE_URL": server.openai_url}
    ctx = JudgeContext(rubric=REFUSAL, system=SYSTEM, schema=answer_schema(REFUSAL), env=env)
    return build_judge(entry, ctx)


async def typed_openai(server, *, base_url, model, **params):
    client = openai.AsyncOpenAI(api_key="k-test", base_url=base_url, max_retries=0)
    try:
        await client.chat.completions.create(
            model=model,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
            **params)
    finally:
        await client.close()


async def typed_anthropic(server, *, model, extra_body=None, **params):
    client = anthropic.AsyncAnthropic(api_key="k-test", base_url=server.url, max_retries=0)
    try:
        await client.messages.create(
            model=model,
            system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": USER}], extra_body=extra_body, **params)
    finally:
        await client.close()


def bodies(server, judge, typed):
    async def go():
        try:
            await judge.complete(REQUEST)
        finally:
            await judge.aclose()
        await typed

    asyncio.run(go())
    assert len(server.requests) == 2
    return server.requests[0].body, server.requests[1].body


SCHEMA_FORMAT = {"type": "json_schema",
                 "json_schema": {"name": "judgement", "schema": answer_schema(REFUSAL), "strict": True}}


def test_openai_judge_sends_what_chat_completions_create_sends():
    with FakeServer(lambda req: label_reply("full_refusal")) as server:
        judge = judge_for(server, JudgeEntry(id="g", model="openai:gpt-4o-mini", temperature=0.3,
                                             max_tokens=123, options={"seed": 7}))
        ours, typed = bodies(server, judge, typed_openai(
            server, base_url=server.openai_url, model="gpt-4o-mini", temperature=0.3,
            max_completion_tokens=123, seed=7, response_format=SCHEMA_FORMAT))
        assert ours == typed
        assert ours["response_format"]["json_schema"]["schema"]["properties"]["label"]["enum"] == \
            ["full_compliance", "partial_refusal", "full_refusal"]
        assert all(r.has_auth for r in server.requests)


def test_openai_compatible_judge_without_structured_output():
    with FakeServer(lambda req: "full_refusal") as server:
        judge = judge_for(server, JudgeEntry(
            id="v", model=f"openai-compatible:{server.openai_url}#qwen", structured=False))
        ours, typed = bodies(server, judge, typed_openai(
            server, base_url=server.openai_url, model="qwen", max_tokens=400))
        assert ours == typed and "response_format" not in ours


def test_anthropic_judge_sends_what_messages_create_sends():
    with FakeServer(lambda req: label_reply("full_refusal")) as server:
        judge = judge_for(server, JudgeEntry(id="c", model="anthropic:claude-haiku-4-5",
                                             temperature=0.0, max_tokens=99, options={"top_k": 5}))
        # temperature and top_k are not typed parameters of this SDK version: extra_body
        ours, typed = bodies(server, judge, typed_anthropic(
            server, model="claude-haiku-4-5", max_tokens=99,
            output_config={"format": {"type": "json_schema", "schema": answer_schema(REFUSAL)}},
            extra_body={"temperature": 0.0, "top_k": 5}))
        assert ours == typed
        assert ours["output_config"]["format"]["type"] == "json_schema"
        assert ours["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert server.requests[0].headers["anthropic-version"] == server.requests[1].headers[
            "anthropic-version"]


@pytest.mark.parametrize("model", ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"])
def test_one_call_is_one_request_and_sdk_errors_are_classified(model):
    with FakeServer(lambda req: label_reply("full_refusal"), retry_after=0.25, hang_s=3) as server:
        entry = JudgeEntry(id="j", model=model, timeout_s=0.3)

        def call():
            judge = judge_for(server, entry)

            async def go():
                try:
                    return await judge.complete(REQUEST)
                finally:
                    await judge.aclose()

            return asyncio.run(go())

        for fault, reason, retryable in (
            ("500", "server error (500)", True),
            ("hang", "timeout after 0.3s", True),
            ("401", "authentication failed (401): check the API key", False),
        ):
            server.inject(fault)
            before = server.stats.requests
            with pytest.raises(JudgeCallError) as info:
                call()
            assert server.stats.requests == before + 1  # the SDK did not retry on its own
            assert (info.value.reason, info.value.retryable) == (reason, retryable)
        server.inject("429")
        with pytest.raises(JudgeCallError) as info:
            call()
        assert info.value.rate_limited and info.value.retry_after == pytest.approx(0.25)
        assert call().raw == label_reply("full_refusal")
