"""The paths judgekit reads and writes are regular files (or new paths), never special files.

A FIFO (named pipe), a character or block device or a socket given as an input would block a read
forever (a FIFO with no writer) or never end (``/dev/zero``, ``/dev/urandom``); given as an output,
the atomic write's rename would replace the device itself (as root, ``/dev/full`` or ``/dev/null``)
and SQLite would create a ``-journal`` file beside it. Every reader and writer therefore checks its
path here first, and a special file is refused with one sentence:

* :func:`regular_input` / :func:`regular_output`: a path that exists must be a regular file (or a
  folder, which the caller refuses in its own words); a symbolic link is judged by what it points
  to. A path that does not exist passes (the caller says "no such file" or creates it).
* :func:`open_input`: opens a file to read with ``O_NONBLOCK`` and checks the open file itself
  (``fstat``), so a FIFO swapped in after the check cannot block the open and is refused too.
* :func:`read_bounded`: the bytes of a file read whole (a verdict, a config file), at most
  ``limit`` bytes, or one sentence saying it is larger.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TextIO

from judgekit.errors import JudgekitError, excerpt

#: the largest verdict.json judgekit reads whole (a gate's verdict is a few KB to a few MB: its
#: per-item hashes grow with the items it covers)
MAX_VERDICT_BYTES = 64_000_000

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _special_kind(mode: int) -> str | None:
    """What a file of mode ``mode`` is when it is neither a regular file nor a folder (``"a FIFO
    (named pipe)"``, ``"a character device"``, ...), else None."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def _special_message(path: str | Path, kind: str, what: str = "", *, output: bool = False) -> str:
    """The sentence refusing ``path``, which is ``kind`` (``what``: "Verdict", "Store", ...)."""
    shown = excerpt(str(path), 200, quote=False)
    head = f"{what} {shown}" if what else shown
    if output:
        return (f"{head} is {kind}, not a regular file, and judgekit writes only regular files (it "
                "never writes through, over or beside a special file); give a new path or a "
                "regular file.")
    return (f"{head} is {kind}, not a regular file, and judgekit reads only regular files (a pipe "
            "or device could block or never end); save the data to a file and give that file.")


def _mode(path: str | Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):  # no such file, a name too long, a NUL byte: the caller says
        return None


def regular_input(path: str | Path, what: str = "") -> Path:
    """``path`` as a :class:`Path`; a special file there is refused (one sentence, ``what``
    naming the kind of input: "Verdict", "Rubric file"). A missing path or a folder passes."""
    mode = _mode(path)
    kind = None if mode is None else _special_kind(mode)
    if kind is not None:
        raise JudgekitError(_special_message(path, kind, what))
    return Path(path)


def regular_output(path: str | Path, what: str = "") -> Path:
    """``path`` as a :class:`Path`, checked before anything is written to it, renamed onto it or
    created beside it: a special file there (or a symbolic link to one) is refused."""
    mode = _mode(path)
    kind = None if mode is None else _special_kind(mode)
    if kind is not None:
        raise JudgekitError(_special_message(path, kind, what, output=True))
    return Path(path)


def open_input(path: str | Path, what: str = "") -> BinaryIO:
    """Open ``path`` to read (binary): a special file is refused without blocking (``O_NONBLOCK``
    at open, then ``fstat`` of the open file). A folder raises :class:`IsADirectoryError` and
    other failures their ``OSError``, for the caller's own sentence."""
    regular_input(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        kind = _special_kind(st.st_mode)
        if kind is not None:
            raise JudgekitError(_special_message(path, kind, what))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def open_input_text(
    path: str | Path, what: str = "", *, encoding: str = "utf-8", newline: str | None = None
) -> TextIO:
    """:func:`open_input` as text (``encoding``, ``newline`` as :func:`open` takes them)."""
    return io.TextIOWrapper(open_input(path, what), encoding=encoding, newline=newline)


def read_limited(
    opener: Callable[[], BinaryIO], limit: int, *, unreadable: Callable[[OSError], str], too_large: str
) -> bytes:
    """The bytes of the file ``opener`` opens, refused in one sentence when it cannot be read
    (``unreadable(error)``) or holds more than ``limit`` bytes (``too_large``)."""
    try:
        with opener() as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise JudgekitError(unreadable(exc)) from None
    if len(raw) > limit:
        raise JudgekitError(too_large)
    return raw


def read_bounded(path: str | Path, limit: int, what: str = "", *, fix: str = "") -> bytes:
    """The bytes of ``path`` (through :func:`open_input`), refused with one sentence when it
    holds more than ``limit`` bytes; ``fix`` ends that sentence (default: check the file)."""
    with open_input(path, what) as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        shown = excerpt(str(path), 200, quote=False)
        head = f"{what} {shown}" if what else shown
        size = f"{limit / 1_000_000:g} MB" if limit >= 1_000_000 else f"{limit:,} bytes"
        raise JudgekitError(f"{head} is larger than {size}, the most judgekit reads for it; "
                            f"{fix or 'check that it is the right file'}.")
    return raw
