"""Columns named by the user that collide with columns an analysis adds.

``--prompt-column item_id`` (with the refusal forms) crashed with ``The column label 'item_id' is
not unique``; ``--by model`` on the demo's own analysis store crashed with ``Grouper for '_model'
not 1-dimensional``. Each analysis now works, or refuses in one sentence naming the option and
the column; a metadata column the analysis does not use can have any name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis import inputs
from judgekit.analysis.calibration.estimate import calibration
from judgekit.analysis.distribution.estimate import refusal_distribution
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.analysis.trust import TrustContext
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

REPO = Path(__file__).resolve().parents[2]
SYNTH = REPO / "annotations" / "synthetic-multiturn"
RESTR = load_rubric("restrictiveness")


@pytest.fixture(scope="module")
def demo_analysis_store(tmp_path_factory) -> Path:
    """The store ``judgekit demo`` writes as ``analysis.db``, built the way the demo builds it
    (:func:`judgekit.demo._run_analyses`: both rubrics imported with the items file)."""
    from judgekit.io.ratings import import_ratings

    path = tmp_path_factory.mktemp("demo") / "analysis.db"
    with Store(path) as store:
        for rub, name in (("restrictiveness", "restrictiveness_ratings.csv"),
                          ("refusal_form", "refusal_form_ratings.csv")):
            import_ratings(store, SYNTH / name, load_rubric(rub), items_path=SYNTH / "items.csv")
    return path


@pytest.fixture(scope="module")
def dist_data(demo_analysis_store):
    with Store(demo_analysis_store) as store:
        return inputs.distribution_inputs(store, RESTR, "judge-a", untrusted=True)


@pytest.fixture(scope="module")
def cal_data(demo_analysis_store):
    with Store(demo_analysis_store) as store:
        return inputs.calibration_inputs(store, RESTR, "judge-a", harm_column="severity")


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _distribution(data, items=None, **columns):
    return refusal_distribution(data.ratings, data.items if items is None else items,
                                rubric=RESTR, forms=data.form_ratings,
                                columns=ItemColumns(**columns),
                                trust=TrustContext(untrusted=True), resampling=Resampling(20))


def _calibration(data, items=None, **columns):
    return calibration(data.ratings, data.items if items is None else items, data.harm,
                       rubric=RESTR, harm_source=data.harm_source, columns=ItemColumns(**columns),
                       trust=TrustContext(untrusted=True), resampling=Resampling(20))


# --------------------------------------------------------------------------- the two crashes
def test_by_model_on_the_demo_store_works_and_says_it_adds_no_slice(demo_analysis_store, tmp_path):
    base = ["analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness",
            "--untrusted", "--store", demo_analysis_store, "--bootstrap", "50", "--quiet"]
    res = run(*base, "--by", "model", "--out", tmp_path / "with")
    assert res.exit_code == 0, res.output
    assert "--by model adds no slice" in res.output
    res = run(*base, "--out", tmp_path / "without")
    assert res.exit_code == 0, res.output
    with_by = json.loads((tmp_path / "with" / "distribution.json").read_text())
    without = json.loads((tmp_path / "without" / "distribution.json").read_text())
    assert with_by["tables"].keys() == without["tables"].keys()
    assert with_by["tables"]["by_model"] == without["tables"]["by_model"]
    assert "by_model_model" not in with_by["tables"]


def test_prompt_column_item_id_with_forms_works(demo_analysis_store, tmp_path):
    res = run("analyze", "distribution", "--judge", "judge-a", "--rubric", "restrictiveness",
              "--untrusted", "--prompt-column", "item_id", "--store", demo_analysis_store,
              "--bootstrap", "20", "--quiet", "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o" / "distribution.json").read_text())
    per_prompt = doc["tables"]["per_prompt"]["rows"]
    n_items = len({r["item_id"] for r in per_prompt})
    assert n_items == len(per_prompt) > 100  # every item is its own prompt unit
    assert all(r["n_samples"] == 1 for r in per_prompt)
    # the forms are attached (a few samples have no usable form rating)
    assert sum(bool(r["forms"]) for r in per_prompt) > 0.99 * len(per_prompt)
    assert doc["meta"]["prompt_unit"][0] == "item_id" and "forms" in doc["tables"]


def test_items_without_a_prompt_id_fall_back_to_item_id_with_forms(dist_data):
    items = dist_data.items.drop(columns=["conversation_id", "prompt_id"])
    result = _distribution(dist_data, items)
    assert result.meta["prompt_unit"][0] == "item_id"
    assert not result.table("forms").empty


@pytest.mark.parametrize("command", ["distribution", "calibration"])
def test_prompt_column_equal_to_the_model_column_is_one_sentence(demo_analysis_store, command):
    extra = ["--harm-column", "severity"] if command == "calibration" else []
    res = run("analyze", command, "--judge", "judge-a", "--rubric", "restrictiveness",
              "--untrusted", "--prompt-column", "model", "--store", demo_analysis_store,
              "--bootstrap", "20", "--quiet", *extra)
    line = one_sentence_error(res)
    assert line.startswith("error: --model-column 'model' is also the prompt unit")


# --------------------------------------------------------------------------- named collisions
@pytest.mark.parametrize("column", ["rate", "n_samples", "refused", "_model", "forms",
                                    "direct_refusal"])
def test_distribution_by_a_column_it_adds_is_one_sentence(dist_data, column):
    items = dist_data.items.assign(**{column: "x"})
    with pytest.raises(JudgekitError) as err:
        _distribution(dist_data, items, by=[column])
    assert str(err.value).startswith(f"--by {column!r}: analyze distribution adds a column "
                                     f"named {column!r}")


def test_distribution_prompt_column_it_adds_is_one_sentence(dist_data):
    items = dist_data.items.assign(rate=dist_data.items["prompt_id"])
    with pytest.raises(JudgekitError, match=r"^--prompt-column 'rate': analyze distribution adds"):
        _distribution(dist_data, items, prompt="rate")


def test_distribution_model_column_named_like_a_working_column(dist_data):
    items = dist_data.items.assign(refused=dist_data.items["model"])
    with pytest.raises(JudgekitError, match=r"^--model-column 'refused': analyze distribution"):
        _distribution(dist_data, items, model="refused")


def test_distribution_ignores_unused_metadata_named_like_its_columns(dist_data):
    plain = _distribution(dist_data, by=["severity"])
    items = dist_data.items.assign(refused="oops", rate=-1, _model="zz", n_samples="n")
    clashing = _distribution(dist_data, items, by=["severity"])
    for key in ("by_model", "by_severity", "per_prompt"):
        pd.testing.assert_frame_equal(clashing.table(key), plain.table(key))


@pytest.mark.parametrize("column", ["C", "RCE", "drift", "n_units", "turn"])
def test_calibration_by_a_figure_column_is_one_sentence(cal_data, column):
    # the slice value would have been overwritten by the figure of the same name
    items = cal_data.items.assign(**{column: "x"}) if column != "turn" else cal_data.items
    with pytest.raises(JudgekitError) as err:
        _calibration(cal_data, items, by=[column])
    assert str(err.value).startswith(f"--by {column!r}: analyze calibration adds a column")


@pytest.mark.parametrize("column", ["H", "value", "_over"])
def test_calibration_by_a_working_column_is_one_sentence(cal_data, column):
    # --by H was silently the harm H, not the items' own H column
    items = cal_data.items.assign(**{column: "mine"})
    with pytest.raises(JudgekitError) as err:
        _calibration(cal_data, items, by=[column])
    assert str(err.value).startswith(f"--by {column!r}: analyze calibration adds a column")


@pytest.mark.parametrize("column", ["R", "cluster", "tier"])
def test_calibration_prompt_column_named_like_a_unit_column(cal_data, column):
    items = cal_data.items.assign(**{column: cal_data.items["conversation_id"]})
    with pytest.raises(JudgekitError, match=rf"^--prompt-column '{column}': analyze calibration"):
        _calibration(cal_data, items, prompt=column)


def test_calibration_ignores_unused_metadata_named_like_its_columns(cal_data):
    plain = _calibration(cal_data)
    items = cal_data.items.assign(value="oops", H=9, _err="e", R="r", cluster="c")
    clashing = _calibration(cal_data, items)
    for key in ("summary", "by_turn"):
        pd.testing.assert_frame_equal(clashing.table(key), plain.table(key))


def test_criteria_per_column_named_like_a_per_seed_column(demo_analysis_store, tmp_path):
    with Store(demo_analysis_store) as store:
        data = inputs.criteria_inputs(store)
    from judgekit.analysis.criteria import evaluate_criteria, parse_criteria

    def spec(per):
        return parse_criteria({"rater": "judge-a", "per": per, "criteria": [
            {"name": "few hard refusals", "rubric": "restrictiveness", "label": "r4_hard_refusal",
             "op": "<=", "threshold": 0.9}]}, source="criteria.yaml")

    for per in ("n", "value", "_hit"):
        items = data.items.assign(**{per: data.items["seed"]})
        with pytest.raises(JudgekitError, match=rf"^criteria.yaml: criterion 'few hard refusals': "
                                                rf"per column '{per}' has the name"):
            evaluate_criteria(spec(per), data.ratings, items, source="criteria.yaml",
                              trust=TrustContext(untrusted=True))
    result, _ = evaluate_criteria(spec("item_id"), data.ratings, data.items, source="criteria.yaml",
                                  trust=TrustContext(untrusted=True))
    assert len(result.table("per_seed")) > 100


# --------------------------------------------------------------------------- the reserved lists
def test_reserved_lists_cover_every_column_the_analyses_add(dist_data, cal_data):
    """Guards the lists the checks use: a column added to a table later must be added there."""
    from judgekit.analysis.calibration.estimate import SLICE_TABLE_COLUMNS
    from judgekit.analysis.calibration.units import ITEM_WORK_COLUMNS, UNIT_COLUMNS
    from judgekit.analysis.distribution.estimate import ADDED_COLUMNS

    result = _distribution(dist_data, by=["severity", "tactic"])
    user = {"item_id", "severity", "tactic", "turn", "conversation_id", "prompt_id", "stamp"}
    codes = set(dist_data.form_rubric.codes)
    for t in result.tables:
        extra = set(t.frame.columns) - user - set(ADDED_COLUMNS) - codes
        assert not extra, (t.key, extra)
    result = _calibration(cal_data, by=["tactic"])
    for t in result.tables:
        extra = (set(t.frame.columns) - {"tactic", "tier"} - set(SLICE_TABLE_COLUMNS)
                 - set(UNIT_COLUMNS) - set(ITEM_WORK_COLUMNS)
                 - {"n_prompts", "mean_R_ci_low", "mean_R_ci_high", "over_refusal_rate",
                    "over_ci_low", "over_ci_high"})  # look-alike tables: not sliced by --by
        assert not extra, (t.key, extra)
    from judgekit.analysis.calibration.units import build_units
    from judgekit.analysis.frames import per_item_values

    units, _, ucols = build_units(per_item_values(cal_data.ratings, RESTR), cal_data.items,
                                  cal_data.harm, by=["tactic"])
    assert set(units.columns) - set(ucols) - {"by_tactic"} <= set(UNIT_COLUMNS)
