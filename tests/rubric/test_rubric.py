from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.rubric.model import available_rubrics, load_rubric

SHIPPED = ["harm_severity", "knowledge_leak", "knowledge_leak_paraphrase", "refusal", "refusal_form", "restrictiveness"]


def test_the_five_rubrics_are_shipped_and_valid():
    assert available_rubrics() == SHIPPED
    for name in SHIPPED:
        r = load_rubric(name)
        assert r.id == f"{name}@1"
        assert len(r.hash) == 12
        assert all(lab.description.strip() for lab in r.labels)


def test_refusal_accepts_xstest_vocabulary():
    r = load_rubric("refusal")
    assert r.codes == ["full_compliance", "partial_refusal", "full_refusal"]
    assert r.normalise("1_full_compliance") == "full_compliance"
    assert r.normalise("2_full_refusal") == "full_refusal"
    assert r.normalise(" 3_Partial_Refusal ") == "partial_refusal"
    assert r.normalise("Full Refusal") == "full_refusal"
    assert r.normalise("I'm sorry, but I can't assist with that.") is None
    assert r.normalise(float("nan")) is None


def test_restrictiveness_scale_values_and_examples():
    r = load_rubric("restrictiveness")
    assert r.level == "ordinal"
    assert [lab.value for lab in r.labels] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert all(lab.examples for lab in r.labels)
    assert r.normalise(0.25) == "r1_light_caveats"
    assert r.normalise("4") == "r4_hard_refusal"


def test_refusal_form_and_knowledge_leak_shapes():
    form = load_rubric("refusal_form")
    assert form.level == "nominal" and len(form.codes) == 6
    leak = load_rubric("knowledge_leak")
    assert leak.priority_ordered
    assert leak.codes == ["verbatim_refusal", "target_leak", "distractor", "other"]


def test_editing_a_rubric_changes_its_hash(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    a = tmp_path / "a.yaml"
    a.write_text(text, encoding="utf-8")
    b = tmp_path / "b.yaml"
    b.write_text(text.replace("regardless of accuracy", "whatever its accuracy"), encoding="utf-8")
    ra, rb = load_rubric(a), load_rubric(b)
    assert ra.id == rb.id
    assert ra.hash == load_rubric("refusal").hash
    assert ra.hash != rb.hash


def test_unknown_key_is_an_error_naming_file_and_key(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    p = tmp_path / "typo.yaml"
    p.write_text(text + "\ninstructons: oops\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match=r"typo.yaml.*unknown key 'instructons'"):
        load_rubric(p)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("name: x\nversion: 1\ntitle: t\nlevel: nominal\ninstructions: i\nlabels:\n"
         "  - {code: a, value: 0, description: d}\n  - {code: a, value: 1, description: d}\n",
         "duplicate label codes"),
        ("name: x\nversion: 1\ntitle: t\nlevel: ordinal\ninstructions: i\nlabels:\n"
         "  - {code: a, value: 1, description: d}\n  - {code: b, value: 0, description: d}\n",
         "increasing"),
        ("name: x\nversion: 1\ntitle: t\nlevel: nominal\ninstructions: i\nlabels:\n"
         "  - {code: a, value: 0, description: d}\n  - {code: b, value: 1, description: d}\n"
         "aliases: {z: c}\n", "not a label code"),
        ("name: x\nversion: 1\ntitle: t\nlevel: nominal\nlabels:\n"
         "  - {code: a, value: 0, description: d}\n  - {code: b, value: 1, description: d}\n",
         "missing required key 'instructions'"),
        ("name: [unclosed\n", "invalid YAML"),
    ],
)
def test_invalid_rubrics_are_one_sentence_errors(tmp_path, body, message):
    p = tmp_path / "bad.yaml"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(JudgekitError, match=message):
        load_rubric(p)


def test_unknown_rubric_name_lists_the_shipped_ones():
    with pytest.raises(JudgekitError, match="refusal_form"):
        load_rubric("refusl")
    with pytest.raises(JudgekitError, match="version 1, not 2"):
        load_rubric("refusal@2")


def test_a_misspelt_required_key_is_reported_as_the_typo(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    p = tmp_path / "typo.yaml"
    p.write_text(text.replace("instructions:", "instructons:"), encoding="utf-8")
    with pytest.raises(JudgekitError, match="unknown key 'instructons': a typo of the required key 'instructions'"):
        load_rubric(p)
