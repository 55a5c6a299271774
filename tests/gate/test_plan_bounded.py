"""A plan answers in bounded time whatever it is asked: without a pilot, an assumed SD so large
that the figures need more conversations than the study holds is answered from the normal-theory
need ("cannot be decided with this study"), never by simulating studies far beyond the data."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.gate.plan import make_plan
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.testing.study import write_study


@pytest.mark.timeout(60)  # a hang guard: before, this simulated for minutes
@pytest.mark.parametrize("sd", [2.0, 0.3])
def test_a_large_assumed_sd_is_answered_beyond_the_study_without_simulating(tmp_path: Path, sd: float) -> None:
    paths = write_study(tmp_path, figures=("C", "drift"), n_resamples=200, human_share=0.0)
    with Store(tmp_path / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        plan = make_plan(store, paths["policy"], assume_kappa=0.9, assume_sd=sd, judge="judge-fair")
    rows = {r["check"]: r for r in plan["rows"]}
    for fig in ("figure C", "figure drift"):
        r = rows[fig]
        assert r["need"] is None and r["why"].startswith("cannot be decided with this study: needs about "), r
        assert "the study holds 330" in r["why"], r
        assert r["note"] == "normal theory; not simulated: already more than the study holds", r
