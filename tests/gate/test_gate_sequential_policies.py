"""`gate --sequential` accepts every policy the fixed gate accepts: H from the human harm ratings
as well as from a harm column."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from judgekit.cli import main


def test_sequential_accepts_a_policy_whose_h_comes_from_harm_ratings(tmp_path: Path) -> None:
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, figures=("drift",), n_resamples=100, human_share=0.3)
    items = pd.read_csv(paths["items"])
    harm = load_rubric("harm_severity")
    first = items[items["turn"] == 1]
    rows = pd.DataFrame({"item_id": first["item_id"], "rater_id": "h-harm", "rater_kind": "human",
                         "label": [harm.codes[int(s) - 1] for s in first["severity"]], "status": "ok"})
    rows.to_csv(tmp_path / "harm.csv", index=False)
    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        import_ratings(store, tmp_path / "harm.csv", harm)
    policy = tmp_path / "p.yaml"
    policy.write_text(paths["policy"].read_text().replace("    harm_column: severity\n", ""))
    fixed = CliRunner().invoke(main, ["gate", str(policy), "--store", str(tmp_path / "s.db"),
                                      "--out", str(tmp_path / "f")])
    assert fixed.exit_code in (0, 1, 3), fixed.output
    res = CliRunner().invoke(main, ["gate", str(policy), "--store", str(tmp_path / "s.db"), "--sequential",
                                    "--round-size", "25", "--out", str(tmp_path / "g")])
    assert res.exit_code in (0, 1, 3), res.output
    v = json.loads((tmp_path / "g" / "verdict.json").read_text())
    drift = [c for j in v["judges"] for c in j["checks"] if c["name"].startswith("analysis_fidelity[calibration:drift(")]
    assert drift and all("anytime-valid 90% confidence sequence" in c["detail"] for c in drift)
