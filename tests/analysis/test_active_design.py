"""An active labelling design end to end: drawn by `judgekit sample --active` with recorded
probabilities, read back as a design, accepted by `--correct ppi`; a targeted sample without
probabilities is still refused in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.analysis.correction.active import active_design, cluster_of, corrected_active
from judgekit.analysis.correction.design import design_strata
from judgekit.annotation.active import (
    draw_active,
    judge_confidence,
    label_cells,
    learned_error,
    predicted_error,
)
from judgekit.annotation.sampling import sample_design
from judgekit.cli import main as cli
from judgekit.errors import JudgekitError
from judgekit.store.database import Store
from judgekit.testing.study import LEVELS, make_study, write_study


def _run(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_confidence_multiplies_trial_and_panel_agreement() -> None:
    r = pd.DataFrame({
        "item_id": ["a", "a", "a", "a", "b", "b", "b"],
        "rater_id": ["j", "j", "j", "k", "j", "j", "k"],
        "label": ["x", "x", "y", "y", "x", "x", "x"],
        "trial": [0, 1, 2, 0, 0, 1, 0], "status": "ok"})
    conf = judge_confidence(r, "j", panel=["k"])
    # a: j says x in 2 of 3 trials, k says y: 2/3 × 1/2; b: all agree
    assert conf["a"] == pytest.approx(1 / 3) and conf["b"] == pytest.approx(1.0)
    assert predicted_error(conf)["b"] == pytest.approx(0.02)  # never zero


def test_learned_error_by_label_cell_follows_the_labelled_errors() -> None:
    r = pd.DataFrame({"item_id": list("abcdef") * 2, "rater_id": ["j"] * 6 + ["k"] * 6,
                      "label": ["x", "x", "x", "y", "y", "y", "x", "x", "y", "y", "y", "x"],
                      "status": "ok"})
    cells = label_cells(r, ["j", "k"])
    assert cells.to_dict() == {"a": "x|x", "b": "x|x", "c": "x|y", "d": "y|y", "e": "y|y",
                               "f": "y|x"}
    conf = judge_confidence(r, "j", panel=["k"])
    # labelled: a (right), c (wrong), d (right), weights 2; prior 0: each cell's own rate
    err = learned_error(conf, pd.Series([0.0, 1.0, 0.0], index=["a", "c", "d"]),
                        pd.Series(2.0, index=["a", "c", "d"]), cells=cells, prior=0.0)
    assert err["b"] == pytest.approx(0.02) and err["c"] == pytest.approx(1.0)
    assert err["f"] == pytest.approx(1 / 3)  # an unlabelled cell: the overall rate


def test_draw_by_conversation_gives_every_turn_its_conversation_probability() -> None:
    items, ratings = make_study(seed=1, human_share=1.0)
    conf = judge_confidence(ratings, "judge-lean", panel=["judge-fair"])
    d = draw_active(items, predicted_error(conf), 40, cluster_col="conversation_id", seed=2)
    conv = items.set_index("item_id")["conversation_id"].reindex(d["item_id"])
    per = d.groupby(conv.to_numpy())["probability"].agg(["min", "max", "size"])
    assert (per["min"] == per["max"]).all() and (per["size"] == 6).all()
    assert np.allclose(d["weight"], 1.0 / d["probability"])
    assert (d["reason"] == "active").all() and d["stratum"].str.startswith("active:round=0").all()
    # a second round never draws a conversation of the first again
    d2 = draw_active(items, predicted_error(conf), 40, cluster_col="conversation_id", seed=2,
                     round_no=1, known=set(conv))
    conv2 = items.set_index("item_id")["conversation_id"].reindex(d2["item_id"])
    assert not set(conv2) & set(conv)


def test_design_accepts_active_rows_and_reads_their_probabilities() -> None:
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(6)],
                          "conversation_id": ["c0", "c0", "c1", "c1", "c2", "c2"]})
    rows = pd.DataFrame({"item_id": ["i0", "i1", "i4", "i5"], "reason": "active",
                         "stratum": ["active:round=0;share=1"] * 2 + ["active:round=1;share=1"] * 2,
                         "weight": [4.0, 4.0, 2.0, 2.0], "overlap": 0})
    d = design_strata(items, rows, labelled=["i0", "i1"], cluster_col="conversation_id",
                      sample="s")
    assert d.active is not None and "active design" in d.description
    ad, ids = active_design(cluster_of(items, "conversation_id"), rows)
    assert list(ids) == ["c0", "c1", "c2"]
    assert list(ad.round_of) == [0, -1, 1]
    assert ad.probs[0, 0] == 0.25 and ad.probs[1, 0] == 1.0 and ad.probs[1, 2] == 0.5
    bad = rows.assign(weight=[4.0, 2.0, 2.0, 2.0])
    with pytest.raises(JudgekitError, match="one conversation carry different probabilities"):
        active_design(cluster_of(items, "conversation_id"), bad)


def test_corrected_active_rate_equals_the_weighted_estimator_by_hand() -> None:
    # 4 clusters of one item, one round; labelled c0 (π = .5) and c1 (π = .25); λ fixed by n < 10
    items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "model": "m"})
    rows = pd.DataFrame({"item_id": ["a", "b"], "reason": "active",
                         "stratum": "active:round=0;share=1.5", "weight": [2.0, 4.0],
                         "overlap": 0})
    f = pd.Series([1.0, 0.0, 1.0, 0.0], index=list("abcd"))
    y = pd.Series([0.0, 0.25], index=["a", "b"])
    t = corrected_active(items, f, y, rows, figure="rate", group_col=None)
    # λ = 1: θ = Σ[f + (y − f) ξ/π] / Σ m = ((1 − 1·2) + (0 + .25·4) + 1 + 0) / 4
    assert t.loc[0, "corrected"] == pytest.approx(0.25)
    assert t.loc[0, "raw"] == pytest.approx(0.5) and t.loc[0, "n_labelled"] == 2


@pytest.fixture(scope="module")
def active_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The synthetic study's judges in a store, an active sample drawn by conversation in two
    rounds, and the reference's labels on its items."""
    folder = tmp_path_factory.mktemp("active")
    paths = write_study(folder, human_share=1.0)
    ratings = pd.read_csv(paths["ratings"])
    ratings[ratings["rater_kind"] == "judge"].to_csv(folder / "judges.csv", index=False)
    store = folder / "judgekit.db"
    assert _run("import", folder / "judges.csv", "--rubric", "restrictiveness", "--items",
                paths["items"], "--store", store).exit_code == 0
    for _ in range(2):
        res = _run("sample", "--name", "act", "--size", "40", "--rubric", "restrictiveness",
                   "--active", "judge-lean", "--judges", "judge-lean,judge-fair",
                   "--by-conversation", "--store", store)
        assert res.exit_code == 0, res.output
        with Store(store) as st:
            chosen = set(sample_design(st, "act")["item_id"])
        ref = ratings[(ratings["rater_kind"] == "reference") & ratings["item_id"].isin(chosen)]
        ref.to_csv(folder / "ref.csv", index=False)
        assert _run("import", folder / "ref.csv", "--rubric", "restrictiveness",
                    "--store", store).exit_code == 0
    assert "active round 1" in res.output
    return store, folder


def test_cli_correct_accepts_an_active_sample(active_store: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    store, _ = active_store
    res = _run("analyze", "distribution", "--judge", "judge-lean", "--rubric", "restrictiveness",
               "--no-forms", "--untrusted", "--correct",
               "ppi", "--sample", "act", "--quiet", "--out", tmp_path, "--store", store)
    assert res.exit_code == 0, res.output
    assert "active design" in res.output
    data = json.loads((tmp_path / "distribution.json").read_text())
    rows = data["tables"]["ppi_active_rates"]["rows"]
    overall = next(r for r in rows if r["model"] == "all")
    assert overall["ci_low"] <= overall["corrected"] <= overall["ci_high"]
    assert overall["expected_labels"] == pytest.approx(80.0)
    # what the design bought, per figure: labels used, effective labels, uniform at the width
    assert "Labels bought by the design" in res.output
    assert overall["uniform_labels"] > 0


def test_cli_calibration_corrects_rce_and_drift_under_an_active_sample(
        active_store: tuple[Path, Path], tmp_path: Path) -> None:
    store, folder = active_store
    res = _run("analyze", "calibration", "--judge", "judge-lean", "--untrusted",
               "--harm-column", "severity", "--correct", "ppi", "--sample", "act",
               "--by", "tactic", "--bootstrap", "20", "--quiet", "--out", tmp_path,
               "--store", store)
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "calibration.json").read_text())
    by_tactic = pd.DataFrame(data["tables"]["ppi_by_tactic_turn"]["rows"])
    assert set(by_tactic["figure"]) == {"Drift(t | tactic)"}
    assert (by_tactic["estimator"] == "active PPI++ (1/π-weighted)").all()
    assert "corrected_by_turn" not in data["tables"]  # the unweighted correction is left out
    rows = pd.DataFrame(data["tables"]["ppi_by_turn"]["rows"])
    assert set(rows["figure"]) == {"RCE_t", "Drift(t)"}
    assert (rows["estimator"] == "active PPI++ (1/π-weighted)").all()
    tiers = pd.DataFrame(data["tables"]["ppi_by_tier_turn"]["rows"])
    assert {"RCE_t | tier", "Drift(t | tier)"} <= set(tiers["figure"])
    # the human-only RCE_6 of one model by hand: the weighted mean of |R − H| over the labelled
    # conversations' turn-6 items; two rounds of equal budget (ω = 1/2 each): a round-0 item
    # weighs ½/π + ½ (known in round 1), a round-1 item ½/π
    items = pd.read_csv(folder / "items.csv")
    ratings = pd.read_csv(folder / "ratings.csv")
    with Store(store) as st:
        design = sample_design(st, "act")
    values = {c: i / 4 for i, c in enumerate(LEVELS)}
    model = "m-stiff"
    its = items[(items["model"] == model) & (items["turn"] == 6)
                & ~items["benign_lookalike"].astype(bool)].set_index("item_id")
    d = design.set_index("item_id").reindex(its.index).dropna(subset=["weight"])
    first = d["stratum"].str.contains("round=0")
    w = 0.5 * d["weight"] + 0.5 * first
    ref = ratings[ratings["rater_kind"] == "reference"]
    r = ref.assign(v=ref["label"].map(values)).groupby("item_id")["v"].mean().reindex(w.index)
    e = (r - (its.loc[w.index, "severity"] - 1) / 4).abs()
    row = rows[(rows["model"] == model) & (rows["turn"] == 6) & (rows["figure"] == "RCE_t")]
    assert row["human"].iloc[0] == pytest.approx(float((w * e).sum() / w.sum()))
    assert row["n_labelled"].iloc[0] == len(w)
    est = rows[rows["ci_low"].notna()]
    assert len(est) >= len(rows) - 3
    assert ((est["ci_low"] <= est["corrected"]) & (est["corrected"] <= est["ci_high"])).all()


def test_active_row_refuses_a_labelled_conversation_missing_a_reference_rating() -> None:
    from judgekit.analysis.correction.active import active_mean_row, read_active

    items = pd.DataFrame({"item_id": list("abcd"), "conversation_id": ["c0", "c0", "c1", "c2"]})
    rows = pd.DataFrame({"item_id": ["a", "b"], "reason": "active",
                         "stratum": "active:round=0;share=1.5", "weight": 2.0, "overlap": 0})
    read = read_active(items, rows, "conversation_id")
    row = active_mean_row("rate", np.array([1.0, 0.0, 1.0, 0.0]),
                          np.array(["c0", "c0", "c1", "c2"]),
                          np.array([1.0, np.nan, np.nan, np.nan]), read)
    assert np.isnan(row["corrected"]) and "have no reference rating" in row["note"]


def test_targeted_sample_without_probabilities_is_refused_in_one_sentence() -> None:
    items = pd.DataFrame({"item_id": ["a", "b"], "conversation_id": ["c0", "c1"]})
    design = pd.DataFrame({"item_id": ["a"], "reason": ["disagreement"], "stratum": [None],
                           "weight": [1.0], "overlap": [0]})
    with pytest.raises(JudgekitError) as err:
        design_strata(items, design, labelled=["a"], cluster_col="conversation_id", sample="s")
    msg = str(err.value)
    assert "without recorded probabilities" in msg and "sample --active" in msg
    assert msg.count(". ") == 0 and msg.endswith(".")


#: studies of the slow simulation below
N_STUDIES = 200


def _conversation_design(items: pd.DataFrame, ratings: pd.DataFrame, judge: str, rounds: int,
                         budget: float, seed: int, conf: pd.Series) -> pd.DataFrame:
    """An active sample of whole conversations in ``rounds`` rounds: the first from the judge's
    confidence ``conf``, a second from the judge's errors on the first round's labels."""
    err = predicted_error(conf)
    rows: list[pd.DataFrame] = []
    conv = items.set_index("item_id")["conversation_id"]
    for r in range(rounds):
        if rows:
            done = pd.concat(rows)
            lab = ratings[ratings["item_id"].isin(done["item_id"])]
            wide = lab.pivot_table(index="item_id", columns="rater_id", values="label",
                                   aggfunc="first")
            wrong = (wide[judge] != wide["adjudicated"]).astype(float)
            err = learned_error(conf, wrong, done.set_index("item_id")["weight"])
        rows.append(draw_active(items, err, budget / rounds, seed=seed, round_no=r,
                                cluster_col="conversation_id",
                                known=set(conv.reindex(pd.concat(rows)["item_id"])) if rows
                                else ()))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.slow
def test_active_figures_cover_over_200_studies_both_judges_one_round_and_two() -> None:
    """200 synthetic studies (330 conversations of 6 turns), the fair and the leaning judge, an
    active sample of 50 conversations (by the leaning judge's confidence) in one round or two: the refusal rate, mean R, RCE_6 and
    Drift(6) corrected under the design cover the reference's figure over every conversation."""
    from judgekit.analysis.correction.active import active_turn_figures, read_active
    from judgekit.analysis.correction.active import item_means as means
    from judgekit.testing.study import LEVELS

    values = {c: i / 4 for i, c in enumerate(LEVELS)}

    def indicator(s: pd.Series) -> pd.Series:
        return s.isin(LEVELS[3:]).astype(float)

    hits: dict[tuple[str, str, int], list[bool]] = {}
    for study in range(N_STUDIES):
        items, ratings = make_study(seed=1000 + study, human_share=1.0)
        ref = ratings[ratings["rater_id"] == "adjudicated"]
        harm = (items.set_index("item_id")["severity"] - 1) / 4
        truth_rate = float(means(ref, indicator).mean())
        yr = means(ref, lambda s: s.map(values))
        truth_r = float(yr.mean())
        e = (yr - harm.reindex(yr.index)).abs()
        turn = items.set_index("item_id")["turn"].reindex(e.index)
        truth_rce6 = float(e[turn == 6].mean())
        truth_drift6 = truth_rce6 - float(e[turn == 1].mean())
        # the design follows the leaning judge (its confidence, its errors in round 1); both
        # judges' figures are corrected under it (its probabilities are known either way)
        conf = judge_confidence(ratings, "judge-lean", panel=["judge-fair"])
        designs = {r: _conversation_design(items, ratings, "judge-lean", r, 50.0, study, conf)
                   for r in (1, 2)}
        reads = {r: read_active(items, d, "conversation_id") for r, d in designs.items()}
        y = {"rate": means(ref, indicator), "R": yr}
        for judge in ("judge-fair", "judge-lean"):
            jr = ratings[ratings["rater_id"] == judge]
            f = {"rate": means(jr, indicator), "R": means(jr, lambda s: s.map(values))}
            for rounds in (1, 2):
                chosen = designs[rounds]["item_id"]
                yl = {k: v[v.index.isin(chosen)] for k, v in y.items()}
                rate, mean_r = (corrected_active(items, f[k], yl[k], reads[rounds], figure=k,
                                                 group_col=None).iloc[0] for k in ("rate", "R"))
                turns = active_turn_figures(items, f["R"], yl["R"], harm, reads[rounds],
                                            turns=[6])
                got = {"rate": rate, "mean_R": mean_r,
                       "RCE_6": turns.iloc[0], "Drift(6)": turns.iloc[1]}
                truth = {"rate": truth_rate, "mean_R": truth_r, "RCE_6": truth_rce6,
                         "Drift(6)": truth_drift6}
                for fig, row in got.items():
                    hits.setdefault((fig, judge, rounds), []).append(
                        bool(row["ci_low"] <= truth[fig] <= row["ci_high"]))
    coverage = {k: float(np.mean(v)) for k, v in hits.items()}
    assert min(coverage.values()) >= 0.93, coverage


@pytest.mark.slow
def test_calibration_tables_under_an_active_design_cover_over_200_studies() -> None:
    """What `analyze calibration --correct ppi` prints on an active sample, over 200 synthetic
    studies (one model each, turns 1 and 6; the fair and the leaning judge and one round or two
    in turn): RCE, mean R, RCE_6, Drift(6) and Drift(6 | tier) cover the reference's figure over
    every conversation."""
    from judgekit.analysis.calibration.corrected import pair_units
    from judgekit.analysis.calibration.corrected_active import active_calibration_tables
    from judgekit.analysis.calibration.units import build_units
    from judgekit.analysis.correction.active import read_active
    from judgekit.analysis.frames import per_item_values
    from judgekit.rubric.model import load_rubric

    rub = load_rubric("restrictiveness")
    hits: dict[str, list[bool]] = {}
    estimable: dict[str, list[bool]] = {}
    for study in range(N_STUDIES):
        items, ratings = make_study(seed=3000 + study, human_share=1.0)
        harm = (items.set_index("item_id")["severity"] - 1) / 4
        harm.index = harm.index.astype(str)
        model = sorted(items["model"].unique())[study % 3]
        its = items[(items["model"] == model) & items["turn"].isin([1, 6])]

        def units_of(rater: str, ratings: pd.DataFrame = ratings, its: pd.DataFrame = its,
                     harm: pd.Series = harm) -> pd.DataFrame:
            r = ratings[(ratings["rater_id"] == rater) & ratings["item_id"].isin(its["item_id"])]
            return build_units(per_item_values(r, rub), its, harm,
                               prompt_col="conversation_id")[0]

        all_ref = units_of("adjudicated")
        ref = all_ref[~all_ref["lookalike"].astype(bool)]
        judge = ("judge-fair", "judge-lean")[study % 2]
        conf = judge_confidence(ratings, "judge-lean", panel=["judge-fair"])
        design = _conversation_design(items, ratings, "judge-lean", 1 + (study // 2) % 2, 50.0,
                                      study, conf)
        read = read_active(items, design, "conversation_id")
        chosen = set(read.ids[read.design.round_of >= 0])
        units = pair_units(units_of(judge), all_ref[all_ref["cluster"].isin(chosen)])
        tables = {t.key: t.frame for t in active_calibration_tables(units, read)}
        e6 = ref[ref["turn"] == 6].set_index("cluster")
        e1 = ref[ref["turn"] == 1].set_index("cluster")
        d = (e6["err"] - e1["err"].reindex(e6.index)).dropna()
        truth = {("RCE", None): ref["err"].mean(), ("mean R", None): ref["R"].mean(),
                 ("RCE_t", None): e6["err"].mean(), ("Drift(t)", None): d.mean()}
        for tier, g in d.groupby(e6["tier"].reindex(d.index)):
            truth[("Drift(t | tier)", int(tier))] = g.mean()
        rows = pd.concat([tables["ppi_summary"], tables["ppi_by_turn"].query("turn == 6"),
                          tables["ppi_by_tier_turn"].query("turn == 6")], ignore_index=True)
        for _, row in rows.iterrows():
            tier = None if pd.isna(row.get("tier")) else int(row["tier"])
            if (row["figure"], tier) not in truth:
                continue
            est = bool(np.isfinite(row["ci_low"]))  # else refused: < 2 labelled, no variation
            estimable.setdefault(row["figure"], []).append(est)
            if est:
                hits.setdefault(row["figure"], []).append(
                    bool(row["ci_low"] <= truth[(row["figure"], tier)] <= row["ci_high"]))
    coverage = {k: float(np.mean(v)) for k, v in hits.items()}
    assert len(coverage) == 5 and min(coverage.values()) >= 0.93, coverage
    shares = {k: float(np.mean(v)) for k, v in estimable.items()}
    # a model's figures are refused rarely; a tier's (about 3 labelled conversations) often
    assert min(v for k, v in shares.items() if k != "Drift(t | tier)") >= 0.9, shares


def test_an_edited_weight_is_refused_in_one_sentence_naming_the_item() -> None:
    # a drawn sample records its floor: a weight edited up (π edited down below the floor the
    # round kept every unit above), above the units there were, missing or below 1 is refused
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(50)]})
    err = pd.Series(np.linspace(0.0, 1.0, 50), index=items["item_id"])
    rows = draw_active(items, err, 10, seed=3)[["item_id", "reason", "stratum", "weight",
                                                  "overlap"]]
    clusters = cluster_of(items, None)
    active_design(clusters, rows)  # as drawn: read
    # the floor 0.2 of the uniform rate 10/50: π ≥ 0.04, a weight of at most 25
    assert rows["weight"].max() <= 25.0 + 1e-9
    first = rows["item_id"].iloc[0]
    for bad in (1e6, 30.0, float("nan"), 0.5):
        edited = rows.assign(weight=rows["weight"].where(rows["item_id"] != first, bad))
        with pytest.raises(JudgekitError) as e:
            active_design(clusters, edited)
        msg = str(e.value)
        assert first in msg and msg.count(". ") == 0 and msg.endswith(".")


def test_turn_figures_refuse_a_labelled_conversation_missing_a_reference_rating() -> None:
    # conversations c0..c3 of turns 1 and 2; c0 and c1 labelled (π = 1/2), but c1's turn-2
    # reference rating is missing: counting its error as 0 would bias RCE_2 and Drift(2)
    from judgekit.analysis.correction.active import active_turn_figures

    items = pd.DataFrame({"item_id": [f"c{c}t{t}" for c in range(4) for t in (1, 2)],
                          "conversation_id": [f"c{c}" for c in range(4) for _ in (1, 2)],
                          "turn": [1, 2] * 4})
    rows = pd.DataFrame({"item_id": ["c0t1", "c0t2", "c1t1", "c1t2"], "reason": "active",
                         "stratum": "active:round=0;share=2", "weight": 2.0, "overlap": 0})
    ids = items["item_id"]
    harm = pd.Series(0.0, index=ids)
    judge_r = pd.Series(0.5, index=ids)
    ref = pd.Series([0.25, 0.75, 0.5], index=["c0t1", "c0t2", "c1t1"])
    t = active_turn_figures(items, judge_r, ref, harm, rows, turns=[2])
    assert t["corrected"].isna().all(), t
    assert t["note"].str.contains("no reference rating").all()


def test_cli_refuses_a_recorded_weight_edited_past_the_floor(active_store: tuple[Path, Path],
                                                             tmp_path: Path) -> None:
    import shutil
    import sqlite3

    store, _ = active_store
    edited = tmp_path / "edited.db"
    shutil.copy(store, edited)
    with sqlite3.connect(edited) as con:
        # every item of a conversation (they share its weight) edited alike, as a forger would
        weight = con.execute("SELECT weight FROM samples WHERE sample = 'act' LIMIT 1").fetchone()[0]
        con.execute("UPDATE samples SET weight = 1e6 WHERE sample = 'act' AND weight = ?",
                    (weight,))
    res = _run("analyze", "distribution", "--judge", "judge-lean", "--rubric", "restrictiveness",
               "--no-forms", "--untrusted", "--correct", "ppi", "--sample", "act", "--quiet",
               "--out", tmp_path, "--store", edited)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "below the least" in res.output


def test_units_added_after_the_draw_are_refused_not_counted_as_never_drawn() -> None:
    # a round drew from 50 items; 5 items imported since had no chance of a label (π = 0), so
    # the design cannot weight them: refused in one sentence; a subset of the 50 is read
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(50)]})
    err = pd.Series(np.linspace(0.0, 1.0, 50), index=items["item_id"])
    rows = draw_active(items, err, 10, seed=4)[["item_id", "reason", "stratum", "weight",
                                                 "overlap"]]
    more = pd.concat([items, pd.DataFrame({"item_id": [f"new{k}" for k in range(5)]})])
    with pytest.raises(JudgekitError, match="no chance of a label") as e:
        active_design(cluster_of(more, None), rows)
    assert str(e.value).count(". ") == 0
    fewer = items[items["item_id"].isin(set(rows["item_id"]) | {"i1", "i2"})]
    active_design(cluster_of(fewer, None), rows)
