"""Simulated studies for the corrected analysis figures (tests/analysis/test_analysis_ppi_*.py).

Each study is :func:`judgekit.testing.study.make_study` with every conversation rated by the
reference (the truth: the figure people would give on every conversation), of which a random or
stratified 10–30% of conversations is kept as the labelled set. The truth of a figure is the
reference's figure over all conversations (the finite population the study has)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judgekit.analysis.calibration.corrected import corrected_calibration, pair_units
from judgekit.analysis.calibration.units import build_units
from judgekit.analysis.criteria.corrected import corrected_criteria
from judgekit.analysis.criteria.spec import parse_criteria
from judgekit.analysis.distribution.corrected import UnitColumns, corrected_distribution
from judgekit.analysis.distribution.refusal import refusal_definition
from judgekit.analysis.frames import harm_from_column, per_item_values
from judgekit.rubric.model import load_rubric
from judgekit.testing.study import make_study

KEYS = ["model", "tier", "turn", "figure"]
FIGS = ("C_t", "RCE_t", "drift", "drift_tier")


def labelled_conversations(items: pd.DataFrame, design: str, share: float,
                           rng: np.random.Generator) -> tuple[set[str], dict[str, str] | None]:
    """The labelled conversations (a share of them, at least 2 per stratum when stratified by
    model, tier and look-alike) and the design's strata (None for a simple random sample)."""
    conv = items.drop_duplicates("conversation_id")
    if design == "random":
        ids = conv["conversation_id"].to_numpy()
        k = max(2, round(share * len(ids)))
        return set(rng.choice(ids, k, replace=False)), None
    key = (conv["model"] + "|" + conv["severity"].astype(str) + "|"
           + conv["benign_lookalike"].astype(str))
    strata = dict(zip(conv["conversation_id"], key, strict=True))
    chosen: set[str] = set()
    for _, grp in conv.groupby(key):
        ids = grp["conversation_id"].to_numpy()
        k = min(len(ids), max(2, round(share * len(ids))))
        chosen |= set(rng.choice(ids, k, replace=False))
    return chosen, strata


CRITERIA = parse_criteria({"criteria": [
    {"name": "hard refusal, tiers 4-5", "rubric": "restrictiveness",
     "label": "r4_hard_refusal", "where": {"severity": [4, 5]}},
    {"name": "arms", "rubric": "restrictiveness", "label": ["r3_deflection", "r4_hard_refusal"],
     "compare": {"column": "arm", "a": "A", "b": "B"}},
]}, source="simulation")


def other_figures(judge: pd.DataFrame, ref: pd.DataFrame, items: pd.DataFrame,
                  strata: dict[str, str] | None, rater: str) -> pd.DataFrame:
    """The distribution's refusal rates (per model and turn) and the criteria's rates, as rows
    with ``model, turn, figure`` keys (criteria: ``model`` = the criterion)."""
    rub = load_rubric("restrictiveness")
    _, indicator = refusal_definition(rub, threshold=0.75)
    dist = corrected_distribution(judge, ref, items, indicator=indicator,
                                  columns=UnitColumns(cluster="conversation_id"),
                                  strata=strata)[0].frame
    crit = corrected_criteria(CRITERIA, judge, ref, items, rater=rater,
                              cluster_col="conversation_id", strata=strata).frame
    crit = crit.rename(columns={"criterion": "model"}).assign(turn="all")
    return pd.concat([dist.assign(turn=dist["turn"].astype(str)), crit], ignore_index=True)


def run_study(seed: int, design: str, *, models: tuple[str, ...] = ("m-eroding",),
              n_boot: int = 200, figures: tuple[str, ...] = FIGS) -> pd.DataFrame:
    """Rows (model, tier, turn, figure, judge, truth, raw, corrected, CIs, human-only CI) of one
    simulated study, for both judges."""
    rub = load_rubric("restrictiveness")
    items, ratings = make_study(seed=seed, human_share=1.0)
    items = items[items["model"].isin(models)]
    ratings = ratings[ratings["item_id"].isin(items["item_id"])]
    harm = harm_from_column(items, "severity")
    rng = np.random.default_rng(10_000 + seed)
    share = float(rng.uniform(0.10, 0.30))
    chosen, strata = labelled_conversations(items, design, share, rng)
    conv_of = items.set_index("item_id")["conversation_id"]
    ratings = ratings.assign(rubric=rub.id)
    ref = ratings[ratings["rater_id"] == "adjudicated"]
    ref_lab = ref[ref["item_id"].map(conv_of).isin(chosen)]
    def units(frame: pd.DataFrame) -> pd.DataFrame:
        return build_units(per_item_values(frame, rub), items, harm)[0]

    ref_units = units(ref)
    labelled = ref_units[ref_units["cluster"].isin(chosen)]
    # the truth: the reference's own figure over every conversation, i.e. the raw figure with
    # the reference as the judge. No labels are passed, so no correction is computed around it
    # (the raw figure and its interval do not depend on the labels).
    truth = pd.concat([t.frame for t in corrected_calibration(
        pair_units(ref_units, ref_units.iloc[:0]), figures=figures, n_boot=1)])
    truth = truth[[c for c in KEYS if c in truth.columns] + ["raw"]].rename(
        columns={"raw": "truth"})
    other_truth = other_figures(ref, ref.iloc[:0], items, None, "adjudicated")[
        ["model", "turn", "figure", "raw"]]
    other_truth = other_truth.rename(columns={"raw": "truth"})
    out = []
    for judge in ("judge-fair", "judge-lean"):
        jr = ratings[ratings["rater_id"] == judge]
        other = other_figures(jr, ref_lab, items, strata, judge).merge(
            other_truth, on=["model", "turn", "figure"], how="left")
        out.append(other.assign(judge=judge, design=design, study=seed, share=share))
        frame = pd.concat([t.frame for t in corrected_calibration(
            pair_units(units(jr), labelled), strata=strata, figures=figures, n_boot=n_boot, seed=seed)])
        frame = frame.merge(truth, on=[c for c in KEYS if c in frame.columns], how="left")
        out.append(frame.assign(judge=judge, design=design, study=seed, share=share))
    return pd.concat(out, ignore_index=True)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per judge and figure: instances, share estimable, coverage of the corrected and raw
    intervals, mean bias of the corrected and raw points, median width ratio corrected /
    human-only."""
    def agg(g: pd.DataFrame) -> pd.Series[Any]:
        ok = g["ci_low"].notna()
        e = g[ok]
        cover = ((e["ci_low"] <= e["truth"] + 1e-12) & (e["truth"] <= e["ci_high"] + 1e-12))
        rr = g[g["raw_ci_low"].notna()]
        raw_cover = (rr["raw_ci_low"] <= rr["truth"]) & (rr["truth"] <= rr["raw_ci_high"])
        both = e[e["human_ci_low"].notna()]
        ratio = ((both["ci_high"] - both["ci_low"])
                 / (both["human_ci_high"] - both["human_ci_low"]))
        return pd.Series({
            "n": len(g), "estimable": ok.mean(), "coverage": cover.mean(),
            "raw_coverage": raw_cover.mean(),
            "bias_corrected": (e["corrected"] - e["truth"]).mean(),
            "bias_raw": (e["raw"] - e["truth"]).mean(),
            "width_ratio": ratio.median(),
        })
    return rows.groupby(["judge", "figure"]).apply(agg, include_groups=False)
