"""``judgekit agree --between A,B``: judges compared with each other where no human looked.

Figures are checked against scikit-learn on the same items; a judge that agrees on the
human-labelled sample but drifts on the unlabelled bulk must show a gap between the
``human_rated = yes`` and ``no`` rows; the report gets its section.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from sklearn.metrics import cohen_kappa_score

from judgekit.agreement.between import between_report
from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def demo_panel(tmp_path_factory):
    """The demo's panel store, built as `judgekit demo` builds it (offline, fake provider)."""
    from judgekit.judges.demo import run_demo_panel

    folder = tmp_path_factory.mktemp("panel")
    with Store(folder / "panel.db") as store:
        summary = run_demo_panel(store, folder)
    return folder / "panel.db", summary


def _labels(db, rater):
    with Store.open_existing(db) as store:
        r = store.ratings(rubric=load_rubric("refusal"), rater_ids=[rater])
    r = r[r["status"] == "ok"]
    # a judge with trials (the demo's LLM judge has three): the majority label of its trials, an
    # item whose trials tie left out, as the agreement statistics collapse them
    out = {}
    for item, labels in r.groupby("item_id")["label"]:
        counts = labels.value_counts()
        if len(counts) == 1 or counts.iloc[0] > counts.iloc[1]:
            out[item] = counts.index[0]
    return pd.Series(out, name="label")


def test_between_on_the_demo_panel(demo_panel, tmp_path) -> None:
    db, summary = demo_panel
    assert "panel:majority" in summary["judges"]
    out = tmp_path / "b.json"
    r = run("agree", "--rubric", "refusal", "--between", "keywords,scripted-llm", "--by", "model",
            "--store", db, "--resamples", "200", "--json", out)
    assert r.exit_code == 0, r.output
    assert "keywords vs scripted-llm under refusal" in r.output
    data = json.loads(out.read_text())
    assert data["between"] == ["keywords", "scripted-llm"]
    a, b = _labels(db, "keywords"), _labels(db, "scripted-llm")
    both = a.index.intersection(b.index)
    rows = {(row["by"], row["key"]): row for row in data["rows"]}
    overall = rows[(None, "all")]
    assert overall["n_both"] == len(both) == 39  # the scripted judge abstains once
    assert overall["percent_agreement"]["value"] == pytest.approx(
        (a[both] == b[both]).mean(), abs=1e-6)
    assert overall["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(a[both], b[both]), abs=1e-6)
    lo, hi = overall["kappa"]["low"], overall["kappa"]["high"]
    assert lo <= overall["kappa"]["value"] <= hi
    with Store.open_existing(db) as store:
        models = store.items().set_index("item_id")["model"]
    for model in sorted(models.unique()):
        ids = [i for i in both if models[i] == model]
        assert rows[("model", model)]["n_both"] == len(ids)
        assert rows[("model", model)]["percent_agreement"]["value"] == pytest.approx(
            (a[ids] == b[ids]).mean(), abs=1e-6)
    # every demo item was labelled by a human: the unlabelled row says why it is empty
    assert rows[("human_rated", "yes")]["n_both"] == 39
    no = rows[("human_rated", "no")]
    assert no["n_both"] == 0 and no["kappa"]["undefined"] == "a human rated every item"
    # a panel aggregate is a rater like any other
    r = run("agree", "--rubric", "refusal", "--between", "recorded,panel:majority", "--store", db,
            "--resamples", "100")
    assert r.exit_code == 0, r.output
    assert "recorded vs panel:majority" in r.output


def test_drift_on_the_unlabelled_bulk_is_visible() -> None:
    rub = load_rubric("refusal")
    codes = rub.codes
    rows, items = [], []
    for i in range(200):
        iid = f"i{i}"
        truth = codes[i % 3]
        items.append({"item_id": iid, "model": "m"})
        labelled = i < 60
        a_label = truth
        b_label = truth if labelled or i % 2 else codes[(i + 1) % 3]  # b drifts where unlabelled
        rows += [(iid, "judge-a", "judge", a_label), (iid, "judge-b", "judge", b_label)]
        if labelled:
            rows.append((iid, "ann", "human", truth))
    df = pd.DataFrame([{"item_id": iid, "rater_id": r, "rater_kind": k, "rubric": rub.id,
                        "rubric_hash": rub.hash, "label": lab, "value": rub.values[lab],
                        "trial": 0, "status": "ok"} for iid, r, k, lab in rows])
    rep = between_report(df, rubric=rub, pair=("judge-a", "judge-b"), items=pd.DataFrame(items),
                         n_resamples=200)
    got = {(r["by"], r["key"]): r for r in rep["rows"]}
    assert got[("human_rated", "yes")]["n_both"] == 60
    assert got[("human_rated", "yes")]["percent_agreement"]["value"] == 1.0
    no = got[("human_rated", "no")]
    assert no["n_both"] == 140
    assert no["percent_agreement"]["value"] == pytest.approx(70 / 140)  # the odd half agree
    assert no["percent_agreement"]["high"] < 0.65
    assert got[(None, "all")]["percent_agreement"]["value"] == pytest.approx(130 / 200)


@pytest.mark.parametrize(("args", "needle"), [
    (["--between", "keywords"], "must name two different raters"),
    (["--between", "keywords,keywords"], "must name two different raters"),
    (["--between", "keywords,nobody"], "rater 'nobody' has no ratings under refusal"),
    (["--between", "keywords,recorded", "--judges", "keywords"], "drop --judges"),
])
def test_between_bad_input_is_one_sentence(demo_panel, args, needle) -> None:
    db, _ = demo_panel
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", *args, "--store", str(db)])
    one_sentence_error(r, needle)


def test_report_has_the_section(demo_panel, tmp_path) -> None:
    db, _ = demo_panel
    r = run("report", "--rubric", "refusal", "--store", db, "--out", tmp_path / "rep",
            "--resamples", "100")
    assert r.exit_code == 0, r.output
    md = next((tmp_path / "rep").glob("*.md")).read_text()
    assert "## Judges compared where no human looked" in md
    assert "| keywords vs scripted-llm | all items | 39 |" in md
    assert "keywords vs panel:majority" in md
    html = next((tmp_path / "rep").glob("*.html")).read_text()
    assert "Judges compared where no human looked" in html
    doc = json.loads(next((tmp_path / "rep").glob("*.json")).read_text())
    pairs = [c["between"] for c in doc["extras"]["between"]]
    assert ["keywords", "scripted-llm"] in pairs and len(pairs) == 6
