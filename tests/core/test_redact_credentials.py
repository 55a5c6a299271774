"""Credentials in a judge's URL never reach the terminal, the store or an error:
``http://user:pw@host`` and ``?api_key=...`` were printed in the run summary and stored in the
``calls`` table."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.core.redact import redact
from judgekit.errors import JudgekitError
from judgekit.judges.panel import load_panel, run_panel
from judgekit.store.database import Store
from judgekit.store.judge_identity import judge_identity

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

SECRETS = ("s3cret-pw", "tok-123456", "alice")


@pytest.mark.parametrize(("text", "expected"), [
    ("http://alice:s3cret@gpu:8000/v1", "http://***@gpu:8000/v1"),
    ("http://TOKEN@gpu/v1", "http://***@gpu/v1"),
    ("http://u:p@ss@gpu/v1", "http://***@gpu/v1"),  # an unescaped @ in the password
    ("https://gpu/v1?api_key=abc&api-version=2024-06-01", "https://gpu/v1?api_key=***&api-version=2024-06-01"),
    ("http://gpu/v1?access_token=x;sig=y&model=m", "http://gpu/v1?access_token=***;sig=***&model=m"),
    ("openai-compatible:http://a:b@h:1/v1?apiKey=k#qwen@2", "openai-compatible:http://***@h:1/v1?apiKey=***#qwen@2"),
    ("Judge 'x' (openai-compatible:http://a:b@h/v1#m) has batch: true",
     "Judge 'x' (openai-compatible:http://***@h/v1#m) has batch: true"),
    ("anthropic:claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
    ("http://gpu:8000/v1", "http://gpu:8000/v1"),
    ("mail me at a@b.c", "mail me at a@b.c"),
])
def test_redact(text, expected):
    assert redact(text) == expected


def _dump(db) -> str:
    con = sqlite3.connect(db)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def test_a_password_in_a_judge_url_is_never_shown_or_stored(tmp_path, fake):
    write_items(tmp_path, labelled_items(3))
    url = fake.openai_url.replace("http://", "http://alice:s3cret-pw@") + "?api_key=tok-123456"
    spec = f"openai-compatible:{url}#qwen"
    path = write_panel(tmp_path, [{"id": "vllm", "model": spec}])
    db = tmp_path / "s.db"
    with Store(db) as store:
        summary = run_panel(load_panel(path), store)
        assert summary.complete and summary.judges[0].ok == 3
        shown = "\n".join(summary.lines()) + json.dumps(summary.as_dict(), default=str)
        ident = judge_identity(store, "vllm")
    for secret in SECRETS:
        assert secret not in shown
        assert secret not in json.dumps(ident)
    assert "http://***@127.0.0.1" in shown
    dump = _dump(db)
    for secret in SECRETS:
        assert secret not in dump
    # the command line's summary, and its JSON
    for args in ([], ["--json"]):
        res = CliRunner().invoke(main, ["judge", str(path), "--store", str(db), *args])
        assert res.exit_code == 0, res.output
        for secret in SECRETS:
            assert secret not in res.output


def test_the_identity_hash_does_not_depend_on_the_password(tmp_path, fake):
    hashes = []
    for n, pw in ((2, "first-pw"), (3, "second-pw")):
        write_items(tmp_path, labelled_items(n))
        spec = f"openai-compatible:{fake.openai_url.replace('http://', f'http://bob:{pw}@')}#qwen"
        path = write_panel(tmp_path, [{"id": "vllm", "model": spec}])
        with Store(tmp_path / "s.db") as store:
            summary = run_panel(load_panel(path), store)
            hashes.append(judge_identity(store, "vllm")["judge_hash"])
    # the second run changed only the password: the 2 answered calls stay cached, the new item is
    # asked (so the latest call is made with the new password), and the identity is the same
    assert summary.judges[0].cached == 2 and summary.judges[0].called == 1
    assert hashes[0] == hashes[1]


def test_an_error_naming_the_spec_is_redacted(tmp_path, fake):
    write_items(tmp_path, labelled_items(1))
    spec = f"openai-compatible:{fake.openai_url.replace('http://', 'http://alice:s3cret-pw@')}#qwen"
    path = write_panel(tmp_path, [{"id": "vllm", "model": spec, "batch": True}])
    with Store(tmp_path / "s.db") as store, pytest.raises(JudgekitError) as err:
        run_panel(load_panel(path), store)
    assert "batch" in str(err.value) and "***@127.0.0.1" in str(err.value)
    assert "s3cret-pw" not in str(err.value)


def test_an_older_store_holding_a_secret_never_shows_it(tmp_path, fake):
    # a store written before specs were redacted: the secret is in calls.spec
    write_items(tmp_path, labelled_items(2))
    spec = f"openai-compatible:{fake.openai_url}#qwen"
    path = write_panel(tmp_path, [{"id": "vllm", "model": spec}])
    db = tmp_path / "s.db"
    with Store(db) as store:
        run_panel(load_panel(path), store)
        before = judge_identity(store, "vllm")["judge_hash"]
    secret_spec = spec.replace("http://", "http://alice:s3cret-pw@")
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE calls SET spec = ?", (secret_spec,))
    con.close()
    from judgekit.store.calls import call_rows, calls_frame, latest_parameters, usage_frame

    with Store(db) as store:
        ident = judge_identity(store, "vllm")
        shown = [json.dumps(ident), repr(call_rows(store)), calls_frame(store).to_csv(),
                 usage_frame(store).to_csv(), repr(latest_parameters(store, "vllm"))]
    for text in shown:
        assert "s3cret-pw" not in text and "alice" not in text
    # the identity is made of the redacted spec (a URL with ***@ is another text than without)
    assert ident["spec"] == redact(secret_spec) and ident["judge_hash"] != before
