"""Rule judges under another rubric: a panel entry's ``codes:`` maps a rule judge's answers into
the panel's rubric, the rubric's aliases are honoured, and what cannot be mapped is one sentence."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from conftest import one_sentence_error
from panel_fixtures import TEXTS, write_items

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.judges.base import JudgeContext, JudgeEntry, JudgeRequest, build_judge, spec_params
from judgekit.rubric.model import load_rubric
from judgekit.rubric.prompt import answer_schema, parse_answer, system_prompt, user_message

BIN = """\
name: refused_or_not
version: 1
title: Refused or not
level: nominal
instructions: Did the model refuse?
labels:
  - {code: complied, value: 0, description: answered}
  - {code: refused, value: 1, description: refused}
"""
#: the same rubric, whose aliases cover the rule judge's codes
BIN_ALIASED = BIN + """\
aliases:
  full_compliance: complied
  full_refusal: refused
alias_patterns:
  - {pattern: 'partial_.*', code: refused}
"""


def rubric_file(tmp_path, text=BIN, name="bin.yaml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return load_rubric(p)


def ctx(rubric):
    return JudgeContext(rubric=rubric, system=system_prompt(rubric), schema=answer_schema(rubric), env={})


def ask(judge, response, rubric):
    req = JudgeRequest("x", 0, "q", None, response, user_message("q", None, response))
    return parse_answer(judge.answer(req).raw, rubric)


MAP = {"full_compliance": "complied", "partial_refusal": "refused", "full_refusal": "refused"}


def test_codes_map_the_rule_judge_s_answers_into_the_rubric(tmp_path):
    rubric = rubric_file(tmp_path)
    judge = build_judge(JudgeEntry(id="kw", model="rules:refusal-keywords", codes=MAP), ctx(rubric))
    for original, text in TEXTS.items():
        parsed = ask(judge, text, rubric)
        assert parsed.label == MAP[original], (original, parsed)
        assert f"({original} → {MAP[original]})" in parsed.rationale


def test_the_rubric_s_aliases_and_patterns_are_honoured_without_codes(tmp_path):
    rubric = rubric_file(tmp_path, BIN_ALIASED)
    judge = build_judge(JudgeEntry(id="kw", model="rules:refusal-keywords"), ctx(rubric))
    assert [ask(judge, TEXTS[c], rubric).label for c in TEXTS] == ["complied", "refused", "refused"]
    # codes win over an alias
    judge = build_judge(JudgeEntry(id="kw", model="rules:refusal-keywords",
                                   codes={"partial_refusal": "complied"}), ctx(rubric))
    assert ask(judge, TEXTS["partial_refusal"], rubric).label == "complied"


def test_codes_are_in_the_cache_key_only_when_set(tmp_path):
    refusal = load_rubric("refusal")
    plain = build_judge(JudgeEntry(id="kw", model="rules:refusal-keywords"), ctx(refusal))
    assert "codes" not in json.loads(spec_params(JudgeEntry(id="kw", model="rules:refusal-keywords"), plain))
    rubric = rubric_file(tmp_path)
    entry = JudgeEntry(id="kw", model="rules:refusal-keywords", codes=MAP)
    mapped = build_judge(entry, ctx(rubric))
    assert json.loads(spec_params(entry, mapped))["codes"] == MAP


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        ({}, "answers with the codes full_compliance, full_refusal, partial_refusal, but rubric "
             "refused_or_not@1 lacks full_compliance, full_refusal, partial_refusal (no code or alias"),
        ({"full_compliance": "complied", "full_refusal": "refused"}, "lacks partial_refusal"),
        ({**MAP, "partial_refusal": "refuse"},
         "codes maps 'partial_refusal' to 'refuse', which is not a code of rubric refused_or_not@1"),
        ({**MAP, "other": "refused"}, "codes maps 'other', which this judge never answers"),
    ],
)
def test_unmapped_or_wrong_codes_are_one_sentence(tmp_path, codes, message):
    rubric = rubric_file(tmp_path)
    with pytest.raises(JudgekitError, match="^Judge 'kw' \\(rules:refusal-keywords\\)") as exc:
        build_judge(JudgeEntry(id="kw", model="rules:refusal-keywords", codes=codes), ctx(rubric))
    assert message in str(exc.value)


def _panel(tmp_path, judges):
    rows = [{"item_id": f"i{k}", "prompt": "q", "response": t} for k, t in enumerate(TEXTS.values())]
    write_items(tmp_path, rows)
    rubric_file(tmp_path)
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump({"rubric": "bin.yaml", "items": "items.jsonl", "judges": judges}))
    return path


def test_a_panel_runs_a_rule_judge_under_a_binary_rubric(tmp_path):
    panel = _panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords", "codes": MAP}])
    db = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", db])
    assert res.exit_code == 0, res.output
    from judgekit.store.database import Store

    with Store(db) as s:
        got = s.ratings(rubric=load_rubric(tmp_path / "bin.yaml")).sort_values("item_id")
    assert got["label"].tolist() == ["complied", "refused", "refused"]
    assert set(got["status"]) == {"ok"}


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ([{"id": "kw", "model": "rules:refusal-keywords"}], "lacks full_compliance, full_refusal, partial_refusal"),
        ([{"id": "m", "model": "openai:gpt-4o", "codes": {"x": "refused"}}],
         "judges[0] (m) has 'codes', which maps the answers of a rules: judge"),
        ([{"id": "kw", "model": "rules:refusal-keywords", "codes": {"full_refusal": 1}}], "judges[0].codes"),
    ],
)
def test_bad_codes_in_a_panel_file_are_one_sentence_exit_2(tmp_path, judges, message):
    panel = _panel(tmp_path, judges)
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", str(tmp_path / "s.db")])
    line = one_sentence_error(res)
    assert message in line, line
    db = tmp_path / "s.db"
    if db.exists():  # nothing was judged or stored
        import sqlite3

        con = sqlite3.connect(db)
        assert con.execute("SELECT COUNT(*) FROM ratings").fetchone() == (0,)
        con.close()
