"""The fake provider: both official SDKs run against it unchanged, faults on demand, counters."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request

import anthropic
import openai
import pytest

from judgekit.testing.fakeserver import FakeServer, Reply, label_reply


def anthropic_call(server, **kw):
    async def go():
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0, timeout=2)
        try:
            return await client.messages.create(
                model="claude-fake", max_tokens=50,
                system=[{"type": "text", "text": "SYS", "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": "hello"}], **kw)
        finally:
            await client.close()
    return asyncio.run(go())


def openai_call(server, **kw):
    async def go():
        client = openai.AsyncOpenAI(api_key="k", base_url=server.openai_url, max_retries=0, timeout=2)
        try:
            return await client.chat.completions.create(
                model="gpt-fake", messages=[{"role": "system", "content": "SYS"},
                                            {"role": "user", "content": "hello"}], **kw)
        finally:
            await client.close()
    return asyncio.run(go())


def test_both_sdks_parse_its_answers_and_it_counts_calls_and_tokens():
    with FakeServer(lambda req: Reply(label_reply("full_refusal"), input_tokens=11,
                                      output_tokens=5)) as server:
        msg = anthropic_call(server)
        assert json.loads(msg.content[0].text)["label"] == "full_refusal"
        chat = openai_call(server)
        assert json.loads(chat.choices[0].message.content)["label"] == "full_refusal"
        assert chat.usage.prompt_tokens == 11 and chat.usage.completion_tokens == 5
        st = server.stats
        assert (st.requests, st.answered) == (2, 2)
        assert st.by_api == {"anthropic": 1, "openai": 1}
        assert st.input_tokens == 22 and st.output_tokens == 10
        assert all(r.has_auth for r in server.requests)


def test_repeated_system_prompt_is_reported_as_a_cache_hit():
    with FakeServer(lambda req: "x") as server:
        first = anthropic_call(server)
        second = anthropic_call(server)
        assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
        assert second.usage.cache_read_input_tokens > 0
        chat = openai_call(server)
        assert chat.usage.prompt_tokens_details.cached_tokens == 0  # another provider and model
        chat = openai_call(server)
        assert chat.usage.prompt_tokens_details.cached_tokens > 0


def test_script_sees_the_request():
    seen = []

    def script(req):
        seen.append((req.api, req.model, req.system, req.user, req.codes))
        return "ok"

    with FakeServer(script) as server:
        openai_call(server, response_format={"type": "json_schema", "json_schema": {
            "name": "j", "schema": {"type": "object", "properties": {"label": {"enum": ["a", "b"]}}}}})
    assert seen == [("openai", "gpt-fake", "SYS", "hello", ["a", "b"])]


@pytest.mark.parametrize(
    ("fault", "anthropic_error", "openai_error"),
    [
        ("429", anthropic.RateLimitError, openai.RateLimitError),
        ("500", anthropic.InternalServerError, openai.InternalServerError),
        ("529", anthropic.InternalServerError, openai.InternalServerError),
        ("hang", anthropic.APITimeoutError, openai.APITimeoutError),
        ("disconnect", anthropic.APIConnectionError, openai.APIConnectionError),
    ],
)
def test_injected_faults_reach_the_sdks_as_their_errors(fault, anthropic_error, openai_error):
    with FakeServer(hang_s=5) as server:
        server.inject(fault, 2)
        with pytest.raises(anthropic_error):
            anthropic_call(server, timeout=0.3)
        with pytest.raises(openai_error):
            openai_call(server, timeout=0.3)
        # a client that timed out may be ahead of the server: a loaded machine can read the
        # second request after the client gave up on it; wait (bounded) until the server has
        deadline = time.monotonic() + 10
        while server.stats.faults.get(fault, 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.stats.faults[fault] == 2
        # the next request is healthy again
        assert openai_call(server).choices[0].message.content


def test_429_carries_retry_after_and_malformed_and_unparseable_bodies():
    with FakeServer(lambda req: label_reply("full_refusal"), retry_after=0.25) as server:
        server.inject("429")
        with pytest.raises(openai.RateLimitError) as info:
            openai_call(server)
        assert info.value.response.headers["retry-after"] == "0.25"
        assert info.value.response.headers["retry-after-ms"] == "250"
        server.inject("unparseable")
        text = openai_call(server).choices[0].message.content
        assert "label" not in text
        server.inject("malformed")
        with pytest.raises(Exception):  # noqa: B017 - the SDK's JSON decoding error
            openai_call(server)


def test_injection_can_target_matching_requests_only():
    with FakeServer(lambda req: "fine") as server:
        server.inject("500", match="poison")
        assert openai_call(server).choices[0].message.content == "fine"
        assert server.stats.faults == {}


def test_random_fault_rates_are_reproducible():
    def run():
        with FakeServer(rates={"500": 0.3}, seed=3) as server:
            outcomes = []
            for _ in range(20):
                try:
                    openai_call(server)
                    outcomes.append("ok")
                except openai.InternalServerError:
                    outcomes.append("500")
            return outcomes
    first = run()
    assert first == run()
    assert 0 < first.count("500") < 20


def test_it_runs_as_a_separate_process():
    proc = subprocess.Popen([sys.executable, "-m", "judgekit.testing.fakeserver", "--latency", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert line[0] == "READY" and line[1].startswith("http://127.0.0.1:")
        url = line[1]
        server = type("S", (), {"url": url, "openai_url": url + "/v1"})
        openai_call(server)
        with urllib.request.urlopen(url + "/_stats", timeout=5) as r:
            assert json.loads(r.read())["requests"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
