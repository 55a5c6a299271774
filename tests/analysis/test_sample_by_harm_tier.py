"""`sample` stratifies by the analysis's own groups, the harm tier included when H comes from harm
ratings (no item column holds it): `--harm-rubric` adds the items' `harm_tier`, and the corrected
figures read the design stratified by it, so no model × tier cell is refused for want of labels."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.testing.study import make_study

HARM = ("t1_benign", "t2_low", "t3_moderate", "t4_severe", "t5_catastrophic")


def _ok(*args: object) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_a_sample_stratified_by_harm_tiers_from_harm_ratings(tmp_path) -> None:
    items, ratings = make_study(seed=5, conversations_per_tier=6, lookalikes=2, human_share=1.0)
    # H comes from harm ratings of each prompt (its first turn), not from an item column
    tiers = items.set_index("item_id")["severity"]
    items.drop(columns=["severity"]).to_csv(tmp_path / "items.csv", index=False)
    harm = items[items["turn"] == 1][["item_id"]].assign(
        rater_id="h1", rater_kind="human", label=[HARM[tiers[i] - 1] for i in
                                                  items.loc[items["turn"] == 1, "item_id"]])
    harm.to_csv(tmp_path / "harm.csv", index=False)
    ratings[ratings["rater_kind"] == "judge"].to_csv(tmp_path / "judges.csv", index=False)
    db = tmp_path / "s.db"
    _ok("import", tmp_path / "judges.csv", "--rubric", "restrictiveness", "--items",
        tmp_path / "items.csv", "--store", db)
    _ok("import", tmp_path / "harm.csv", "--rubric", "harm_severity", "--store", db)
    # the analysis's groups: model × tier, look-alikes apart (they leave the calibration's tier 1)
    out = _ok("sample", "--name", "s", "--by-conversation", "--by",
              "model,harm_tier,benign_lookalike",
              "--min-per-stratum", 2, "--size", 240, "--harm-rubric", "harm_severity",
              "--rubric", "restrictiveness", "--groups", "model,harm_tier", "--store", db,
              "--out", tmp_path / "s.csv")
    assert "warning" not in out, out
    design = pd.read_csv(tmp_path / "s.csv")
    keys = set(design["stratum"])
    # 3 models × 5 tiers, and the look-alikes (tier 1): every cell named and drawn
    assert {f"model={m}|harm_tier={t}|benign_lookalike=False"
            for m in ("m-steady", "m-eroding", "m-stiff") for t in range(1, 6)} <= keys
    assert len(keys) == 18
    ref = ratings[(ratings["rater_id"] == "adjudicated")
                  & ratings["item_id"].isin(design["item_id"].astype(str))]
    ref.to_csv(tmp_path / "ref.csv", index=False)
    _ok("import", tmp_path / "ref.csv", "--rubric", "restrictiveness", "--store", db)
    _ok("analyze", "calibration", "--judge", "judge-fair", "--rubric", "restrictiveness",
        "--store", db, "--untrusted", "--correct", "ppi", "--reference", "adjudicated",
        "--bootstrap", 50, "--quiet", "--out", tmp_path / "c")
    data = json.loads((tmp_path / "c" / "calibration.json").read_text())
    assert data["meta"]["ppi"]["stratified"] is True
    note = next(n for n in data["notes"] if n.startswith("Corrected figures"))
    assert "stratified by model, harm_tier, benign_lookalike" in note
    rows = data["tables"]["ppi_by_tier_turn"]["rows"]
    assert rows and not [r for r in rows if str(r["note"]).startswith("refused: stratum")]
    # one figure, one number: the raw-vs-corrected mean R is the stratified corrected figure
    summary = {r["model"]: r for r in data["tables"]["ppi_summary"]["rows"]
               if r["figure"] == "mean R"}
    for r in data["tables"]["corrected"]["rows"]:
        s = summary[r["model"]]
        assert (r["raw"], r["corrected"], r["ci_low"], r["ci_high"]) == (
            s["raw"], s["corrected"], s["ci_low"], s["ci_high"]), (r, s)
