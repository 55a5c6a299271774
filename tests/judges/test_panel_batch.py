"""Batch mode: judge calls through the fake provider's Message Batches / Batch API."""

from __future__ import annotations

import pytest

from judgekit.errors import JudgekitError
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.calls import batch_rows
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402


@pytest.mark.parametrize("spec", ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"])
def test_batch_mode_end_to_end_at_half_price(tmp_path, fake, api_env, spec):
    rows = labelled_items(7)
    write_items(tmp_path, rows)
    fake.batch_polls = 2  # the batch ends at the second status request
    batched = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": spec, "batch": True, "batch_poll_s": 0.01}]))
    with Store(tmp_path / "b.db") as store:
        summary = run_panel(batched, store)
        j = summary.judges[0]
        assert (j.ok, j.batches, j.batch_waiting) == (7, 1, 0)
        assert fake.stats.batches == 1 and fake.stats.batch_requests == 7
        assert fake.stats.requests == 0  # nothing streamed
        df = store.ratings(rater_ids=["j"])
        assert dict(zip(df["item_id"], df["label"], strict=True)) == {r["item_id"]: r["truth"] for r in rows}
        batch_cost = j.cost_usd
        status = [(b.status,) for b in batch_rows(store)]
        assert status == [("collected",)]
    # the same calls streamed to a fresh provider (same prompt-cache history): twice the price
    with FakeServer() as other:
        url = other.url if spec.startswith("anthropic") else other.openai_url
        streamed = load_panel(write_panel(tmp_path, [{"id": "j", "model": spec, "base_url": url,
                                                      "concurrency": 1}]))
        with Store(tmp_path / "s.db") as store:
            stream_cost = run_panel(streamed, store).judges[0].cost_usd
        assert other.stats.requests == 7
    assert batch_cost > 0 and batch_cost == pytest.approx(stream_cost / 2, rel=1e-9)


def test_no_wait_submits_once_and_a_later_run_collects(tmp_path, fake, api_env):
    write_items(tmp_path, labelled_items(5))
    fake.batch_polls = 3
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": "anthropic:claude-haiku-4-5", "batch": True, "batch_poll_s": 0.01}]))
    with Store(tmp_path / "s.db") as store:
        first = run_panel(panel, store, wait=False)
        j = first.judges[0]
        assert (j.batches, j.batch_waiting, j.ok) == (1, 5, 0)
        assert any("5 calls waiting in provider batches" in line for line in first.lines())
        assert store.ratings(rater_ids=["j"]).empty
        second = run_panel(panel, store, wait=False)  # still running: nothing resubmitted
        assert second.judges[0].batches == 0 and second.judges[0].batch_waiting == 5
        third = run_panel(panel, store)  # waits and collects
        assert third.judges[0].ok == 5 and third.judges[0].batches == 0
        assert fake.stats.batches == 1
        fourth = run_panel(panel, store)
        assert fourth.judges[0].cached == 5 and fake.stats.batches == 1


def test_failed_requests_in_a_batch_are_errors_and_are_resubmitted(tmp_path, fake, api_env):
    write_items(tmp_path, labelled_items(4))
    fake.inject("500", 1, match="Question 2:")
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": "openai:gpt-4o-mini", "batch": True, "batch_poll_s": 0.01}]))
    with Store(tmp_path / "s.db") as store:
        first = run_panel(panel, store)
        j = first.judges[0]
        assert (j.ok, j.error) == (3, 1) and list(j.errors) == ["batch request failed (500)"]
        second = run_panel(panel, store)
        assert second.judges[0].ok == 1 and fake.stats.batch_requests == 5
        keys = [b.keys for b in batch_rows(store)]
        assert [len(k) for k in keys] == [4, 1]


def test_batch_mode_needs_a_provider_batch_api(tmp_path, fake):
    write_items(tmp_path, labelled_items(2))
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": f"openai-compatible:{fake.openai_url}#m", "batch": True}]))
    with Store(tmp_path / "s.db") as store, pytest.raises(JudgekitError, match="batch API"):
        run_panel(panel, store)


@pytest.mark.parametrize("spec", ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"])
def test_an_unreadable_batch_result_never_holds_the_run(tmp_path, fake, api_env, spec):
    # A results line nested 200,000 deep made every collection fail, and the run
    # polled the ended batch forever
    write_items(tmp_path, labelled_items(3))
    fake.inject("deep", 1, match="Question 1:")
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": spec, "batch": True, "batch_poll_s": 0.01, "max_attempts": 2}]))
    with Store(tmp_path / "s.db") as store:
        j = run_panel(panel, store).judges[0]
        df = store.ratings(rater_ids=["j"])
    assert j.batch_waiting == 0 and j.ok + j.error == 3 and j.error >= 1
    failed = df[df["status"] == "error"]
    assert "it001" in set(failed["item_id"])
    assert all("result" in text for text in failed["rationale"])
