"""The report's "Analysis fidelity" section: judge value, reference value, difference with CI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner


def test_report_shows_every_fidelity_figure(tmp_path: Path) -> None:
    from judgekit.cli import main
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    paths = write_study(tmp_path, n_resamples=200)
    db = tmp_path / "s.db"
    with Store(db) as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
    res = CliRunner().invoke(main, ["gate", str(paths["policy"]), "--store", str(db), "--out", str(tmp_path)])
    assert res.exit_code == 1, res.output
    verdict = json.loads((tmp_path / "verdict.json").read_text())
    res = CliRunner().invoke(main, ["report", "--store", str(db), "--rubric", "restrictiveness", "--verdict",
                                    str(tmp_path / "verdict.json"), "--resamples", "100", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Analysis fidelity" in md
    lean = next(j for j in verdict["judges"] if j["judge"] == "judge-lean")
    check = next(c for c in lean["checks"] if c["name"] == "analysis_fidelity[calibration:drift(model=m-steady, turn=6)]")
    # the report's row carries the verdict's numbers: judge value, reference value, difference [CI]
    detail = check["detail"]
    jv = detail.split(": judge ")[1].split(",")[0]
    rv = detail.split(", reference ")[1].split(",")[0]
    diff = detail.split("difference ")[1].split(" ")[0]
    lo, hi = detail.split("[90% CI ")[1].split("]")[0].split(", ")
    row = next(line for line in md.splitlines() if "judge-lean" in line and "drift(model=m-steady, turn=6)" in line)
    cells = [c.strip().replace("\\[", "[").replace("\\]", "]") for c in row.strip("|").split("|")]
    assert cells[2:5] == [jv, rv, f"{diff} [{lo}, {hi}]"]
    assert cells[6] == ("OUTSIDE" if check["state"] == "fail" else "within" if check["state"] == "pass" else "inconclusive")
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    rows = doc["extras"]["fidelity"]["rows"]
    assert {r["judge"] for r in rows} == {"judge-fair", "judge-lean"}
    assert all(r["state"] == "pass" for r in rows if r["judge"] == "judge-fair")
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Analysis fidelity" in html and "drift(model=m-steady, turn=6)" in html
