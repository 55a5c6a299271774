"""Trust that cannot be walked around, on the bad-input corpus's
template store (tests/corpus/base.py: 12 items with model, category and prompt_id; humans h1, h2,
reference final and judge j1, imported, under refusal; the gate's passing verdict for j1), through
the command line as a user runs it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis.options import Resampling
from judgekit.analysis.trust import TrustContext
from judgekit.cli import main
from tests.corpus.base import LABELS, build_template


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("walkaround")
    build_template(folder)
    return folder


@pytest.fixture
def case(template: Path, tmp_path: Path) -> Path:
    for name in ("store.db", "verdict.json", "labels.csv", "policy.yaml"):
        shutil.copy(template / name, tmp_path / name)
    return tmp_path


def cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, res.output


def analyze(folder: Path, verdict: str = "verdict.json") -> tuple[int, str]:
    return cli("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms",
               "--verdict", folder / verdict, "--store", folder / "store.db", "--bootstrap", "0",
               "--quiet", "--out", folder / "out")


def test_the_untouched_store_is_trusted(case):
    code, out = analyze(case)
    assert code == 0, out
    assert json.loads((case / "out" / "distribution.json").read_text())["trusted"] is True


# ----------------------------------------------------------- metadata re-imported after the gate
def _reimport_humans_with(case: Path, column: str, values: dict[int, str]) -> None:
    """The humans' own labels, unchanged, with ``column`` set anew (another slice or tier)."""
    rows = [line.rsplit(",", 1)[0] for line in (case / "labels.csv").read_text().splitlines()]  # no j1
    head = rows[0].split(",")
    at = head.index(column) if column in head else None
    out = [rows[0] if at is not None else rows[0] + f",{column}"]
    for i, line in enumerate(rows[1:]):
        cells = line.split(",")
        if at is not None:
            cells[at] = values.get(i, cells[at])
        else:
            cells.append(values.get(i, "1"))
        out.append(",".join(cells))
    (case / "relabel.csv").write_text("\n".join(out) + "\n")
    code, output = cli("import", case / "relabel.csv", "--rubric", "refusal", "--raters", "h1,h2",
                       "--reference", "final=final", "--store", case / "store.db")
    assert code == 0, output


@pytest.mark.parametrize(("column", "values"), [
    ("model", {0: "m1", 1: "m0", 2: "m1"}),      # labelled items moved to another model
    ("category", {3: "c9"}),                      # ... to another slice
    ("severity", {0: "5", 1: "1"}),               # a harm column added after the gate
])
def test_metadata_of_the_gated_items_reimported_after_the_gate_is_refused(case, column, values):
    _reimport_humans_with(case, column, values)
    code, out = analyze(case)
    msg = one_sentence_error((code, out))
    assert f"'{column}'" in msg and "judgekit gate" in msg and "metadata" in msg
    assert not (case / "out" / "distribution.json").exists()


def test_after_the_gate_runs_again_the_new_metadata_is_trusted(case):
    _reimport_humans_with(case, "model", {0: "m1", 1: "m0"})
    code, out = cli("gate", case / "policy.yaml", "--store", case / "store.db", "--out", case / "g2")
    assert code == 0, out
    code, out = analyze(case, "g2/verdict.json")
    assert code == 0, out


def test_an_older_verdict_without_metadata_hashes_is_refused_with_one_sentence(case):
    from judgekit.store.database import Store
    from judgekit.verdict.log import record_verdict

    old = json.loads((case / "verdict.json").read_text())
    del old["meta_hashes"]
    for j in old["judges"]:
        j.pop("provenance")
        j.pop("source", None)  # (an older judgekit recorded neither)
    (case / "old.json").write_text(json.dumps(old))
    with Store(case / "store.db") as s:  # as an older judgekit's gate recorded it
        record_verdict(s, old)
    code, out = analyze(case, "old.json")
    msg = one_sentence_error((code, out))
    assert "older judgekit" in msg and "metadata" in msg and "judgekit gate" in msg


# ---------------------------------------------- judge labels imported or edited after the gate
def _import_judge_labels(case: Path, items: range, *, judge: str = "j1") -> None:
    rows = ["item_id,prompt,response,model,prompt_id,label,rater_id,rater_kind"]
    rows += [f"n{i},new prompt {i},new response {i},m{i % 2},q{i},{LABELS[2]},{judge},judge" for i in items]
    (case / "more.csv").write_text("\n".join(rows) + "\n")
    code, out = cli("import", case / "more.csv", "--rubric", "refusal", "--store", case / "store.db")
    assert code == 0, out


def test_judge_labels_imported_under_its_name_after_the_gate_are_left_out_and_said(case):
    _import_judge_labels(case, range(300))
    code, out = analyze(case)
    assert code == 0, out
    result = json.loads((case / "out" / "distribution.json").read_text())
    assert result["trusted"] is True
    samples = sum(row["n_samples"] for row in result["tables"]["by_model"]["rows"])
    assert samples == 12  # the gated 12, not the 300 imported after
    notes = [n for n in result["notes"] if "left out" in n]
    assert len(notes) == 1 and "300 of the 312 ratings of judge 'j1'" in notes[0]


def test_an_analysis_given_the_foreign_ratings_directly_refuses(case):
    from judgekit.analysis.distribution.estimate import refusal_distribution
    from judgekit.errors import UntrustedJudgeError
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    _import_judge_labels(case, range(5))
    rubric = load_rubric("refusal")
    with Store(case / "store.db") as s:
        ratings = s.ratings(rubric=rubric, rater_ids=["j1"])
        with pytest.raises(UntrustedJudgeError, match="5 of the ratings of judge 'j1'"):
            refusal_distribution(ratings, s.items(), rubric=rubric,
                                 trust=TrustContext(verdicts=[case / "verdict.json"], store=s),
                                 resampling=Resampling(n_resamples=0))


def test_an_imported_judges_labels_edited_with_sqlite_are_refused(case):
    _import_judge_labels(case, range(3))  # a later import the verdict does not cover
    con = sqlite3.connect(case / "store.db")
    # every label of j1, including the gated ones on items no human rated... here: all of them
    con.execute("UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'j1' AND item_id = 'i11'")
    con.commit()
    con.close()
    code, out = analyze(case)
    msg = one_sentence_error((code, out))
    assert "'j1'" in msg and "judgekit gate" in msg


def test_an_imported_judges_gated_labels_on_unlabelled_items_edited_with_sqlite_are_refused(case):
    # judge j2's run, imported in one file: the labelled items and 10 items no human rated, then the gate
    finals = [line.split(",")[8] for line in (case / "labels.csv").read_text().splitlines()[1:]]
    rows = ["item_id,prompt,response,model,prompt_id,label,rater_id,rater_kind"]
    rows += [f"i{i},,,,,{lab},j2,judge" for i, lab in enumerate(finals)]
    rows += [f"n{i},new prompt {i},new response {i},m{i % 2},q{i},{LABELS[2]},j2,judge" for i in range(10)]
    (case / "j2.csv").write_text("\n".join(rows) + "\n")
    code, out = cli("import", case / "j2.csv", "--rubric", "refusal", "--store", case / "store.db")
    assert code == 0, out
    (case / "policy-j2.yaml").write_text((case / "policy.yaml").read_text().replace("[j1]", "[j2]"))
    code, out = cli("gate", case / "policy-j2.yaml", "--store", case / "store.db", "--out", case / "g2")
    assert code == 0, out
    con = sqlite3.connect(case / "store.db")
    con.execute("UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'j2' AND item_id = 'n3'")
    con.commit()
    con.close()
    code, out = cli("analyze", "distribution", "--judge", "j2", "--rubric", "refusal", "--no-forms",
                    "--verdict", case / "g2" / "verdict.json", "--store", case / "store.db", "--bootstrap", "0",
                    "--quiet", "--out", case / "out")
    msg = one_sentence_error((code, out))
    assert "'j2'" in msg and "edited, replaced or removed" in msg and "judgekit gate" in msg


# ----------------------------------------------------------------------------- a panel judge
@pytest.fixture
def panel(case: Path) -> Path:
    """``pj``, a real panel judge (``replay:``, offline) that agrees with the reference on the 12
    labelled items and rated 10 items no human rated (u0..u9), gated (``gp/verdict.json``)."""
    finals = [line.split(",")[8] for line in (case / "labels.csv").read_text().splitlines()[1:]]
    items = [{"item_id": f"i{i}", "prompt": f"prompt {i}", "response": f"response {i}"} for i in range(12)]
    items += [{"item_id": f"u{i}", "prompt": f"other {i}", "response": f"answer {i}", "model": f"m{i % 2}",
               "prompt_id": f"q{i}"} for i in range(10)]
    (case / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    answers = ["item_id,label"] + [f"i{i},{finals[i]}" for i in range(12)] + [f"u{i},full_refusal" for i in range(10)]
    (case / "answers.csv").write_text("\n".join(answers) + "\n")
    (case / "panel.yaml").write_text("rubric: refusal\nitems: items.jsonl\naggregate: null\njudges:\n"
                                     "  - id: pj\n    model: \"replay:answers.csv#label\"\n")
    code, out = cli("judge", case / "panel.yaml", "--store", case / "store.db")
    assert code == 0, out
    (case / "policy-pj.yaml").write_text((case / "policy.yaml").read_text().replace("[j1]", "[pj]"))
    code, out = cli("gate", case / "policy-pj.yaml", "--store", case / "store.db", "--out", case / "gp")
    assert code == 0, out
    return case


def analyze_pj(folder: Path) -> tuple[int, str, dict]:
    code, out = cli("analyze", "distribution", "--judge", "pj", "--rubric", "refusal", "--no-forms",
                    "--verdict", folder / "gp" / "verdict.json", "--store", folder / "store.db",
                    "--bootstrap", "0", "--quiet", "--out", folder / "op")
    result = json.loads((folder / "op" / "distribution.json").read_text()) if code == 0 else {}
    return code, out, result


def _samples(result: dict) -> int:
    return sum(row["n_samples"] for row in result["tables"]["by_model"]["rows"])


def test_a_gated_panel_judge_is_trusted_on_what_it_rated(panel):
    code, out, result = analyze_pj(panel)
    assert code == 0, out
    assert result["trusted"] is True and _samples(result) == 22
    assert not [n for n in result["notes"] if "left out" in n]


def test_labels_imported_under_a_panel_judges_name_are_left_out_with_their_count(panel):
    _import_judge_labels(panel, range(300), judge="pj")
    code, out, result = analyze_pj(panel)
    assert code == 0, out
    assert result["trusted"] is True and _samples(result) == 22
    (note,) = [n for n in result["notes"] if "left out" in n]
    assert "300 of the 322 ratings of judge 'pj'" in note


def test_a_panel_rating_edited_with_sqlite_after_its_call_is_left_out(panel):
    con = sqlite3.connect(panel / "store.db")
    con.execute("UPDATE ratings SET label = 'full_compliance' WHERE rater_id = 'pj' AND item_id LIKE 'u%'")
    con.commit()
    con.close()
    code, out, result = analyze_pj(panel)
    assert code == 0, out
    assert result["trusted"] is True and _samples(result) == 12
    (note,) = [n for n in result["notes"] if "left out" in n]
    assert "10 of the 22 ratings of judge 'pj'" in note


# ------------------------------------------------------- texts edited, content hash kept
@pytest.mark.parametrize("edit", [
    "UPDATE items SET response = 'an edited response' WHERE item_id = 'i3'",
    "UPDATE items SET prompt = 'an edited prompt' WHERE item_id = 'i3'",
    "UPDATE items SET messages = '[{\"role\": \"user\", \"content\": \"hi\"}]' WHERE item_id = 'i3'",
])
def test_an_items_text_edited_with_its_content_hash_kept_is_refused(case, edit):
    con = sqlite3.connect(case / "store.db")
    con.execute(edit)  # content_hash left as it was: items_hash alone cannot see it
    con.commit()
    con.close()
    code, out = analyze(case)
    msg = one_sentence_error((code, out))
    assert "'i3'" in msg and "content_hash" in msg and "judgekit gate" in msg


# ----------------------------------------------------------------------------- older stores
def test_a_store_made_before_provenance_keeps_working(case):
    """A store whose ratings were written before migration 011 (no provenance): the migration adds
    the column, its judge ratings count as 'unrecorded', the gate covers them and the analysis
    trusts them; a later import under the judge's name is left out."""
    con = sqlite3.connect(case / "store.db")
    con.execute("UPDATE ratings SET provenance = NULL")  # as the migration leaves older ratings
    con.execute("DELETE FROM migrations WHERE name LIKE '011%'")  # later migrations made no table of 011's
    con.execute("ALTER TABLE ratings DROP COLUMN provenance")
    con.execute("DROP TABLE store_checks")
    con.commit()
    con.close()
    code, out = analyze(case)  # the verdict recorded the digests of the imports it saw
    one_sentence_error((code, out), "j1")
    code, out = cli("gate", case / "policy.yaml", "--store", case / "store.db", "--out", case / "g2")
    assert code == 0, out
    verdict = json.loads((case / "g2" / "verdict.json").read_text())
    assert set(verdict["judges"][0]["provenance"]) == {"unrecorded"}
    _import_judge_labels(case, range(4))
    code, out = analyze(case, "g2/verdict.json")
    assert code == 0, out
    notes = json.loads((case / "out" / "distribution.json").read_text())["notes"]
    assert any("4 of the 16 ratings of judge 'j1'" in n for n in notes)


# ----------------------------------------------------------------------------- forms
def test_refusal_forms_imported_under_a_gated_judges_name_are_left_out_too(synthetic_store, tmp_path):
    """The refusal-form ratings of the judge feed the distribution: the ones its refusal_form
    verdict does not cover are left out as the restrictiveness ones are, and counted."""
    import pandas as pd

    from judgekit.analysis import inputs
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    db = tmp_path / "s.db"
    shutil.copy(synthetic_store["store"], db)
    forms = load_rubric("refusal_form")
    with Store(db) as s:
        items = s.items()[["item_id"]].head(5).assign(item_id=lambda d: "new-" + d["item_id"].astype(str),
                                                       prompt="p", response="r")
        s.put_items(items)
        s.put_ratings(pd.DataFrame({"item_id": items["item_id"], "rater_id": "judge-a", "rater_kind": "judge",
                                    "rubric": forms.id, "rubric_hash": forms.hash, "label": forms.codes[0]}))
        verdicts = inputs.load_verdicts([synthetic_store["restrictiveness"], synthetic_store["refusal_form"]])
        data = inputs.distribution_inputs(s, load_rubric("restrictiveness"), "judge-a", verdicts=verdicts)
    assert data.forms is not None and not data.forms["item_id"].str.startswith("new-").any()
    assert len(data.notes) == 1 and "5 of the" in data.notes[0] and forms.id in data.notes[0]


pytest_plugins = ["tests.analysis_fixtures"]
