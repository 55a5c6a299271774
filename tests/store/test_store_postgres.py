"""A PostgreSQL store behaves as the SQLite one: same ratings, items and digests from the same
import; its SQL translation; its lock; a database that cannot be reached is one sentence that
never shows the URL's password."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from conftest import XSTEST_LABELS, one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store import digests, provenance
from judgekit.store.database import Store
from judgekit.store.pg_sql import translate
from judgekit.store.postgres import redact_url

XSTEST_FIELDS = {
    "raters": {"annotation_1": "annotation_1", "annotation_2": "annotation_2"},
    "reference": {"final": "final_label"},
    "judges": {"string_match": "strmatch_label", "gpt4": "gpt4_label"},
}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket is closed


def _fingerprint(store: Store) -> dict[str, object]:
    rubric = load_rubric("refusal")
    ratings = store.ratings().drop(columns=["created_at"])
    items = store.items().drop(columns=["updated_at"], errors="ignore")
    judges = ["string_match", "gpt4"]
    return {
        "ratings": ratings.astype(str).values.tolist(),
        "items": items.astype(str).values.tolist(),
        "raters": digests.rater_kinds(store, rubric),
        "meta_keys": digests.meta_keys(store),
        "human": digests.human_ratings_hash(store, rubric),
        "items_hash": digests.items_hash(store, rubric),
        "judges": {j: digests.judge_ratings_hash(store, rubric, j) for j in judges},
        "provenance": {j: provenance.provenance_digests(store, rubric, j) for j in judges},
        "meta": provenance.meta_hashes(store, rubric),
    }


def test_one_import_gives_the_same_ratings_items_and_digests_on_both_backends(pg_server, tmp_path):
    rubric = load_rubric("refusal")
    with Store(tmp_path / "s.db") as lite, Store(pg_server.new_database()) as pg:
        for store in (lite, pg):
            import_ratings(store, XSTEST_LABELS, rubric, **XSTEST_FIELDS)
        want, got = _fingerprint(lite), _fingerprint(pg)
    assert len(want["ratings"]) == 5 * 2250  # 2250 items; two annotators, the reference, two judges
    for key in want:
        assert got[key] == want[key], key


def test_a_reimport_into_postgres_is_a_noop_as_on_sqlite(pg_server):
    rubric = load_rubric("refusal")
    with Store(pg_server.new_database()) as pg:
        first = import_ratings(pg, XSTEST_LABELS, rubric, **XSTEST_FIELDS)
        again = import_ratings(pg, XSTEST_LABELS, rubric, **XSTEST_FIELDS)
        assert first.written is not None and first.written.new == 5 * 2250
        assert again.written is None or again.written.new == again.written.changed == 0


def test_a_transaction_waits_for_another_process_lock_then_says_so(pg_server):
    url = pg_server.new_database()
    with Store(url) as holder, Store(url, lock_timeout=0.3) as other:
        with (holder.transaction(), pytest.raises(JudgekitError, match="still locked by another judgekit"),
              other.transaction()):
            pass
        with other.transaction() as conn:  # free again once the holder committed
            conn.execute("DELETE FROM samples")


def test_an_unreachable_database_is_one_sentence_without_the_password(tmp_path):
    url = f"postgresql://alice:s3cret-pw@127.0.0.1:{_closed_port()}/study"
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater_id,label\na,h1,full_refusal\n")
    result = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--store", url])
    line = one_sentence_error(result, "alice:***@127.0.0.1", "cannot be reached")
    assert "s3cret-pw" not in result.output and "s3cret-pw" not in line


def test_the_store_url_comes_from_judgekit_store_too(pg_server, tmp_path):
    url = pg_server.new_database()
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater_id,rater_kind,label\na,h1,human,full_refusal\nb,h1,human,full_compliance\n")
    result = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal"],
                                env={"JUDGEKIT_STORE": url})
    assert result.exit_code == 0, result.output
    with Store(url) as store:
        assert sorted(store.ratings()["label"]) == ["full_compliance", "full_refusal"]


def test_a_password_is_redacted_wherever_the_url_holds_it():
    assert redact_url("postgresql://bob:pw@db.lab:5432/s") == "postgresql://bob:***@db.lab:5432/s"
    assert redact_url("postgresql://db.lab/s?password=pw&sslmode=require") == (
        "postgresql://db.lab/s?password=***&sslmode=require")
    assert redact_url("postgresql://bob@db.lab/s") == "postgresql://bob@db.lab/s"


def test_sqlite_upserts_and_placeholders_read_as_postgres_spells_them():
    cols = {"calls": ("key", "status", "label", "rowid")}
    sql, numbered = translate("INSERT OR REPLACE INTO calls (key, status) VALUES (?, ?)", cols)
    assert sql == ("INSERT INTO calls (key, status) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET"
                   " status = EXCLUDED.status, label = EXCLUDED.label, rowid = EXCLUDED.rowid")
    assert not numbered
    sql, _ = translate("INSERT OR IGNORE INTO verdicts (digest) VALUES (?)", {})
    assert sql == "INSERT INTO verdicts (digest) VALUES (%s) ON CONFLICT DO NOTHING"
    sql, numbered = translate("SELECT meta ->> ?1 FROM items WHERE json_type(meta, ?1) = ? AND x LIKE '%a?'", {})
    assert sql == ("SELECT meta ->> %(p1)s FROM items WHERE json_type(meta, %(p1)s) = %(p2)s"
                   " AND x LIKE '%%a?'")
    assert numbered
    sql, _ = translate("SELECT count(*) FROM (SELECT a FROM t WHERE a IS NOT b)", {})
    assert sql == "SELECT count(*) FROM (SELECT a FROM t WHERE a IS DISTINCT FROM b) AS _sq1"


def test_a_bulk_insert_is_one_copy_with_the_rows_and_key_errors_of_inserts(pg_server, monkeypatch):
    import sqlite3

    import psycopg

    def no_executemany(*_a, **_k):
        raise AssertionError("sent row by row, not as a COPY")

    monkeypatch.setattr(psycopg.Cursor, "executemany", no_executemany)
    sql = "INSERT INTO samples (sample, item_id, reason, created_at) VALUES (?, ?, ?, ?)"
    with Store(pg_server.new_database()) as store:
        with store.transaction() as conn:
            conn.executemany(sql, [("s", f"it-{k}", "random", 1.5) for k in range(1000)])
        assert [r.item_id for r in store.sample_rows("s")] == [f"it-{k}" for k in range(1000)]
        with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
            conn.executemany(sql, [("s", "new", "random", 1.0), ("s", "it-7", "random", 1.0)])
        assert len(store.sample_rows("s")) == 1000  # the failed bulk wrote nothing


def test_many_upserts_give_the_rows_and_order_of_one_upsert_per_row(store):
    sql = "INSERT OR REPLACE INTO samples (sample, item_id, reason, created_at) VALUES (?, ?, ?, ?)"
    with store.transaction() as conn:
        conn.executemany(sql, [("s", f"it-{k}", "random", 1.0) for k in range(300)])
    with store.transaction() as conn:  # 50 replaced (each moves to the end, as REPLACE does), 250 new
        conn.executemany(sql, [("s", f"it-{k}", "stratum", 2.0) for k in range(250, 550)])
    with store.transaction() as conn:  # one key many times: the last row wins
        conn.executemany(sql, [("s", "it-0", "fill", 3.0), ("s", "it-0", "unstable", 4.0)] * 60)
    got = [(r.item_id, r.reason) for r in store.sample_rows("s")]
    assert got == ([(f"it-{k}", "random") for k in range(1, 250)]
                   + [(f"it-{k}", "stratum") for k in range(250, 550)] + [("it-0", "unstable")])


@pytest.mark.parametrize("url", [
    "postgresql://alice:s3cret-pw%@127.0.0.1:1/study",  # a bad percent escape libpq quotes back
    "postgresql://alice:s3cret@pw-tail@127.0.0.1:1/study",  # an unescaped @ inside the password
])
def test_a_url_libpq_cannot_parse_never_shows_its_password(url, tmp_path):
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater_id,label\na,h1,full_refusal\n")
    result = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--store", url])
    line = one_sentence_error(result, "cannot be reached")
    for piece in ("s3cret", "pw-tail"):
        assert piece not in result.output and piece not in line


@pytest.mark.parametrize("at_statement", [3, 15])  # while the store opens; while agree reads
def test_a_server_gone_mid_command_is_one_sentence(pg_server, monkeypatch, tmp_path, at_statement):
    import psycopg

    from judgekit.store import postgres

    url = pg_server.new_database()
    with Store(url) as store:
        import_ratings(store, XSTEST_LABELS, load_rubric("refusal"), **XSTEST_FIELDS)
    real, seen = postgres.PgConnection.execute, [0]

    def execute(self, sql, args=()):  # the server ends this connection before one statement
        seen[0] += 1
        if seen[0] == at_statement:
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", [self.raw.info.backend_pid])
        return real(self, sql, args)

    monkeypatch.setattr(postgres.PgConnection, "execute", execute)
    result = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", url])
    assert seen[0] >= at_statement
    line = one_sentence_error(result, "connection to PostgreSQL was lost", "run the command again")
    assert "not a judgekit" not in line


def test_export_calls_reads_a_postgres_store(pg_server, tmp_path):
    from judgekit.store.calls import calls_frame

    url = pg_server.new_database()
    with Store(url) as store:
        assert calls_frame(store).empty  # pandas reads through the store's cursor
    result = CliRunner().invoke(main, ["export", "calls", "--store", url, "--out", str(tmp_path / "c.csv")])
    one_sentence_error(result, "has no judge calls")


@pytest.mark.parametrize("what", ["ratings", "items", "calls"])
def test_an_empty_export_never_shows_the_password(pg_server, tmp_path, what):
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute("ALTER USER judgekit PASSWORD 'pw-in-url'")  # trust auth: any password works
    url = pg_server.new_database().replace("judgekit@", "judgekit:pw-in-url@")
    result = CliRunner().invoke(main, ["export", what, "--store", url, "--out", str(tmp_path / "x.csv")])
    line = one_sentence_error(result, "judgekit:***@", "nothing to export")
    assert "pw-in-url" not in result.output and "pw-in-url" not in line


def test_the_gate_s_panel_provenance_query_runs_on_both_backends(store):
    from judgekit.store.calls import ratings_not_made_by
    from judgekit.store.provenance import PANEL

    # the panel's own ratings are checked against their calls only when a verdict names the
    # panel's identity: a flag bound as an integer, which PostgreSQL's AND refused
    rubric = load_rubric("refusal")
    assert ratings_not_made_by(store, rubric, "j", [PANEL], ("spec", {})) == []
    assert ratings_not_made_by(store, rubric, "j", [], None) == []


def test_the_store_line_of_a_report_names_a_postgres_store_without_its_password(pg_server, tmp_path):
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute("ALTER USER judgekit PASSWORD 'pw-in-url'")  # trust auth: any password works
    url = pg_server.new_database().replace("judgekit@", "judgekit:pw-in-url@")
    csv = tmp_path / "r.csv"
    csv.write_text("item_id,rater_id,rater_kind,label\na,h1,human,full_refusal\nb,h1,human,full_compliance\n")
    assert CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--store", url]).exit_code == 0
    result = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", url])
    assert "store: postgresql://judgekit:***@127.0.0.1:" in result.output, result.output
    assert "pw-in-url" not in result.output


def test_the_store_s_tables_read_as_frames_without_a_pandas_warning(store):
    import warnings

    from judgekit.store.calls import calls_frame, usage_frame

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas warned on every read of a PostgreSQL store
        assert calls_frame(store).empty and usage_frame(store).empty
        assert store.rating_call_keys().empty
        assert "spec" in calls_frame(store).columns


def test_a_server_that_fails_to_start_leaves_no_folder_behind(tmp_path):
    import glob
    import os
    import stat
    import tempfile

    import pg_server as server_mod

    bin_dir = tempfile.mkdtemp(prefix="fake-pg-bin-")  # readable by the postgres user too
    os.chmod(bin_dir, 0o755)
    for name, body in (("initdb", 'mkdir -p "$2"'), ("pg_ctl", "echo cannot start >&2; exit 1")):
        path = os.path.join(bin_dir, name)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\n{body}\n")
        os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "judgekit-pg-*")))
    try:
        with pytest.raises(Exception, match="pg_ctl|exit status"):
            server_mod.start(server_mod.Path(bin_dir))
        assert set(glob.glob(os.path.join(tempfile.gettempdir(), "judgekit-pg-*"))) == before
    finally:
        import shutil

        shutil.rmtree(bin_dir, ignore_errors=True)
