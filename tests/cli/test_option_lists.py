"""Command-line knobs out of their bounds are one sentence, exit 2: ``nan`` where a number is
planned, empty or repeated names in ``--rounds``, ``--where`` and ``--groups``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from corpus.base import build_template, dump_store

from judgekit.cli import main


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("knob-template")
    build_template(folder)
    return folder


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    shutil.copy(template / "store.db", db)
    return db


def _run(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("option", ["--assume-kappa", "--assume-sd"])
def test_plan_refuses_nan_as_an_assumption(template: Path, store: Path, option: str) -> None:
    out = _run("plan", str(template / "policy.yaml"), option, "nan", "--store", str(store))
    one_sentence_error(out, option, "nan", "not a number")


@pytest.mark.parametrize(("rounds", "phrase"), [("", "empty name"), ("pilot,,pilot", "empty name"),
                                                ("pilot,pilot", "'pilot' twice")])
def test_gate_rounds_with_empty_or_repeated_names_are_refused(template: Path, store: Path, tmp_path: Path,
                                                              rounds: str, phrase: str) -> None:
    before = dump_store(store)
    out = _run("gate", str(template / "policy.yaml"), "--sequential", "--rounds", rounds, "--store", str(store),
               "--out", str(tmp_path / "out"))
    one_sentence_error(out, "--rounds", phrase)
    assert dump_store(store) == before
    assert not (tmp_path / "out" / "verdict.json").exists()


@pytest.mark.parametrize(("where", "phrase"), [("model=m0,,m1", "empty name"), ("model=m0,m0", "'m0' twice")])
def test_where_with_an_empty_or_repeated_value_is_refused(store: Path, where: str, phrase: str) -> None:
    for args in (("analyze", "distribution", "--judge", "j1"),
                 ("sample", "--name", "w", "--size", "4", "--rubric", "refusal")):
        before = dump_store(store)
        out = _run(*args, "--where", where, "--store", str(store))
        one_sentence_error(out, "--where model=", phrase)
        assert dump_store(store) == before


@pytest.mark.parametrize(("groups", "phrase"), [("model,model", "'model' twice"), ("model,,category", "empty")])
def test_sample_groups_named_twice_or_empty_are_refused(store: Path, groups: str, phrase: str) -> None:
    before = dump_store(store)
    out = _run("sample", "--name", "g", "--size", "4", "--rubric", "refusal", "--groups", groups,
               "--store", str(store))
    one_sentence_error(out, "--groups", phrase)
    assert dump_store(store) == before
