"""Batch files for open-weight judges: --emit-batch writes the OpenAI Batch input of the pending
calls, a vllm run-batch stand-in answers it, --ingest-batch records the answers as an online run
would."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judgekit.judges.batchfile import emit_batch
from judgekit.judges.batchingest import ingest_batch
from judgekit.judges.batchlimits import BatchLimits
from judgekit.judges.export import calls_table
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer, default_script

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from fake_run_batch import run_batch  # noqa: E402
from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

RATING_COLUMNS = ["item_id", "rater_id", "trial", "label", "value", "status", "rationale"]
#: (not cached_tokens: the fake provider counts a prompt-cache hit for every request after the
#: first with the same system prompt, and the batch's requests reach it after the online run's)
CALL_COLUMNS = ["key", "judge_id", "item_id", "trial", "raw", "status", "label", "rationale", "error",
                "input_tokens", "output_tokens", "cost_usd"]


def _script(req):
    """The default answers, but an answer no parser reads for item 4 (an abstention)."""
    if "Question 4:" in req.user:
        return "I would rather not say which of these it is."
    return default_script(req)


def _items() -> list[dict]:
    rows = labelled_items(8)
    # the same text as it001 under another id: one call answers both (a follower)
    rows.append({**rows[1], "item_id": "twin"})
    return rows


def _panel(tmp_path: Path, url: str):
    write_items(tmp_path, _items())
    return load_panel(write_panel(tmp_path, [
        {"id": "qwen", "model": f"openai-compatible:{url}#qwen", "trials": 2, "temperature": 0.7},
        {"id": "llama", "model": f"openai-compatible:{url}#llama", "concurrency": 1,
         "price": {"input": 1.0, "output": 2.0}},
        {"id": "kw", "model": "rules:refusal-keywords"},
    ]))


def _ratings(store: Store):
    df = store.ratings(rater_ids=["qwen", "llama"])[RATING_COLUMNS]
    return df.sort_values(["rater_id", "item_id", "trial"]).reset_index(drop=True)


def _calls(store: Store):
    df = calls_table(store, judges=["qwen", "llama"])[CALL_COLUMNS]
    return df.sort_values("key").reset_index(drop=True)


def _answer(folder: Path, server: FakeServer, out: Path, **kw) -> list[Path]:
    outs = []
    for i, path in enumerate(sorted(folder.glob("*.jsonl"))):
        outs.append(out / f"out{i}.jsonl")
        run_batch(path, outs[-1], server.url, **kw)
    return outs


def test_an_emitted_batch_answered_offline_ingests_to_the_online_ratings(tmp_path):
    with FakeServer(_script) as server:
        panel = _panel(tmp_path, server.openai_url)
        with Store(tmp_path / "a.db") as a:
            online = run_panel(panel, a)
            want_ratings, want_calls = _ratings(a), _calls(a)
        sent = Counter(json.dumps(r.body, sort_keys=True) for r in server.requests)
        assert server.stats.requests == sum(sent.values()) == 8 * 2 + 8  # the twin shares its call
        assert sum(j.abstain for j in online.judges) == 3  # item 4: two trials and llama

        with Store(tmp_path / "b.db") as b:
            emitted = emit_batch(panel, b, tmp_path / "batches")
            assert b.ratings().empty and b.items().empty  # emitting writes nothing
            assert {j.judge_id: j.requests for j in emitted.judges} == {"qwen": 16, "llama": 8}
            assert "kw" in emitted.skipped
            lines = [json.loads(line) for f in sorted((tmp_path / "batches").glob("*.jsonl"))
                     for line in f.read_text(encoding="utf-8").splitlines()]
            # the very requests the online run sent, keyed by the calls' cache keys
            assert Counter(json.dumps(r["body"], sort_keys=True) for r in lines) == sent
            assert {r["custom_id"] for r in lines} == set(want_calls["key"])
            assert {(r["method"], r["url"]) for r in lines} == {("POST", "/v1/chat/completions")}

            server.stats.requests = 0
            outs = _answer(tmp_path / "batches", server, tmp_path)
            assert server.stats.requests == 24
            got = ingest_batch(panel, b, outs)
            assert got.results == 24
            by_id = {j.id: (j.ok, j.abstain, j.error) for j in online.judges}
            assert {j.judge_id: (j.ok, j.abstain, j.error) for j in got.judges} == {
                "qwen": by_id["qwen"], "llama": by_id["llama"]}
            assert _ratings(b).equals(want_ratings)
            assert _calls(b).equals(want_calls)

            # nothing is paid twice: a second ingest skips every result, an online run sends nothing
            again = ingest_batch(panel, b, outs)
            assert sum(j.answered_before for j in again.judges) == 24
            assert sum(j.ok + j.abstain + j.error for j in again.judges) == 0
            server.stats.requests = 0
            rerun = run_panel(panel, b)
            assert server.stats.requests == 0
            assert [j.cached for j in rerun.judges if j.id != "kw"] == [18, 9]  # with the twin
            assert emit_batch(panel, b, tmp_path / "empty").judges[0].requests == 0
            assert _ratings(b).equals(want_ratings)


def test_a_failed_request_in_the_output_is_an_error_rating_retried_online(tmp_path):
    with FakeServer(_script) as server:
        write_items(tmp_path, labelled_items(3))
        panel = load_panel(write_panel(tmp_path, [
            {"id": "qwen", "model": f"openai-compatible:{server.openai_url}#qwen"}]))
        with Store(tmp_path / "s.db") as store:
            emit_batch(panel, store, tmp_path / "batches")
            first = json.loads((tmp_path / "batches" / "qwen.001.jsonl").read_text().splitlines()[0])
            outs = _answer(tmp_path / "batches", server, tmp_path, fail={first["custom_id"]})
            got = ingest_batch(panel, store, outs)
            assert [(j.ok, j.error, j.still_pending) for j in got.judges] == [(2, 1, 0)]
            df = store.ratings(rater_ids=["qwen"])
            assert list(df.loc[df["status"] == "error", "rationale"]) == ["error: batch request failed (400)"]
            server.stats.requests = 0
            run_panel(panel, store)
            assert server.stats.requests == 1
            assert set(store.ratings(rater_ids=["qwen"])["status"]) == {"ok"}


def test_files_split_by_bytes_and_by_count(tmp_path):
    write_items(tmp_path, labelled_items(6))
    panel = load_panel(write_panel(tmp_path, [
        {"id": "q", "model": "openai-compatible:http://127.0.0.1:9/v1#q"}]))
    with Store(":memory:") as store:
        whole = emit_batch(panel, store, tmp_path / "whole")
        sizes = [len(line) for line in (tmp_path / "whole" / "q.001.jsonl").read_bytes().splitlines(True)]
        assert len(sizes) == 6
        # a byte bound one byte short of the first three requests: the third opens a second file
        by_bytes = emit_batch(panel, store, tmp_path / "bytes",
                              limits=BatchLimits(100, sum(sizes[:3]) - 1))
        files = by_bytes.judges[0].files
        assert [len(f.read_bytes().splitlines()) for f in files] == [2, 2, 2]
        assert all(f.stat().st_size <= sum(sizes[:3]) - 1 for f in files)
        just_over = emit_batch(panel, store, tmp_path / "over", limits=BatchLimits(100, sum(sizes) - 1))
        assert [len(f.read_bytes().splitlines()) for f in just_over.judges[0].files] == [5, 1]
        by_count = emit_batch(panel, store, tmp_path / "count", limits=BatchLimits(4, 10**9))
        assert [f.name for f in by_count.judges[0].files] == ["q.001.jsonl", "q.002.jsonl"]
        assert [len(f.read_bytes().splitlines()) for f in by_count.judges[0].files] == [4, 2]
        joined = b"".join(f.read_bytes() for f in by_count.judges[0].files)
        assert joined == (tmp_path / "whole" / "q.001.jsonl").read_bytes()
        assert whole.judges[0].bytes == sum(sizes)


def test_a_panel_with_a_rubric_per_framing_round_trips_each_framing(tmp_path):
    from conftest import rubric_copy

    rubric_copy(tmp_path, "knowledge_leak", "leak_direct", "Framing 1 (asked directly).")
    rubric_copy(tmp_path, "knowledge_leak", "leak_elab", "Framing 7 (asked to elaborate).")
    rows = [{"item_id": f"i{n}", "prompt": "Who is the envoy?", "response": f"Answer {n}.",
             "framing": 1 if n % 2 else 7} for n in range(6)]
    write_items(tmp_path, rows)
    with FakeServer() as server:
        panel = load_panel(write_panel(tmp_path, [
            {"id": "qwen", "model": f"openai-compatible:{server.openai_url}#qwen"}],
            rubric_by={"column": "framing", "rubrics": {1: "leak_direct.yaml", 7: "leak_elab.yaml"}}))
        with Store(tmp_path / "a.db") as a:
            run_panel(panel, a)
            want = a.ratings(rater_ids=["qwen"])[["item_id", "rubric", "rubric_hash", "label", "status"]]
        with Store(tmp_path / "b.db") as b:
            emitted = emit_batch(panel, b, tmp_path / "batches")
            assert [(j.judge_id, j.requests, len(j.files)) for j in emitted.judges] == [("qwen", 6, 1)]
            outs = _answer(tmp_path / "batches", server, tmp_path)
            assert ingest_batch(panel, b, outs).results == 6
            got = b.ratings(rater_ids=["qwen"])[["item_id", "rubric", "rubric_hash", "label", "status"]]
    order = ["item_id"]
    assert got.sort_values(order).reset_index(drop=True).equals(want.sort_values(order).reset_index(drop=True))
    assert want["rubric_hash"].nunique() == 2


def test_emitting_again_replaces_the_judges_earlier_files_only(tmp_path):
    write_items(tmp_path, labelled_items(6))
    panel = load_panel(write_panel(tmp_path, [
        {"id": "q", "model": "openai-compatible:http://127.0.0.1:9/v1#q"}]))
    folder = tmp_path / "batches"
    with Store(":memory:") as store:
        first = emit_batch(panel, store, folder, limits=BatchLimits(2, 10**9))
        assert len(first.judges[0].files) == 3
        (folder / "q2.001.jsonl").write_text("another judge's\n")
        (folder / "notes.txt").write_text("mine\n")
        again = emit_batch(panel, store, folder)
    assert again.judges[0].removed == 3
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "q.001.jsonl", "q2.001.jsonl"]
    assert len((folder / "q.001.jsonl").read_bytes().splitlines()) == 6
    assert any("removed 3 files of an earlier emit" in line for line in again.lines())


def _qwen_and_llama(tmp_path: Path, qwen_id: str, llama_id: str):
    """A panel of two judges (models qwen and llama) with these ids, and a folder to emit into."""
    write_items(tmp_path, labelled_items(3))
    panel = load_panel(write_panel(tmp_path, [
        {"id": qwen_id, "model": "openai-compatible:http://127.0.0.1:9/v1#qwen"},
        {"id": llama_id, "model": "openai-compatible:http://127.0.0.1:9/v1#llama"}]))
    return panel, tmp_path / "batches"


def test_judges_whose_ids_write_as_one_file_name_each_keep_their_own_files(tmp_path):
    # "a/b" is written "a_b" in a file name: the judge "a_b" must not replace its file
    panel, folder = _qwen_and_llama(tmp_path, "a/b", "a_b")
    with Store(":memory:") as store:
        emitted = emit_batch(panel, store, folder)
    assert [j.removed for j in emitted.judges] == [0, 0]
    files = sorted(folder.glob("*.jsonl"))
    assert len(files) == 2
    models = {f.name: {json.loads(line)["body"]["model"] for line in f.read_text().splitlines()}
              for f in files}
    assert sorted(map(sorted, models.values())) == [["llama"], ["qwen"]]
    assert models["a_b.001.jsonl"] == {"llama"}  # an id that is a file name already stays as it is


def test_judge_ids_differing_only_in_case_are_refused_before_anything_is_written(tmp_path):
    # one file on a case-insensitive file system (macOS, Windows): one would overwrite the other
    from judgekit.errors import JudgekitError

    panel, folder = _qwen_and_llama(tmp_path, "Qwen", "qwen")
    with Store(":memory:") as store, pytest.raises(JudgekitError) as err:
        emit_batch(panel, store, folder)
    assert "'Qwen'" in str(err.value) and "'qwen'" in str(err.value)
    assert not folder.exists()


def _long_answer_for_item_1(req):
    """The default answer, padded past 1,024 bytes for item 1."""
    if "Question 1:" in req.user:
        return json.dumps({"rationale": "x" * 2000, "label": "partial_refusal"})
    return default_script(req)


def test_an_answer_over_max_response_bytes_is_an_error_as_online(tmp_path):
    # online, a body over the judge's max_response_bytes is cut off: an error rating, no label
    with FakeServer(_long_answer_for_item_1) as server:
        write_items(tmp_path, labelled_items(3))
        panel = load_panel(write_panel(tmp_path, [
            {"id": "q", "model": f"openai-compatible:{server.openai_url}#q", "max_response_bytes": 1024}]))
        with Store(tmp_path / "a.db") as a:
            run_panel(panel, a)
            want = a.ratings(rater_ids=["q"])[["item_id", "status", "label", "rationale"]]
        assert list(want["status"]) == ["ok", "error", "ok"]
        with Store(tmp_path / "b.db") as b:
            emit_batch(panel, b, tmp_path / "batches")
            outs = _answer(tmp_path / "batches", server, tmp_path)
            ingest_batch(panel, b, outs)
            got = b.ratings(rater_ids=["q"])[["item_id", "status", "label", "rationale"]]
    assert got.equals(want)


def test_an_ingest_writes_the_panels_derived_raters_as_an_online_run_does(tmp_path):
    # a panel of two judges has a majority rater (panel:majority), written after the answers
    with FakeServer() as server:
        write_items(tmp_path, labelled_items(3))
        panel = load_panel(write_panel(tmp_path, [
            {"id": "q", "model": f"openai-compatible:{server.openai_url}#q"},
            {"id": "r", "model": f"openai-compatible:{server.openai_url}#r"}]))
        columns = ["item_id", "rater_id", "status", "label"]
        with Store(tmp_path / "a.db") as a:
            run_panel(panel, a)
            want = a.ratings()[columns].sort_values(columns).reset_index(drop=True)
        assert set(want["rater_id"]) == {"q", "r", "panel:majority"}
        with Store(tmp_path / "b.db") as b:
            emit_batch(panel, b, tmp_path / "batches")
            got = ingest_batch(panel, b, _answer(tmp_path / "batches", server, tmp_path))
            assert got.aggregates == {"panel:majority": 3}
            have = b.ratings()[columns].sort_values(columns).reset_index(drop=True)
    assert have.equals(want)


def test_emitting_into_a_folder_of_answers_refuses_rather_than_deleting_them(tmp_path):
    # vllm run-batch -o out/q.001.jsonl names its answers like the input: answers are paid for
    write_items(tmp_path, labelled_items(3))
    panel = load_panel(write_panel(tmp_path, [
        {"id": "q", "model": "openai-compatible:http://127.0.0.1:9/v1#q"}]))
    folder = tmp_path / "out"
    folder.mkdir()
    answers = json.dumps({"id": "vllm-1", "custom_id": "k", "error": None,
                          "response": {"status_code": 200, "request_id": "r", "body": {}}}) + "\n"
    (folder / "q.001.jsonl").write_text(answers, encoding="utf-8")
    from judgekit.errors import JudgekitError

    with Store(":memory:") as store, pytest.raises(JudgekitError) as err:
        emit_batch(panel, store, folder)
    assert str(folder / "q.001.jsonl") in str(err.value)
    assert (folder / "q.001.jsonl").read_text(encoding="utf-8") == answers
    assert sorted(p.name for p in folder.iterdir()) == ["q.001.jsonl"]
