"""Batches are split by size as well as by count: the one split function, and the provider batch
path that uses it."""

from __future__ import annotations

import pytest

from judgekit.judges import batch as batch_module
from judgekit.judges.batchlimits import (
    ANTHROPIC_LIMITS,
    OPENAI_LIMITS,
    BatchLimits,
    provider_limits,
    split_batches,
)
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.calls import batch_rows
from judgekit.store.database import Store

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402


def test_the_published_provider_bounds():
    # platform.openai.com/docs/guides/batch; docs.anthropic.com batch-processing
    assert (OPENAI_LIMITS.max_requests, OPENAI_LIMITS.max_bytes) == (50_000, 200_000_000)
    assert (ANTHROPIC_LIMITS.max_requests, ANTHROPIC_LIMITS.max_bytes) == (100_000, 256_000_000)
    assert provider_limits("anthropic") == ANTHROPIC_LIMITS
    assert provider_limits("some-plugin") == OPENAI_LIMITS


@pytest.mark.parametrize(("sizes", "limits", "want"), [
    ([10, 10, 10], BatchLimits(100, 30), [range(0, 3)]),           # exactly at the byte bound
    ([10, 10, 10], BatchLimits(100, 29), [range(0, 2), range(2, 3)]),  # one byte over: two
    ([10] * 5, BatchLimits(2, 10**6), [range(0, 2), range(2, 4), range(4, 5)]),  # by count
    ([5, 50, 5], BatchLimits(100, 20), [range(0, 1), range(1, 2), range(2, 3)]),  # too large alone
    ([], OPENAI_LIMITS, []),
])
def test_split_by_bytes_and_by_count(sizes, limits, want):
    assert split_batches(sizes, limits) == want


def test_limits_need_room_for_one_request():
    with pytest.raises(ValueError):
        BatchLimits(0, 10)


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
def test_a_provider_batch_over_the_byte_bound_is_submitted_in_two(tmp_path, fake, api_env, monkeypatch,
                                                                  spec):
    # Provider batches were split by count only: a batch over the provider's bytes was refused
    write_items(tmp_path, labelled_items(4))
    panel = load_panel(write_panel(tmp_path, [
        {"id": "j", "model": spec, "batch": True, "batch_poll_s": 0.01}]))
    with Store(tmp_path / "probe.db") as store:
        from judgekit.judges.batchfile import plan_panel
        from judgekit.judges.batchlimits import jsonl_line

        (_, shared, runs), = plan_panel(panel, store).parts
        run = runs[0]
        sizes = [len(jsonl_line(run.judge.batch_entry(shared.items.request(j.item, j.trial), j.key)))
                 for j in run.jobs]
    bound = sum(sizes) - 1  # one byte short of all four requests
    monkeypatch.setattr(batch_module, "provider_limits", lambda provider: BatchLimits(1000, bound),
                        raising=False)
    with Store(tmp_path / "s.db") as store:
        j = run_panel(panel, store).judges[0]
        assert (j.ok, j.batches) == (4, 2)
        assert [len(b.keys) for b in batch_rows(store)] == [3, 1]
    assert fake.stats.batches == 2 and fake.stats.batch_requests == 4
