"""The corpus's building blocks: cases, controls, the template store, file writers.

See :mod:`make_corpus` for what the corpus is and how to regenerate it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


class _Folder:
    """A folder where a file is expected."""

    def __repr__(self) -> str:
        return "FOLDER"


FOLDER = _Folder()


class _Fifo:
    """A FIFO (named pipe) where a file is expected: no writer, so a blocking read never ends."""

    def __repr__(self) -> str:
        return "FIFO"


FIFO = _Fifo()


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` (a device such as /dev/zero) where a file is expected: the
    commands may only read it or refuse it (a test never writes to a device)."""

    target: str


#: a file's content: bytes, a folder, a FIFO, a link, or bytes made from the template folder
Content = bytes | _Folder | _Fifo | Link | Callable[[Path], bytes]


@dataclass(frozen=True)
class Case:
    """One bad input and the command that reads it."""

    id: str
    kind: str
    files: Mapping[str, Content]
    args: tuple[str, ...]
    #: substrings the error message must contain: the row/line or the key, and the problem (a
    #: tuple of strings: any one of them, where today's message and the fix's differ in wording)
    expect: tuple[str | tuple[str, ...], ...]
    #: the file the message must name (relative to the case folder); default: the first file
    names: str | None = None
    #: why the case fails today while its fix is under way (a strict xfail until the fix lands)
    xfail: str | None = None
    #: run in a child process (inputs that could take the interpreter down with them)
    subprocess: bool = False
    #: files the command must not write (relative to the case folder or {out})
    no_output: tuple[str, ...] = ()

    @property
    def named_file(self) -> str:
        return self.names or next(iter(self.files))


@dataclass(frozen=True)
class Control:
    """A valid input that must import with exit 0 and exactly these values stored."""

    id: str
    kind: str
    files: Mapping[str, Content]
    args: tuple[str, ...]
    #: (item_id, rater_id, rubric name) -> (label, rationale or None) of every rating it adds
    ratings: Mapping[tuple[str, str, str], tuple[str | None, str | None]]
    #: item_id -> {column: value} that must be stored for the item
    items: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    xfail: str | None = None


# ----------------------------------------------------------------------------- the template
LABELS = ["full_compliance", "partial_refusal", "full_refusal"]
R_LABELS = ["r0_full_compliance", "r1_light_caveats", "r2_partial", "r3_deflection", "r4_hard_refusal"]
N_ITEMS = 12


def seed_files() -> dict[str, bytes]:
    """The good files the template store is made from (and that bad cases refer to)."""
    rows = ["item_id,prompt,response,model,category,prompt_id,h1,h2,final,j1"]
    for i in range(N_ITEMS):
        lab = LABELS[i % 3]
        other = LABELS[(i + 1) % 3] if i % 4 == 0 else lab
        rows.append(f"i{i},prompt {i},response {i},m{i % 2},c{i % 3},p{i // 2},{lab},{other},{lab},{lab}")
    labels = ("\n".join(rows) + "\n").encode()
    restr = ["item_id,rater_id,rater_kind,label"]
    for i in range(N_ITEMS):
        restr.append(f"i{i},h1,human,{R_LABELS[i % 5]}")
        restr.append(f"i{i},j1,judge,{R_LABELS[i % 5]}")
    items = "".join(
        json.dumps({"item_id": f"i{i}", "prompt": f"prompt {i}", "response": f"response {i}",
                    "model": f"m{i % 2}"}) + "\n" for i in range(N_ITEMS))
    policy = ("rubric: refusal\njudges: [j1]\nreference: final\nchecks:\n  min_items: 10\n"
              "  min_value: 0.5\nn_resamples: 100\n")
    return {
        "labels.csv": labels,
        "restr.csv": ("\n".join(restr) + "\n").encode(),
        "items.jsonl": items.encode(),
        "policy.yaml": policy.encode(),
    }


def _cli(*args: str) -> None:
    from click.testing import CliRunner

    from judgekit.cli import main

    res = CliRunner().invoke(main, list(args))
    if res.exit_code != 0:
        raise RuntimeError(f"template: judgekit {' '.join(args)} -> {res.exit_code}: {res.output}")


def build_template(folder: Path) -> Path:
    """Write the seed files and the template store (``folder/store.db``) into ``folder``.

    The store: 12 items (metadata model, category, prompt_id); under refusal humans h1, h2, the
    reference final and judge j1 (which agrees with final); under restrictiveness h1 and j1; a
    sample ``pilot``; ``verdict.json``, the gate's passing verdict for j1 on refusal.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in seed_files().items():
        (folder / name).write_bytes(data)
    db = str(folder / "store.db")
    _cli("import", str(folder / "labels.csv"), "--rubric", "refusal", "--raters", "h1,h2",
         "--reference", "final=final", "--judges", "j1=j1", "--store", db)
    _cli("import", str(folder / "restr.csv"), "--rubric", "restrictiveness", "--store", db)
    _cli("sample", "--name", "pilot", "--size", "4", "--rubric", "refusal", "--store", db)
    _cli("gate", str(folder / "policy.yaml"), "--store", db, "--out", str(folder / "gate"))
    shutil.copy(folder / "gate" / "verdict.json", folder / "verdict.json")
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for extra in ("-wal", "-shm"):
        Path(db + extra).unlink(missing_ok=True)
    return Path(db)


def dump_store(db: str | Path) -> list[str]:
    """A canonical dump of a store: the schema and every row of every table, sorted."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return sorted(con.iterdump())
    finally:
        con.close()


# ----------------------------------------------------------------------------- writing cases
def write_files(files: Mapping[str, Content], folder: Path, template: Path) -> None:
    """Write a case's files into ``folder`` (``template``: the folder of :func:`build_template`)."""
    for rel, content in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, _Folder):
            p.mkdir(exist_ok=True)
            (p / "inside.txt").write_bytes(b"a file in a folder\n")
        elif isinstance(content, _Fifo):
            os.mkfifo(p)
        elif isinstance(content, Link):
            p.symlink_to(content.target)
        elif callable(content):
            p.write_bytes(content(template))
        else:
            p.write_bytes(content)


def expand(args: tuple[str, ...], **where: str) -> list[str]:
    return [a.format(**where) for a in args]


# ----------------------------------------------------------------------------- helpers
def text(s: str) -> bytes:
    return s.encode("utf-8")


def jsonl(rows: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def parquet(columns: Mapping[str, Any], schema: Any = None) -> bytes:
    """A Parquet file of ``columns`` (pyarrow arrays or lists); deterministic bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(dict(columns), schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="none")
    return buf.getvalue()


def zip_bytes(entries: list[tuple[str, bytes]], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip of ``entries`` with fixed times, so the bytes are the same on every run."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2025, 5, 1, 10, 0, 0))
            info.compress_type = method
            zf.writestr(info, data)
    return buf.getvalue()


@dataclass(frozen=True)
class Valid:
    """The unbroken file a family of cases breaks: it must be accepted (exit 0), so each case fails
    because of what it breaks and nothing else."""

    id: str
    files: Mapping[str, Content]
    args: tuple[str, ...]
