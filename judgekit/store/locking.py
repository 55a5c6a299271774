"""Waiting for another process's write lock on a store: progress on stderr, a limit, one sentence.

SQLite lets one connection write at a time. A judgekit command that needs to write while another
process holds the store's write lock (a long import, a judge run committing, ``sqlite3`` with a
transaction open) waits for it, up to ``JUDGEKIT_LOCK_TIMEOUT`` seconds (default
:data:`_DEFAULT_LOCK_TIMEOUT`, 10 minutes; ``0`` = do not wait). While it waits it says so on
stderr once (``waiting for another judgekit process on STORE …``) and then every
:data:`PROGRESS_EVERY` seconds; past the limit it stops with one sentence, and nothing of its own
work has been written (a transaction that cannot start writes nothing; one that cannot commit is
rolled back).

:class:`LockWaiter` retries a statement that SQLite answered with ``SQLITE_BUSY`` (or
``SQLITE_LOCKED``): the store runs every statement that takes the write lock through it —
``BEGIN IMMEDIATE`` (every transaction starts with the lock, so no transaction fails half-way
for want of it), ``COMMIT``, and on open the switch to WAL mode and the migrations. Each try
lets SQLite's own busy handler wait a short slice, so the lock is taken as soon as it is free.
Other statements wait silently up to the same limit (the connection's busy timeout); in WAL mode
reading never waits for a writer. A WAL checkpoint that finds the store busy is skipped by SQLite
(the automatic ones are passive), never an error.
"""

from __future__ import annotations

import math
import os
import secrets
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from judgekit.errors import JudgekitError

_ENV_LOCK_TIMEOUT = "JUDGEKIT_LOCK_TIMEOUT"
#: seconds a command waits for another process's write lock unless JUDGEKIT_LOCK_TIMEOUT says
_DEFAULT_LOCK_TIMEOUT = 600.0
#: seconds between two "still waiting" lines
PROGRESS_EVERY = 10.0
#: seconds SQLite's busy handler waits within one try
_SLICE = 0.25
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_T = TypeVar("_T")


def lock_timeout(env: Mapping[str, str] | None = None) -> float:
    """The wait limit in seconds: ``JUDGEKIT_LOCK_TIMEOUT`` (a number ≥ 0), else the default."""
    raw = (os.environ if env is None else env).get(_ENV_LOCK_TIMEOUT, "").strip()
    if not raw:
        return _DEFAULT_LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise JudgekitError(
            f"{_ENV_LOCK_TIMEOUT}={raw[:40]!r} is not a number of seconds; set it to how long to "
            f"wait for another process's lock on the store (e.g. 600), or unset it."
        )
    return value


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another connection holds a lock (busy or locked)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _BUSY_CODES
    # an error raised without SQLite's code (by a wrapper or a test): SQLite's own words
    text = str(exc).lower()
    return "database is locked" in text or "database table is locked" in text


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class LockWaiter:
    """Runs statements on ``conn`` that may find the store locked, waiting up to ``limit``
    seconds with progress lines (``notify``, default stderr), then one :class:`JudgekitError`.

    ``conn``'s busy timeout is set to ``limit`` for every other statement.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: str,
        limit: float,
        *,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.conn = conn
        self.path = path
        self.limit = limit
        self.notify = notify or _say
        self._default_ms = min(int(limit * 1000), 2**31 - 1)  # SQLite takes an int
        conn.execute(f"PRAGMA busy_timeout = {self._default_ms}")

    def run(self, action: Callable[[], _T]) -> _T:
        """``action()``, tried again while SQLite answers it busy, up to the limit."""
        start = time.monotonic()
        next_note: float | None = None
        try:
            while True:
                remaining = self.limit - (time.monotonic() - start)
                slice_s = max(0.0, min(_SLICE, remaining))
                self.conn.execute(f"PRAGMA busy_timeout = {int(slice_s * 1000)}")
                tried = time.monotonic()
                try:
                    return action()
                except sqlite3.OperationalError as exc:
                    if not is_busy(exc):
                        raise
                now = time.monotonic()
                waited = now - start
                if waited >= self.limit:
                    raise self._gave_up() from None
                if next_note is None:
                    self.notify(
                        f"waiting for another judgekit process on {self.path} to release the "
                        f"store's write lock (up to {self.limit:g} s; {_ENV_LOCK_TIMEOUT} sets how long) …"
                    )
                    next_note = waited + PROGRESS_EVERY
                elif waited >= next_note:
                    self.notify(
                        f"still waiting for another judgekit process on {self.path} "
                        f"({waited:.0f} s of {self.limit:g} s) …"
                    )
                    next_note += PROGRESS_EVERY
                if now - tried < slice_s / 2:
                    # SQLite answered at once, without its busy handler (a journal mode change):
                    # pause as the handler would have
                    time.sleep(min(slice_s, self.limit - waited))
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {self._default_ms}")

    def _gave_up(self) -> JudgekitError:
        waited = "without waiting" if self.limit == 0 else f"after waiting {self.limit:g} s"
        return JudgekitError(
            f"Store {self.path} is still locked by another judgekit process {waited} "
            f"({_ENV_LOCK_TIMEOUT}), so what this command was about to write was not written; let "
            f"that process finish (or stop it) and run the command again, or set "
            f"{_ENV_LOCK_TIMEOUT} to wait longer."
        )


# Who a run is: the owner id of a ``judgekit judge`` run's leases (:mod:`judgekit.store.calls`), and
# whether the run behind an owner id is known to be gone (it ran on this machine and its process no
# longer exists), so a crashed run's claims are free at once instead of when they expire.

#: the runs of this process whose claims are live (a claim by this pid and another token is a
#: leftover of an earlier process that had the same pid)
_LIVE_OWNERS: set[str] = set()


def _machine() -> str:
    """This machine as a lease owner names it: the host name, and the pid namespace and the
    kernel's boot id where they can be read (two containers with one host name have their own
    pids; two machines with one host name share the root namespace's number, never a boot id)."""
    host = socket.gethostname() or "localhost"
    try:
        ns = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip().replace("-", "")[:16]
    except OSError:
        return host
    return f"{host}/{ns.removeprefix('pid:').strip('[]')}/{boot}"


_MACHINE = _machine()


def new_owner(name: str = "") -> str:
    """A fresh owner id for one run's leases: ``host[/pid-namespace]:pid:random``, and
    ``~name`` (percent-quoted) for a run that names itself (``judge --worker NAME``)."""
    from urllib.parse import quote

    owner = f"{_MACHINE}:{os.getpid()}:{secrets.token_hex(6)}" + (f"~{quote(name, safe='')}" if name else "")
    _LIVE_OWNERS.add(owner)
    return owner


def owner_gone(owner: str) -> bool:
    """Whether the run that owns a lease is known to be gone: it ran on this machine and its
    process no longer exists (or it is an ended run of this process). A run elsewhere is never
    known to be gone: its leases last until they expire."""
    try:
        machine, pid_text, _ = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if machine != _MACHINE or os.name != "posix" or pid <= 0:
        return False
    if pid == os.getpid():
        return owner not in _LIVE_OWNERS
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:  # e.g. another user's process: alive
        return False
    return False


def describe_owner(owner: str) -> str:
    """An owner id for people: ``pid 4242 on host``, ``NAME (pid 4242 on host)`` when named."""
    try:
        machine, pid, _ = owner.rsplit(":", 2)
    except ValueError:
        return owner
    name = owner_name(owner)
    where = f"pid {pid} on {machine.split('/')[0]}"
    return f"{name} ({where})" if name else where


def owner_name(owner: str) -> str:
    """The name a run gave itself in its owner id (``judge --worker NAME``), "" when none."""
    from urllib.parse import unquote

    _, _, name = owner.rpartition(":")[2].partition("~")
    return unquote(name)


def forget_owner(owner: str) -> None:
    """Mark a run of this process ended without touching the store (its leases, if it could not
    release them, are then free for the next run of this process at once)."""
    _LIVE_OWNERS.discard(owner)
