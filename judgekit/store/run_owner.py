"""Who a run is: the owner id of a ``judgekit judge`` run's leases (:mod:`judgekit.store.calls`), and
whether the run behind an owner id is known to be gone (it ran on this machine and its process no
longer exists), so a crashed run's claims are free at once instead of when they expire."""

from __future__ import annotations

import os
import secrets
import socket

#: the runs of this process whose claims are live (a claim by this pid and another token is a
#: leftover of an earlier process that had the same pid)
_LIVE_OWNERS: set[str] = set()


def _machine() -> str:
    """This machine as a lease owner names it: the host name, and the pid namespace where one
    can be read (two containers with one host name have their own pids)."""
    host = socket.gethostname() or "localhost"
    try:
        ns = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return host
    return f"{host}/{ns.removeprefix('pid:').strip('[]')}"


_MACHINE = _machine()


def new_owner() -> str:
    """A fresh owner id for one run's leases: ``host[/pid-namespace]:pid:random``."""
    owner = f"{_MACHINE}:{os.getpid()}:{secrets.token_hex(6)}"
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
    """An owner id for people: ``pid 4242 on host``."""
    try:
        machine, pid, _ = owner.rsplit(":", 2)
    except ValueError:
        return owner
    return f"pid {pid} on {machine.split('/')[0]}"


def forget_owner(owner: str) -> None:
    """Mark a run of this process ended without touching the store (its leases, if it could not
    release them, are then free for the next run of this process at once)."""
    _LIVE_OWNERS.discard(owner)
