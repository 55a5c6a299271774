"""An import that finds no room to write — a file-size limit (RLIMIT_FSIZE, set in the child
process that runs `judgekit import`) standing in for a full disk — is refused in one sentence,
exit 2, and leaves the store as it was (or, a first import, no store)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import one_sentence_error, store_dump

from tests.corpus.base import build_template

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("noroom")
    build_template(folder)
    return folder


def _big(path: Path, n: int = 6000) -> Path:
    rows = ["item_id,prompt,response,label,rater_id,rater_kind"]
    rows += [f"x{i},prompt {i} {'p' * 200},response {i} {'r' * 300},full_refusal,h1,human" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _import_limited(folder: Path, store: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limited() -> None:  # in the child: writes past the limit fail with EFBIG instead of a signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "judgekit", "import", str(_big(folder / "big.csv")),
                           "--rubric", "refusal", "--store", str(store)],
                          capture_output=True, text=True, env=env, preexec_fn=limited, timeout=120, check=False)


def test_an_import_past_a_file_size_limit_is_one_sentence_and_leaves_the_store_unchanged(template, tmp_path):
    shutil.copy(template / "store.db", tmp_path / "store.db")
    before = store_dump(tmp_path / "store.db")
    limit = (tmp_path / "store.db").stat().st_size + 400_000  # room for the store, not for 3 MB more
    out = _import_limited(tmp_path, tmp_path / "store.db", limit)
    line = one_sentence_error(out, "big.csv", "could not be written", "nothing of it was imported")
    assert "file-size limit" in line
    assert store_dump(tmp_path / "store.db") == before


def test_a_first_import_past_a_file_size_limit_leaves_no_store(tmp_path):
    out = _import_limited(tmp_path, tmp_path / "new.db", 1_000_000)
    one_sentence_error(out, "could not be written")
    assert not (tmp_path / "new.db").exists()
