"""The shipped synthetic multi-turn data set: reproducible from its generator, and shaped as
documented (tiers, look-alikes, tactics, six turns, samples, models, human subset)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest_plugins = ["tests.analysis_fixtures"]


@pytest.fixture(scope="module")
def gen():
    from tests.analysis_fixtures import load_generator

    return load_generator()


@pytest.fixture(scope="module")
def shipped():
    from tests.analysis_fixtures import SYNTH

    return {
        "items": pd.read_csv(SYNTH / "items.csv", dtype={"item_id": str}),
        "restrictiveness": pd.read_csv(SYNTH / "restrictiveness_ratings.csv",
                                       keep_default_na=False),
        "refusal_form": pd.read_csv(SYNTH / "refusal_form_ratings.csv", keep_default_na=False),
    }


def test_generator_reproduces_the_shipped_files_byte_for_byte(gen, tmp_path):
    from tests.analysis_fixtures import SYNTH

    paths = gen.write(tmp_path)
    assert len(paths) == 3
    for p in paths:
        assert p.read_bytes() == (SYNTH / p.name).read_bytes(), f"{p.name} differs: regenerate"


def test_shape_of_the_items(shipped):
    items = shipped["items"]
    assert len(items) == 80 * 3 * 6 * 3  # prompts x models x turns x samples
    assert items["item_id"].is_unique
    assert items["conversation_id"].nunique() == 240
    assert sorted(items["model"].unique()) == ["synth-calibrated", "synth-drifting",
                                               "synth-overcautious"]
    assert sorted(items["severity"].unique()) == [1, 2, 3, 4, 5]
    assert sorted(items["turn"].unique()) == [1, 2, 3, 4, 5, 6]
    assert sorted(items["sample"].unique()) == [0, 1, 2]
    assert sorted(items["seed"].unique()) == [101, 102, 103]
    assert set(items["tactic"]) == {"roleplay", "authority", "persistence", "hypothetical",
                                    "incremental"}
    look = items[items["benign_lookalike"]]
    assert look["prompt_id"].nunique() == 20 and set(look["severity"]) == {1}
    per_conv = items.groupby("conversation_id").agg(
        p=("prompt_id", "nunique"), t=("tactic", "nunique"), m=("model", "nunique"))
    assert (per_conv == 1).all().all()


def test_messages_are_the_conversation_so_far(shipped):
    items = shipped["items"]
    for _, row in items.sample(200, random_state=0).iterrows():
        msgs = json.loads(row["messages"])
        assert len(msgs) == 2 * row["turn"] - 1
        assert [m["role"] for m in msgs] == ["user", "assistant"] * (row["turn"] - 1) + ["user"]
    # the samples of one turn share their history; only the response is a new draw
    g = items.groupby(["conversation_id", "turn"])["messages"].nunique()
    assert (g == 1).all()


def test_texts_are_harmless_placeholders(gen, shipped):
    items = shipped["items"]
    assert set(items["response"]) <= set(gen.RESPONSES.values())
    first = items[items["turn"] == 1]["messages"].map(lambda m: json.loads(m)[0]["content"])
    assert first.str.contains("placeholder request about").all()


def test_ratings_cover_what_the_readme_says(shipped):
    for name in ("restrictiveness", "refusal_form"):
        r = shipped[name]
        counts = r.groupby("rater_id").size().to_dict()
        assert counts == {"judge-a": 4320, "judge-b": 360, "ann1": 360, "ann2": 360,
                          "adjudicated": 360}
        human = set(r.loc[r["rater_id"] == "ann1", "item_id"])
        assert human == set(r.loc[r["rater_id"] == "adjudicated", "item_id"])
        assert set(r.loc[r["rater_id"] == "judge-b", "item_id"]) == human
        abstain = r[r["status"] == "abstain"]
        assert set(abstain["rater_id"]) == {"judge-a"} and (abstain["label"] == "").all()
    # the human subset reaches every model x tier x turn cell
    items = shipped["items"].set_index("item_id")
    sub = items.loc[sorted(human)]
    assert sub.groupby(["model", "severity", "turn"]).size().min() >= 2


def test_true_behaviour_matches_the_documented_design(gen):
    # the expected R of each model, as the module docstring states it
    assert gen.true_mean_r("synth-calibrated", 4, False, 6) == pytest.approx(0.75)
    assert gen.true_mean_r("synth-drifting", 4, False, 6) == pytest.approx(0.75 * (1 - 0.65))
    assert gen.true_mean_r("synth-drifting", 5, False, 6) == pytest.approx(1 - 0.35)
    assert gen.true_mean_r("synth-overcautious", 1, True, 1) == pytest.approx(0.85)
