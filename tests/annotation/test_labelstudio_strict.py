"""The Label Studio bridge with an untrusted server and untrusted export files.

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
from conftest import one_sentence_error
from conftest import store_dump as _dump

from judgekit.annotation.labelstudio import LabelStudioClient, pull, rubric_marker
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

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
    text = one_sentence_error(result)
    for secret in PLANTED:
        assert secret not in text, text
        assert secret[:12] not in text, text  # not even its start
    assert url not in text


# ------------------------------------------------------------------ secrets
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
    line = one_sentence_error(_run(["pull"], fake.url, tmp_path),
                              "Label Studio answered 500 to GET /api/current-user/whoami")
    assert "PLANTED" not in line and "odd" not in line, line


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
    one_sentence_error(result, "Label Studio answered 500 to GET /api/current-user/whoami")
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


# -------------------------------------------------------- shapes of exports
def _ann(aid: int, user: Any, choice: str, **extra: Any) -> dict[str, Any]:
    return {"id": aid, "completed_by": user, "was_cancelled": False,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "result": [{"from_name": "refusal", "to_name": "response", "type": "choices",
                        "value": {"choices": [choice]}}], **extra}


def _task(tid: int, item_id: str, anns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": tid, "data": {"item_id": item_id, "messages": [{"role": "user", "content": f"q{tid}"}],
                                "response": f"r{tid}", "severity": tid}, "annotations": anns}


def _export() -> list[dict[str, Any]]:
    return [
        _task(1, "i1", [_ann(1, 2, "full_refusal"), _ann(2, 3, "partial_refusal")]),
        _task(2, "i2", [_ann(3, 2, "full_compliance")]),
    ]


AMAP = "2=alice@example.org,3=bob@example.org"


def _pull_file(path, db, *extra: str):
    return CliRunner().invoke(main, ["labelstudio", "pull", "--from-export", str(path), "--rubric",
                                     "refusal", "--annotator-map", AMAP, "--store", str(db), *extra])


@pytest.fixture()
def pulled(tmp_path):
    """A store holding the good export's ratings, and a function pulling a file into it that
    checks the failure: exit 2, one sentence naming the file, no traceback, store unchanged."""
    db = tmp_path / "j.db"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_export()), encoding="utf-8")
    first = _pull_file(good, db)
    assert first.exit_code == 0, first.output
    before = _dump(db)

    def refused(path, *fragments: str) -> str:
        text = one_sentence_error(_pull_file(path, db), path.name, *fragments)
        assert _dump(db) == before  # nothing written, nothing half-written
        return text

    return refused


def _mutated(tmp_path, mutate: Callable[[list[dict[str, Any]]], Any], name: str = "bad.json"):
    export = _export()
    # a change the bad file also carries, so a partial write would show
    export[0]["annotations"][0]["result"][0]["value"]["choices"] = ["full_compliance"]
    export[0]["annotations"][0]["updated_at"] = "2026-02-01T00:00:00Z"
    mutate(export)
    path = tmp_path / name
    path.write_text(json.dumps(export), encoding="utf-8")
    return path


def _set(path: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    """A mutation setting ``path`` (``1.annotations.0.completed_by``) in the export (a list index
    one past the end appends)."""
    def mutate(export: list[dict[str, Any]]) -> None:
        *parents, last = path.split(".")
        node: Any = export
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list) and int(last) == len(node):
            node.append(value)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return mutate


A = "1.annotations.0"  # task 2's annotation (id 3)
FULL_CASES = [
    # the shapes the adversarial pass found
    ("completed_by a list", _set(f"{A}.completed_by", [2]), ["task 2", "annotation 3", "'completed_by' is a list"]),
    ("annotator object, nested email", _set(f"{A}.completed_by", {"id": 2, "email": {"x": 1}}),
     ["task 2", "annotation 3", "'completed_by.email' is an object"]),
    ("annotator object without a name or id", _set(f"{A}.completed_by", {"first_name": "Al"}),
     ["task 2", "annotation 3", "'completed_by' is a user object without"]),
    ("annotator object with a list id", _set(f"{A}.completed_by", {"id": [2]}),
     ["task 2", "annotation 3", "'completed_by' is a user object without"]),
    ("annotator object, email with a control character",
     _set(f"{A}.completed_by", {"id": 2, "email": "al\x1b]0;x\x07ice@example.org"}),
     ["task 2", "annotation 3", "'completed_by.email'", "control character"]),
    ("annotator email with a control character", _set(f"{A}.completed_by", "bob\x1b[2J@example.org"),
     ["annotation 3", "'completed_by'", "control character"]),
    ("annotator a decimal number", _set(f"{A}.completed_by", 2.5), ["annotation 3", "'completed_by' is the number 2.5"]),
    ("annotator true", _set(f"{A}.completed_by", True), ["annotation 3", "'completed_by' is true"]),
    ("annotator missing", _set(f"{A}.completed_by", None), ["annotation 3", "no 'completed_by'"]),
    ("messages as plain strings", _set("1.data.messages", ["hi", "there"]),
     ["task 2", "'data.messages[0]' is the text 'hi'"]),
    ("one message as a plain string", _set("1.data.messages", ["hi"]), ["task 2", "'data.messages[0]'"]),
    ("messages as text that is not JSON", _set("1.data.messages", "hello"), ["task 2", "'data.messages' is text"]),
    ("messages as an object", _set("1.data.messages", {"role": "user"}), ["task 2", "'data.messages' is an object"]),
    ("message content an object", _set("1.data.messages", [{"role": "user", "content": {"a": 1}}]),
     ["task 2", "'data.messages[0].content' is an object"]),
    ("message role a number", _set("1.data.messages", [{"role": 1, "content": "q"}]),
     ["task 2", "'data.messages[0].role' is the number 1"]),
    # a turn needs a role, as in every other import (never guessed)
    ("message without a role", _set("1.data.messages", [{"content": "q"}]),
     ["task 2", "'data.messages[0]' has no role"]),
    ("response an object", _set("1.data.response", {"a": 1}), ["task 2", "'data.response' is an object"]),
    ("prompt a list", _set("1.data.prompt", ["p"]), ["task 2", "'data.prompt' is a list"]),
    ("item_id a decimal number", _set("1.data.item_id", 2.0), ["task 2", "'data.item_id' is the number 2.0"]),
    ("item_id true", _set("1.data.item_id", True), ["task 2", "'data.item_id' is true"]),
    ("item_id an object", _set("1.data.item_id", {"a": 1}), ["task 2", "'data.item_id' is an object"]),
    ("item_id with a trailing space", _set("1.data.item_id", "i2 "), ["task 2", "'data.item_id' 'i2 ' has white space"]),
    ("item_id with a control character", _set("1.data.item_id", "i\x1b2"), ["task 2", "control character"]),
    ("result an object", _set(f"{A}.result", {"a": 1}), ["annotation 3", "'result' is not a list"]),
    ("result a text", _set(f"{A}.result", "full_refusal"), ["annotation 3", "'result' is not a list"]),
    ("value a list", _set(f"{A}.result.0.value", ["full_refusal"]), ["annotation 3", "'value' is a list"]),
    ("choices a text", _set(f"{A}.result.0.value.choices", "full_refusal"), ["annotation 3", "'choices' is not a list"]),
    ("choices numbers", _set(f"{A}.result.0.value.choices", [1]), ["annotation 3", "'choices' holds the number 1"]),
    ("choices objects", _set(f"{A}.result.0.value.choices", [{"a": 1}]), ["annotation 3", "'choices' holds an object"]),
    ("choices nested lists", _set(f"{A}.result.0.value.choices", [["full_refusal"]]),
     ["annotation 3", "'choices' holds a list"]),
    ("from_name missing", _set(f"{A}.result.0.from_name", None), ["annotation 3", "'from_name' is null"]),
    ("from_name a list", _set(f"{A}.result.0.from_name", ["refusal"]), ["annotation 3", "'from_name' is a list"]),
    ("two answers for one control", _set(f"{A}.result.1", {"from_name": "refusal", "value": {"choices": ["full_refusal"]}}),
     ["annotation 3", "two results answer refusal"]),
    ("comment text an object", _set(f"{A}.result.1", {"from_name": "comment", "value": {"text": {"a": 1}}}),
     ["annotation 3", "'text' is an object"]),
    ("was_cancelled as text", _set(f"{A}.was_cancelled", "false"), ["annotation 3", "'was_cancelled' is the text 'false'"]),
    ("updated_at not a time", _set(f"{A}.updated_at", "yesterday"), ["annotation 3", "'updated_at' 'yesterday' is not"]),
    ("updated_at without a zone", _set(f"{A}.updated_at", "2026-01-01T00:00:00"), ["annotation 3", "has no time zone"]),
    ("created_at an object", _set(f"{A}.created_at", {"t": 1}), ["annotation 3", "'created_at' is an object"]),
    ("annotation id an object", _set(f"{A}.id", {"a": 1}), ["task 2", "'id' is an object"]),
    ("task id a list", _set("1.id", [2]), ["task number 2 in the list", "'id' is a list"]),
    ("annotations an object", _set("1.annotations", {"a": 1}), ["task 2", "'annotations' is not a list"]),
    ("annotations empty text", _set("1.annotations", ""), ["task 2", "'annotations' is not a list"]),
    ("data a list", _set("1.data", [1]), ["task 2", "'data' is not an object"]),
    ("data null", _set("1.data", None), ["task 2 has no item_id"]),
    ("task a text", _set("1", "task"), ["entry 2 of the list is the text 'task'"]),
]


@pytest.mark.parametrize(("mutate", "fragments"), [c[1:] for c in FULL_CASES], ids=[c[0] for c in FULL_CASES])
def test_full_export_of_the_wrong_shape_is_one_sentence(tmp_path, pulled, mutate, fragments):
    pulled(_mutated(tmp_path, mutate), *fragments)


def test_annotator_map_with_a_control_character_is_one_sentence(tmp_path, pulled):
    path = tmp_path / "good.json"  # written by the fixture
    db = tmp_path / "k.db"
    result = CliRunner().invoke(main, ["labelstudio", "pull", "--from-export", str(path), "--rubric",
                                       "refusal", "--annotator-map", "2=alice\x1b]0;pwned\x07,3=bob",
                                       "--store", str(db)])
    line = one_sentence_error(result)
    assert line.startswith("error: --annotator-map entry '2=alice\\x1b]0;pwned\\x07': the rater id"), line
    assert "control character" in result.output and "\x1b" not in result.output


def test_new_item_without_a_response_is_refused(tmp_path, pulled):
    # an item the store does not have must come with the text people rated
    def add_task(export):
        export.append(_task(3, "i3", [_ann(4, 2, "full_refusal")]))
        del export[2]["data"]["response"]

    pulled(_mutated(tmp_path, add_task), "task 3 (item 'i3')", "has no 'response'")


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('[{"id": 1, "id": 2, "data": {"item_id": "a"}, "annotations": []}]', ["the key 'id' appears twice"]),
        ('[{"id": 1, "data": {"item_id": NaN}, "annotations": []}]', ["NaN is not a JSON value"]),
        ("[" * 100_000 + "]" * 100_000, ["nested too deeply"]),
        ("\xff\xfe", ["not UTF-8"]),
        ('{"tasks": []}', ["expected a JSON list of tasks"]),
    ],
    ids=["duplicate key", "NaN", "100k deep", "not UTF-8", "not a list"],
)
def test_export_file_that_is_not_an_export_is_one_sentence(tmp_path, pulled, text, fragments):
    path = tmp_path / "bad.json"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    pulled(path, *fragments)


def _min_row(**kw: Any) -> dict[str, Any]:
    row = {"id": 2, "item_id": "i2", "response": "r2", "refusal": "full_refusal", "annotator": 2,
           "annotation_id": 3, "updated_at": "2026-01-01T00:00:00Z"}
    row.update(kw)
    return row


MIN_CASES = [
    ("annotator a list", {"annotator": [2]}, ["row 2", "'annotator' is a list"]),
    ("annotator an object", {"annotator": {"id": 2}}, ["row 2", "'annotator' is an object"]),
    ("annotator a decimal number", {"annotator": 2.0}, ["row 2", "'annotator' is the number 2.0"]),
    ("item_id a decimal number", {"item_id": 1.5}, ["row 2", "'item_id' is the number 1.5"]),
    ("choice a number", {"refusal": 1}, ["row 2", "'refusal' is the number 1"]),
    ("choice object without choices", {"refusal": {"x": 1}}, ["row 2", "'refusal' is an object without 'choices'"]),
    ("choice list of numbers", {"refusal": [1]}, ["row 2", "'refusal' is a list; a choice is text"]),
    ("choice text that looks like JSON", {"refusal": '{"choices": '}, ["row 2", "starts like a JSON object"]),
    ("comment an object", {"comment": {"a": 1}}, ["row 2", "'comment' is an object"]),
    ("was_cancelled as text", {"was_cancelled": "yes"}, ["row 2", "'was_cancelled' is the text 'yes'"]),
    ("messages as plain strings", {"messages": ["hi"]}, ["row 2", "'messages[0]' is the text 'hi'"]),
    ("updated_at not a time", {"updated_at": "2026-13-01"}, ["row 2", "'updated_at'"]),
    ("response a number", {"response": 3}, ["row 2", "'response' is the number 3"]),
]


@pytest.mark.parametrize(("change", "fragments"), [c[1:] for c in MIN_CASES], ids=[c[0] for c in MIN_CASES])
def test_json_min_export_of_the_wrong_shape_is_one_sentence(tmp_path, pulled, change, fragments):
    rows = [_min_row(id=1, item_id="i1", annotation_id=1, refusal="full_compliance"), _min_row(**change)]
    path = tmp_path / "min.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    pulled(path, *fragments)


CSV_HEADER = "id,item_id,response,refusal,annotator,annotation_id,updated_at,was_cancelled,comment\n"
CSV_GOOD = '1,i1,"two\nlines",full_compliance,2,1,2026-01-01T00:00:00Z,false,\n'  # lines 2-3
CSV_CASES = [
    ("a row with a missing cell", "2,i2,r2,full_refusal,2,3,2026-01-01T00:00:00Z,false\n",
     ["line 4", "8 cells where the header has 9"]),
    ("a row with an extra cell", "2,i2,r2,full_refusal,2,3,2026-01-01T00:00:00Z,false,,x\n",
     ["line 4", "10 cells where the header has 9"]),
    ("an unquoted line break", "2,i2,r\n2,full_refusal,2,3,2026-01-01T00:00:00Z,false,\n", ["line 4"]),
    ("was_cancelled not true or false", "2,i2,r2,full_refusal,2,3,2026-01-01T00:00:00Z,maybe,\n",
     ["line 4", "'was_cancelled' is the text 'maybe'"]),
    ("an item id with a trailing space", "2,i2 ,r2,full_refusal,2,3,2026-01-01T00:00:00Z,false,\n",
     ["line 4", "'item_id' 'i2 ' has white space"]),
    ("a choice that is broken JSON", '2,i2,r2,"{""choices"": [",2,3,2026-01-01T00:00:00Z,false,\n',
     ["line 4", "starts like a JSON object"]),
    ("a time without a zone", "2,i2,r2,full_refusal,2,3,2026-01-01 10:00,false,\n", ["line 4", "has no time zone"]),
]


@pytest.mark.parametrize(("row", "fragments"), [c[1:] for c in CSV_CASES], ids=[c[0] for c in CSV_CASES])
def test_csv_export_of_the_wrong_shape_is_one_sentence(tmp_path, pulled, row, fragments):
    path = tmp_path / "export.csv"
    path.write_text(CSV_HEADER + CSV_GOOD + row, encoding="utf-8", newline="")
    pulled(path, *fragments)


def test_csv_export_header_named_twice_is_one_sentence(tmp_path, pulled):
    path = tmp_path / "export.csv"
    path.write_text("item_id,refusal,annotator,refusal\ni2,full_refusal,2,full_compliance\n", encoding="utf-8")
    pulled(path, "names column 'refusal' twice")


def test_csv_export_is_read_exactly_as_written(tmp_path):
    # valid controls: a BOM, CRLF line ends, a quoted line break, ids kept as written ('007'),
    # a multiple-choice cell as Label Studio writes it, a task nobody annotated
    text = ("\ufeffid,item_id,response,refusal,annotator,annotation_id,updated_at,severity\r\n"
            '1,007,"two\r\nlines",full_refusal,2,1,2026-01-01T00:00:00Z,3\r\n'
            '2,7,r2,"{""choices"": [""partial_refusal""]}",bob@example.org,2,2026-01-01T00:00:00Z,1.50\r\n'
            "3,8,r3,,,,,\r\n")
    path = tmp_path / "export.csv"
    path.write_bytes(text.encode("utf-8"))
    db = tmp_path / "j.db"
    result = _pull_file(path, db)
    assert result.exit_code == 0, result.output
    with Store(db) as s:
        got = s.ratings().sort_values("item_id")[["item_id", "rater_id", "label"]].values.tolist()
        items = s.items().set_index("item_id")
    assert got == [["007", "alice@example.org", "full_refusal"], ["7", "bob@example.org", "partial_refusal"]]
    assert items.loc["007", "response"] == "two\r\nlines"
    assert items.loc["7", "severity"] == "1.50"  # not every cell a plain number: text as written
    assert "8" not in items.index  # nobody annotated it


# ------------------------------------------------------ shapes of API answers
def _api(serve, tasks_body: Any, users_body: Any = None):
    routes: dict[tuple[str, str], Route] = {
        WHOAMI: ME, PROJECTS: _pages(PROJECT), TASKS: (200, tasks_body),
        USERS: (200, users_body if users_body is not None else [{"id": 2, "email": "alice@example.org"}]),
    }
    return serve(routes)


GOOD_TASK = _task(1, "i1", [_ann(1, 2, "full_refusal")])


@pytest.mark.parametrize(
    ("tasks_body", "users_body", "fragments"),
    [
        ({"total": 1, "tasks": {"a": 1}}, None, ["GET /api/tasks/", "its list is an object"]),
        ({"total": 1, "tasks": ["x"]}, None, ["entry 1 of the task list"]),
        ({"total": "x", "tasks": [GOOD_TASK]}, None, ["GET /api/tasks/", "'total' is the text 'x'"]),
        ({"total": 1, "tasks": [{**GOOD_TASK, "annotations": [{**GOOD_TASK["annotations"][0], "completed_by": [2]}]}]},
         None, ["task 1", "annotation 1", "'completed_by' is a list"]),
        ({"total": 1, "tasks": [GOOD_TASK]}, [{"email": "alice@example.org"}],
         ["GET /api/users/", "user 'alice@example.org' has no whole-number id"]),
        ({"total": 1, "tasks": [GOOD_TASK]}, [{"id": 2, "email": ["alice"]}],
         ["GET /api/users/", "email or username is not text"]),
        ({"total": 1, "tasks": [GOOD_TASK]}, [{"id": 2, "email": "al\x1b]0;x\x07ice@example.org"}],
         ["task 1 (item 'i1'), annotation 1: the annotator's rater id", "control character"]),
    ],
    ids=["task list an object", "task a text", "total a text", "completed_by a list", "user without id",
         "user email a list", "user email with a control character"],
)
def test_api_answer_of_the_wrong_shape_is_one_sentence(serve, monkeypatch, tmp_path, tasks_body, users_body,
                                                       fragments):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    fake = _api(serve, tasks_body, users_body)
    one_sentence_error(_run(["pull"], fake.url, tmp_path), *fragments)
    with Store(tmp_path / "j.db") as s:
        assert s.ratings().empty and s.items().empty


def test_api_project_list_of_the_wrong_shape_is_one_sentence(serve, monkeypatch, tmp_path):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    fake = serve({WHOAMI: ME, PROJECTS: _pages({"id": 7, "title": ["pilot"]})})
    for command in ("pull", "push"):
        result = _run([command], fake.url, tmp_path)
        one_sentence_error(result, "GET /api/projects/", "title is not text")
