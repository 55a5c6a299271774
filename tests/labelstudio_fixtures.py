"""A real Label Studio server for the tests: one per test run, on 127.0.0.1, fresh data dir.

Use with ``pytest_plugins = ["tests.labelstudio_fixtures"]``. The fixture installs Label Studio
into its own venv if needed (``scripts/labelstudio-server.sh install``, ~90 s the first time),
starts it on a free port with a known admin user and API token, waits for ``/health`` and stops
it by the PID it started when the session ends (also when tests fail). If the server cannot be
installed or started, every test that needs it FAILS with the reason: it never skips.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "labelstudio-server.sh"
ADMIN_EMAIL = "admin@example.com"


@dataclass(frozen=True)
class LabelStudioServer:
    url: str
    token: str
    pid: int
    data_dir: Path
    admin_email: str = ADMIN_EMAIL

    def env(self) -> dict[str, str]:
        """The variables a judgekit user would set."""
        return {"LABEL_STUDIO_URL": self.url, "LABEL_STUDIO_API_KEY": self.token}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for its new parent to reap counts as stopped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _tail(path: Path, n: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class ServerStartError(RuntimeError):
    """Label Studio could not be started; any process the attempt started has been stopped."""


def _pid_from(data: Path, stdout: str) -> int:
    values = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
    text = values.get("LABEL_STUDIO_PID") or ""
    if not text.strip().isdigit():
        pid_file = data / "server.pid"
        text = pid_file.read_text() if pid_file.exists() else ""
    return int(text.strip()) if text.strip().isdigit() else 0


def start_server(
    data: Path,
    token: str,
    *,
    script: Path = SCRIPT,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> LabelStudioServer:
    """Start a server with ``script start`` on a free port; stop it by its PID if anything fails.

    Every way out other than success (the script fails, hangs past ``timeout``, or the run is
    interrupted) stops the PID the script recorded before raising, so no server outlives a failed
    start.
    """
    cmd = ["bash", str(script), "start", "--port", str(_free_port()), "--data-dir", str(data),
           "--user", ADMIN_EMAIL, "--timeout", str(int(max(timeout - 30, 1)))]
    # Token and password through the environment: command lines are visible to every user (ps).
    env = {**(os.environ if env is None else env), "LABEL_STUDIO_API_KEY": token,
           "JUDGEKIT_LS_PASSWORD": secrets.token_hex(12)}
    try:
        started = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except BaseException as exc:  # timeout, Ctrl-C: the server may be up already
        pid = _pid_from(data, "")
        if pid:
            _stop(pid)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise ServerStartError(
                f"Label Studio did not start within {timeout:.0f} s (stopped pid {pid or 'none'}):\n"
                + "--- server log ---\n" + _tail(data / "server.log")
            ) from None
        raise
    pid = _pid_from(data, started.stdout)
    url = next((line.split("=", 1)[1] for line in started.stdout.splitlines()
                if line.startswith("LABEL_STUDIO_URL=")), None)
    if started.returncode != 0 or not url:
        if pid:
            _stop(pid)
        raise ServerStartError(
            f"Label Studio did not start (exit {started.returncode}):\n"
            + "\n".join(started.stderr.splitlines()[-15:])
            + "\n--- server log ---\n" + _tail(data / "server.log")
        )
    return LabelStudioServer(url=url, token=token, pid=pid, data_dir=data)


_STATE: dict[str, object] = {}


@pytest.fixture(scope="session")
def labelstudio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudioServer]:
    """Start one Label Studio for the whole run (first start ~25 s: migrations)."""
    if "error" in _STATE:  # do not retry a failed start for every test
        pytest.fail(str(_STATE["error"]), pytrace=False)
    env = {k: v for k, v in os.environ.items() if k not in ("LABEL_STUDIO_API_KEY", "LABEL_STUDIO_URL")}
    install = subprocess.run(
        ["bash", str(SCRIPT), "install"], capture_output=True, text=True, env=env, timeout=1200
    )
    if install.returncode != 0:
        _STATE["error"] = (
            "Label Studio could not be installed by scripts/labelstudio-server.sh install:\n"
            + "\n".join(install.stderr.splitlines()[-25:])
        )
        pytest.fail(str(_STATE["error"]), pytrace=False)
    data = tmp_path_factory.mktemp("labelstudio-data")
    try:
        server = start_server(data, secrets.token_hex(20), timeout=300, env=env)
    except ServerStartError as exc:
        _STATE["error"] = str(exc)
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        _stop(server.pid)


@pytest.fixture()
def ls_env(labelstudio_server: LabelStudioServer, monkeypatch: pytest.MonkeyPatch) -> LabelStudioServer:
    """The server's address and token in LABEL_STUDIO_URL / LABEL_STUDIO_API_KEY for one test."""
    for k, v in labelstudio_server.env().items():
        monkeypatch.setenv(k, v)
    return labelstudio_server


@pytest.fixture(scope="session")
def ls_sdk(labelstudio_server: LabelStudioServer) -> Any:
    """The official label-studio-sdk client, acting as the annotators' side in the tests."""
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=labelstudio_server.url, api_key=labelstudio_server.token)
