"""The 300-response refusal study, from CSV files through the CLI, as a new user runs it: two
models, two annotators who disagree on 15% of the responses, a careful and a sloppy judge with three
trials each; `agree`, `gate`, `report`, `analyze distribution --correct ppi` and `analyze
distribution`. Every page is like-for-like: the headline judge-vs-human figure and the human
ceiling are on the same items (the JSON's n), the distribution reports no model inconsistency that
comes from judge trials alone, every interval lies in its statistic's range, and each figure has
one value in a run."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.cli import main

LABELS = ("full_compliance", "partial_refusal", "full_refusal")
POLICY = """\
rubric: refusal
judges: [careful, sloppy]
humans: [ann1, ann2]
reference: ann1
checks:
  min_items: 100
  metric: kappa
  min_lower_bound: 0.6
  max_abstention_rate: 0.05
  max_error_rate: 0.05
"""


def _run(*args: object, ok: tuple[int, ...] = (0,)) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code in ok, res.output
    return res.output


def _write_study(folder: Path, seed: int = 30) -> dict[str, Any]:
    """items.csv (300 responses, 150 prompts of each of two models) and ratings.csv (long: the
    two annotators, and three trials of each judge), from a fixed seed."""
    rng = np.random.default_rng(seed)
    items, ratings = [], []
    truth_of: dict[str, int] = {}
    for model, p_refuse in (("alpha", (0.45, 0.15, 0.40)), ("beta", (0.70, 0.10, 0.20))):
        for n in range(150):
            iid = f"{model}-{n:03d}"
            truth = int(rng.choice(3, p=p_refuse))
            truth_of[iid] = truth
            items.append({"item_id": iid, "model": model, "prompt_id": f"p{n:03d}",
                          "prompt": f"Question {n} for {model}?", "response": f"Answer {n}."})
            ratings.append((iid, "ann1", "human", LABELS[truth], 0))
    # the second annotator disagrees with the first on exactly 15% of the responses (45 of 300)
    ids = sorted(truth_of)
    differ = set(rng.choice(ids, 45, replace=False))
    for iid in ids:
        t = truth_of[iid]
        ratings.append((iid, "ann2", "human",
                        LABELS[(t + 1 + int(rng.integers(0, 2))) % 3] if iid in differ else LABELS[t], 0))
    for iid in ids:
        t = truth_of[iid]
        for trial in range(3):
            careful = t if rng.random() > 0.05 else (t + 1) % 3
            # the sloppy judge calls a refusal compliance a third of the time
            sloppy = 0 if t > 0 and rng.random() < 0.35 else t
            ratings.append((iid, "careful", "judge", LABELS[careful], trial))
            ratings.append((iid, "sloppy", "judge", LABELS[sloppy], trial))
    pd.DataFrame(items).to_csv(folder / "items.csv", index=False)
    pd.DataFrame(ratings, columns=["item_id", "rater_id", "rater_kind", "label", "trial"]).to_csv(
        folder / "ratings.csv", index=False)
    (folder / "policy.yaml").write_text(POLICY, encoding="utf-8")
    return {"truth": truth_of}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("refusal-study")
    _write_study(folder)
    db = folder / "study.db"
    _run("import", folder / "ratings.csv", "--rubric", "refusal", "--items", folder / "items.csv",
         "--store", db)
    out: dict[str, Any] = {"folder": folder, "db": db}
    out["agree"] = json.loads(_run("agree", "--rubric", "refusal", "--store", db, "--resamples",
                                   200, "--json"))
    _run("gate", folder / "policy.yaml", "--store", db, "--out", folder / "g", ok=(0, 1, 3))
    out["verdict"] = json.loads((folder / "g" / "verdict.json").read_text())
    _run("report", "--store", db, "--rubric", "refusal", "--verdict", folder / "g" / "verdict.json",
         "--by", "model", "--resamples", 200, "--out", folder / "report")
    for judge in ("careful", "sloppy"):
        out[f"{judge} terminal"] = _run(
            "analyze", "distribution", "--judge", judge, "--rubric", "refusal", "--store", db,
            "--untrusted", "--correct", "ppi", "--reference", "ann1", "--bootstrap", 200,
            "--quiet", "--out", folder / f"dist-{judge}")
        out[judge] = json.loads((folder / f"dist-{judge}" / "distribution.json").read_text())
        out[f"{judge} html"] = (folder / f"dist-{judge}" / "distribution.html").read_text()
    return out


def test_headline_and_human_ceiling_are_on_the_same_items(study: dict[str, Any]) -> None:
    overall = study["agree"]["slices"][0]
    for judge in ("careful", "sloppy"):
        head = overall["judges"][judge]["headline"]
        # the annotators disagree on 45 items: the like-for-like headline is leave-one-out
        assert head["basis"] == "leave-one-out"
        assert head["n"] == head["humans"]["n"] == 300
        assert head["kappa"]["n"] == head["humans"]["kappa"]["n"] == 300


def _rows(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for key, table in data["tables"].items():
        for row in table["rows"]:
            yield key, row


def test_no_model_inconsistency_comes_from_judge_trials_alone(study: dict[str, Any]) -> None:
    for judge in ("careful", "sloppy"):
        data = study[judge]
        per_prompt = data["tables"]["per_prompt"]["rows"]
        # one sample per prompt: whatever the trials say, no prompt's behaviour varies
        assert not any("not constant" in str(r.get("behaviour")) for r in per_prompt), judge
        for r in data["tables"]["by_model"]["rows"]:
            assert r["share_not_constant"] in (0.0, None), (judge, r)
        assert data["meta"]["judge_trials"]["rule"].startswith("majority")


_RANGE = {"kappa": (-1.0, 1.0), "alpha": (-1.0, 1.0), "drift": (-1.0, 1.0), "judge_error": (-1.0, 1.0)}


def _in_range(key: str, row: dict[str, Any]) -> None:
    for col, low in row.items():
        if not col.endswith("ci_low") or low is None:
            continue
        stem = col[: -len("ci_low")]
        high = row.get(stem + "ci_high")
        assert high is not None and low <= high + 1e-12, (key, col, row)
        lo, hi = _RANGE.get(stem.rstrip("_"), (0.0, 1.0))
        if "difference" in str(row.get("figure", "")) or "−" in str(row.get("figure", "")):
            lo = -1.0
        assert lo - 1e-12 <= low and high <= hi + 1e-12, (key, col, row)


def test_every_interval_lies_in_its_statistics_range(study: dict[str, Any]) -> None:
    for judge in ("careful", "sloppy"):
        for key, row in _rows(study[judge]):
            _in_range(key, row)
    for f in (study["agree"]["slices"][0]["judges"]["careful"]["headline"]["kappa"],):
        assert -1.0 <= f["low"] <= f["value"] <= f["high"] <= 1.0


def test_each_figure_has_one_value_in_a_run(study: dict[str, Any]) -> None:
    """A model's raw and corrected refusal rate: the same number, from one estimator, in every
    table that shows it."""
    for judge in ("careful", "sloppy"):
        seen: dict[tuple[str, str, str], set[float]] = {}
        for _key, row in _rows(study[judge]):
            fig = str(row.get("figure") or "")
            if "refusal" not in fig or row.get("turn") not in (None, "all"):
                continue
            for col in ("raw", "corrected", "ci_low", "ci_high"):
                v = row.get(col)
                if v is not None and math.isfinite(v):
                    seen.setdefault((str(row.get("model")), col, judge), set()).add(round(v, 10))
        assert seen, judge
        for what, values in seen.items():
            assert len(values) == 1, (what, values)


def test_the_biased_judges_miss_shows_in_every_rendering(study: dict[str, Any]) -> None:
    """The sloppy judge calls a third of the refusals compliance: its raw refusal rate misses the
    corrected one, and the miss is a column of the terminal and HTML tables, not only the files."""
    rows = study["sloppy"]["tables"]["corrected"]["rows"]
    for r in rows:
        assert r["judge_error"] == pytest.approx(r["raw"] - r["corrected"])
        assert r["judge_error"] < -0.03, r
    text = " ".join(study["sloppy terminal"].split())
    assert "miss (raw − corrected)" in text
    for r in rows:
        assert f"{r['judge_error']:+.3f}" in text
    html = study["sloppy html"]
    assert "miss (raw − corrected)" in html and f"{rows[0]['judge_error']:.3f}" in html
