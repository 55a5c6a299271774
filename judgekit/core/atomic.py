"""Atomic file writes: a temp file beside the target, renamed onto it, so a failed write leaves
no half file — and the new file gets the mode any new file gets (the umask applies)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from judgekit.core.oserrors import os_error
from judgekit.core.paths import regular_output
from judgekit.errors import JudgekitError


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write a text file atomically; a file-system error is one sentence naming the file (a
    :class:`~judgekit.errors.JudgekitError`), and no temp file is left behind."""
    p = regular_output(path)  # never renamed over a FIFO or a device
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_error(exc, "cannot create this folder") from None
    fd, tmp = new_temp_file(p)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise os_error(exc, "cannot write it") from None
    return p


def ensure_folder(path: str | Path) -> Path:
    """Create folder ``path`` (and its parents) and check a file can be written in it, before a
    command does work whose output must land there; a failure is one sentence naming the folder."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_error(exc, "cannot create this folder") from None
    fd, tmp = new_temp_file(p / "probe")
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    return p


def new_temp_file(target: str | Path) -> tuple[int, str]:
    """A new, exclusive temp file beside ``target`` to write and then ``os.replace`` onto it:
    ``(fd, path)``.

    Unlike :func:`tempfile.mkstemp` (always 0600, which the rename would keep), it gets the mode
    any new file gets: 0666 less the umask (0644 under the usual 022), or the mode of ``target``
    when that file exists, so rewriting a report neither hides it from its readers nor widens
    what its owner narrowed. A ``target`` that is a special file (FIFO, device, socket, or a
    symbolic link to one) is refused before the temp file is made (:mod:`judgekit.core.paths`).
    """
    p = regular_output(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = p.parent / f".{p.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:  # no such folder, a name too long, no permission
            raise os_error(_as_target(exc, p), "cannot write it") from None
        try:
            st = os.stat(p)
        except OSError:  # no such file yet: the umask has applied
            return fd, str(tmp)
        if stat.S_ISREG(st.st_mode) and hasattr(os, "fchmod"):
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
        return fd, str(tmp)
    raise FileExistsError(f"{p.parent}: cannot create a temp file for {p.name}")


def create_with_umask(path: str) -> None:
    """Create the store file ``path`` (if it does not exist) with the mode any new file gets
    (0666 less the umask), as SQLite does not: it creates a database 0644 whatever the umask, so
    under umask 002 a store shared by a group could not be written by the group. Its ``-wal``
    and ``-shm`` files get the database file's mode from SQLite. An empty file is an empty
    SQLite database; a store that exists keeps the mode its owner gave it. A store path that is a
    special file (FIFO, device, socket) is refused before SQLite opens it, and so is a special file
    at the ``-wal``, ``-shm`` or ``-journal`` path SQLite writes beside it."""
    if not path:
        return  # SQLite's private temporary database
    regular_output(path, "Store")  # SQLite would open a device or FIFO and put a -journal beside it
    for side in ("-wal", "-shm", "-journal"):  # the files SQLite writes beside the store
        regular_output(path + side, "Store file")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    except OSError as exc:
        raise JudgekitError(
            f"Store {path} cannot be created ({exc.strerror or exc}); pass another --store path."
        ) from None
    os.close(fd)


def _as_target(exc: OSError, target: Path) -> OSError:
    """``exc`` naming the file the user asked for, not the hidden temp file beside it."""
    return OSError(exc.errno, exc.strerror, str(target))
