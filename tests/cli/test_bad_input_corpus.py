"""The bad-input corpus: every user-written input, broken, changes nothing.

Each case of ``tests/corpus/`` is generated into a temporary folder and run through the command
line in-process (click's runner) on a copy of a template store built once per session; a few run
in a child process. A bad case must give exit code 2, no traceback, one ``error:`` sentence naming
the file and the row/line or key the case expects, and leave the store exactly as it was (a
canonical dump of every table before and after). A control must import with exit 0 and store
exactly the values it holds.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus.base import Case, Control, Valid, build_template, dump_store, expand, write_files
from corpus.make_corpus import CASES, CONTROLS, VALID

import judgekit
from judgekit.cli import main

#: the folder holding the judgekit package under test (a child process imports the same one)
JUDGEKIT_ROOT = Path(judgekit.__file__).resolve().parent.parent
#: the longest error sentence accepted: values are quoted as short excerpts
MAX_MESSAGE = 1000


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus-template")
    build_template(folder)
    return folder


def _params(cases: list) -> list:
    return [
        pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
        for c in cases
    ]


def run_case(case: Case | Control | Valid, template: Path, tmp_path: Path) -> tuple[int, str, BaseException | None, dict]:
    """Write the case's files, copy the template store and run the command on them."""
    store = tmp_path / "store.db"
    shutil.copy(template / "store.db", store)
    folder = tmp_path / "case"
    write_files(case.files, folder, template)
    where = {"case": str(folder), "seed": str(template), "store": str(store), "out": str(tmp_path / "out")}
    args = expand(case.args, **where)
    if getattr(case, "subprocess", False):  # within 1.5 GB of memory: a bomb must not take the machine
        proc = subprocess.run([sys.executable, "-m", "judgekit", *args], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120, preexec_fn=_limit_memory,
                              env={"PYTHONPATH": str(JUDGEKIT_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        return proc.returncode, proc.stdout + proc.stderr, None, where
    res = CliRunner().invoke(main, args)
    return res.exit_code, res.output, res.exception, where


def names_file(message: str, path: Path) -> bool:
    """Whether ``message`` names ``path``: in full, or by its name where a message says where
    (``r.csv line 3: ...``, ``export.json: task 1 ...``; imports shorten paths over 60 characters)."""
    if str(path) in message:
        return True
    where = rf"(?:^|[\s'/]){re.escape(path.name)}(?::| line \d| row \d| is | has |, | \()"
    return re.search(where, message) is not None


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))


@pytest.mark.parametrize("case", _params(CASES))
def test_bad_input_is_one_sentence_and_changes_nothing(case: Case, template: Path, tmp_path: Path):
    before = dump_store(template / "store.db")
    code, output, exc, where = run_case(case, template, tmp_path)
    shown = output[:3000]
    assert "Traceback" not in output, shown
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}\n{shown}"
    assert code == 2, shown
    # judgekit's "error: ..." sentence, or click's "Error: ..." after its usage lines (a folder
    # given where a file is expected is refused by click's own path check)
    errors = [line for line in output.splitlines() if line.startswith(("error: ", "Error: "))]
    assert len(errors) == 1, shown
    message = errors[0]
    assert len(message) < MAX_MESSAGE, f"{len(message)} characters: {message[:500]}"
    named = Path(where["case"]) / case.named_file
    assert names_file(message, named), f"the message does not name {named}: {message}"
    for part in case.expect:  # a tuple: any one of these
        options = [p.format(**where) for p in (part if isinstance(part, tuple) else (part,))]
        assert any(o in message for o in options), f"{part!r} not in: {message}"
    assert dump_store(where["store"]) == before, "the store changed"
    for rel in case.no_output:
        assert not Path(rel.format(**where)).exists(), f"{rel} was written"


@pytest.mark.parametrize("control", _params(CONTROLS))
def test_valid_control_imports_exactly(control: Control, template: Path, tmp_path: Path):
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    before = dump_store(template / "store.db")
    code, output, exc, where = run_case(control, template, tmp_path)
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}\n{output[:3000]}"
    assert code == 0, output[:3000]
    assert dump_store(where["store"]) != before
    with Store(where["store"]) as s:
        for (item_id, rater, rubric), (label, rationale) in control.ratings.items():
            r = s.ratings(rubric=load_rubric(rubric))
            got = r[(r["item_id"] == item_id) & (r["rater_id"] == rater)]
            assert len(got) == 1, f"{(item_id, rater, rubric)}: {len(got)} ratings"
            row = got.iloc[0]
            assert row["label"] == label, (item_id, rater, row["label"])
            if rationale is not None:
                assert row["rationale"] == rationale, (item_id, rater, str(row["rationale"])[:200])
        items = s.items().set_index("item_id")
        for item_id, values in control.items.items():
            assert item_id in items.index, item_id
            for col, want in values.items():
                assert items.loc[item_id, col] == want, (item_id, col, items.loc[item_id, col])


@pytest.mark.parametrize("valid", VALID, ids=[v.id for v in VALID])
def test_the_unbroken_file_is_accepted(valid: Valid, template: Path, tmp_path: Path):
    """Each family's unbroken file passes, so each case fails for what it breaks, nothing else."""
    code, output, exc, _ = run_case(valid, template, tmp_path)
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}\n{output[:3000]}"
    assert code == 0, output[:3000]


def test_the_corpus_covers_every_user_written_input():
    kinds = {c.kind for c in CASES}
    assert {"rubric", "policy", "panel", "criteria", "sample", "csv", "jsonl", "json", "parquet",
            "ls-json", "ls-min", "ls-csv", "inspect-json", "inspect-eval", "verdict", "store"} <= kinds
    assert sum(len(c.files) for c in CASES) >= 80
    for trap in ("bom", "crlf", "excel-quoting", "label-variants", "big-rationale"):
        assert any(trap in c.id for c in CONTROLS), trap


# ----------------------------------------------------------------------------- the harness itself
def test_the_checks_catch_a_command_that_succeeds_or_names_another_key(template: Path, tmp_path: Path):
    """The harness can fail: a valid import (exit 0, store changed) and a refusal whose message
    lacks the expected key are both caught."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    good = CONTROLS[0]
    as_case = Case(id="meta-valid", kind="csv", files=good.files, args=good.args, expect=())
    with pytest.raises(AssertionError, match="assert 0 == 2"):
        test_bad_input_is_one_sentence_and_changes_nothing(as_case, template, tmp_path / "a")
    bad = next(c for c in CASES if c.id == "csv-label-unknown")
    wrong_key = Case(id="meta-key", kind=bad.kind, files=bad.files, args=bad.args, expect=("line 7",))
    with pytest.raises(AssertionError, match="'line 7' not in"):
        test_bad_input_is_one_sentence_and_changes_nothing(wrong_key, template, tmp_path / "b")


def test_the_store_dump_sees_any_change(template: Path, tmp_path: Path):
    import sqlite3

    db = tmp_path / "s.db"
    shutil.copy(template / "store.db", db)
    before = dump_store(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE ratings SET rationale = 'edited' WHERE rowid = (SELECT min(rowid) FROM ratings)")
    con.commit()
    con.close()
    assert dump_store(db) != before


def test_the_generated_files_are_the_same_on_every_run(template: Path):
    """The corpus is code: building it again gives the same bytes (the zip bomb, 2 s to build,
    is compared by its own test run)."""
    import importlib

    from corpus import cases_config, cases_logs, cases_tables, controls

    def contents() -> dict[tuple[str, str], bytes]:
        out = {}
        for c in [*cases_config.CASES, *cases_tables.CASES, *cases_logs.CASES, *controls.CONTROLS]:
            if getattr(c, "subprocess", False):
                continue
            for rel, content in c.files.items():
                out[(c.id, rel)] = content(template) if callable(content) else repr(content).encode() \
                    if not isinstance(content, bytes) else content
        return out

    first = contents()
    for module in (cases_config, cases_tables, cases_logs, controls):
        importlib.reload(module)
    assert contents() == first
