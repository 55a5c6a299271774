"""The gate decides on the figures of its policy's checks only (judgekit.gate.figures: the agreement
report asked for the wanted figures, over the one code matrix read by SQL): each figure is the one
a public reference implementation gives on the same items (scikit-learn's cohen_kappa_score, the
krippendorff package, the percent agreement and AC1 formulas; computed here from the stored
ratings with pandas, to the report's 6 decimals), and the subset is the report of every figure
(`run_gate(..., full_report=True)`) cut down, with the same verdict. Checked on random stores — judge trials with ties, abstentions and errors, humans with gaps, an item only
another judge rated, text and numeric metadata with gaps, crossed slices — under nominal,
ordinal and interval rubrics, for every metric, every reference kind and every check that reads
an agreement figure; and on XSTest with the shipped policy."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judgekit.gate.run import run_gate
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

INTERVAL = ("name: score\nversion: 1\ntitle: t\nlevel: interval\ninstructions: i\nlabels:\n"
            "  - {code: low, value: 0, description: d}\n  - {code: mid, value: 0.2, description: d}\n"
            "  - {code: high, value: 1, description: d}\n")

CHECKS = """\
  min_items: 40
  metric: {metric}
  min_value: 0.3
  min_lower_bound: 0.2
  max_abstention_rate: 0.2
  max_error_rate: 0.2
  min_class_recall: {{min: 0.3, min_support: 5}}
  per_slice: {{min_items: 10, min_value: 0.2}}
  within_human_noise: {{margin: 0.3}}
  min_coverage: 0.5
  max_abs_bias: {{max: 0.2, per_slice: true, min_items: 10}}
"""


def _store(folder: Path, rubric: Any, seed: int, *, reference: bool, other: int = 0, trials: bool = True) -> Path:
    rng = random.Random(seed)
    codes = rubric.codes
    n = 120
    items = pd.DataFrame({
        "item_id": [f"it-{k:03d}" for k in range(n)],
        "prompt": [f"p{k}" for k in range(n)],
        "response": [f"r{k}" for k in range(n)],
        "model": [rng.choice(["m_a", "m_b", "m-c"]) if k % 17 else None for k in range(n)],
        "turn": [rng.choice([1, 2, 10]) for _ in range(n)],
        "gap": [rng.choice([1, 3]) if k % 5 else None for k in range(n)],
    })
    rows: list[tuple[Any, ...]] = []
    for k in range(n):
        iid = f"it-{k:03d}"
        truth = rng.randrange(len(codes))

        def near(p: float, truth: int = truth) -> int:
            return truth if rng.random() < p else rng.randrange(len(codes))
        for h in ("h1", "h2", "h3"):
            if rng.random() < 0.85:
                rows.append((iid, h, "human", codes[near(0.8)], "ok", 0))
        if reference and k % 9:
            rows.append((iid, "adj", "reference", codes[truth], "ok", 0))
        for j, p in (("j1", 0.75), ("j2", 0.5)):
            for t in range(1 if j == "j1" or k % 3 or not trials else 2):
                u = rng.random()
                if u < 0.06:
                    rows.append((iid, j, "judge", None, "abstain", t))
                elif u < 0.1:
                    rows.append((iid, j, "judge", None, "error", t))
                else:
                    rows.append((iid, j, "judge", codes[near(p)], "ok", t))
        if k % 4 == 0:
            rows.append((iid, "other", "judge", codes[truth], "ok", 0))
    rows.append(("lonely", "other", "judge", codes[0], "ok", 0))
    ratings = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
    ratings["rubric"], ratings["rubric_hash"] = rubric.id, rubric.hash
    db = folder / f"s{seed}.db"
    with Store(db) as s:
        s.put_items(items)
        s.put_ratings(ratings)
        if other:  # another rubric's ratings, most of the table: the matrix is read through the index
            rest = load_rubric("harm_severity")
            more = pd.DataFrame([(f"it-{k % n:03d}", f"o{k // n}", "human", rest.codes[k % 5], "ok", 0)
                                 for k in range(other)],
                                columns=["item_id", "rater_id", "rater_kind", "label", "status", "trial"])
            more["rubric"], more["rubric_hash"] = rest.id, rest.hash
            s.put_ratings(more)
    return db


def _subset(lean: Any, full: Any, at: str = "") -> None:
    """Every key of ``lean`` is in ``full`` with the same value."""
    if isinstance(lean, dict):
        assert isinstance(full, dict), at
        for k, v in lean.items():
            assert k in full, f"{at}.{k} missing in the full report"
            _subset(v, full[k], f"{at}.{k}")
    elif isinstance(lean, list) and lean and isinstance(lean[0], dict):
        assert len(lean) <= len(full), at
        for k, v in enumerate(lean):
            _subset(v, full[k], f"{at}[{k}]")
    else:
        assert lean == full, f"{at}: {lean!r} != {full!r}"


def _reference_values(db: Path, rubric: Any, metric: str, reference: str | None) -> dict[str, tuple[float, int]]:
    """Each judge's ``metric`` against the reference over the items both rated, and that n, by
    the reference implementations, from the stored ratings: a judge's trials reduced to their
    majority ok label (a tie or none: not rated), the reference a rater's label or the humans'
    plurality label (a tie: none)."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    with Store(db) as s:
        r = s.ratings(rubric=rubric)
    codes = list(rubric.codes)
    pos = {c: k for k, c in enumerate(codes)}
    ok = r[(r.status == "ok") & r.label.notna()]

    def majority(frame: pd.DataFrame) -> dict[str, int]:
        out = {}
        for item, labels in frame.groupby("item_id")["label"]:
            top = labels.value_counts()
            if len(top) == 1 or top.iloc[0] > top.iloc[1]:
                out[str(item)] = pos[top.index[0]]
        return out

    if reference in (None, "adj"):
        ref = majority(ok[ok.rater_id == "adj"])
    elif reference in ("h1", "h2"):
        ref = majority(ok[ok.rater_id == reference])
    else:
        humans = ["h1", "h3"] if reference == "consensus humans" else ["h1", "h2", "h3"]
        ref = majority(ok[ok.rater_id.isin(humans)])
    out = {}
    for j in ("j1", "j2"):
        judge = majority(ok[ok.rater_id == j])
        both = sorted(set(ref) & set(judge))
        a = np.array([ref[i] for i in both])
        b = np.array([judge[i] for i in both])
        if metric == "kappa":
            value = cohen_kappa_score(a, b, labels=list(range(len(codes))))
        elif metric == "weighted_kappa":
            value = cohen_kappa_score(a, b, labels=list(range(len(codes))), weights="quadratic")
        elif metric == "percent_agreement":
            value = float(np.mean(a == b))
        elif metric == "alpha":
            if rubric.level == "interval":
                vals = np.array([rubric.values[c] for c in codes], dtype=float)
                value = krippendorff.alpha(reliability_data=np.vstack([vals[a], vals[b]]),
                                           level_of_measurement="interval")
            else:
                value = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float),
                                           level_of_measurement=rubric.level,
                                           value_domain=list(range(len(codes))))
        else:  # Gwet's AC1: p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k over the 2n ratings
            pi = np.bincount(np.concatenate([a, b]), minlength=len(codes)) / (2 * len(a))
            p_a, p_e = float(np.mean(a == b)), float((pi * (1 - pi)).sum() / (len(codes) - 1))
            value = (p_a - p_e) / (1 - p_e)
        out[j] = (float(value), len(both))
    return out


def _both(db: Path, policy: Path) -> tuple[dict, Any, dict, Any]:
    with Store(db) as s:
        lean, lean_report = run_gate(s, policy)
        full, full_report = run_gate(s, policy, full_report=True)
    return lean, lean_report, full, full_report


def _same_verdict(a: dict, b: dict) -> None:
    a, b = dict(a), dict(b)
    a.pop("created_at"), b.pop("created_at")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


CASES = [  # (rubric, metric, reference, by)
    ("refusal", "kappa", "consensus", "[model, turn]"),
    ("refusal", "percent_agreement", "adj", "[model+turn]"),
    ("refusal", "ac1", "h1", "[gap]"),
    ("refusal", "alpha", None, "[model]"),
    ("restrictiveness", "weighted_kappa", "consensus", "[turn, gap+model]"),
    ("restrictiveness", "kappa", "adj", "[model]"),
    ("interval", "alpha", "consensus", "[turn]"),
    ("interval", "weighted_kappa", "h2", "[model]"),
    ("refusal", "kappa", "consensus humans", "[model]"),  # a policy naming its humans
]


@pytest.mark.parametrize(("name", "metric", "reference", "by"), CASES)
def test_the_gate_figures_and_verdict_are_the_full_reports(tmp_path, name, metric, reference, by):
    if name == "interval":
        path = tmp_path / "score.yaml"
        path.write_text(INTERVAL, encoding="utf-8")
        rubric, rubric_ref = load_rubric(path), str(path)
    else:
        rubric, rubric_ref = load_rubric(name), name
    db = _store(tmp_path, rubric, seed=len(metric) * 7 + len(by), reference=reference in (None, "adj"))
    policy = tmp_path / "p.yaml"
    ref_line = "" if reference is None else f"reference: {reference}\n"
    if reference == "consensus humans":
        ref_line = "reference: consensus\nhumans: [h1, h3]\n"
    policy.write_text(f"rubric: {rubric_ref}\njudges: [j1, j2]\n{ref_line}by: {by}\nn_resamples: 100\nseed: 3\n"
                      f"checks:\n{CHECKS.format(metric=metric)}", encoding="utf-8")
    lean, lean_report, full, full_report = _both(db, policy)
    if not (metric == "weighted_kappa" and rubric.level == "nominal"):
        for j, (value, n) in _reference_values(db, rubric, metric, reference).items():
            got = lean_report.judge(j)["vs_reference"]
            assert got["n"] == got[metric]["n"] == n > 20, j
            assert got[metric]["value"] == pytest.approx(value, abs=5.01e-7), (j, metric)  # 6 decimals
    _same_verdict(lean, full)
    assert lean_report.data["scope"].startswith("the figures of the gate policy's checks only")
    _subset({k: v for k, v in lean_report.data.items() if k != "scope"}, full_report.data)
    # the figures the checks read are there (not vacuous): the metric with its interval in each slice
    assert len(lean_report.data["slices"]) == len(full_report.data["slices"]) > 1
    defined = [s["judges"][j]["vs_reference"][metric]["low"] is not None and s["judges"][j]["bias"]["n"] > 0
               for s in lean_report.data["slices"] for j in ("j1", "j2") if j in s["judges"]]
    assert sum(defined) >= len(defined) / 2, defined
    overall = lean_report.slice()
    assert overall["human_ceiling"]["loo"] == full_report.slice()["human_ceiling"]["loo"]
    assert {c["name"].split("[")[0] for c in lean["judges"][0]["checks"]} >= {
        "min_items", "max_abstention_rate", "min_coverage", "within_human_noise", "per_slice", "max_abs_bias"}


def test_a_policy_without_slice_checks_computes_no_slices(tmp_path):
    rubric = load_rubric("refusal")
    db = _store(tmp_path, rubric, seed=5, reference=False)
    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: refusal\njudges: [j1, j2]\nby: [model]\nn_resamples: 100\nchecks:\n"
                      "  min_items: 40\n  metric: kappa\n  min_lower_bound: 0.2\n  max_error_rate: 0.2\n",
                      encoding="utf-8")
    lean, lean_report, full, full_report = _both(db, policy)
    _same_verdict(lean, full)
    assert [s["by"] for s in lean_report.data["slices"]] == [None]
    assert set(lean_report.judge("j1")["vs_reference"]) == {"kappa", "n"}
    _subset({k: v for k, v in lean_report.data.items() if k not in ("scope", "slices")}, full_report.data)
    _subset(lean_report.slice(), full_report.slice())


def test_xstest_shipped_policy_same_verdict(xstest_store):
    policy = Path(__file__).resolve().parents[2] / "annotations" / "xstest-v2" / "policy.yaml"
    lean, lean_report = run_gate(xstest_store, policy)
    full, full_report = run_gate(xstest_store, policy, full_report=True)
    _same_verdict(lean, full)
    _subset({k: v for k, v in lean_report.data.items() if k != "scope"}, full_report.data)
    assert [s["key"] for s in lean_report.data["slices"]] == [s["key"] for s in full_report.data["slices"]]




@pytest.mark.parametrize("trials", [True, False])
def test_a_store_mostly_of_another_rubric_same_verdict(tmp_path, trials):
    # read through the index (the rubric is a small share of the table); without trials the
    # verdict's hashes come from the matrix (judgekit.verdict.hashes), with them from SQL
    rubric = load_rubric("refusal")
    db = _store(tmp_path, rubric, seed=11, reference=True, other=2400, trials=trials)
    policy = tmp_path / "p.yaml"
    policy.write_text("rubric: refusal\njudges: [j1, j2]\nreference: adj\nby: [model]\nn_resamples: 100\n"
                      f"checks:\n{CHECKS.format(metric='kappa')}", encoding="utf-8")
    lean, lean_report, full, full_report = _both(db, policy)
    _same_verdict(lean, full)
    _subset({k: v for k, v in lean_report.data.items() if k != "scope"}, full_report.data)
