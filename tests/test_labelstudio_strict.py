"""The Label Studio bridge with an untrusted server and untrusted export files (issue 9, items 5, 9).

* Item 5: a server (or a proxy) that echoes the request's ``Authorization`` header, or any other
  secret, in an error body must not get it printed: the configured token, the address and every
  provider key in the environment are redacted from every message, for push and pull, on a 500,
  a 404 and a 401, on the first call and on a later one.
* Item 9: export files (and API answers) of the wrong shape are one sentence naming the file, the
  task or row and the key, exit 2, no traceback, and the store unchanged.

The server is a tiny HTTP server on 127.0.0.1 in this process, stopped by each test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

import pytest
from click.testing import CliRunner

from judgekit.annotation.labelstudio import LabelStudioClient, pull, rubric_marker
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric import load_rubric
from judgekit.store import Store

REFUSAL = load_rubric("refusal")
TOKEN = "PLANTED-ls-token-0123456789abcdef"
OPENAI = "sk-PLANTED-openai-0123456789"
ANTHROPIC = "sk-ant-PLANTED-anthropic-0123456789"
CUSTOM = "PLANTED-custom-provider-0123456789"
PLANTED = (TOKEN, OPENAI, ANTHROPIC, CUSTOM)

Route = tuple[int, Any]  # status, JSON body (or a function of the request giving one)


class FakeLabelStudio:
    """A loopback HTTP server answering ``(method, path)`` from a table; anything else is a 404
    whose body echoes the request's Authorization header."""

    def __init__(self, routes: dict[tuple[str, str], Route]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = urlparse(self.path).path
                auth = self.headers.get("Authorization", "")
                fake.seen.append((self.command, path, auth))
                status, body = fake.routes.get(
                    (self.command, path), (404, {"detail": f"Not found; you sent {auth}"})
                )
                if callable(body):
                    body = body(auth)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture()
def serve() -> Iterator[Callable[[dict[tuple[str, str], Route]], FakeLabelStudio]]:
    started: list[FakeLabelStudio] = []

    def start(routes: dict[tuple[str, str], Route]) -> FakeLabelStudio:
        fake = FakeLabelStudio(routes)
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()


@pytest.fixture()
def planted_env(monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC)
    monkeypatch.setenv("MYPROVIDER_API_KEY", CUSTOM)  # a panel's api_key_env


def _echo(auth: str) -> dict[str, Any]:
    """An error body that echoes everything: the header, the keys, the address."""
    return {"detail": f"Invalid header {auth!r}; env had {OPENAI}, {ANTHROPIC}, {CUSTOM}"}


WHOAMI = ("GET", "/api/current-user/whoami")
PROJECTS = ("GET", "/api/projects/")
TASKS = ("GET", "/api/tasks/")
USERS = ("GET", "/api/users/")
CREATE = ("POST", "/api/projects/")
ME: Route = (200, {"id": 1, "email": "admin@example.org"})
PROJECT = {"id": 7, "title": "pilot", "description": rubric_marker([REFUSAL])}


def _pages(*projects: dict[str, Any]) -> Route:
    return 200, {"count": len(projects), "next": None, "previous": None, "results": list(projects)}


def _run(args: list[str], url: str, tmp_path, **extra_env: str):
    items = tmp_path / "items.csv"
    items.write_text("item_id,prompt,response\na,p,r\n", encoding="utf-8")
    common = {
        "pull": ["labelstudio", "pull", "--project", "pilot"],
        "push": ["labelstudio", "push", "--rubric", "refusal", "--items", str(items), "--project", "pilot"],
    }
    cmd = common[args[0]] + args[1:] + ["--store", str(tmp_path / "j.db")]
    return CliRunner().invoke(main, cmd, env={"LABEL_STUDIO_URL": url, **extra_env})


def _assert_clean(result, url: str) -> None:
    text = result.output
    assert result.exit_code == 2, text
    assert "Traceback" not in text
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert text.startswith("error: ") and len(text.strip().splitlines()) == 1, text
    for secret in PLANTED:
        assert secret not in text, text
        assert secret[:12] not in text, text  # not even its start
    assert url not in text


# ------------------------------------------------------------------ item 5: secrets
@pytest.mark.parametrize("command", ["pull", "push"])
@pytest.mark.parametrize("status", [500, 404, 401, 403])
def test_error_body_echoing_the_token_is_redacted_on_the_first_call(
    serve, planted_env, tmp_path, command, status
):
    fake = serve({WHOAMI: (status, _echo)})
    result = _run([command], fake.url, tmp_path)
    _assert_clean(result, fake.url)
    assert fake.seen and fake.seen[0][2] == f"Token {TOKEN}"  # the server did get the token
    if status in (401, 403):
        assert f"Label Studio refused the API token ({status})" in result.output
    else:
        assert f"Label Studio answered {status} to GET /api/current-user/whoami: " in result.output
        assert "[redacted]" in result.output  # the reason is still quoted, without the secret
    with Store(tmp_path / "j.db") as s:
        assert s.ratings().empty and s.items().empty


@pytest.mark.parametrize("status", [500, 404])
def test_error_body_echoing_the_token_is_redacted_on_a_later_call(serve, planted_env, tmp_path, status):
    # pull: the project is found, then the task list fails
    fake = serve({WHOAMI: ME, PROJECTS: _pages(PROJECT), TASKS: (status, _echo)})
    result = _run(["pull"], fake.url, tmp_path)
    _assert_clean(result, fake.url)
    assert f"Label Studio answered {status} to GET /api/tasks/: " in result.output
    # push: no project yet, creating it fails
    fake = serve({WHOAMI: ME, PROJECTS: _pages(), CREATE: (status, _echo)})
    result = _run(["push"], fake.url, tmp_path)
    _assert_clean(result, fake.url)
    assert f"Label Studio answered {status} to POST /api/projects/: " in result.output


def test_secret_at_the_cut_leaves_no_prefix_behind(serve, planted_env, tmp_path):
    # the reason is cut to an excerpt (300 characters): a token straddling the cut must not keep
    # its first half ("Token " + 14 characters of it would be left)
    fake = serve({WHOAMI: (500, lambda auth: {"detail": "x" * 280 + auth})})
    result = _run(["pull"], fake.url, tmp_path)
    _assert_clean(result, fake.url)
    assert "x" * 200 in result.output  # the excerpt is there


def test_token_echoed_without_its_scheme_and_escaped_is_redacted(serve, monkeypatch, tmp_path):
    # a token with a backslash and a quote, echoed bare inside a body without 'detail' (quoted
    # back as Python text, the backslash doubled)
    token = 'PLANTED\\odd"token-0123456789'
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    fake = serve({WHOAMI: (500, lambda auth: {"error": auth.split(" ", 1)[1]})})
    result = _run(["pull"], fake.url, tmp_path)
    assert result.exit_code == 2, result.output
    assert "PLANTED" not in result.output and "odd" not in result.output, result.output
    assert "Label Studio answered 500 to GET /api/current-user/whoami" in result.output


def test_token_given_with_the_flag_and_the_address_are_redacted(serve, monkeypatch, tmp_path):
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    fake = serve({})
    fake.routes[WHOAMI] = (500, lambda auth: {"detail": f"{auth} at {fake.url}/api"})
    result = _run(["pull", "--token", TOKEN], fake.url, tmp_path)
    _assert_clean(result, fake.url)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK's own parse_obj call
def test_bearer_access_token_the_sdk_obtained_is_redacted(serve, monkeypatch, tmp_path):
    # a personal access token (a JWT refresh token) is exchanged for access tokens the user never
    # configured: an echo of "Bearer <access>" must not print one either
    import jwt  # a dependency of label-studio-sdk

    exp = int(time.time()) + 3600
    key = "k" * 32
    refresh = jwt.encode({"token_type": "refresh", "exp": exp, "user_id": 1}, key, algorithm="HS256")
    access = jwt.encode({"token_type": "access", "exp": exp, "user_id": 1}, key, algorithm="HS256")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", refresh)
    fake = serve({("POST", "/api/token/refresh/"): (200, {"access": access}), WHOAMI: (500, _echo)})
    result = _run(["pull"], fake.url, tmp_path)
    assert result.exit_code == 2, result.output
    assert any(auth == f"Bearer {access}" for _, _, auth in fake.seen)
    for secret in (refresh, access, access[:20], refresh[:20]):
        assert secret not in result.output, result.output
    assert "Label Studio answered 500 to GET /api/current-user/whoami" in result.output


def test_library_pull_redacts_too(serve, planted_env, tmp_path):
    fake = serve({WHOAMI: ME, PROJECTS: _pages(PROJECT), TASKS: (500, _echo)})
    with (Store(tmp_path / "j.db") as store, LabelStudioClient(fake.url) as client,
          pytest.raises(JudgekitError) as info):
        pull(store, "pilot", client=client)
    message = str(info.value)
    assert message.startswith("Label Studio answered 500 to GET /api/tasks/")
    assert not any(s in message for s in PLANTED)
