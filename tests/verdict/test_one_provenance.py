"""A judge is gated on ratings of one source: its own panel calls or one import. Ratings of a
judge that mix sources, or that an import wrote over on the human-labelled items, are not
certified, with one sentence; the verdict names the source it certified and binds its digest.
On the bad-input corpus's template store (tests/corpus/base.py: 12 labelled items i0..i11,
reference final, judge j1 imported with the labels), through the command line."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from tests.corpus.base import LABELS, build_template


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("provenance")
    build_template(folder)
    return folder


@pytest.fixture
def case(template: Path, tmp_path: Path) -> Path:
    for name in ("store.db", "verdict.json", "labels.csv", "policy.yaml"):
        shutil.copy(template / name, tmp_path / name)
    (tmp_path / "policy-jl.yaml").write_text((tmp_path / "policy.yaml").read_text().replace("[j1]", "[jl]"))
    return tmp_path


def cli(*args: object) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, res.output


def finals(case: Path) -> list[str]:
    return [line.split(",")[8] for line in (case / "labels.csv").read_text().splitlines()[1:]]


def import_jl(case: Path, name: str, rows: dict[str, str]) -> None:
    """Judge ``jl``'s labels ``{item_id: label}`` imported from the file ``name`` (unlabelled
    items u* get their own prompt and response)."""
    lines = ["item_id,prompt,response,label,rater_id,rater_kind"]
    lines += [f"{i},other {i},answer {i},{lab},jl,judge" if i.startswith("u") else f"{i},,,{lab},jl,judge"
              for i, lab in rows.items()]
    (case / name).write_text("\n".join(lines) + "\n")
    code, out = cli("import", case / name, "--rubric", "refusal", "--store", case / "store.db")
    assert code == 0, out


def gate(case: Path, policy: str = "policy-jl.yaml", out: str = "g") -> tuple[int, str, dict]:
    code, text = cli("gate", case / policy, "--store", case / "store.db", "--out", case / out)
    path = case / out / "verdict.json"
    return code, text, json.loads(path.read_text()) if path.exists() else {}


def entry(verdict: dict, judge: str = "jl") -> dict:
    return next(j for j in verdict["judges"] if j["judge"] == judge)


def provenance(verdict: dict, judge: str = "jl") -> dict:
    return next(c for c in entry(verdict, judge)["checks"] if c["kind"] == "one_provenance")


LEANING = {**{f"i{i}": LABELS[2] for i in range(12)}, **{f"u{i}": LABELS[2] for i in range(10)}}


def test_a_leaning_judge_whose_labelled_ratings_an_import_replaced_with_the_references_is_not_certified(case):
    import_jl(case, "run.csv", LEANING)  # the judge's own run: always full_refusal
    code, _, genuine = gate(case)
    assert code == 1 and entry(genuine)["state"] == "fail"
    import_jl(case, "fix.csv", {f"i{i}": lab for i, lab in enumerate(finals(case))})  # the reference's labels
    code, text, verdict = gate(case)
    assert code == 1, text
    check = provenance(verdict)
    assert entry(verdict)["state"] == "fail" and check["state"] == "fail"
    # the 8 labelled items whose label changed came from fix.csv, the rest from run.csv
    assert "2 sources" in check["detail"] and "8 from the import" in check["detail"]
    assert "one_provenance" in text and "judge 'jl'" in text
    code, out = cli("analyze", "distribution", "--judge", "jl", "--rubric", "refusal", "--no-forms",
                    "--verdict", case / "g" / "verdict.json", "--store", case / "store.db", "--bootstrap", "0",
                    "--quiet", "--out", case / "out")
    msg = one_sentence_error((code, out))
    assert "judge 'jl'" in msg and "2 sources" in msg and "one source" in msg


def test_an_import_that_replaced_every_labelled_rating_is_not_certified(case):
    import_jl(case, "run.csv", {f"i{i}": LABELS[(LABELS.index(f) + 1) % 3] for i, f in enumerate(finals(case))})
    import_jl(case, "fix.csv", {f"i{i}": f for i, f in enumerate(finals(case))})  # all 12 replaced
    code, text, verdict = gate(case)
    assert code == 1, text
    check = provenance(verdict)
    assert check["state"] == "fail" and "an import replaced 12 of judge 'jl'" in check["detail"]


def test_labels_from_two_imports_one_on_the_unlabelled_items_are_not_certified(case):
    import_jl(case, "rest.csv", {f"u{i}": LABELS[2] for i in range(10)})
    import_jl(case, "labelled.csv", {f"i{i}": f for i, f in enumerate(finals(case))})
    code, text, verdict = gate(case)
    assert code == 1, text
    assert "2 sources" in provenance(verdict)["detail"]


def test_one_import_is_certified_and_the_verdict_names_it_with_its_digest(case):
    run = {**{f"i{i}": f for i, f in enumerate(finals(case))}, **{f"u{i}": LABELS[2] for i in range(10)}}
    import_jl(case, "run.csv", run)
    code, text, verdict = gate(case)
    assert code == 0, text
    (source, digest), = entry(verdict)["provenance"].items()
    assert source.startswith("import:") and len(digest) == 16
    assert entry(verdict)["source"] == source
    assert not [c for c in entry(verdict)["checks"] if c["kind"] == "one_provenance"]  # only the policy's checks


def test_the_templates_imported_judge_still_passes(case):
    code, text, verdict = gate(case, "policy.yaml")
    assert code == 0, text
    assert entry(verdict, "j1")["source"].startswith("import:")


# ----------------------------------------------------------------------------- a panel judge
def panel_judge(case: Path) -> None:
    """``pj``, a panel judge (``replay:``, offline) that agrees with the reference on i0..i11."""
    items = [{"item_id": f"i{i}", "prompt": f"prompt {i}", "response": f"response {i}"} for i in range(12)]
    (case / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (case / "answers.csv").write_text("\n".join(["item_id,label"] + [f"i{i},{f}" for i, f in enumerate(finals(case))])
                                      + "\n")
    (case / "panel.yaml").write_text("rubric: refusal\nitems: items.jsonl\naggregate: null\njudges:\n"
                                     "  - id: pj\n    model: \"replay:answers.csv#label\"\n")
    code, out = cli("judge", case / "panel.yaml", "--store", case / "store.db")
    assert code == 0, out
    (case / "policy-pj.yaml").write_text((case / "policy.yaml").read_text().replace("[j1]", "[pj]"))


def test_a_panel_judge_is_certified_on_its_own_calls(case):
    panel_judge(case)
    code, text, verdict = gate(case, "policy-pj.yaml")
    assert code == 0, text
    assert entry(verdict, "pj")["provenance"] == {"panel": "calls"} and entry(verdict, "pj")["source"] == "panel"


def test_a_panel_rating_edited_before_the_gate_is_not_certified(case):
    panel_judge(case)
    con = sqlite3.connect(case / "store.db")
    con.execute("UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'pj' AND item_id = 'i2'")
    con.commit()
    con.close()
    code, text, verdict = gate(case, "policy-pj.yaml")
    assert code == 1, text
    assert "1 of judge 'pj''s panel ratings are not what a call" in provenance(verdict, "pj")["detail"]


def test_a_panel_judges_labelled_ratings_replaced_by_an_import_are_not_certified(case):
    panel_judge(case)
    (case / "over.csv").write_text("item_id,label,rater_id,rater_kind\ni2,full_compliance,pj,judge\n")
    code, out = cli("import", case / "over.csv", "--rubric", "refusal", "--store", case / "store.db")
    assert code == 0, out
    code, text, verdict = gate(case, "policy-pj.yaml")
    assert code == 1, text
    assert "2 sources" in provenance(verdict, "pj")["detail"]


def test_the_plan_says_no_labels_decide_a_judge_of_two_sources(case):
    import_jl(case, "rest.csv", {f"u{i}": LABELS[2] for i in range(10)})
    import_jl(case, "labelled.csv", {f"i{i}": f for i, f in enumerate(finals(case))})
    code, out = cli("plan", case / "policy-jl.yaml", "--store", case / "store.db", "--out", case / "plan.json")
    assert code == 0, out
    (line,) = [x for x in out.splitlines() if "one_provenance" in x]
    assert "undecidable" in line and "come from 2 sources" in line and "ratings of the judge" in line
