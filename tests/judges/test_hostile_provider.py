"""The provider is untrusted input too: a hostile answer — huge, nested
deep, dripping one byte at a time, with NaN or absurd token counts, contradictory, or with an
absurd ``Retry-After`` — becomes one ``error`` (or ``abstain``) rating with its reason; the run
goes on, within its memory and time bounds. Every judge client is tried: the ``anthropic`` SDK,
the ``openai`` SDK and the lean HTTP client (``openai-compatible:http://``), all talking HTTP to
the fake provider on 127.0.0.1."""

from __future__ import annotations

import pytest

from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.calls import call_rows
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

JUDGES = ("claude", "gpt", "lean")


def run_hostile(tmp_path, monkeypatch, fault, *, n=2, server_args=None, **judge_args):
    """Run one judge of each client on ``n`` items, every request answered with ``fault``;
    returns (summary, {judge: [(status, text)]}, {judge: [stored call errors]})."""
    with FakeServer(rates={fault: 1.0}, **(server_args or {})) as server:
        env = {"ANTHROPIC_API_KEY": "k-test", "OPENAI_API_KEY": "k-test",
               "ANTHROPIC_BASE_URL": server.url, "OPENAI_BASE_URL": server.openai_url}
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        write_items(tmp_path, labelled_items(n))
        common = {"max_attempts": 1, "timeout_s": 5, **judge_args}
        path = write_panel(tmp_path, [
            {"id": "claude", "model": "anthropic:claude-haiku-4-5", **common},
            {"id": "gpt", "model": "openai:gpt-4o-mini", **common},
            {"id": "lean", "model": f"openai-compatible:{server.openai_url}#qwen", **common},
        ])
        with Store(tmp_path / "s.db") as store:
            summary = run_panel(load_panel(path), store)
            df = store.ratings(rater_ids=list(JUDGES))
            got = {j: sorted(zip(df[df.rater_id == j]["status"], df[df.rater_id == j]["rationale"],
                                 strict=True)) for j in JUDGES}
            errors = {j: [c.error for c in call_rows(store) if c.judge_id == j] for j in JUDGES}
    return summary, got, errors


def assert_all(got, status, *needles, n=2):
    for judge in JUDGES:
        assert len(got[judge]) == n, (judge, got[judge])
        for st, text in got[judge]:
            assert st == status, (judge, st, text)
            for needle in needles:
                assert needle in (text or ""), (judge, text)


def test_a_huge_body_is_cut_at_the_configured_size(tmp_path, monkeypatch):
    summary, got, errors = run_hostile(tmp_path, monkeypatch, "huge",
                                       server_args={"huge_bytes": 64 * 2**20},
                                       max_response_bytes=2**20)
    assert summary.complete
    assert_all(got, "error", "larger than 1048576 bytes")
    assert all("max_response_bytes" in e for j in JUDGES for e in errors[j])


def test_the_default_body_limit_is_16_mb():
    from judgekit.judges.base import JudgeEntry

    assert JudgeEntry(id="j", model="openai:gpt-4o").max_response_bytes == 16 * 2**20


def test_a_body_nested_200000_deep_is_an_error_rating(tmp_path, monkeypatch):
    summary, got, _ = run_hostile(tmp_path, monkeypatch, "deep")
    assert summary.complete
    assert_all(got, "error", "nested too deep")


@pytest.mark.parametrize("fault", ["nan_usage", "huge_usage"])
def test_absurd_token_counts_are_an_error_rating(tmp_path, monkeypatch, fault):
    summary, got, _ = run_hostile(tmp_path, monkeypatch, fault)
    assert summary.complete
    assert_all(got, "error", "token count")


@pytest.mark.timeout(60)  # a hang guard: the whole body would take ~80 s per call
def test_a_slow_drip_body_ends_at_the_call_deadline(tmp_path, monkeypatch):
    # one byte every 0.2 s: no single read waits past timeout_s=1, the whole body would take ~80 s
    summary, got, _ = run_hostile(tmp_path, monkeypatch, "drip", server_args={"drip_s": 0.2},
                                  timeout_s=1, call_deadline_s=2)
    assert summary.complete
    assert_all(got, "error", "2s")


@pytest.mark.timeout(60)  # a hang guard: the Retry-After asks for 31 years
def test_an_absurd_retry_after_is_capped_by_max_backoff(tmp_path, monkeypatch):
    summary, got, _ = run_hostile(tmp_path, monkeypatch, "absurd_retry",
                                  max_attempts=2, max_backoff_s=0.5)
    assert summary.complete
    assert_all(got, "error", "rate limited (429) (after 2 attempts)")


def test_contradictory_json_answers_abstain(tmp_path, monkeypatch):
    summary, got, _ = run_hostile(tmp_path, monkeypatch, "contradictory")
    assert summary.complete
    assert_all(got, "abstain", "contradictory", "full_compliance", "full_refusal")


@pytest.mark.timeout(60)  # a hang guard: awaiting the body would wait the call's timeout (120 s)
@pytest.mark.parametrize("spec", ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"])
def test_the_sdks_refuse_a_declared_length_over_the_limit_without_waiting(spec):
    # a Content-Length of a terabyte and no body: refused from the headers, not awaited
    import asyncio

    from test_judges_sdk import REFUSAL, REQUEST, SYSTEM
    from test_lean_http import RawServer

    from judgekit.judges.base import JudgeCallError, JudgeContext, JudgeEntry, build_judge
    from judgekit.rubric.prompt import answer_schema

    server = RawServer(lambda n: b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 b"content-length: 1000000000000\r\n\r\n")
    try:
        url = f"http://127.0.0.1:{server.port}"
        env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "ANTHROPIC_BASE_URL": url,
               "OPENAI_BASE_URL": url + "/v1"}
        ctx = JudgeContext(rubric=REFUSAL, system=SYSTEM, schema=answer_schema(REFUSAL), env=env)
        judge = build_judge(JudgeEntry(id="j", model=spec, timeout_s=120, max_response_bytes=4096), ctx)

        async def go():
            try:
                await judge.complete(REQUEST)
            finally:
                await judge.aclose()

        with pytest.raises(JudgeCallError, match="larger than 4096 bytes") as err:
            asyncio.run(go())
        assert not err.value.retryable
    finally:
        server.stop()


class _PluginJudge:
    """A plugin judge whose provider client chokes on a hostile answer, or passes absurd usage on."""

    local = False
    by_item_id = False
    cache_spec = None
    price = None
    supports_batch = False

    def __init__(self, entry, mode):
        self.spec, self.limit_group, self.mode = entry.model, entry.model, mode

    def cache_params(self):
        return {}

    def prepare(self):
        return None

    def answer(self, request):
        raise TypeError("remote")

    async def complete(self, request):
        from judgekit.judges.base import Completion

        if self.mode == "overflow":
            raise OverflowError("int too large to convert to float")
        if self.mode == "recursion":
            raise RecursionError("maximum recursion depth exceeded")
        return Completion(raw='{"label": "full_refusal"}', input_tokens=10**30)

    async def aclose(self):
        return None


@pytest.mark.parametrize(("mode", "reason"), [
    ("overflow", "unreadable answer (OverflowError)"),
    ("recursion", "nested too deep"),
    ("usage", "input_tokens = 1000000000000000000000000000000 is not a token count"),
])
def test_a_plugin_choking_on_a_hostile_answer_is_an_error_rating(tmp_path, mode, reason):
    from judgekit.judges.base import register_judge

    register_judge("choking", lambda entry, arg, ctx: _PluginJudge(entry, arg))
    write_items(tmp_path, labelled_items(2))
    path = write_panel(tmp_path, [{"id": "p", "model": f"choking:{mode}", "max_attempts": 1}])
    with Store(tmp_path / "s.db") as store:
        summary = run_panel(load_panel(path), store)
        df = store.ratings(rater_ids=["p"])
    assert summary.complete and list(df["status"]) == ["error", "error"]
    assert all(reason in text for text in df["rationale"]), list(df["rationale"])
