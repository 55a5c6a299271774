"""The gate records a verdict's digest in the store only once ``verdict.json`` (and every other
output) is written: a write that fails leaves one sentence, exit 2, and the store unchanged."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from corpus.base import build_template, dump_store

from judgekit.cli import main


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("durable-template")
    build_template(folder)
    return folder


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    shutil.copy(template / "store.db", db)
    return db


def test_gate_json_into_a_folder_is_refused_before_anything_is_recorded(template: Path, store: Path,
                                                                        tmp_path: Path) -> None:
    before = dump_store(store)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    out = CliRunner().invoke(main, ["gate", str(template / "policy.yaml"), "--store", str(store), "--out",
                                    str(tmp_path / "out"), "--json", str(folder), "--quiet"])
    message = one_sentence_error(out, str(folder))
    assert ".tmp" not in message
    assert dump_store(store) == before
    assert not (tmp_path / "out" / "verdict.json").exists()


def test_a_verdict_json_that_cannot_be_written_records_nothing(template: Path, store: Path, tmp_path: Path) -> None:
    con = sqlite3.connect(store)  # the template's verdict not recorded yet: this gate's would be new
    con.execute("DELETE FROM verdicts")
    con.commit()
    con.close()
    before = dump_store(store)
    (tmp_path / "out" / "verdict.json").mkdir(parents=True)  # the write fails after the gate decided
    out = CliRunner().invoke(main, ["gate", str(template / "policy.yaml"), "--store", str(store), "--out",
                                    str(tmp_path / "out"), "--quiet"])
    one_sentence_error(out, "verdict.json")
    assert dump_store(store) == before
