"""`judgekit store copy` moves a study between SQLite and PostgreSQL: the demo's store goes
SQLite → PostgreSQL → SQLite with every table's digest (and the gate's digests) unchanged, and a
destination that already holds a study is refused, unchanged."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error, store_dump

from judgekit.cli import main
from judgekit.demo import run_demo
from judgekit.rubric.model import load_rubric
from judgekit.store import digests
from judgekit.store.copy import COPIED_TABLES, store_digests
from judgekit.store.database import Store


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    run_demo(out, n_resamples=50, verbose=False)
    return out / "judgekit.db"


def _gate_digests(path):
    rubric = load_rubric("refusal")
    with Store(path) as store:
        judges = sorted(r for r, k in digests.rater_kinds(store, rubric).items() if k == "judge")
        return {"human": digests.human_ratings_hash(store, rubric),
                "items": digests.items_hash(store, rubric),
                "judges": {j: digests.judge_ratings_hash(store, rubric, j) for j in judges}}


def test_the_demo_store_round_trips_sqlite_postgres_sqlite_with_identical_digests(demo_store, pg_server, tmp_path):
    pg = pg_server.new_database()
    back = tmp_path / "back.db"
    for src, dst in ((demo_store, pg), (pg, back)):
        result = CliRunner().invoke(main, ["store", "copy", str(src), str(dst)])
        assert result.exit_code == 0, result.output
        assert "ratings" in result.output
    with Store(demo_store) as a, Store(pg) as b, Store(back) as c:
        original, on_pg, returned = store_digests(a), store_digests(b), store_digests(c)
        ratings = a.ratings()
    assert original["ratings"][0] == len(ratings) > 1000 and original["verdicts"][0] >= 1
    assert on_pg == original and returned == original
    assert _gate_digests(pg) == _gate_digests(demo_store) == _gate_digests(back)
    assert set(original) == set(COPIED_TABLES)


def test_a_destination_that_holds_a_study_is_refused_and_left_unchanged(demo_store, tmp_path):
    dst = tmp_path / "busy.db"
    first = CliRunner().invoke(main, ["store", "copy", str(demo_store), str(dst)])
    assert first.exit_code == 0, first.output
    before = store_dump(dst)
    again = CliRunner().invoke(main, ["store", "copy", str(demo_store), str(dst)])
    one_sentence_error(again, str(dst), "already holds a study")
    assert store_dump(dst) == before


def test_a_missing_source_is_one_sentence(tmp_path):
    result = CliRunner().invoke(main, ["store", "copy", str(tmp_path / "none.db"), str(tmp_path / "b.db")])
    one_sentence_error(result, "none.db", "does not exist")
    assert not (tmp_path / "b.db").exists()


def test_a_source_written_during_the_copy_is_copied_as_it_stood_when_the_copy_began(
        store_target, tmp_path, monkeypatch):
    from judgekit.io.ratings import import_ratings
    from judgekit.store import copy as copy_mod

    rubric = load_rubric("refusal")
    labels = tmp_path / "a.csv"
    labels.write_text("item_id,rater_id,rater_kind,label\na,h1,human,full_refusal\n")
    more = tmp_path / "b.csv"
    more.write_text("item_id,rater_id,rater_kind,label\nb,h1,human,full_compliance\n")
    with Store(store_target) as src:
        import_ratings(src, labels, rubric)
        before = store_digests(src)
    real, wrote = copy_mod.table_digest, []

    def digest_then_another_process_writes(store, table, columns):
        out = real(store, table, columns)
        if table == "items" and not wrote:  # an import into the source, half-way through the copy
            wrote.append(table)
            with Store(store_target) as writer:
                import_ratings(writer, more, rubric)
        return out

    monkeypatch.setattr(copy_mod, "table_digest", digest_then_another_process_writes)
    dst = tmp_path / "copy.db"
    with Store(store_target) as src, Store(dst) as target:
        copy_mod.copy_store(src, target)
    monkeypatch.undo()
    assert wrote
    with Store(dst) as copied, Store(store_target) as src:
        assert store_digests(copied) == before != store_digests(src)
