"""No command reads from, writes through, over or beside a special file.

A FIFO (made with ``os.mkfifo`` in the test's folder), ``/dev/null`` and ``/dev/zero`` (only ever
given as inputs: never written to) and, where the test runs as root, a character device made in
the test's folder (a copy of ``/dev/null`` made with ``os.mknod``: if a bug replaced it, only that
copy would go) are each refused with one sentence naming the path, exit 2, before anything is
written. A blocked read would hang the test: an alarm turns a hang into a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.core.paths import open_input, read_bounded, regular_input, regular_output
from judgekit.errors import JudgekitError

REPO = Path(__file__).resolve().parents[2]


class Hang(Exception):
    pass


@pytest.fixture(autouse=True)
def alarm():
    """Fail (instead of hanging) when a read blocks for 8 s."""

    def ring(signum, frame):
        raise Hang("the command blocked on a special file")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(8)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    from corpus.base import build_template

    folder = tmp_path_factory.mktemp("special-template")
    build_template(folder)
    return folder


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    shutil.copy(template / "store.db", db)
    return db


def fifo(folder: Path, name: str) -> Path:
    p = folder / name
    os.mkfifo(p)
    return p


def device_copy(folder: Path, name: str) -> Path:
    """A character device like /dev/null, made in ``folder`` (root only)."""
    p = folder / name
    try:
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return p


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.output


def refused(code: int, output: str, path: Path | str, kind: str) -> None:
    one_sentence_error((code, output), str(path), kind)


# ----------------------------------------------------------------------------- the helper
def test_regular_input_refuses_special_files_and_passes_the_rest(tmp_path: Path):
    f = fifo(tmp_path, "pipe.csv")
    with pytest.raises(JudgekitError, match=r"pipe\.csv is a FIFO \(named pipe\), not a regular file"):
        regular_input(f)
    with pytest.raises(JudgekitError, match="Verdict /dev/zero is a character device"):
        regular_input("/dev/zero", "Verdict")
    link = tmp_path / "link.csv"
    link.symlink_to("/dev/null")  # judged by what it points to
    with pytest.raises(JudgekitError, match="character device"):
        regular_input(link)
    ok = tmp_path / "ok.csv"
    ok.write_text("a\n")
    assert regular_input(ok) == ok
    assert regular_input(tmp_path / "missing.csv") == tmp_path / "missing.csv"
    assert regular_input(tmp_path) == tmp_path  # a folder: the caller's own sentence


def test_regular_output_refuses_special_files(tmp_path: Path):
    with pytest.raises(JudgekitError, match="never writes through, over or beside a special file"):
        regular_output(fifo(tmp_path, "out.csv"))
    with pytest.raises(JudgekitError, match="character device"):
        regular_output("/dev/null")  # only checked: nothing is written
    assert regular_output(tmp_path / "new.csv") == tmp_path / "new.csv"


def test_open_input_does_not_block_on_a_fifo(tmp_path: Path):
    f = fifo(tmp_path, "p.json")
    with pytest.raises(JudgekitError, match="FIFO"):
        open_input(f)
    with pytest.raises(IsADirectoryError):
        open_input(tmp_path)
    ok = tmp_path / "ok.json"
    ok.write_bytes(b"{}")
    with open_input(ok) as fh:
        assert fh.read() == b"{}"


def test_read_bounded_refuses_a_larger_file(tmp_path: Path):
    p = tmp_path / "v.json"
    p.write_bytes(b"x" * 101)
    with pytest.raises(JudgekitError, match=r"v\.json is larger than 100 bytes"):
        read_bounded(p, 100, "Verdict")
    assert read_bounded(p, 101) == b"x" * 101
    with pytest.raises(JudgekitError, match="character device"):
        read_bounded("/dev/zero", 100)


# ----------------------------------------------------------------------------- inputs
def test_import_of_a_fifo_is_refused(store: Path, tmp_path: Path):
    f = fifo(tmp_path, "labels.csv")
    refused(*run("import", f, "--rubric", "refusal", "--store", store), f, "FIFO")


def test_import_of_dev_zero_is_refused(store: Path):
    refused(*run("import", "/dev/zero", "--format", "csv", "--rubric", "refusal", "--store", store),
            "/dev/zero", "character device")


def test_items_file_that_is_a_fifo_is_refused(template: Path, store: Path, tmp_path: Path):
    f = fifo(tmp_path, "items.jsonl")
    refused(*run("import", template / "labels.csv", "--rubric", "refusal", "--raters", "h1",
                 "--items", f, "--store", store), f, "FIFO")


def test_rubric_that_is_a_fifo_is_refused(template: Path, store: Path, tmp_path: Path):
    f = fifo(tmp_path, "rubric.yaml")
    refused(*run("import", template / "labels.csv", "--rubric", f, "--raters", "h1",
                 "--store", store), f, "FIFO")
    refused(*run("rubrics", f), f, "FIFO")


def test_policy_that_is_a_fifo_is_refused(store: Path, tmp_path: Path):
    f = fifo(tmp_path, "policy.yaml")
    refused(*run("gate", f, "--store", store, "--out", tmp_path / "out"), f, "FIFO")
    assert not (tmp_path / "out" / "verdict.json").exists()


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_verdict_that_is_special_is_refused(source: str, store: Path, tmp_path: Path):
    path = fifo(tmp_path, "verdict.json") if source == "fifo" else Path(source)
    refused(*run("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms",
                 "--verdict", path, "--store", store, "--bootstrap", "0", "--quiet",
                 "--out", tmp_path / "out"), path, "FIFO" if source == "fifo" else "character device")


def test_the_judge_template_that_is_a_fifo_is_refused(tmp_path: Path):
    from judgekit.rubric.model import load_rubric

    text = (REPO / "rubrics" / "refusal.yaml").read_text(encoding="utf-8")
    assert "judge:\n  answer_format: json" in text
    rubric = tmp_path / "r.yaml"
    rubric.write_text(text.replace("judge:\n", "judge:\n  template: pipe.txt\n"), encoding="utf-8")
    fifo(tmp_path, "pipe.txt")
    with pytest.raises(JudgekitError, match="not a regular file"):
        load_rubric(rubric)


# ----------------------------------------------------------------------------- outputs
@pytest.mark.parametrize("ending", ["csv", "parquet"])
def test_export_over_a_fifo_is_refused_and_the_fifo_stays(ending: str, store: Path, tmp_path: Path):
    f = fifo(tmp_path, f"ratings.{ending}")
    refused(*run("export", "ratings", "--store", store, "--out", f), f, "FIFO")
    assert stat.S_ISFIFO(os.lstat(f).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["store.db", f.name])  # no temp file


def test_export_over_a_device_is_refused_and_the_device_stays(store: Path, tmp_path: Path):
    dev = device_copy(tmp_path, "full")
    refused(*run("export", "ratings", "--store", store, "--out", dev, "--format", "csv"), dev,
            "character device")
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


def test_export_through_a_link_to_dev_null_is_refused(store: Path, tmp_path: Path):
    link = tmp_path / "r.csv"
    link.symlink_to("/dev/null")  # the rename would replace the link, not /dev/null: still refused
    refused(*run("export", "ratings", "--store", store, "--out", link), link, "character device")
    assert link.is_symlink()


def test_a_store_that_is_a_device_is_refused_with_no_journal_beside_it(tmp_path: Path):
    dev = device_copy(tmp_path, "store.db")
    code, output = run("export", "ratings", "--store", dev, "--out", tmp_path / "r.csv")
    refused(code, output, dev, "character device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.db"]


def test_a_store_that_is_a_fifo_is_refused(tmp_path: Path):
    f = fifo(tmp_path, "store.db")
    code, output = run("export", "ratings", "--store", f, "--out", tmp_path / "r.csv")
    refused(code, output, f, "FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.db"]


def test_write_text_atomic_refuses_a_fifo(tmp_path: Path):
    from judgekit.core.atomic import write_text_atomic

    f = fifo(tmp_path, "report.md")
    with pytest.raises(JudgekitError, match="FIFO"):
        write_text_atomic(f, "text")
    assert stat.S_ISFIFO(os.lstat(f).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_a_special_file_where_sqlite_writes_beside_the_store_is_refused(tmp_path: Path, side: str):
    """SQLite writes its -wal, -shm and -journal files beside the store: a FIFO there is refused
    before the store is created or opened (no store file appears, the FIFO stays)."""
    from judgekit.store.database import Store

    f = fifo(tmp_path, "new.db" + side)
    with pytest.raises(JudgekitError, match="FIFO"):
        Store(str(tmp_path / "new.db"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f.name]
    assert stat.S_ISFIFO(os.lstat(f).st_mode)
