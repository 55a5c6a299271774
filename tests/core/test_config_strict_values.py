"""Beyond the bad-input corpus's own cases: config values are
kept as written or refused (never converted), finite, and an over-long integer is one sentence;
messages name the file that holds the value; a conversation turn needs a role; a Label Studio pull
refuses a task whose text is not the stored item's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.annotation.sampling import SampleSpec, load_spec, spec_from_dict
from judgekit.cli import main
from judgekit.core.config import load_yaml
from judgekit.errors import JudgekitError
from judgekit.judges.base import JudgeEntry
from judgekit.rubric.model import Label, load_rubric
from judgekit.store.data import validate_items
from judgekit.verdict.policy import Policy, load_policy

POLICY = "rubric: refusal\njudges: [j1]\nchecks:\n  min_items: {v}\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- strict values
@pytest.mark.parametrize("written, says", [
    ("true", "not true"),
    ("'200'", "not the text '200' (write the number without quotes)"),
    ("200.0", "not 200.0 (write a whole number without a decimal point)"),
])
def test_a_policy_integer_is_never_converted(tmp_path: Path, written: str, says: str):
    p = _write(tmp_path / "p.yaml", POLICY.format(v=written))
    with pytest.raises(JudgekitError) as exc:
        load_policy(p)
    msg = str(exc.value)
    assert msg.startswith(f"Policy file {p}: checks.min_items: ") and says in msg, msg


def test_an_integer_is_still_a_number_where_a_number_is_expected(tmp_path: Path):
    policy, _ = load_policy(_write(tmp_path / "p.yaml", POLICY.format(v=200) + "  min_value: 1\n"))
    assert policy.checks.min_items == 200 and policy.checks.min_value == 1.0
    assert Label(code="a", value=2, description="d").value == 2.0


@pytest.mark.parametrize("kw, says", [
    ({"structured": "yes"}, "not the text 'yes' (write true or false without quotes)"),
    ({"batch": 1}, "not 1 (write true or false)"),
    ({"trials": True}, "not true"),
    ({"temperature": "0.5"}, "(write the number without quotes)"),
])
def test_a_judge_entry_is_never_converted(kw: dict, says: str):
    from pydantic import ValidationError

    from judgekit.core.config import first_error

    with pytest.raises(ValidationError) as exc:
        JudgeEntry(id="j", model="rules:refusal-keywords", **kw)
    assert says in first_error(exc.value)


def test_sample_spec_values_are_never_converted():
    with pytest.raises(JudgekitError, match=r"size: Input should be a valid integer, not the text '200'"):
        spec_from_dict({"name": "s", "size": "200"})
    with pytest.raises(JudgekitError, match=r"targeted: Input should be a valid boolean, not 1"):
        spec_from_dict({"name": "s", "size": 2, "targeted": 1})
    assert spec_from_dict({"name": "s", "size": 2, "random_share": 1}).random_share == 1.0


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_a_rubric_label_value_must_be_finite(tmp_path: Path, value: str):
    text = (Path(__file__).resolve().parents[2] / "rubrics" / "refusal.yaml").read_text(encoding="utf-8")
    p = _write(tmp_path / "r.yaml", text.replace("value: 0.5", f"value: {value}", 1))
    with pytest.raises(JudgekitError, match=r"labels\[1\]\.value: Input should be a finite number"):
        load_rubric(p)


def test_a_policy_threshold_must_be_finite(tmp_path: Path):
    with pytest.raises(JudgekitError, match=r"checks\.min_value: Input should be a finite number"):
        load_policy(_write(tmp_path / "p.yaml", POLICY.format(v=1) + "  min_value: .nan\n"))


def test_the_models_built_in_code_are_strict_too():
    with pytest.raises(ValueError, match="valid integer"):
        Policy(rubric="r", judges=["j"], checks={"min_items": True})
    with pytest.raises(ValueError, match="valid integer"):
        SampleSpec(name="s", size=2.0)


# ----------------------------------------------------------------------------- huge integers
def test_an_integer_too_long_for_python_is_one_problem_with_its_line():
    from judgekit.core.config import YamlProblem

    with pytest.raises(YamlProblem) as exc:
        load_yaml("a: 1\nb:\n  - 2\n  - " + "9" * 5000 + "\n")
    assert exc.value.line == 4 and "b[1] is an integer of 5,000 digits" in exc.value.phrase
    with pytest.raises(YamlProblem) as exc:  # as a key: the key is never converted first
        load_yaml("a: 1\n? " + "8" * 4301 + "\n: x\n")
    assert exc.value.line == 2 and "4,301 digits" in exc.value.phrase
    assert load_yaml("a: " + "9" * 4300 + "\n")["a"] == int("9" * 4300)  # at the limit: read
    assert load_yaml("a: 0x" + "f" * 5000 + "\n")["a"] > 0  # hexadecimal has no limit


def test_a_huge_integer_in_a_sample_spec_is_one_sentence_through_the_cli(tmp_path: Path):
    p = _write(tmp_path / "s.yaml", "name: s\nsize: " + "9" * 5000 + "\n")
    res = CliRunner().invoke(main, ["sample", "--spec", str(p), "--store", str(tmp_path / "s.db")])
    one_sentence_error(res, f"Sample spec {p} line 2: size is an integer of 5,000 digits")


# ----------------------------------------------------------------------------- naming the file
def _store_with_items(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    csv = _write(tmp_path / "r.csv", "item_id,prompt,response,colour,rater_id,label\n"
                 + "".join(f"i{i},p{i},r{i},red,ann,full_refusal\n" for i in range(6)))
    res = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--store", str(db)])
    assert res.exit_code == 0, res.output
    return db


def test_a_sample_spec_is_named_for_its_strata_unless_a_flag_set_them(tmp_path: Path):
    db = _store_with_items(tmp_path)
    spec = _write(tmp_path / "spec.yaml", "name: pilot\nsize: 2\nstrata: [shade]\n")
    res = CliRunner().invoke(main, ["sample", "--spec", str(spec), "--store", str(db)])
    one_sentence_error(res, f"error: Sample spec {spec} (sample 'pilot'): stratum column 'shade' is not item metadata")
    # the flag gave the unknown column: the spec file is not blamed for it
    spec2 = _write(tmp_path / "spec2.yaml", "name: pilot\nsize: 2\n")
    res = CliRunner().invoke(main, ["sample", "--spec", str(spec2), "--by", "hue", "--store", str(db)])
    line = one_sentence_error(res, "error: Sample 'pilot': stratum column 'hue' is not item metadata")
    assert str(spec2) not in line


def test_a_spec_loaded_from_a_file_says_so_and_one_built_in_code_does_not(tmp_path: Path):
    spec = load_spec(_write(tmp_path / "spec.yaml", "name: pilot\nsize: 2\n"))
    assert spec.where == f"Sample spec {tmp_path / 'spec.yaml'} (sample 'pilot')"
    assert SampleSpec(name="pilot", size=2).where == "Sample 'pilot'"


def test_a_panel_judge_that_cannot_be_built_names_the_panel_file(tmp_path: Path):
    _write(tmp_path / "items.jsonl", json.dumps({"item_id": "a", "prompt": "p", "response": "r"}) + "\n")
    panel = _write(tmp_path / "panel.yaml", "rubric: refusal\nitems: items.jsonl\njudges:\n"
                   "  - id: rep\n    model: 'replay:nothere.csv#label'\n")
    res = CliRunner().invoke(main, ["judge", str(panel), "--store", str(tmp_path / "s.db"), "--no-progress"])
    line = one_sentence_error(res)
    assert line.startswith(f"error: Panel file {panel}: ") and line.count(str(panel)) == 1, line


# ----------------------------------------------------------------------------- messages need a role
@pytest.mark.parametrize("turn, says", [
    ({"content": "hi"}, "messages[0] has no 'role'"),
    ({"role": "", "content": "hi"}, "'role' as text"),
    ({"role": 3, "content": "hi"}, "'role' as text"),
])
def test_a_conversation_turn_needs_a_role(turn: dict, says: str):
    import pandas as pd

    df = pd.DataFrame({"item_id": ["a"], "messages": [[turn]], "response": ["r"]})
    with pytest.raises(JudgekitError, match=rf"items\.jsonl row 1: .*{re.escape(says)}"):
        validate_items(df, source="items.jsonl")


def test_a_conversation_with_roles_is_kept_as_written():
    import pandas as pd

    turns = [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    out = validate_items(pd.DataFrame({"item_id": ["a"], "messages": [turns], "response": ["r"]}), source="x")
    assert out["messages"].iloc[0] == turns


# ----------------------------------------------------------------------------- Label Studio pull
def _export(tmp_path: Path, **data: object) -> Path:
    task = {"id": 4, "data": {"item_id": "i1", **data}, "annotations": [{
        "id": 1, "completed_by": {"id": 5, "email": "dana@example.org"}, "was_cancelled": False,
        "updated_at": "2026-01-01T00:00:00Z",
        "result": [{"from_name": "refusal", "to_name": "response", "type": "choices",
                    "value": {"choices": ["full_compliance"]}}]}]}
    return _write(tmp_path / "export.json", json.dumps([task]))


def _pull(tmp_path: Path, export: Path, db: Path):
    return CliRunner().invoke(main, ["labelstudio", "pull", "--from-export", str(export), "--rubric", "refusal",
                                     "--store", str(db)])


def _ratings(db: Path) -> list:
    from judgekit.store.database import Store

    with Store(db) as s:
        return sorted(s.ratings(rubric=load_rubric("refusal"))[["item_id", "rater_id"]].itertuples(index=False))


@pytest.mark.parametrize("data, differs", [
    ({"messages": [{"role": "user", "content": "p1"}], "response": "another answer"}, "response"),
    ({"messages": [{"role": "user", "content": "another question"}], "response": "r1"}, "conversation"),
    ({"prompt": "another question", "response": "r1"}, "conversation"),
])
def test_a_pull_refuses_a_task_whose_text_is_not_the_stored_items(tmp_path: Path, data: dict, differs: str):
    db = _store_with_items(tmp_path)
    before = _ratings(db)
    res = _pull(tmp_path, _export(tmp_path, **data), db)
    one_sentence_error(res, f"error: Label Studio export export.json: task 4 (item 'i1'): the store holds that "
                            f"item with another {differs} than the task shows")
    assert _ratings(db) == before


@pytest.mark.parametrize("data", [
    {"messages": [{"role": "user", "content": "p1"}], "response": "r1"},
    {"messages": json.dumps([{"role": "user", "content": "p1"}]), "response": "r1"},
    {"prompt": "p1", "response": "r1"},
    {},  # a task that shows no text (not pushed by judgekit): nothing to compare
])
def test_a_pull_of_the_stored_items_text_attaches_the_labels(tmp_path: Path, data: dict):
    db = _store_with_items(tmp_path)
    res = _pull(tmp_path, _export(tmp_path, **data), db)
    assert res.exit_code == 0, res.output
    assert ("i1", "dana@example.org") in _ratings(db)
