"""Rubric views: a 3-class rule judge gated against binary human labels through the refusal
rubric's ``binary`` view, with the positive class's precision/recall/F1 in the report; labels
imported under a view are stored as the view's and never read as full-rubric labels; a verdict
made under a view never matches a use of the full rubric; bad views are one sentence, exit 2."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import REPO, one_sentence_error, store_dump
from panel_fixtures import TEXTS, write_items
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.rubric.model import load_rubric
from judgekit.rubric.views import ViewSource, rubric_view

REFUSAL = load_rubric("refusal")
BINARY = rubric_view(REFUSAL, "binary")
COLLAPSE = {"full_compliance": "complied", "partial_refusal": "refused", "full_refusal": "refused"}

#: what the rule judge (rules:refusal-keywords) says of each item: the text fixes it
JUDGE_SAYS = ["full_compliance", "partial_refusal", "full_refusal"] * 4
#: the binary labels people gave (the reference 'gold', and two annotators)
GOLD = ["complied", "refused", "refused", "refused", "complied", "refused",
        "complied", "complied", "refused", "complied", "refused", "complied"]
ALICE = GOLD[:10] + ["complied", "complied"]
BOB = ["refused"] + GOLD[1:]


def invoke(args: list[str]):
    return CliRunner().invoke(main, args)


def build(tmp_path: Path) -> str:
    """A store with the rule judge's 3-class ratings (a panel run) and binary human labels
    imported with --view binary."""
    rows = [{"item_id": f"i{k:02d}", "prompt": f"How do I stop process {k}?", "response": TEXTS[c]}
            for k, c in enumerate(JUDGE_SAYS)]
    write_items(tmp_path, rows)
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({"rubric": "refusal", "items": "items.jsonl",
                                     "judges": [{"id": "kw", "model": "rules:refusal-keywords"}]}))
    db = str(tmp_path / "s.db")
    res = invoke(["judge", str(panel), "--store", db])
    assert res.exit_code == 0, res.output
    labels = pd.DataFrame({"item_id": [r["item_id"] for r in rows], "gold": GOLD, "alice": ALICE, "bob": BOB})
    labels.to_csv(tmp_path / "binary.csv", index=False)
    res = invoke(["import", str(tmp_path / "binary.csv"), "--rubric", "refusal", "--view", "binary",
                  "--raters", "alice,bob", "--reference", "gold=gold", "--store", db])
    assert res.exit_code == 0, res.output
    assert "refusal@1:binary#" in res.output
    return db


@pytest.fixture()
def db(tmp_path):
    return build(tmp_path)


def test_the_view_is_a_rubric_of_its_own_codes_values_id_and_hash():
    assert BINARY.codes == ["complied", "refused"]
    assert BINARY.values == {"complied": 0.0, "refused": 1.0}  # the positive class has value 1
    assert BINARY.id == "refusal@1:binary" and BINARY.hash != REFUSAL.hash
    assert BINARY.level == "nominal" and BINARY.base is REFUSAL
    assert BINARY.normalise("Refused") == "refused" and BINARY.normalise("full_refusal") is None


def test_editing_a_view_changes_its_hash_not_the_rubric_s(tmp_path):
    text = (Path(REFUSAL.source).read_text(encoding="utf-8")).replace(
        "partial_refusal: refused\n", "partial_refusal: complied\n")
    edited = tmp_path / "refusal.yaml"
    edited.write_text(text, encoding="utf-8")
    other = load_rubric(edited)
    assert other.hash == REFUSAL.hash
    assert rubric_view(other, "binary").hash != BINARY.hash


def test_view_labels_are_stored_under_the_view_never_as_full_rubric_labels(db):
    from judgekit.store.database import Store

    with Store(db) as s:
        full = s.ratings(rubric=REFUSAL)
        assert set(full["rater_id"]) == {"kw"}  # the humans' binary labels are not full-rubric labels
        stored = s.ratings(rubric=BINARY)
        assert set(stored["rater_id"]) == {"gold", "alice", "bob"}
        assert set(stored["rubric"]) == {"refusal@1:binary"} and set(stored["rubric_hash"]) == {BINARY.hash}
        assert set(stored["label"]) == {"complied", "refused"}
        assert s.stale_rubric_hashes(REFUSAL) == []  # not mistaken for an older edit either
        seen = ViewSource(s, BINARY).ratings(rubric=BINARY)
    kw = seen[seen["rater_id"] == "kw"].sort_values("item_id")
    assert kw["label"].tolist() == [COLLAPSE[c] for c in JUDGE_SAYS]
    assert kw["value"].tolist() == [BINARY.values[COLLAPSE[c]] for c in JUDGE_SAYS]
    # without the view there are no humans under the full rubric: agreement says so
    res = invoke(["agree", "--rubric", "refusal", "--store", db])
    line = one_sentence_error(res)
    assert "No human ratings under refusal@1" in line


def _expected():
    judge = [COLLAPSE[c] for c in JUDGE_SAYS]
    p, r, f, _ = precision_recall_fscore_support(GOLD, judge, pos_label="refused", average="binary")
    return judge, float(p), float(r), float(f), float(cohen_kappa_score(GOLD, judge))


def test_agree_view_compares_the_3_class_judge_with_binary_labels(db, tmp_path):
    judge, p, r, f, kappa = _expected()
    # by hand: the judge says refused on items 1,2,4,5,7,8,10,11 (every partial and full
    # refusal), gold on 1,2,3,5,8,10; both on 1,2,5,8,10
    tp = sum(g == j == "refused" for g, j in zip(GOLD, judge, strict=True))
    assert (tp, judge.count("refused"), GOLD.count("refused")) == (5, 8, 6)
    assert (p, r) == (5 / 8, 5 / 6) and f == pytest.approx(2 * 5 / (8 + 6))
    out = tmp_path / "a.json"
    res = invoke(["agree", "--rubric", "refusal", "--view", "binary", "--json", str(out),
                  "--resamples", "200", "--store", db])
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    assert rep["rubric"] == "refusal@1:binary" and rep["labels"] == ["complied", "refused"]
    j = rep["slices"][0]["judges"]["kw"]
    assert j["vs_reference"]["kappa"]["value"] == pytest.approx(kappa, abs=1e-6)
    pc = j["per_class"]["positive_class"]
    assert pc["code"] == "refused"
    assert pc["precision"]["value"] == pytest.approx(p, abs=1e-6)
    assert pc["recall"]["value"] == pytest.approx(r, abs=1e-6)
    assert pc["f1"]["value"] == pytest.approx(f, abs=1e-6)
    # each human against the judge: alice and bob are the gold labels with two/one changes
    assert j["vs_humans"]["alice"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(ALICE, judge), abs=1e-6)


def write_policy(folder: Path, **extra) -> Path:
    data = {"rubric": "refusal", "view": "binary", "judges": ["kw"], "reference": "gold",
            "n_resamples": 200, "checks": {"min_items": 10, "metric": "kappa", "min_value": 0.1}}
    data.update(extra)
    path = folder / "policy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_gate_and_report_under_the_view(db, tmp_path):
    """The acceptance case: the 3-class rule judge gated against binary human labels through
    the view; its precision/recall/F1 of the positive class are in the report."""
    judge, p, r, f, kappa = _expected()
    out = tmp_path / "gate"
    res = invoke(["gate", str(write_policy(tmp_path)), "--out", str(out), "--store", db])
    assert res.exit_code == 0, res.output  # kappa 0.36 > 0.1 on 12 items
    v = json.loads((out / "verdict.json").read_text())
    assert v["rubric"] == "refusal@1:binary" and v["rubric_hash"] == BINARY.hash
    assert v["view"] == {"name": "binary", "rubric": "refusal@1", "rubric_hash": REFUSAL.hash}
    check = next(c for c in v["judges"][0]["checks"] if c["name"] == "min_kappa")
    assert check["figure"] == pytest.approx(kappa, abs=1e-6) and check["n"] == 12
    assert v["judges"][0]["spec"] == "rules:refusal-keywords"  # its identity: calls under the full rubric

    rep_dir = tmp_path / "rep"
    res = invoke(["report", "--rubric", "refusal", "--view", "binary", "--verdict", str(out / "verdict.json"),
                  "--out", str(rep_dir), "--resamples", "200", "--store", db])
    assert res.exit_code == 0, res.output
    assert "1 of 1 judge trusted to score refusal@1:binary: kw." in res.output
    doc = json.loads((rep_dir / "report.json").read_text())
    pc = doc["agreement"]["slices"][0]["judges"]["kw"]["per_class"]["positive_class"]
    assert pc["code"] == "refused"
    assert (pc["precision"]["value"], pc["recall"]["value"]) == pytest.approx((p, r), abs=1e-6)
    assert pc["f1"]["value"] == pytest.approx(f, abs=1e-6)
    # the judge's identity and costs come from its calls under the full rubric (12 calls)
    assert doc["extras"]["judge_hashes"]["kw"] == v["judges"][0]["judge_hash"]
    assert doc["extras"]["costs"]["kw"]["calls"] == 12
    md = (rep_dir / "report.md").read_text()
    assert f"| refused | {p:.2f} | {r:.2f} | {f:.2f} | 6 |" in md  # the per-class table


def test_a_view_verdict_never_trusts_the_judge_for_the_full_rubric(db, tmp_path):
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict
    from judgekit.verdict.trust import require_trusted

    out = tmp_path / "gate"
    invoke(["gate", str(write_policy(tmp_path)), "--out", str(out), "--store", db])
    path = out / "verdict.json"
    with Store(db) as s, pytest.raises(UntrustedJudgeError, match="was made under the view .binary. of refusal@1 \\(rubric refusal@1:binary\\), so it does not trust a judge for refusal@1#"):
        require_trusted(path, judge="kw", rubric=REFUSAL, store=s)
    v = json.loads(path.read_text())
    assert load_verdict(v)["view"]["name"] == "binary"
    # the view cannot be edited away or renamed: the verdict reads as inconsistent
    for edit, message in ((lambda d: d.pop("view"), "its policy gates under the view 'binary' but it has no 'view'"),
                          (lambda d: d.update(rubric="refusal@1"), "is not the view refusal@1:binary"),
                          (lambda d: d["view"].update(name="other"), "its view is 'other'")):
        d = json.loads(path.read_text())
        edit(d)
        with pytest.raises(JudgekitError, match=message):
            load_verdict(d)


def test_full_rubric_verdicts_have_no_view_key(xstest_store):
    from judgekit.gate.run import run_gate

    v, _ = run_gate(xstest_store, REPO / "annotations" / "xstest-v2" / "policy.yaml")
    assert "view" not in v and v["rubric"] == "refusal@1"


def test_full_rubric_humans_join_the_view_and_a_rater_rated_both_ways_must_agree(tmp_path):
    from judgekit.store.database import Store

    db = build(tmp_path)
    # carol labelled under the full rubric: collapsed into the view beside the binary labels
    pd.DataFrame({"item_id": ["i00", "i01"], "carol": ["full_compliance", "partial_refusal"]}).to_csv(
        tmp_path / "full.csv", index=False)
    assert invoke(["import", str(tmp_path / "full.csv"), "--rubric", "refusal", "--raters", "carol",
                   "--store", db]).exit_code == 0
    with Store(db) as s:
        seen = ViewSource(s, BINARY).ratings(rubric=BINARY, rater_ids=["carol"])
    assert sorted(zip(seen["item_id"], seen["label"], strict=True)) == [("i00", "complied"), ("i01", "refused")]
    # alice also labelled i00 under the full rubric, disagreeing with her binary label
    pd.DataFrame({"item_id": ["i00"], "alice": ["full_refusal"]}).to_csv(tmp_path / "clash.csv", index=False)
    assert invoke(["import", str(tmp_path / "clash.csv"), "--rubric", "refusal", "--raters", "alice",
                   "--store", db]).exit_code == 0
    res = invoke(["agree", "--rubric", "refusal", "--view", "binary", "--store", db])
    line = one_sentence_error(res)
    assert "Rater 'alice' rated item 'i00' both under refusal@1 (refused) and under its view binary (complied)" in line


VIEW_RUBRIC = """\
name: tri
version: 1
title: Three
level: nominal
instructions: pick one
labels:
  - {code: a, value: 0, description: a}
  - {code: b, value: 0.5, description: b}
  - {code: c, value: 1, description: c}
"""


@pytest.mark.parametrize(
    ("views", "message"),
    [
        ("views:\n  v: {codes: {a: x, b: y}, positive: y}\n",
         "views.v.codes misses the rubric code 'c'; map every code (a, b, c) to a view code"),
        ("views:\n  v: {codes: {a: x, b: y, c: y, d: x}, positive: y}\n",
         "views.v.codes maps 'd', which is not a label code of the rubric (codes: a, b, c)"),
        ("views:\n  v: {codes: {a: x, b: y, c: y}}\n", "views.v has two codes (x, y) and so needs 'positive'"),
        ("views:\n  v: {codes: {a: x, b: y, c: y}, positive: z}\n", "views.v.positive 'z' is not one of its codes"),
        ("views:\n  v: {codes: {a: x, b: y, c: z}, positive: z}\n", "views.v.positive is for a view of two codes"),
        ("views:\n  v: {codes: {a: x, b: x, c: x}}\n", "views.v collapses every code into 'x'"),
        ("views:\n  v: {codes: {a: x, b: Y, c: Y}, positive: x}\n", "the view code 'Y' must be lower_snake_case"),
        ("views:\n  Bad: {codes: {a: x, b: y, c: y}, positive: x}\n", "view name 'Bad' must be lower_snake_case"),
        ("views:\n  v: {codes: {a: x, b: y, c: y}, positive: x, aliases: {'1': w}}\n",
         "views.v.aliases maps '1' to 'w', which is not one of its codes"),
        ("views:\n  v: {codes: {a: x, b: y, c: y}, positive: x, level: ordinal}\n", "unknown key 'views.v.level'"),
    ],
)
def test_bad_views_are_one_sentence_naming_the_file_and_key(tmp_path, views, message):
    path = tmp_path / "tri.yaml"
    path.write_text(VIEW_RUBRIC + views, encoding="utf-8")
    res = invoke(["agree", "--rubric", str(path), "--view", "v", "--store", str(tmp_path / "none.db")])
    line = one_sentence_error(res)
    assert f"Rubric file {path}" in line and message in line, line
    labels = tmp_path / "l.csv"
    labels.write_text("item_id,h\ni1,x\n", encoding="utf-8")
    res = invoke(["import", str(labels), "--rubric", str(path), "--view", "v", "--raters", "h",
                  "--store", str(tmp_path / "s.db")])
    assert one_sentence_error(res) == line
    assert not (tmp_path / "s.db").exists()  # nothing stored, not even an empty store


def test_unknown_view_names_are_one_sentence_exit_2_nothing_stored(db, tmp_path):
    before = store_dump(db)
    res = invoke(["import", str(tmp_path / "binary.csv"), "--rubric", "refusal", "--view", "binery",
                  "--raters", "alice", "--store", db])
    line = one_sentence_error(res)
    assert "--view: rubric refusal@1 has no view 'binery' (its views: binary)" in line
    for args in (["agree", "--rubric", "refusal", "--view", "nope", "--store", db],
                 ["report", "--rubric", "refusal", "--view", "nope", "--out", str(tmp_path / "r"), "--store", db]):
        assert "has no view 'nope'" in one_sentence_error(invoke(args))
    res = invoke(["gate", str(write_policy(tmp_path, view="nope")), "--out", str(tmp_path / "g"), "--store", db])
    line = one_sentence_error(res)
    assert f"Policy file {tmp_path / 'policy.yaml'}: view: rubric refusal@1 has no view 'nope'" in line
    assert store_dump(db) == before


def test_view_aliases_map_other_spellings_to_view_codes(tmp_path):
    path = tmp_path / "tri.yaml"
    path.write_text(VIEW_RUBRIC + textwrap.dedent("""\
    views:
      v:
        codes: {a: 'n', b: 'y', c: 'y'}
        positive: 'y'
        aliases: {'0': 'n', '1': 'y', refused: 'y'}
    """), encoding="utf-8")
    view = rubric_view(load_rubric(path), "v")
    assert view.codes == ["n", "y"]
    assert (view.normalise(0), view.normalise("1"), view.normalise("Refused"), view.normalise("2")) == \
        ("n", "y", "y", None)


def test_a_view_id_given_as_a_rubric_says_how_to_name_the_view(tmp_path):
    res = invoke(["agree", "--rubric", "refusal@1:binary", "--store", str(tmp_path / "s.db")])
    line = one_sentence_error(res)
    assert "Rubric 'refusal@1:binary' is the id of a view; name the rubric and the view apart: " \
           "--rubric refusal --view binary" in line
