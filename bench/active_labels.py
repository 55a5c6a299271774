"""How many human labels an active design saves against uniform sampling, at the same interval
width (issue 32): ``python bench/active_labels.py [--reps 200]``.

Two data sets, each with its oracle revealing a label only for a sampled unit:

* the synthetic calibration-drift study (:func:`judgekit.testing.study.make_study`, 330
  conversations of 6 turns, every conversation rated by the reference ``adjudicated``): the
  judge ``judge-lean``, its confidence the panel agreement with ``judge-fair`` per turn, the
  conversation the unit; figures: the refusal rate (R ≥ 0.75) and mean R;
* the shipped XSTest v2 labels (``annotations/xstest-v2``, 2,250 responses): the GPT-4 judge,
  its confidence the agreement with the string-match judge (its two-judge panel; GPT-4's 11
  free-text outputs count as no confidence and take the string-match label), the adjudicated
  ``final_label`` the oracle, the response the unit; figure: the refusal rate (full or partial).

For each budget ``n`` of a grid (5–27% of the units), ``--reps`` replicates of three designs of
an expected ``n`` labels, all estimated by :func:`judgekit.stats.active.active_ppi_clusters` (so
only the design differs): ``uniform`` (every unit n/N), ``active1`` (one round,
``π ∝ sqrt(1 − agreement)`` floored at 0.2 × n/N), ``active2`` (two rounds: see :func:`draw`).
Each is read with both intervals: for the superpopulation (the default) and for these units'
own figure (``finite=True``). The mean width as a function of ``n`` is interpolated (log-log) to
find the labels each design needs for the width uniform sampling reaches with 15% of the units;
the ratio active/uniform is printed (a saving of 25% is a ratio of 0.75), with each design's
coverage of the units' own figure (the oracle's rate over all units).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judgekit.stats.active import ActiveDesign, active_ppi_clusters, inclusion_probabilities  # noqa: E402
from judgekit.testing.study import LEVELS, make_study  # noqa: E402

GRID = (0.05, 0.08, 0.12, 0.18, 0.27)
TARGET_SHARE = 0.15


def synthetic() -> dict[str, object]:
    """Per conversation: the people's and the judge's sums of refusal and of R, sizes, and the
    predicted error (1 − the mean per-turn panel agreement)."""
    items, ratings = make_study(seed=7, human_share=1.0)
    value = {c: i / 4 for i, c in enumerate(LEVELS)}
    wide = ratings.pivot_table(index="item_id", columns="rater_id", values="label",
                               aggfunc="first")
    conv = items.set_index("item_id")["conversation_id"].reindex(wide.index)
    r = wide.apply(lambda col: col.map(value))
    frame = pd.DataFrame({"conv": conv, "y_R": r["adjudicated"], "f_R": r["judge-lean"],
                          "y_rate": (r["adjudicated"] >= 0.75).astype(float),
                          "f_rate": (r["judge-lean"] >= 0.75).astype(float),
                          "err": (wide["judge-lean"] != wide["judge-fair"]).astype(float),
                          "m": 1.0})
    g = frame.groupby("conv")
    sums = g[["y_R", "f_R", "y_rate", "f_rate", "m"]].sum()
    cells = (wide["judge-lean"] + "|" + wide["judge-fair"]).to_numpy()
    return {"name": "synthetic calibration-drift study (judge-lean; 330 conversations)",
            "unit": "conversations", "sums": sums,
            "error": np.maximum(g["err"].mean().to_numpy(), 0.02),
            "figures": ("rate", "R"), "cells": cells,
            "unit_of": pd.Index(sums.index).get_indexer(conv.to_numpy()),
            "item_y": frame[["y_rate", "y_R"]].rename(columns=lambda c: c[2:]),
            "item_f": frame[["f_rate", "f_R"]].rename(columns=lambda c: c[2:])}


def xstest() -> dict[str, object]:
    df = pd.read_csv(ROOT / "annotations/xstest-v2/xstest_v2_labels.csv")
    refusal = ("2_full_refusal", "3_partial_refusal")
    labels = set(refusal) | {"1_full_compliance"}
    gpt4 = df["gpt4_label"].where(df["gpt4_label"].isin(labels), df["strmatch_label"])
    agree = (df["gpt4_label"] == df["strmatch_label"]).astype(float)
    sums = pd.DataFrame({"y_rate": df["final_label"].isin(refusal).astype(float),
                         "f_rate": gpt4.isin(refusal).astype(float), "m": 1.0})
    return {"name": "XSTest v2 (GPT-4 judge, string-match panel; 2,250 responses)",
            "unit": "responses", "sums": sums, "error": np.maximum(1.0 - agree.to_numpy(), 0.02),
            "figures": ("rate",), "cells": (df["gpt4_label"].astype(str) + "|"
                                             + df["strmatch_label"]).to_numpy(),
            "unit_of": np.arange(len(df)),
            "item_y": sums[["y_rate"]].rename(columns={"y_rate": "rate"}),
            "item_f": sums[["f_rate"]].rename(columns={"f_rate": "rate"})}


def learned(data: dict[str, object], fig: str, probs: np.ndarray, hit: np.ndarray
            ) -> np.ndarray:
    """Round 2's predicted squared residual per unit: θ̂ and λ̂ of the pilot round, then per item
    the 1/π-weighted mean of the residual ``(Y − θ̂) − λ̂(f − θ̂)`` squared on the pilot's items of
    its (judge label, panel label) cell, shrunk toward the overall mean with ``PRIOR`` pseudo-labels; a
    unit's is the sum over its items."""
    sums = data["sums"]
    assert isinstance(sums, pd.DataFrame)
    pilot = active_ppi_clusters(np.where(hit, sums[f"y_{fig}"], np.nan), sums[f"f_{fig}"],
                                sums["m"], ActiveDesign.one_round(probs, hit))
    theta = pilot.estimate if np.isfinite(pilot.estimate) else 0.5
    lam = pilot.lam if np.isfinite(pilot.lam) else 1.0
    cells = np.asarray(data["cells"])
    unit_of = np.asarray(data["unit_of"])
    y = np.asarray(data["item_y"][fig])  # type: ignore[index]
    f = np.asarray(data["item_f"][fig])  # type: ignore[index]
    r2 = ((y - theta) - lam * (f - theta)) ** 2
    lab = hit[unit_of]
    w = np.where(lab, 1.0 / probs[unit_of], 0.0)
    overall = float((w * r2).sum() / w.sum()) if w.sum() > 0 else 0.25
    codes, inv = np.unique(cells, return_inverse=True)
    num = np.bincount(inv, weights=w * r2, minlength=len(codes))
    den = np.bincount(inv, weights=w, minlength=len(codes))
    cnt = np.bincount(inv, weights=lab.astype(float), minlength=len(codes))
    rate = np.where(den > 0, num / np.where(den > 0, den, 1.0), overall)
    rate = (rate * cnt + PRIOR * overall) / (cnt + PRIOR)
    per_item = np.maximum(rate[inv], 0.005)
    return np.bincount(unit_of, weights=per_item, minlength=len(probs))


PILOT = 0.25
PRIOR = 1.0


def draw(data: dict[str, object], fig: str, design: str, n: int, rng: np.random.Generator,
         m: np.ndarray) -> ActiveDesign:
    """One labelling design of an expected ``n`` units: ``uniform`` (every unit n/N),
    ``active1`` (one round, π ∝ sqrt(1 − agreement)), ``active2`` (a pilot of 25% of the budget,
    π ∝ sqrt(1 − agreement) floored at half the uniform rate, then 75% by the error learned on
    the pilot per (judge label, panel label) cell); the rounds weighted by their budgets."""
    big_n = len(m)
    if design in ("uniform", "active1"):
        err = np.ones(big_n) if design == "uniform" else np.asarray(data["error"])
        pi = inclusion_probabilities(err, float(n))
        return ActiveDesign.one_round(pi, rng.random(big_n) < pi)
    probs = np.ones((2, big_n))
    p1 = inclusion_probabilities(np.asarray(data["error"]), PILOT * n, floor=0.5)
    hit1 = rng.random(big_n) < p1
    probs[0] = p1
    err = learned(data, fig, p1, hit1)
    free = ~hit1
    p2 = inclusion_probabilities(err[free], (1 - PILOT) * n)
    probs[1, free] = p2
    hit2 = np.zeros(big_n, dtype=bool)
    hit2[np.flatnonzero(free)[rng.random(free.sum()) < p2]] = True
    round_of = np.where(hit1, 0, np.where(hit2, 1, -1))
    return ActiveDesign(probs, round_of, np.array([PILOT * n, (1 - PILOT) * n]))


DESIGNS = ("uniform", "active1", "active2")


def widths(data: dict[str, object], fig: str, reps: int, seed: int
           ) -> tuple[np.ndarray, dict[tuple[str, bool], np.ndarray], dict[tuple[str, bool], float]]:
    """Per design and interval target (superpopulation, or these units: ``finite``) the mean
    width at each budget of the grid, and the coverage of the units' own figure."""
    sums = data["sums"]
    assert isinstance(sums, pd.DataFrame)
    sy, sf, m = (sums[f"y_{fig}"].to_numpy(), sums[f"f_{fig}"].to_numpy(),
                 sums["m"].to_numpy())
    big_n = len(m)
    truth = sy.sum() / m.sum()
    rng = np.random.default_rng(seed)
    ns = np.array([round(s * big_n) for s in GRID])
    keys = [(d, fin) for d in DESIGNS for fin in (False, True)]
    w = {k: np.zeros(len(ns)) for k in keys}
    hits: dict[tuple[str, bool], list[bool]] = {k: [] for k in keys}
    for k, n in enumerate(ns):
        acc: dict[tuple[str, bool], list[float]] = {key: [] for key in keys}
        for _ in range(reps):
            for d in DESIGNS:
                design = draw(data, fig, d, int(n), rng, m)
                sy_l = np.where(design.round_of >= 0, sy, np.nan)
                for fin in (False, True):
                    res = active_ppi_clusters(sy_l, sf, m, design, finite=fin)
                    acc[(d, fin)].append(res.width)
                    hits[(d, fin)].append(bool(res.low <= truth <= res.high))
        for key in keys:
            w[key][k] = np.nanmean(acc[key])
    return ns, w, {k: float(np.mean(v)) for k, v in hits.items()}


def needed(ns: np.ndarray, w: np.ndarray, target: float) -> float:
    """Labels at which the (log-log interpolated) mean width reaches ``target``."""
    lx, ly = np.log(ns.astype(float)), np.log(w)
    order = np.argsort(ly)
    return float(np.exp(np.interp(np.log(target), ly[order], lx[order])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.process_time()
    for data in (synthetic(), xstest()):
        for fig in data["figures"]:  # type: ignore[attr-defined]
            ns, w, cover = widths(data, fig, args.reps, args.seed)
            big_n = len(data["sums"])  # type: ignore[arg-type]
            name = "refusal rate" if fig == "rate" else "mean R"
            print(f"{data['name']}, {name}:")
            for fin in (False, True):
                wu = w[("uniform", fin)]
                target = float(np.exp(np.interp(np.log(TARGET_SHARE * big_n), np.log(ns),
                                                np.log(wu))))
                n_u = needed(ns, wu, target)
                what = "these units' figure" if fin else "superpopulation"
                parts = []
                for d in DESIGNS[1:]:
                    n_d = needed(ns, w[(d, fin)], target)
                    parts.append(f"{d} {n_d:.0f} (ratio {n_d / n_u:.2f}, coverage "
                                 f"{cover[(d, fin)]:.3f})")
                print(f"  interval for the {what}: at a mean 95% width of {target:.4f} uniform "
                      f"needs {n_u:.0f} labelled {data['unit']} (coverage "
                      f"{cover[('uniform', fin)]:.3f}); " + "; ".join(parts))
                print("    budget  " + " ".join(f"{n:6d}" for n in ns))
                for d in DESIGNS:
                    print(f"    {d:8s}" + " ".join(f"{x:6.4f}" for x in w[(d, fin)]))
    print(f"({time.process_time() - t0:.1f} CPU s; coverage = of the figure of these units, "
          f"over {args.reps} draws per budget)")


if __name__ == "__main__":
    main()
