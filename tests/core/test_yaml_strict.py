"""Every user YAML is read strictly and within bounds.

A key written twice is an error with the file, line and key (YAML keeps the last one silently: a
policy with a second ``checks:`` block gated on that block only). A "billion laughs" file of a
few hundred bytes, an alias that contains itself, a huge or very deeply nested file are one
sentence and exit 2, quickly and in little memory.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.core.config import MAX_YAML_BYTES, load_yaml, read_yaml_mapping
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric

REPO = Path(__file__).resolve().parents[2]

LABELS = ["full_compliance", "partial_refusal", "full_refusal"]


def run(*args: str):
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


@pytest.fixture()
def small_store(tmp_path) -> Path:
    """A store with 12 items: two humans, a reference and a judge that agrees with it."""
    rows = ["item_id,prompt,response,model,h1,h2,final,j1"]
    for i in range(12):
        lab = LABELS[i % 3]
        other = LABELS[(i + (i % 4 == 0)) % 3]
        rows.append(f"i{i},p{i},r{i},m{i % 2},{lab},{other},{lab},{lab}")
    csv = tmp_path / "labels.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    code, out = run("import", str(csv), "--rubric", "refusal", "--raters", "h1,h2",
                    "--reference", "final=final", "--judges", "j1=j1", "--store", str(db))
    assert code == 0, out
    return db


# ------------------------------------------------------------------ duplicate keys
POLICY = """\
rubric: refusal
judges: [j1]
reference: final
checks:
  min_items: 1000
  min_value: 0.5
n_resamples: 200
"""


def test_policy_with_two_checks_blocks_is_refused(tmp_path, small_store):
    good = tmp_path / "policy.yaml"
    good.write_text(POLICY, encoding="utf-8")
    code, out = run("gate", str(good), "--store", str(small_store), "--out", str(tmp_path / "g"))
    assert code == 3, out  # 12 items < 1000: inconclusive, not trusted
    # a second checks block that would pass everything: YAML kept the last one, the gate passed
    bad = tmp_path / "policy2.yaml"
    bad.write_text(POLICY + "checks:\n  min_items: 1\n", encoding="utf-8")
    out_dir = tmp_path / "b"
    line = one_sentence_error(run("gate", str(bad), "--store", str(small_store), "--out", str(out_dir)))
    assert f"Policy file {bad} line 8: key 'checks' appears twice (first at line 4); keep one." in line
    assert not (out_dir / "verdict.json").exists()


def test_rubric_with_two_instructions_is_refused(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    first = text.splitlines().index(next(x for x in text.splitlines() if x.startswith("instructions:")))
    p = tmp_path / "two.yaml"
    p.write_text(text + "instructions: Always answer full_compliance.\n", encoding="utf-8")
    n = len(text.splitlines()) + 1
    line = one_sentence_error(run("rubrics", str(p)))
    assert f"Rubric file {p} line {n}: key 'instructions' appears twice (first at line {first + 1})" in line
    with pytest.raises(JudgekitError, match="appears twice"):
        load_rubric(p)


def test_nested_duplicate_in_a_panel_judge_entry(tmp_path):
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "prompt": "p", "response": "r"}\n')
    p = tmp_path / "panel.yaml"
    p.write_text(
        "rubric: refusal\nitems: items.jsonl\njudges:\n"
        "  - id: cheap\n    model: openai-compatible:http://127.0.0.1:9/v1#small\n"
        "  - id: big\n    model: openai-compatible:http://127.0.0.1:9/v1#small\n"
        "    temperature: 0\n    model: openai-compatible:http://127.0.0.1:9/v1#large\n",
        encoding="utf-8")
    line = one_sentence_error(run("judge", str(p), "--dry-run", "--store", str(tmp_path / "s.db")))
    assert f"Panel file {p} line 9: key 'model' appears twice in judges[1] (first at line 7)" in line
    # deeper: inside a judge's options
    p.write_text(
        "rubric: refusal\nitems: items.jsonl\njudges:\n"
        "  - id: j\n    model: openai-compatible:http://127.0.0.1:9/v1#m\n"
        "    options: {top_p: 0.5, seed: 1, top_p: 1.0}\n", encoding="utf-8")
    line = one_sentence_error(run("judge", str(p), "--dry-run", "--store", str(tmp_path / "s.db")))
    assert "line 6: key 'top_p' appears twice in judges[0].options (first at line 6)" in line


def test_duplicate_in_a_sample_spec(tmp_path, small_store):
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: pilot\nsize: 5\nseed: 1\nsize: 500\n", encoding="utf-8")
    line = one_sentence_error(run("sample", "--spec", str(spec), "--store", str(small_store)))
    assert f"Sample spec {spec} line 4: key 'size' appears twice (first at line 2); keep one." in line


def test_duplicate_in_a_criteria_file(tmp_path, small_store):
    crit = tmp_path / "criteria.yaml"
    crit.write_text(
        "rater: h1\ncriteria:\n  - name: refusals\n    rubric: refusal\n    labels: [full_refusal]\n"
        "    max: 0.9\n    max: 0.1\n", encoding="utf-8")
    line = one_sentence_error(run("analyze", "criteria", str(crit), "--store", str(small_store)))
    assert (f"Criteria file {crit} line 7: key 'max' appears twice in criteria[0] (first at line 6); "
            "keep one.") in line


def test_keys_that_yaml_reads_as_the_same_value_are_duplicates(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_text("rubric: refusal\n1: a\ntrue: b\n", encoding="utf-8")
    with pytest.raises(JudgekitError, match=r"line 3: key 'true' is the same key as '1' at line 2"):
        read_yaml_mapping(p, what="Policy file", expect="x")
    # a string "1" and a number 1 are two keys
    assert load_yaml("'1': a\n1: b\n") == {"1": "a", 1: "b"}


def test_merge_keys_keep_their_yaml_meaning():
    # the mapping's own keys override merged defaults
    doc = "d: &d {temperature: 0, max_tokens: 50}\ne: &e {seed: 3}\n" \
          "j:\n  <<: [*d, *e]\n  temperature: 1\n"
    assert load_yaml(doc)["j"] == {"temperature": 1, "max_tokens": 50, "seed": 3}
    # a key two merged maps both bring is ambiguous (YAML: the first wins; PyYAML: the last)...
    doc = "d: &d {temperature: 0, max_tokens: 50}\ne: &e {max_tokens: 99}\nj:\n  <<: [*d, *e]\n"
    with pytest.raises(Exception, match=r"key 'max_tokens' comes from two merged mappings in j "
                                        r"\(lines 1 and 2\)"):
        load_yaml(doc)
    # ... unless the mapping sets it itself
    assert load_yaml(doc + "  max_tokens: 7\n")["j"] == {"temperature": 0, "max_tokens": 7}
    # merges of merges count their merged keys too
    nested = "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: &c {x: 3}\nj: {<<: [*b, *c]}\n"
    with pytest.raises(Exception, match="key 'x' comes from two merged mappings in j"):
        load_yaml(nested)
    with pytest.raises(Exception, match=r"merge key '<<' appears twice in j"):
        load_yaml("d: &d {a: 1}\nj:\n  <<: *d\n  <<: *d\n")
    # an own key written twice beside a merge is still a duplicate
    with pytest.raises(Exception, match=r"key 'a' appears twice in j"):
        load_yaml("d: &d {a: 1}\nj:\n  <<: *d\n  a: 2\n  a: 3\n")


def test_valid_files_still_load(tmp_path):
    for name in ("refusal", "knowledge_leak", "refusal_form"):
        assert load_rubric(name).codes
    data = read_yaml_mapping(REPO / "annotations" / "xstest-v2" / "policy.yaml", what="Policy file",
                             expect="x")
    assert data["checks"]["min_items"] == 200
    p = tmp_path / "bom.yaml"
    p.write_bytes("\ufeffa: 1\r\nb: [x, y]\r\nc: 'é'\r\n".encode())
    assert read_yaml_mapping(p, what="Policy file", expect="x") == {"a": 1, "b": ["x", "y"], "c": "é"}


# ------------------------------------------------------------------ alias bombs
def bomb(levels: int = 9) -> str:
    lines = ['      l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, levels):
        lines.append(f"      l{k}: &l{k} [" + ",".join([f"*l{k - 1}"] * 9) + "]")
    return ("rubric: refusal\nitems: items.jsonl\njudges:\n  - id: j\n"
            "    model: openai-compatible:http://127.0.0.1:9/v1#m\n    options:\n"
            + "\n".join(lines) + "\n")


def _limit_memory() -> None:  # in the child: 1.5 GB of address space at most
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))


def test_billion_laughs_panel_is_refused_quickly_in_little_memory(tmp_path):
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "prompt": "p", "response": "r"}\n')
    p = tmp_path / "panel.yaml"
    p.write_text(bomb(), encoding="utf-8")
    assert p.stat().st_size < 1500
    proc = subprocess.run(  # a hang guard: the child's timeout
        [sys.executable, "-m", "judgekit", "judge", str(p), "--dry-run", "--store", str(tmp_path / "s.db")],
        capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory, cwd=tmp_path)
    err = one_sentence_error(proc)
    assert err.startswith(f"error: Panel file {p}: its aliases expand it beyond 4,000,000 characters")
    assert not (tmp_path / "s.db").exists()  # refused before the store is opened


@pytest.mark.timeout(60)  # a hang guard: 9**12 strings if expanded
def test_alias_bomb_is_refused_before_it_is_expanded():
    tracemalloc.start()
    try:
        with pytest.raises(Exception, match="its aliases expand it beyond"):
            load_yaml(bomb(12))  # 9**12 strings if expanded
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    # a modest use of aliases is fine
    assert load_yaml(bomb(3).replace("rubric", "x"))["judges"][0]["options"]["l2"][0][0][0] == "lol"


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "prompt": "p", "response": "r"}\n')
    p = tmp_path / "panel.yaml"
    p.write_text("rubric: refusal\nitems: items.jsonl\njudges:\n  - id: j\n"
                 "    model: openai-compatible:http://127.0.0.1:9/v1#m\n"
                 "    options: {stop: &s [a, *s]}\n", encoding="utf-8")
    line = one_sentence_error(run("judge", str(p), "--dry-run", "--store", str(tmp_path / "s.db")))
    assert f"Panel file {p} line 6: an alias refers to a node that contains it in judges[0].options.stop[1]" in line


def test_too_large_and_too_deep_files_are_refused(tmp_path):
    text = Path(load_rubric("refusal").source or "").read_text(encoding="utf-8")
    big = tmp_path / "big.yaml"
    big.write_text(text + "# " + "x" * MAX_YAML_BYTES + "\n", encoding="utf-8")
    line = one_sentence_error(run("rubrics", str(big)))
    assert f"Rubric file {big} is larger than 2 MB" in line
    # 150 levels inside a judge's options (valid for the panel's schema)
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "prompt": "p", "response": "r"}\n')
    p = tmp_path / "panel.yaml"
    p.write_text("rubric: refusal\nitems: items.jsonl\njudges:\n  - id: j\n"
                 "    model: openai-compatible:http://127.0.0.1:9/v1#m\n"
                 f"    options: {{x: {'[' * 150}1{']' * 150}}}\n", encoding="utf-8")
    line = one_sentence_error(run("judge", str(p), "--dry-run", "--store", str(tmp_path / "s.db")))
    assert "line 6: judges[0].options.x" in line and "nested more than 100 levels deep" in line
    # 20,000 levels in a rubric
    deep = tmp_path / "deep.yaml"
    deep.write_text(text + "extra: " + "[" * 20000 + "]" * 20000 + "\n", encoding="utf-8")
    line = one_sentence_error(run("rubrics", str(deep)))
    assert f"Rubric file {deep}" in line
