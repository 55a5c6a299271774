"""--ingest-batch refuses a batch output it cannot trust whole: a line that is not a result, a
custom_id that is not a call of the panel, a custom_id answered twice — one sentence naming the
file and line, exit 2, nothing stored. And the emit → vllm run-batch → ingest path through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.judges.batchingest import ingest_batch
from judgekit.judges.panel import load_panel
from judgekit.store.database import Store
from judgekit.testing.fakeserver import FakeServer

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from conftest import one_sentence_error, store_dump  # noqa: E402
from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """A panel, its emitted batch file and the output a vllm run-batch stand-in wrote for it."""
    folder = tmp_path_factory.mktemp("answered")
    with FakeServer() as server:
        write_items(folder, labelled_items(4))
        panel_path = write_panel(folder, [
            {"id": "qwen", "model": f"openai-compatible:{server.openai_url}#qwen"}])
        res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(folder / "s.db"),
                                        "--emit-batch", str(folder / "batches")])
        assert res.exit_code == 0, res.output
        assert not (folder / "s.db").exists()  # emitting creates no store
        # the stand-in run as vllm run-batch is: a command over the files
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("fake_run_batch.py")),
                               "-i", str(folder / "batches" / "qwen.001.jsonl"),
                               "-o", str(folder / "out.jsonl"), "--server", server.url],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    return panel_path, (folder / "out.jsonl").read_text(encoding="utf-8").splitlines()


def _bad(tmp_path: Path, lines: list[str], name: str = "out.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _row(line: str, **changes) -> str:
    row = json.loads(line)
    row.update(changes)
    return json.dumps(row)


CASES = {
    "not JSON": (lambda ls: [ls[0], "{not json", *ls[2:]], ("line 2 is not JSON",)),
    "not an object": (lambda ls: [ls[0], ls[1], "[1, 2]", ls[3]], ("line 3 is not a JSON object",)),
    "no custom_id": (lambda ls: [ls[0], _row(ls[1], custom_id=None)], ("line 2 has no custom_id",)),
    "neither response nor error": (lambda ls: [_row(ls[0], response=None, error=None)],
                                   ("line 1 has neither a response nor an error",)),
    "status_code text": (lambda ls: [ls[0], _row(ls[1], response={"status_code": "200", "body": {}})],
                         ("line 2 has a response without a status_code",)),
    "not UTF-8": (lambda ls: [ls[0], "\udcff"], ("line 2 is not UTF-8",)),
    "unknown custom_id": (lambda ls: [ls[0], _row(ls[1], custom_id="0" * 32), *ls[2:]],
                          ("line 2", "custom_id '00000000000000000000000000000000'",
                           "is not a call of this panel's judges")),
    "duplicate": (lambda ls: [*ls, ls[1]], ("line 5", "has a result already on line 2")),
    "a request (the input file)": (
        lambda ls: [json.dumps({"custom_id": json.loads(ls[0])["custom_id"], "method": "POST",
                                "url": "/v1/chat/completions", "body": {"model": "qwen"}})],
        ("line 1 is a request, not a result", "give the output file")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_batch_output_is_one_sentence_and_stores_nothing(tmp_path, answered, case):
    panel_path, lines = answered
    damage, expect = CASES[case]
    text = "".join(line + "\n" for line in damage(lines))
    bad = tmp_path / "out.jsonl"
    bad.write_bytes(text.encode("utf-8", "surrogateescape"))
    db = tmp_path / "b.db"
    Store(db).close()
    before = store_dump(db)
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(db), "--ingest-batch", str(bad)])
    one_sentence_error(res, str(bad), "Nothing was stored", *expect)
    assert store_dump(db) == before


def test_a_custom_id_answered_in_two_files_names_both(tmp_path, answered):
    panel_path, lines = answered
    first, second = _bad(tmp_path, lines[:2], "a.jsonl"), _bad(tmp_path, lines[1:], "b.jsonl")
    with Store(tmp_path / "b.db") as store, pytest.raises(JudgekitError) as err:
        ingest_batch(load_panel(panel_path), store, [first, second])
    assert f"{second} line 1" in str(err.value) and f"line 2 of {first}" in str(err.value)
    with Store(tmp_path / "b.db") as store:
        assert store.items().empty and store.ratings().empty


def test_an_untrusted_custom_id_is_shown_shortened(tmp_path, answered):
    panel_path, lines = answered
    bad = _bad(tmp_path, [_row(lines[0], custom_id="x" * 5000)])
    with Store(":memory:") as store, pytest.raises(JudgekitError) as err:
        ingest_batch(load_panel(panel_path), store, [bad])
    assert "x" * 50 not in str(err.value) and len(str(err.value)) < 400


def test_emit_answer_ingest_through_the_cli(tmp_path, answered):
    panel_path, lines = answered
    out = _bad(tmp_path, lines[:3], "part.jsonl")
    rest = _bad(tmp_path, lines[3:], "rest.jsonl")
    db = tmp_path / "b.db"
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(db), "--ingest-batch", str(out),
                                    "--ingest-batch", str(rest), "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["results"] == 4 and got["judges"][0]["ok"] == 4
    with Store(db) as store:
        df = store.ratings(rater_ids=["qwen"])
    want = {r["item_id"]: r["truth"] for r in labelled_items(4)}
    assert dict(zip(df["item_id"], df["label"], strict=True)) == want
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(db), "--emit-batch",
                                    str(tmp_path / "again")])
    assert res.exit_code == 0 and "nothing to emit, all 4 calls are answered" in res.output
    assert not list((tmp_path / "again").glob("*.jsonl"))


@pytest.mark.parametrize("extra", [["--dry-run"], ["--reparse"], ["--no-wait"],
                                   ["--ingest-batch", "{out}"]])
def test_emit_batch_stands_alone(tmp_path, answered, extra):
    panel_path, lines = answered
    out = _bad(tmp_path, lines)
    args = [a.replace("{out}", str(out)) for a in extra]
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(tmp_path / "s.db"),
                                    "--emit-batch", str(tmp_path / "d"), *args])
    one_sentence_error(res, "--emit-batch")


def test_a_line_longer_than_any_answer_is_refused_before_it_is_read_whole(tmp_path, answered):
    panel_path, lines = answered
    small = tmp_path / "small.yaml"
    text = panel_path.read_text(encoding="utf-8").replace("#qwen\n", "#qwen\n  max_response_bytes: 1024\n")
    small.write_text(text, encoding="utf-8")
    (tmp_path / "items.jsonl").write_bytes((panel_path.parent / "items.jsonl").read_bytes())
    bound = 2 * 1024 + 2**16
    long_row = _row(lines[1], pad="x" * bound)
    bad = _bad(tmp_path, [lines[0], long_row])
    with Store(tmp_path / "b.db") as store, pytest.raises(JudgekitError) as err:
        ingest_batch(load_panel(small), store, [bad])
    assert f"{bad} line 2 is longer than {bound:,} bytes" in str(err.value)
    # the same line under the default bound (16 MiB answers) is a result like any other
    with Store(tmp_path / "c.db") as store:
        assert ingest_batch(load_panel(panel_path), store, [bad]).results == 2


def test_a_bad_batch_output_creates_no_store(tmp_path, answered):
    panel_path, lines = answered
    bad = _bad(tmp_path, [lines[0], "{not json"])
    db = tmp_path / "new.db"
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(db), "--ingest-batch", str(bad)])
    one_sentence_error(res, str(bad), "line 2 is not JSON", "Nothing was stored")
    assert not db.exists()
    good = _bad(tmp_path, lines, "good.jsonl")
    res = CliRunner().invoke(main, ["judge", str(panel_path), "--store", str(db), "--ingest-batch", str(good)])
    assert res.exit_code == 0, res.output
    with Store(db) as store:
        assert len(store.ratings(rater_ids=["qwen"])) == 4
