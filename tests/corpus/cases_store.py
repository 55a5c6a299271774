"""Stores another tool edited (issue 20 item 4): the template store, changed with ``sqlite3``, then
read by an analysis, the gate, an import or an export. The broken "file" is the store itself
(``store.db`` in the case folder): every command must refuse it in one sentence naming it, with
exit 2, and write nothing into it (``tests/test_store_integrity.py`` compares its dump too)."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from corpus.base import Case, Valid


def tampered(*sql: str) -> Callable[[Path], bytes]:
    """The template store after ``sql`` (run with CHECK constraints ignored, as another tool can),
    as bytes of a file with no WAL beside it."""

    def make(template: Path) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "store.db"
            shutil.copy(template / "store.db", db)
            con = sqlite3.connect(db)
            con.execute("PRAGMA ignore_check_constraints = 1")
            for statement in sql:
                con.execute(statement)
            con.commit()
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            con.close()
            return db.read_bytes()

    return make


STORE = "{case}/store.db"
ANALYZE = ("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms",
           "--verdict", "{seed}/verdict.json", "--store", STORE, "--bootstrap", "0", "--quiet",
           "--out", "{out}")
GATE = ("gate", "{seed}/policy.yaml", "--store", STORE, "--out", "{out}")
IMPORT = ("import", "{seed}/restr.csv", "--rubric", "restrictiveness", "--store", STORE)
EXPORT = ("export", "ratings", "--store", STORE, "--out", "{out}/ratings.csv")
COMMANDS = {"analyze": ANALYZE, "gate": GATE, "import": IMPORT, "export": EXPORT}

_TAMPER: list[tuple[str, tuple[str, ...], tuple[str | tuple[str, ...], ...]]] = [
    ("future-migration", ("INSERT INTO migrations (name, applied_at) VALUES ('999_future', 0)",),
     ("newer judgekit", "upgrade")),
    ("verdicts-dropped", ("DROP TABLE verdicts",), ("'verdicts'",)),
    ("ratings-dropped", ("DROP TABLE ratings",), ("'ratings'",)),
    ("meta-invalid-json", ("UPDATE items SET meta = '{bad' WHERE item_id = 'i3'",), ("'i3'", "not valid JSON")),
    ("meta-json-list", ("UPDATE items SET meta = '[1, 2]' WHERE item_id = 'i3'",), ("'i3'", "JSON object")),
    ("trigger-blocks-insert", ("CREATE TRIGGER no_insert BEFORE INSERT ON ratings"
                               " BEGIN SELECT RAISE(ABORT, 'blocked'); END",), ("'no_insert'", "trigger")),
    ("trial-abc", ("UPDATE ratings SET trial = 'abc' WHERE item_id = 'i3' AND rater_id = 'h1'",),
     ("'i3'", "trial 'abc'")),
    ("status-bogus", ("UPDATE ratings SET status = 'bogus' WHERE item_id = 'i3' AND rater_id = 'j1'",),
     ("'i3'", "status 'bogus'")),
]

CASES: list[Case] = [
    Case(id=f"store-{cid}-{cmd}", kind="store", files={"store.db": tampered(*sql)}, args=args, expect=expect,
         no_output=("{out}/verdict.json", "{out}/ratings.csv", "{out}/distribution.json"))
    for cid, sql, expect in _TAMPER
    for cmd, args in COMMANDS.items()
]

#: the template store, copied untouched: every command above accepts it
VALID: list[Valid] = [Valid(f"store-{cmd}", {"store.db": tampered()}, args) for cmd, args in COMMANDS.items()]
