"""Sampling: which items people should rate, and the recorded design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.annotation.sampling import (
    DESIGN_COLUMNS,
    SampleSpec,
    draw_sample,
    judge_signals,
    sample_design,
    sample_items,
)
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.store.database import Store


def _jr(rows):
    return pd.DataFrame(rows, columns=["item_id", "rater_id", "label", "trial", "status"])


def test_judge_signals():
    jr = _jr([
        ("agree", "a", "x", 0, "ok"), ("agree", "b", "x", 0, "ok"),
        ("split", "a", "x", 0, "ok"), ("split", "b", "y", 0, "ok"),
        ("abst", "a", "x", 0, "ok"), ("abst", "b", None, 0, "abstain"),
        ("flip", "a", "x", 0, "ok"), ("flip", "a", "y", 1, "ok"), ("flip", "a", "x", 2, "ok"),
        ("flip", "b", "x", 0, "ok"),
        ("both", "a", "x", 0, "ok"), ("both", "b", "y", 0, "ok"), ("both", "b", None, 1, "error"),
    ])
    s = judge_signals(jr)
    flags = ["disagreement", "abstention", "unstable"]
    assert s.loc["agree", flags].tolist() == [False, False, False]
    assert pd.isna(s.loc["agree", "signal"])
    assert s.loc["split", "signal"] == "disagreement"
    assert s.loc["abst", "signal"] == "abstention"
    # judge a says x, y, x: unstable, but its own majority (x) agrees with b
    assert s.loc["flip"].tolist() == [False, False, True, "unstable"]
    assert s.loc["both", "signal"] == "disagreement" and bool(s.loc["both", "abstention"])
    # restricted to one judge, nobody disagrees
    assert not judge_signals(jr, ["a"])["disagreement"].any()


def _population(n=240, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "item_id": [f"i{i:03d}" for i in range(n)],
            "severity": rng.choice([1, 2, 3], n, p=[0.6, 0.3, 0.1]),
            "prompt_type": rng.choice(["a", "b"], n, p=[0.8, 0.2]),
        }
    )


def _signals(items, disagree, unstable):
    sig = pd.DataFrame(index=pd.Index(items["item_id"], name="item_id"))
    sig["signal"] = None
    sig.loc[sig.index[disagree], "signal"] = "disagreement"
    sig.loc[sig.index[unstable], "signal"] = "unstable"
    return sig


def test_random_share_strata_and_targeted_priority():
    items = _population()
    sig = _signals(items, disagree=list(range(0, 30)), unstable=list(range(30, 60)))
    spec = SampleSpec(name="s", size=80, random_share=0.25, strata=["severity", "prompt_type"],
                      min_per_stratum=4, overlap=0.0, seed=3)
    design, summary = draw_sample(items, spec, signals=sig)
    assert list(design.columns) == DESIGN_COLUMNS
    assert len(design) == 80 and design["item_id"].is_unique
    assert (design["reason"] == "random").sum() == 20
    # every stratum has at least 4 items (or all of its items)
    merged = design.merge(items, on="item_id")
    sizes = items.groupby(["severity", "prompt_type"]).size()
    got = merged.groupby(["severity", "prompt_type"]).size().reindex(sizes.index, fill_value=0)
    assert (got >= np.minimum(4, sizes)).all()
    # disagreement items not already drawn come before unstable ones; all fit here
    chosen = set(design["item_id"])
    assert {f"i{i:03d}" for i in range(30)} <= chosen
    targeted = design[design["reason"].isin(["disagreement", "unstable"])]
    assert set(targeted["reason"]) <= {"disagreement", "unstable"}
    assert summary.chosen == 80 and sum(summary.by_reason.values()) == 80


def test_budget_goes_to_disagreement_before_instability():
    items = _population()
    sig = _signals(items, disagree=list(range(0, 30)), unstable=list(range(30, 60)))
    spec = SampleSpec(name="s", size=20, random_share=0.0, overlap=0.0)
    design, _ = draw_sample(items, spec, signals=sig)
    assert set(design["reason"]) == {"disagreement"} and len(design) == 20
    spec = SampleSpec(name="s", size=50, random_share=0.0, overlap=0.0)
    design, _ = draw_sample(items, spec, signals=sig)
    assert (design["reason"] == "disagreement").sum() == 30
    assert (design["reason"] == "unstable").sum() == 20


def test_weights_are_inverse_sampling_fraction_of_each_cell():
    items = _population()
    sig = _signals(items, disagree=list(range(0, 40)), unstable=[])
    spec = SampleSpec(name="s", size=70, random_share=0.4, strata=["severity"], min_per_stratum=5, seed=9)
    design, _ = draw_sample(items, spec, signals=sig)
    pop = items.assign(sig=sig["signal"].reindex(items["item_id"]).fillna("-").to_numpy())
    pop["cell"] = pop["sig"] + "/" + pop["severity"].astype(str)
    n_cell = pop["cell"].value_counts()
    chosen = pop[pop["item_id"].isin(design["item_id"])]
    k_cell = chosen["cell"].value_counts()
    w = design.set_index("item_id")["weight"]
    for _, row in chosen.iterrows():
        assert w[row["item_id"]] == pytest.approx(n_cell[row["cell"]] / k_cell[row["cell"]])
    # weights of chosen items add up to the population of the covered cells
    assert w.sum() == pytest.approx(n_cell[k_cell.index].sum())


def test_weighted_and_random_share_estimates_are_unbiased():
    # humans agree with the judge on 90% of ordinary items, 30% of disagreement items
    items = _population(300, seed=5)
    rng = np.random.default_rng(0)
    disagree = rng.choice(300, 45, replace=False)
    y = np.where(np.isin(np.arange(300), disagree), rng.random(300) < 0.3, rng.random(300) < 0.9).astype(float)
    truth = y.mean()
    yv = pd.Series(y, index=items["item_id"])
    sig = _signals(items, disagree=list(disagree), unstable=[])
    weighted, naive, random_only = [], [], []
    for seed in range(300):
        spec = SampleSpec(name="s", size=60, random_share=0.3, strata=["severity"], min_per_stratum=3,
                          overlap=0.0, seed=seed)
        d, _ = draw_sample(items, spec, signals=sig)
        vals = yv[d["item_id"]].to_numpy()
        weighted.append(np.average(vals, weights=d["weight"]))
        naive.append(vals.mean())
        random_only.append(vals[(d["reason"] == "random").to_numpy()].mean())
    for est in (weighted, random_only):
        se = np.std(est) / np.sqrt(len(est))
        assert abs(np.mean(est) - truth) < 4 * se + 1e-3
    # the targeted sample alone, unweighted, is far off: that is why the design is recorded
    assert np.mean(naive) < truth - 0.1


def test_overlap_prefers_the_random_share():
    items = _population()
    spec = SampleSpec(name="s", size=50, random_share=0.4, overlap=0.2, seed=2)
    design, summary = draw_sample(items, spec)
    assert design["overlap"].sum() == 10 == summary.overlap
    assert set(design.loc[design["overlap"] == 1, "reason"]) == {"random"}
    spec = SampleSpec(name="s", size=50, random_share=0.1, overlap=0.5, seed=2)
    design, _ = draw_sample(items, spec)
    over = design[design["overlap"] == 1]
    assert len(over) == 25 and (over["reason"] == "random").sum() == 5


def test_same_seed_same_sample_and_size_beyond_population():
    items = _population(50)
    spec = SampleSpec(name="s", size=20, strata=["severity"], min_per_stratum=2, seed=4)
    a, _ = draw_sample(items, spec)
    b, _ = draw_sample(items, spec)
    pd.testing.assert_frame_equal(a, b)
    c, _ = draw_sample(items, spec.model_copy(update={"seed": 5}))
    assert set(c["item_id"]) != set(a["item_id"])
    d, summary = draw_sample(items, SampleSpec(name="s", size=80))
    assert len(d) == 50 and any("exceeds the 50 items" in n for n in summary.notes)


# ----------------------------------------------------------------------- store
def _store_with_judges(store):
    items = _population(60)
    items["prompt"] = "p"
    items["response"] = "r"
    store.put_items(items)
    rows = []
    for i in range(60):
        iid = f"i{i:03d}"
        rows.append((iid, "gpt4", "judge", "full_refusal"))
        rows.append((iid, "claude", "judge", "full_compliance" if i < 8 else "full_refusal"))
    rows.append(("i010", "ann1", "human", "full_refusal"))
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    from judgekit.io.ratings import prepare_ratings
    from judgekit.rubric.model import load_rubric

    _, ratings = prepare_ratings(df, load_rubric("refusal"), source="t")
    store.put_ratings(ratings.drop(columns=["_row"]))


def test_sample_items_records_the_design(store):
    _store_with_judges(store)
    spec = SampleSpec(name="pilot", size=20, rubric="refusal", strata=["severity"], random_share=0.25,
                      min_per_stratum=2)
    design, summary = sample_items(store, spec)
    back = sample_design(store, "pilot")
    assert list(back.columns) == DESIGN_COLUMNS
    pd.testing.assert_frame_equal(back, design[DESIGN_COLUMNS].astype(back.dtypes.to_dict()))
    # the 8 items the two judges disagree on are all in (budget allows)
    assert {f"i{i:03d}" for i in range(8)} <= set(back["item_id"])
    with pytest.raises(JudgekitError, match="Sample 'pilot' already exists"):
        sample_items(store, spec)
    sample_items(store, spec.model_copy(update={"seed": 1}), replace=True)
    with pytest.raises(JudgekitError, match="Sample 'nope' is not in .*recorded samples: pilot"):
        sample_design(store, "nope")


def test_sample_bad_input(store):
    _store_with_judges(store)
    with pytest.raises(JudgekitError, match="stratum column 'tier' is not item metadata") as info:
        sample_items(store, SampleSpec(name="a", size=5, strata=["tier"]))
    assert "severity" in str(info.value) and "content_hash" not in str(info.value)
    with pytest.raises(JudgekitError, match="judge 'gemini' has no ratings under refusal@1"):
        sample_items(store, SampleSpec(name="a", size=5, rubric="refusal", judges=["gemini"]))
    assert store.sample_names() == []


def test_exclude_rated(store):
    _store_with_judges(store)
    design, summary = sample_items(store, SampleSpec(name="x", size=60, rubric="refusal", exclude_rated=True))
    assert len(design) == 59 and "i010" not in set(design["item_id"])
    # the random share is random over the unrated items only: the summary says so
    assert "1 items a human already rated are left out: the random share and the weights describe " \
        "the 59 unrated items, not all 60." in summary.notes


def test_cli_sample(tmp_path):
    db = tmp_path / "j.db"
    with Store(db) as s:
        _store_with_judges(s)
    out_csv = tmp_path / "design.csv"
    result = CliRunner().invoke(main, ["sample", "--name", "pilot", "--size", "12", "--rubric", "refusal",
                                       "--by", "severity", "--min-per-stratum", "2", "--overlap", "0.25",
                                       "--store", str(db), "--out", str(out_csv)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Sample 'pilot': 12 of 60 items")
    assert "3 marked for at least two annotators" in result.output
    written = pd.read_csv(out_csv)
    assert list(written.columns) == DESIGN_COLUMNS and len(written) == 12
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: other\nsize: 5\nsizes: 3\n")
    result = CliRunner().invoke(main, ["sample", "--spec", str(spec), "--store", str(db)])
    assert one_sentence_error(result) == f"error: Sample spec {spec}: unknown key 'sizes' (a typo?); remove or rename it."


def test_cli_sample_failure_leaves_the_store_unchanged(tmp_path):
    db = tmp_path / "j.db"
    items_csv = tmp_path / "items.csv"
    _population(30).assign(prompt="p", response="r").to_csv(items_csv, index=False)
    # a draw that fails after --items was read: the items are not stored either
    result = CliRunner().invoke(main, ["sample", "--name", "pilot", "--size", "10", "--items", str(items_csv),
                                       "--by", "tier", "--store", str(db)])
    one_sentence_error(result, "stratum column 'tier'")
    with Store(db) as s:
        assert s.items().empty
    # an --out the command cannot write: nothing recorded, so the same name can be drawn again
    result = CliRunner().invoke(main, ["sample", "--name", "pilot", "--size", "10", "--items", str(items_csv),
                                       "--store", str(db), "--out", str(tmp_path / "design.xlsx")])
    one_sentence_error(result, "cannot tell the format")
    with Store(db) as s:
        assert s.items().empty
        assert s.sample_names() == []
    result = CliRunner().invoke(main, ["sample", "--name", "pilot", "--size", "10", "--items", str(items_csv),
                                       "--store", str(db), "--out", str(tmp_path / "design.csv")])
    assert result.exit_code == 0, result.output
    with Store(db) as s:
        assert len(s.items()) == 30 and len(sample_design(s, "pilot")) == 10
