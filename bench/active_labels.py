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

For each budget ``n`` of a grid, ``--reps`` replicates of (a) uniform: ``n`` units drawn at
random, :func:`judgekit.stats.ppi.ppi_mean`; (b) active: one round, ``π ∝ sqrt(1 − confidence)``
floored at 0.2 × n/N, :func:`judgekit.stats.active.active_ppi_clusters`, ``n`` the expected
number of labels. The mean interval width as a function of ``n`` is interpolated (log-log) to
find the labels each design needs for the width uniform sampling reaches with 15% of the units;
the ratio active/uniform is printed (a saving of 25% is a ratio of 0.75).
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
from judgekit.stats.ppi import ppi_mean  # noqa: E402
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
    return {"name": "synthetic calibration-drift study (judge-lean; 330 conversations)",
            "unit": "conversations", "sums": sums,
            "error": np.maximum(g["err"].mean().to_numpy(), 0.02),
            "figures": ("rate", "R")}


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
            "figures": ("rate",)}


def widths(data: dict[str, object], fig: str, reps: int, seed: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Mean widths of uniform and active at each budget of the grid; the coverage of active."""
    sums = data["sums"]
    assert isinstance(sums, pd.DataFrame)
    sy, sf, m = (sums[f"y_{fig}"].to_numpy(), sums[f"f_{fig}"].to_numpy(),
                 sums["m"].to_numpy())
    big_n = len(m)
    truth = sy.sum() / m.sum()
    err = np.asarray(data["error"])
    rng = np.random.default_rng(seed)
    ns = np.array([round(s * big_n) for s in GRID])
    wu, wa = np.zeros(len(ns)), np.zeros(len(ns))
    hits = []
    ids = np.arange(big_n)
    for k, n in enumerate(ns):
        pi = inclusion_probabilities(err, float(n))
        uw, aw = [], []
        for _ in range(reps):
            lab = rng.choice(big_n, n, replace=False)
            u = ppi_mean(sf, ids, sf[lab], sy[lab] / m[lab] * m[lab], lab) if (m == 1).all() \
                else ppi_unit(sy, sf, m, lab)
            uw.append(u.width)
            hit = rng.random(big_n) < pi
            a = active_ppi_clusters(np.where(hit, sy, np.nan), sf, m,
                                    ActiveDesign.one_round(pi, hit))
            aw.append(a.width)
            hits.append(a.low <= truth <= a.high)
        wu[k], wa[k] = np.nanmean(uw), np.nanmean(aw)
    return ns, wu, wa, float(np.mean(hits))


def ppi_unit(sy: np.ndarray, sf: np.ndarray, m: np.ndarray, lab: np.ndarray) -> object:
    """Uniform PPI++ with the conversation as the unit, from per-conversation sums: each
    conversation's turns as units (the judge's and the people's per-turn values are only
    needed through their sums, so each conversation is given as ``m`` units of its mean)."""
    reps = m.astype(int)
    cl = np.repeat(np.arange(len(m)), reps)
    f_all = np.repeat(sf / m, reps)
    in_lab = np.isin(cl, lab)
    y_all = np.repeat(sy / m, reps)
    return ppi_mean(f_all, cl, f_all[in_lab], y_all[in_lab], cl[in_lab])


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
            ns, wu, wa, cover = widths(data, fig, args.reps, args.seed)
            big_n = len(data["sums"])  # type: ignore[arg-type]
            target = float(np.exp(np.interp(np.log(TARGET_SHARE * big_n), np.log(ns),
                                            np.log(wu))))
            n_u, n_a = needed(ns, wu, target), needed(ns, wa, target)
            name = "refusal rate" if fig == "rate" else "mean R"
            print(f"{data['name']}, {name}: at a mean 95% width of {target:.4f}, uniform needs "
                  f"{n_u:.0f} labelled {data['unit']}, active {n_a:.0f}: ratio {n_a / n_u:.2f} "
                  f"(saving {1 - n_a / n_u:.0%}); active coverage {cover:.3f} over "
                  f"{args.reps * len(ns)} draws")
            print("   budget  " + " ".join(f"{n:6d}" for n in ns))
            print("   uniform " + " ".join(f"{w:6.4f}" for w in wu))
            print("   active  " + " ".join(f"{w:6.4f}" for w in wa))
    print(f"({time.process_time() - t0:.1f} CPU s)")


if __name__ == "__main__":
    main()
