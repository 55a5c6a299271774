"""The standalone fake provider serves a judge from the command line:
``python -m judgekit.testing.fakeserver --port N --script module:function``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import one_sentence_error

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "judgekit.testing.fakeserver", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ask(url: str, response: str) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": f"<response>{response}</response>"}]}
    req = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer x"})
    with urllib.request.urlopen(req, timeout=10) as r:  # loopback only
        return json.loads(r.read())["choices"][0]["message"]["content"]


def test_port_and_script_from_the_command_line(tmp_path):
    (tmp_path / "myjudge.py").write_text(
        "from judgekit.testing.script import label_reply\n"
        "def answer(req):\n"
        "    return label_reply('full_refusal' if 'cannot' in req.user else 'full_compliance')\n",
        encoding="utf-8")
    port = _free_port()
    proc = _start(["--port", str(port), "--script", "myjudge:answer"], tmp_path)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == f"READY http://127.0.0.1:{port}", (line, proc.stderr.read() if proc.stderr else "")
        assert "full_refusal" in _ask(f"http://127.0.0.1:{port}/v1", "I cannot help with that.")
        assert "full_compliance" in _ask(f"http://127.0.0.1:{port}/v1", "Sure, here it is.")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_bad_script_or_busy_port_is_one_sentence(tmp_path):
    for args, words in ((["--script", "nosuchmodule_xyz:answer"], "cannot import module 'nosuchmodule_xyz'"),
                        (["--script", "json:nosuchfunction"], "has no function 'nosuchfunction'"),
                        (["--script", "justaname"], "give it as MODULE:FUNCTION")):
        proc = _start(args, tmp_path)
        out, err = proc.communicate(timeout=30)
        one_sentence_error((proc.returncode, out + err), words)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _start(["--port", str(port)], tmp_path)
        out, err = proc.communicate(timeout=30)
        one_sentence_error((proc.returncode, out + err), f"cannot listen on 127.0.0.1:{port}")


def _refused(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run the server with ``args``; it must exit before serving (a hang fails on the timeout)."""
    proc = _start(args, cwd)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"{args} was served instead of refused: {out}{err}") from None
    return proc.returncode, out + err


@pytest.mark.parametrize(("spec", "words"), [
    (".evil:answer", "'.evil'"),
    ("../in/evil:answer", "'../in/evil'"),
    ("os:getcwd", "'getcwd'"),
    ("evil:__class__", "'__class__'"),
    ("evil.py:answer", "'evil.py'"),
])
def test_a_script_that_is_not_a_module_function_is_refused_before_serving(tmp_path: Path, spec: str,
                                                                          words: str) -> None:
    ran = tmp_path / "ran.txt"
    body = f"open({str(ran)!r}, 'w').write('ran')\ndef answer(req):\n    return 'x'\n"
    (tmp_path / "evil.py").write_text(body)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "evil.py").write_text(body)
    work = tmp_path / "work"
    work.mkdir()
    (work / "evil.py").write_text(body)
    one_sentence_error(_refused(["--script", spec], work), "--script", words)
    if spec in ("evil.py:answer", ".evil:answer", "../in/evil:answer"):
        assert not ran.exists(), f"{spec}: the file ran before it was refused"


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_outside_0_to_65535_is_refused(tmp_path: Path, port: str) -> None:
    one_sentence_error(_refused(["--port", port], tmp_path), "--port", port)
