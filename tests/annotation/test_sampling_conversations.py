"""The --by-conversation sampling design: whole conversations, weights N_s / n_s."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.annotation.sampling import SampleSpec, draw_sample
from judgekit.testing.study import make_study
from tests.conftest import one_sentence_error, store_dump


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return make_study(conversations_per_tier=4, lookalikes=2)[0]


def test_whole_conversations_and_their_weights(items: pd.DataFrame) -> None:
    spec = SampleSpec(name="d", size=100, strata=["model"], min_per_stratum=3, by_conversation=True, seed=3,
                      overlap=0.25)
    design, summary = draw_sample(items, spec)
    chosen = items[items["item_id"].isin(design["item_id"])]
    convs = chosen["conversation_id"].unique()
    # every turn of each chosen conversation is chosen: 6 items per conversation
    assert len(chosen) == 6 * len(convs)
    assert set(items.loc[items["conversation_id"].isin(convs), "item_id"]) == set(design["item_id"])
    # the target is reached with whole conversations: at most one conversation past it
    assert 100 <= len(design) < 106
    # each model has at least 3 conversations
    per_model = chosen.groupby("model")["conversation_id"].nunique()
    assert (per_model >= 3).all()
    # weight = conversations of the stratum / chosen ones (22 conversations per model)
    w = design.merge(items[["item_id", "model"]], on="item_id").groupby("model")["weight"].first()
    for model, k in per_model.items():
        assert w[model] == pytest.approx(22 / k)
    # overlap marks whole conversations: round(0.25 * chosen conversations) of them
    over = chosen[chosen["item_id"].isin(design.loc[design["overlap"] == 1, "item_id"])]
    assert over["conversation_id"].nunique() == round(0.25 * len(convs))
    assert len(over) == 6 * over["conversation_id"].nunique()
    assert set(design["reason"]) <= {"stratum", "conversation"}
    assert summary.by_reason["stratum"] == 9 * 6
    assert any("whole conversations:" in n for n in summary.notes)
    again, _ = draw_sample(items, spec)
    pd.testing.assert_frame_equal(design, again)


def test_cli_by_conversation_records_the_design(tmp_path: Path, items: pd.DataFrame) -> None:
    from judgekit.annotation.sampling import sample_design
    from judgekit.cli import main
    from judgekit.store.database import Store

    path = tmp_path / "items.csv"
    items.to_csv(path, index=False)
    db = tmp_path / "s.db"
    res = CliRunner().invoke(main, ["sample", "--name", "drift", "--size", "30", "--by-conversation",
                                    "--items", str(path), "--store", str(db)])
    assert res.exit_code == 0, res.output
    assert "whole conversations: 5 of 66 conversations (conversation_id)" in res.output
    with Store(db) as store:
        design = sample_design(store, "drift")
    assert len(design) == 30 and set(design["reason"]) == {"conversation"}
    assert design["weight"].tolist() == [66 / 5] * 30


def test_missing_conversation_column_is_one_sentence(tmp_path: Path, items: pd.DataFrame) -> None:
    from judgekit.cli import main
    from judgekit.store.database import Store

    db = tmp_path / "s.db"
    from judgekit.store.data import validate_items

    with Store(db) as store:
        store.put_items(validate_items(items, source="t", need_response=False), source="t")
    before = store_dump(db)
    res = CliRunner().invoke(main, ["sample", "--name", "x", "--size", "30", "--by-conversation",
                                    "--conversation-column", "dialog", "--store", str(db)])
    line = one_sentence_error(res)
    assert "conversation column 'dialog'" in line and "--conversation-column" in line
    assert store_dump(db) == before
