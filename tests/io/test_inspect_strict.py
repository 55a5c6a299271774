"""Inspect logs are untrusted input: corrupt or oversized entries, wrong
field types and absurd nesting are one sentence naming the log, the sample and the key, exit 2, no
traceback, the store unchanged; a chat input of plain strings is refused, not silently dropped."""

from __future__ import annotations

import copy
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from conftest import store_dump as _dump

from judgekit.cli import main

SPEC = {"eval_id": "e1", "run_id": "r1", "created": "2025-05-01T10:00:00+00:00", "task": "probe",
        "task_id": "t1", "task_version": 0, "dataset": {"name": "probe", "samples": 2},
        "model": "openai/gpt-4o-mini", "config": {"epochs": 1}}


def _sample(sid: Any, **over: Any) -> dict[str, Any]:
    s = {"id": sid, "epoch": 1, "input": f"question {sid}", "target": "", "messages": [],
         "output": {"model": "m", "completion": f"answer {sid}"}, "metadata": {"category": "c"},
         "store": {}, "events": [], "model_usage": {}, "attachments": {},
         "scores": {"grader": {"value": "full_refusal", "explanation": "declines"}}}
    s.update(over)
    return s


def _log(samples: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    return {"version": 2, "status": "success", "eval": {**copy.deepcopy(SPEC), **spec},
            "plan": {}, "results": {}, "stats": {},
            "samples": samples if samples is not None else [_sample(1), _sample(2)]}


def _json_log(path: Path, log: dict[str, Any]) -> Path:
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def _eval_log(path: Path, log: dict[str, Any]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
        for s in log["samples"]:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    return path


@pytest.fixture()
def db(tmp_path) -> str:
    path = str(tmp_path / "s.db")
    good = _json_log(tmp_path / "good.json", _log([_sample("kept")]))
    res = CliRunner().invoke(main, ["import", str(good), "--rubric", "refusal", "--store", path])
    assert res.exit_code == 0, res.output
    return path


def _refused(db: str, path: Path, expect: list[str]) -> str:
    before = _dump(db)
    res = CliRunner().invoke(main, ["import", str(path), "--rubric", "refusal", "--store", db])
    line = one_sentence_error(res, path.name, *expect)
    assert _dump(db) == before
    return line


# ---------------------------------------------------------------- wrong field types
BAD_FIELDS = [
    ("epochs_text", _log(config={"epochs": "3"}), ["eval.config.epochs is '3'"]),
    ("config_list", _log(config=[1]), ["eval.config is a list"]),
    ("scores_list", _log([_sample(1, scores=[{"value": "full_refusal"}])]),
     ["sample '1'", "'scores' is a list"]),
    ("metadata_list", _log([_sample(1, metadata=["a", "b"])]), ["sample '1'", "'metadata' is a list"]),
    ("attachments_list", _log([_sample(1, attachments=["x"])]), ["sample '1'", "'attachments' is a list"]),
    ("chat_of_strings", _log([_sample(1, input=["How do I kill a process?", "and a thread?"])]),
     ["sample '1'", "input[0] is 'How do I kill a process?', not a chat message"]),
    ("chat_content_number", _log([_sample(1, input=[{"role": "user", "content": 5}])]),
     ["sample '1'", "input[0] needs 'role' as text"]),
    # Inspect always writes a role (its ChatMessage types are told apart by it): none is refused,
    # never guessed as "user" (a conversation turn in any other import needs one too)
    ("chat_without_role", _log([_sample(1, input=[{"content": "hi"}])]),
     ["sample '1'", "input[0] needs 'role' as text"]),
    ("chat_empty_role", _log([_sample(1, input=[{"role": "", "content": "hi"}])]),
     ["sample '1'", "input[0] needs 'role' as text"]),
    ("input_number", _log([_sample(1, input=42)]), ["sample '1'", "'input' is 42"]),
    ("float_id", _log([_sample(1.0)]), ["sample 1", "id 1.0 is a decimal number"]),
    ("explanation_list", _log([_sample(1, scores={"grader": {"value": "full_refusal", "explanation": ["a"]}})]),
     ["sample '1'", "the explanation of score 'grader' is a list"]),
    ("model_object", _log(model={"name": "x"}), ["eval.model is a mapping"]),
    ("metadata_key_twice", _log([_sample(1, metadata={"src": {"row": 1}, "src.row": 2})]),
     ["sample '1'", "metadata key 'src.row' is given twice"]),
]


@pytest.mark.parametrize("fmt", ["json", "eval"])
@pytest.mark.parametrize(("name", "log", "expect"), BAD_FIELDS, ids=[c[0] for c in BAD_FIELDS])
def test_a_field_of_the_wrong_type_is_one_sentence(tmp_path, db, fmt, name, log, expect):
    path = (_json_log if fmt == "json" else _eval_log)(tmp_path / f"{name}.{fmt}", log)
    _refused(db, path, expect)


def test_deep_json_is_one_sentence(tmp_path, db):
    deep = json.dumps(_log([_sample(1)])).replace('"category": "c"', '"deep": ' + "[" * 100_000 + "]" * 100_000)
    path = tmp_path / "deep.json"
    path.write_text(deep, encoding="utf-8")
    _refused(db, path, ["nested too deeply"])
    ev = tmp_path / "deep.eval"
    with zipfile.ZipFile(ev, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in _log().items() if k != "samples"}))
        zf.writestr("samples/1_epoch_1.json", json.dumps(_sample(1)).replace(
            '"category": "c"', '"deep": ' + "[" * 100_000 + "]" * 100_000))
    _refused(db, ev, ["entry samples/1_epoch_1.json nests its JSON too deeply"])


# ---------------------------------------------------------------- broken and oversized archives
def _data_offset(path: Path, name: str) -> int:
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
    raw = path.read_bytes()
    n, m = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + n + m


def test_corrupt_deflate_data_is_one_sentence(tmp_path, db):
    path = _eval_log(tmp_path / "corrupt.eval", _log())
    data = bytearray(path.read_bytes())
    start = _data_offset(path, "samples/2_epoch_1.json")
    data[start] = 0x07  # a final deflate block of the reserved type 3: "invalid block type"
    path.write_bytes(bytes(data))
    _refused(db, path, ["entry samples/2_epoch_1.json is corrupt", "copy the log again"])


def test_an_entry_inflating_to_hundreds_of_mb_is_refused_before_it_is_read(tmp_path, db):
    import tracemalloc

    path = tmp_path / "bomb.eval"
    head, tail = json.dumps(_sample(1)).split('"category": "c"')
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in _log().items() if k != "samples"}))
        with zf.open("samples/1_epoch_1.json", "w", force_zip64=True) as fh:
            fh.write((head + '"pad": "').encode())
            chunk = b"a" * (1 << 20)
            for _ in range(300):  # 300 MiB of valid JSON text, a few hundred KB compressed
                fh.write(chunk)
            fh.write(('"' + tail).encode())
    assert path.stat().st_size < 5 * 2**20
    tracemalloc.start()
    try:
        message = _refused(db, path, ["entry samples/1_epoch_1.json inflates to more than 256 MiB"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "zip bomb" in message
    assert peak < 64 * 2**20  # refused from the declared size, nothing inflated


def test_entries_adding_up_beyond_the_log_budget_are_refused(tmp_path, db, monkeypatch):
    import judgekit.io.inspect as inspect_mod

    path = _eval_log(tmp_path / "many.eval", _log([_sample(i) for i in range(1, 6)]))
    with zipfile.ZipFile(path) as zf:
        one = zf.getinfo("samples/1_epoch_1.json").file_size
    monkeypatch.setattr(inspect_mod, "MAX_TOTAL_BYTES", 3 * one, raising=False)
    _refused(db, path, ["its samples inflate to", "more than", "split the evaluation"])


def test_zstd_entry_larger_than_declared_is_not_inflated(tmp_path):
    """A Zstandard entry (zip method 93, read by judgekit itself) that inflates beyond its declared
    size fails the checksum after declared size + 1 bytes, not after inflating all of it."""
    import zlib

    import zstandard

    from judgekit.io.inspect import _read_zstd_entry

    raw = json.dumps(_sample(1)).encode()
    big = raw + b" " * (8 << 20)  # valid JSON with 8 MiB of trailing white space
    path = tmp_path / "z.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("samples/1_epoch_1.json", zstandard.ZstdCompressor().compress(big))
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("samples/1_epoch_1.json")
    info.file_size, info.CRC = len(raw), zlib.crc32(raw)
    with pytest.raises(Exception, match="fails its checksum"):
        _read_zstd_entry(path, info, info.file_size)
