"""They read the store's items x raters code
matrix (the one the agreement report reads) and compute each agreement figure through the
agreement package. Checked against independent computations written out here (scikit-learn's
confusion matrix, the ``krippendorff`` package, majorities and consensus counted by hand), and a
label outside the rubric is refused in one sentence as the report refuses it."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from sklearn.metrics import confusion_matrix

from judgekit.agreement import alt_test
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.gate.alt import alt_inputs_results
from judgekit.gate.figures import decide_figures
from judgekit.probes.probefile import ProbeFile
from judgekit.probes.run import run_probes
from judgekit.probes.stability import stability
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.policy import load_policy

REFUSAL = load_rubric("refusal")
C = REFUSAL.codes
COLS = ["item_id", "rater_id", "rater_kind", "label", "status", "trial"]


def _rows(seed: int = 3, n: int = 80) -> list[tuple[Any, ...]]:
    """Three humans (some missing, some abstaining, ties on purpose), a judge with three trials
    (some ties, some errors) and one with a single trial."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = []
    for k in range(n):
        item = f"i{k:03d}"
        truth = rng.choice(C)
        for h in ("h1", "h2", "h3"):
            r = rng.random()
            if r < 0.1:
                continue
            if r < 0.15:
                rows.append((item, h, "human", None, "abstain", 0))
                continue
            rows.append((item, h, "human", truth if rng.random() < 0.7 else rng.choice(C), "ok", 0))
        for t in range(3):
            if rng.random() < 0.08:
                rows.append((item, "j3", "judge", None, "error", t))
            else:
                rows.append((item, "j3", "judge", truth if rng.random() < 0.6 else rng.choice(C), "ok", t))
        rows.append((item, "j1", "judge", truth if rng.random() < 0.8 else rng.choice(C), "ok", 0))
    return rows


def _store(db: Path, rows: list[tuple[Any, ...]]) -> Path:
    items = sorted({r[0] for r in rows})
    with Store(db) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": ["p"] * len(items), "response": ["r"] * len(items)}))
        df = pd.DataFrame(rows, columns=COLS)
        df["rubric"], df["rubric_hash"] = REFUSAL.id, REFUSAL.hash
        s.put_ratings(df)
    return db


def _by_hand(rows: list[tuple[Any, ...]]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The humans' consensus (a strict plurality of ok labels) and each judge's majority over its
    ok trials (a strict plurality), counted here without judgekit."""
    ok: dict[tuple[str, str], list[str]] = {}
    for item, rater, _kind, label, status, _t in rows:
        if status == "ok":
            ok.setdefault((item, rater), []).append(label)

    def plurality(labels: list[str]) -> str | None:
        top = Counter(labels).most_common()
        return top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else None

    judges: dict[str, dict[str, str]] = {"j1": {}, "j3": {}}
    humans: dict[str, list[str]] = {}
    for (item, rater), labels in ok.items():
        if rater in judges:
            if (m := plurality(labels)) is not None:
                judges[rater][item] = m
        else:
            humans.setdefault(item, []).append(labels[0])
    consensus = {i: m for i, labs in humans.items() if (m := plurality(labs)) is not None}
    return consensus, judges


def test_drift_reads_the_consensus_and_the_judges_majority_from_the_code_matrix(tmp_path):
    rows = _rows()
    db = _store(tmp_path / "s.db", rows)
    probe = ProbeFile(rubric="refusal", judges=["j1", "j3"], reference="consensus", n_resamples=100,
                      drift={"margin": 0.2})
    with Store(db) as s:
        doc = run_probes(s, probe, "probes.yaml")
    consensus, judges = _by_hand(rows)
    assert doc["reference"] == "consensus"
    for j in doc["judges"]:
        (row,) = [r for r in j["probes"] if r["probe"] == "drift"]
        mine = judges[j["judge"]]
        both = sorted(set(consensus) & set(mine))
        ref, jud = [consensus[i] for i in both], [mine[i] for i in both]
        assert row["n"] == len(both)
        assert row["extra"]["table"] == confusion_matrix(ref, jud, labels=C).tolist()
        for c in C:
            assert row["extra"]["share_diff"][c]["value"] == pytest.approx(
                (jud.count(c) - ref.count(c)) / len(both), abs=1e-6)  # figures are rounded to 6 places


def test_the_alt_test_reads_the_ceiling_humans_and_the_judge_from_the_code_matrix(tmp_path):
    rows = _rows(seed=5, n=90)
    db = _store(tmp_path / "s.db", rows)
    pol = tmp_path / "p.yaml"
    pol.write_text("rubric: refusal\njudges: [j1, j3]\nn_resamples: 100\nchecks:\n  min_items: 5\n"
                   "  alt_test: {epsilon: 0.2, q: 0.05, min_winning_rate: 0.5, min_units_per_human: 20}\n")
    policy, _ = load_policy(pol)
    _consensus, judges = _by_hand(rows)
    # the humans x units matrix written out here: ok labels, units = items a human labelled
    human_ok = {(i, r): lab for i, r, _k, lab, st, _t in rows if r.startswith("h") and st == "ok"}
    units = sorted({i for i, _ in human_ok})
    matrix = pd.DataFrame([[human_ok.get((u, h)) for u in units] for h in ("h1", "h2", "h3")],
                          index=["h1", "h2", "h3"], columns=units, dtype=object)
    with Store(db) as s:
        report, codes = decide_figures(s, policy, pol, REFUSAL, full_report=False)
        got = alt_inputs_results(s, policy, REFUSAL, report)
        assert alt_inputs_results(s, policy, REFUSAL, report, codes) == got  # the gate's matrix: the same
    assert report.data["ceiling_raters"] == ["h1", "h2", "h3"]
    for judge in ("j1", "j3"):
        want = alt_test(matrix, np.array([judges[judge].get(u) for u in units], dtype=object),
                        epsilon=0.2, q=0.05, min_units_per_human=20)
        assert got[judge] == want and got[judge].n_units > 20


@pytest.mark.parametrize("seed", range(6))
def test_stability_alpha_is_the_krippendorff_package_to_1e_12(seed):
    rng = random.Random(seed)
    rows = []
    for i in range(rng.randint(10, 60)):
        base = rng.choice(C)
        for t in range(rng.randint(2, 5)):  # uneven trials per item
            rows.append((f"i{i:02d}", t, base if rng.random() > 0.3 else rng.choice(C)))
    frame = pd.DataFrame(rows, columns=["item_id", "trial", "label"])
    width = int(frame.groupby("item_id").size().max())
    wide = frame.pivot(index="trial", columns="item_id", values="label").reindex(range(width))
    nominal = wide.apply(lambda col: col.map({c: i for i, c in enumerate(C)})).to_numpy(dtype=float)
    values = [0.0, 0.4, 1.0]
    interval = wide.apply(lambda col: col.map(dict(zip(C, values, strict=True)))).to_numpy(dtype=float)
    got = stability(frame, codes=C, n_resamples=20, seed=seed)
    assert got["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=nominal, level_of_measurement="nominal",
                                                            value_domain=[0, 1, 2]), abs=1e-12)
    got = stability(frame, codes=C, values=values, n_resamples=20, seed=seed)
    assert got["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=interval,
                                                            level_of_measurement="interval"), abs=1e-12)


@pytest.mark.parametrize("who", ["h2", "j1", "j3"])
def test_a_label_outside_the_rubric_is_refused_by_the_probes_in_one_sentence(tmp_path, who):
    rows = [(i, r, k, "Refused" if (i, r) == ("i004", who) else lab, st, t) for i, r, k, lab, st, t in _rows()
            if not (i == "i004" and r == who and st != "ok")]
    if not any(r[0] == "i004" and r[1] == who for r in rows):
        rows.append(("i004", who, "human" if who.startswith("h") else "judge", "Refused", "ok", 0))
    db = _store(tmp_path / "s.db", rows)
    (tmp_path / "probes.yaml").write_text("rubric: refusal\njudges: [j1, j3]\nreference: consensus\n"
                                          "n_resamples: 100\ndrift: {margin: 0.2}\n")
    with Store(db) as s, pytest.raises(JudgekitError, match=f"Rating of item 'i004' by '{who}' has the label "
                                                            "'Refused', which is not one of the rubric's codes"):
        run_probes(s, ProbeFile(rubric="refusal", judges=["j1", "j3"], reference="consensus", n_resamples=100,
                                drift={"margin": 0.2}), "probes.yaml")
    res = CliRunner().invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db),
                                    "--out", str(tmp_path / "out")])
    assert "'Refused', which is not one of the rubric's codes" in one_sentence_error(res)
    assert not (tmp_path / "out" / "probes.json").exists()
