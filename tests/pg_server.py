"""A throwaway PostgreSQL server for the tests and benches: ``initdb`` into a temporary folder,
``pg_ctl start`` on loopback at a free port, stopped by its PID.

``initdb`` refuses to run as root: as root the server runs as the ``postgres`` user
(``runuser -u postgres``), its folder handed to that user. The binaries are found on PATH or
under Debian's ``/usr/lib/postgresql/*/bin``.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path


def find_bin_dir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``, or ``None`` when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(cand, "initdb").exists() and Path(cand, "pg_ctl").exists():
            return Path(cand)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running server: ``url(db)`` names a database on it."""

    root: Path
    port: int
    bin_dir: Path
    as_user: str | None

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.as_user:
            cmd = ["runuser", "-u", self.as_user, "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://judgekit@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def pid(self) -> int | None:
        pidfile = self.root / "data" / "postmaster.pid"
        try:
            return int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        pid = self.pid()
        if pid:
            try:
                os.kill(pid, signal.SIGINT)  # fast shutdown of that very server
                for _ in range(200):
                    os.kill(pid, 0)
                    time.sleep(0.05)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)


def start(bin_dir: Path) -> PgServer:
    """Start a fresh server (data in a temporary folder, loopback, a free port)."""
    root = Path(tempfile.mkdtemp(prefix="judgekit-pg-"))
    as_user = "postgres" if os.geteuid() == 0 else None
    if as_user:
        shutil.chown(root, user=as_user)
    server = PgServer(root, _free_port(), bin_dir, as_user)
    try:
        server._run(str(bin_dir / "initdb"), "-D", str(root / "data"), "-U", "judgekit",
                    "--auth=trust", "--no-locale", "-E", "UTF8")
        opts = (f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60")
        server._run(str(bin_dir / "pg_ctl"), "-D", str(root / "data"), "-o", opts, "-l",
                    str(root / "log"), "-w", "start")
    except BaseException:  # a server half started (pg_ctl timed out) is stopped by its PID too
        server.stop()
        raise
    return server
