"""Stores another tool edited: the template store, changed with ``sqlite3``, then
read by an analysis, the gate, an import or an export; and stores changed after the gate in ways a
verdict must notice (metadata re-imported, an item's text edited with its hash kept, a judge's
labels edited), read by an analysis. The broken "file" is the store itself
(``store.db`` in the case folder): every command must refuse it in one sentence naming it, with
exit 2, and write nothing into it (``tests/store/test_store_integrity.py`` compares its dump too)."""

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


def reimported(column: str, value: str) -> Callable[[Path], bytes]:
    """The template store after the humans' own labels were imported again, unchanged, with the
    item metadata ``column`` set to ``value`` on every item (the labelled items move to another
    model, slice or harm tier after the gate)."""

    def make(template: Path) -> bytes:
        from click.testing import CliRunner

        from judgekit.cli import main

        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "store.db"
            shutil.copy(template / "store.db", db)
            rows = [line.split(",")[:9] for line in (template / "labels.csv").read_text().splitlines()]
            head = rows[0]
            at = head.index(column) if column in head else len(head)
            lines = []
            for k, cells in enumerate(rows):
                cells = cells[:at] + [column if k == 0 else value] + cells[at + 1:]
                lines.append(",".join(cells))
            (Path(tmp) / "relabel.csv").write_text("\n".join(lines) + "\n")
            res = CliRunner().invoke(main, ["import", str(Path(tmp) / "relabel.csv"), "--rubric", "refusal",
                                            "--raters", "h1,h2", "--reference", "final=final", "--store", str(db)])
            if res.exit_code != 0:
                raise RuntimeError(res.output)
            con = sqlite3.connect(db)
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

#: the store changed after the gate, the verdict still consistent: the analysis must refuse it
_AFTER_GATE: list[tuple[str, Callable[[Path], bytes], tuple[str | tuple[str, ...], ...]]] = [
    ("meta-reimport-model", reimported("model", "m9"), ("'model'", "metadata", "judgekit gate")),
    ("meta-reimport-severity", reimported("severity", "5"), ("'severity'", "metadata", "judgekit gate")),
    ("item-text-edited-hash-kept", tampered("UPDATE items SET response = 'edited' WHERE item_id = 'i3'"),
     ("'i3'", "content_hash", "judgekit gate")),
    ("judge-label-edited", tampered("UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'j1'"),
     ("'j1'", "judgekit gate")),
]

CASES: list[Case] = [
    Case(id=f"store-{cid}-analyze", kind="store", files={"store.db": make}, args=ANALYZE, expect=expect,
         no_output=("{out}/distribution.json",))
    for cid, make, expect in _AFTER_GATE
] + [
    Case(id=f"store-{cid}-{cmd}", kind="store", files={"store.db": tampered(*sql)}, args=args, expect=expect,
         no_output=("{out}/verdict.json", "{out}/ratings.csv", "{out}/distribution.json"))
    for cid, sql, expect in _TAMPER
    for cmd, args in COMMANDS.items()
]

#: the template store, copied untouched: every command above accepts it
VALID: list[Valid] = [Valid(f"store-{cmd}", {"store.db": tampered()}, args) for cmd, args in COMMANDS.items()]
