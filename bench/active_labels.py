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

For each budget ``n`` of a grid (5–27% of the units), ``--reps`` replicates of each design of
an expected ``n`` labels, all estimated by :func:`judgekit.stats.active.active_ppi_clusters` (so
only the design differs): ``uniform`` (every unit n/N); ``active1`` (one round,
``π ∝ sqrt(1 − agreement)`` floored at 0.2 × n/N); ``rounds`` (the cost-optimal √error rule
with the error model learned from the labels: a pilot of 10% of the budget by agreement, then
30% and 60% with ``π ∝ sqrt`` of the squared residual learned per (judge label, panel label)
cell from every label before the round, :func:`rounds`); ``rounds+prompt`` (XSTest: the cells
split by the prompt's safety, a covariate known before any label); ``bound`` (one round on the
true per-cell errors, which no design can know: the most that learning the cells can save).
Each is read with both intervals: for the superpopulation (the default) and for these units'
own figure (``finite=True``). The mean width as a function of ``n`` is interpolated (log-log) to
find the labels each design needs for the width uniform sampling reaches with 15% of the units;
the ratio design/uniform is printed (a saving of 25% is a ratio of 0.75), with each design's
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
            "cells_prompt": (df["gpt4_label"].astype(str) + "|" + df["strmatch_label"] + "|"
                             + df["prompt_safety"]).to_numpy(),
            "item_y": sums[["y_rate"]].rename(columns={"y_rate": "rate"}),
            "item_f": sums[["f_rate"]].rename(columns={"f_rate": "rate"})}


def learned(data: dict[str, object], fig: str, probs: np.ndarray, hit: np.ndarray,
            cells_key: str = "cells") -> np.ndarray:
    """A later round's predicted squared residual per unit: θ̂ and λ̂ of the rounds before, then
    per item the 1/π-weighted mean of the residual ``(Y − θ̂) − λ̂(f − θ̂)`` squared on the
    labelled items of its cell (``cells_key``: (judge label, panel label), or with the prompt's
    safety too), shrunk toward the overall mean with ``PRIOR`` pseudo-labels; a unit's is the sum
    over its items. ``probs``: each labelled unit's probability in the round that drew it."""
    sums = data["sums"]
    assert isinstance(sums, pd.DataFrame)
    pilot = active_ppi_clusters(np.where(hit, sums[f"y_{fig}"], np.nan), sums[f"f_{fig}"],
                                sums["m"], ActiveDesign.one_round(probs, hit))
    theta = pilot.estimate if np.isfinite(pilot.estimate) else 0.5
    lam = pilot.lam if np.isfinite(pilot.lam) else 1.0
    cells = np.asarray(data[cells_key])
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


def oracle_error(data: dict[str, object], fig: str) -> np.ndarray:
    """Per unit the true mean squared residual (λ = 1) of its items' (judge, panel) cell, from
    every label: no design can know it, so the design built on it bounds what learning the
    cells' errors can save."""
    y = np.asarray(data["item_y"][fig])  # type: ignore[index]
    f = np.asarray(data["item_f"][fig])  # type: ignore[index]
    r2 = ((y - y.mean()) - (f - f.mean())) ** 2
    _, inv = np.unique(np.asarray(data["cells"]), return_inverse=True)
    cell = np.bincount(inv, weights=r2) / np.bincount(inv)
    unit_of = np.asarray(data["unit_of"])
    return np.maximum(np.bincount(unit_of, weights=cell[inv]), 0.005)


#: the rounds' shares of the budget: a pilot, then two rounds learned from all labels before
ROUNDS = (0.1, 0.3, 0.6)
#: the pilot's predicted error of a judge that agrees with its panel (1 where it does not)
AGREE_ERROR = 0.15
PRIOR = 1.0


def rounds(data: dict[str, object], fig: str, n: int, rng: np.random.Generator,
           cells_key: str) -> ActiveDesign:
    """``len(ROUNDS)`` rounds of an expected ``n`` units in all: the pilot (``ROUNDS[0]`` of
    the budget) with π ∝ sqrt(predicted error), the error :data:`AGREE_ERROR` where the judge
    agrees with its panel and 1 where not, floored at half the uniform rate; each later round
    among the units not yet labelled, π ∝ sqrt(the squared residual learned per cell from every
    label before it, :func:`learned`), floored at 0.1 × the round's uniform rate; the rounds
    weighted by their budgets."""
    big_n = len(np.asarray(data["error"]))
    agree = np.asarray(data["error"]) < 0.5
    probs = np.ones((len(ROUNDS), big_n))
    rnd = np.full(big_n, -1)
    for r, share in enumerate(ROUNDS):
        free = rnd < 0
        if r == 0:
            err = np.where(agree, AGREE_ERROR, 1.0)
        else:
            lab = rnd >= 0
            drawn_at = probs[np.maximum(rnd, 0), np.arange(big_n)]
            err = learned(data, fig, np.where(lab, drawn_at, 1.0), lab, cells_key)
        p = inclusion_probabilities(err[free], min(share * n, float(free.sum())),
                                    floor=0.5 if r == 0 else 0.1)
        probs[r, free] = p
        rnd[np.flatnonzero(free)[rng.random(free.sum()) < p]] = r
    return ActiveDesign(probs, rnd, np.array([share * n for share in ROUNDS]))


def draw(data: dict[str, object], fig: str, design: str, n: int, rng: np.random.Generator,
         m: np.ndarray) -> ActiveDesign:
    """One labelling design of an expected ``n`` units: ``uniform`` (every unit n/N),
    ``active1`` (one round, π ∝ sqrt(1 − agreement)), ``rounds`` (:func:`rounds` on the (judge,
    panel) cells), ``rounds+prompt`` (the cells split by the prompt's safety, XSTest only) and
    ``bound`` (one round on the true cell errors, :func:`oracle_error`: not a design anyone can
    run, the limit of learning the cells)."""
    big_n = len(m)
    if design in ("uniform", "active1", "bound"):
        err = (np.ones(big_n) if design == "uniform" else oracle_error(data, fig)
               if design == "bound" else np.asarray(data["error"]))
        pi = inclusion_probabilities(err, float(n))
        return ActiveDesign.one_round(pi, rng.random(big_n) < pi)
    return rounds(data, fig, n, rng, "cells_prompt" if design == "rounds+prompt" else "cells")


DESIGNS = ("uniform", "active1", "rounds", "rounds+prompt", "bound")


def designs_of(data: dict[str, object]) -> tuple[str, ...]:
    """The designs a data set can run (``rounds+prompt`` needs the prompts' safety)."""
    return tuple(d for d in DESIGNS if d != "rounds+prompt" or "cells_prompt" in data)


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
    designs = designs_of(data)
    keys = [(d, fin) for d in designs for fin in (False, True)]
    w = {k: np.zeros(len(ns)) for k in keys}
    hits: dict[tuple[str, bool], list[bool]] = {k: [] for k in keys}
    for k, n in enumerate(ns):
        acc: dict[tuple[str, bool], list[float]] = {key: [] for key in keys}
        for _ in range(reps):
            for d in designs:
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
    ap.add_argument("--only", choices=("synthetic", "xstest"), default=None)
    args = ap.parse_args()
    t0 = time.process_time()
    sets = {"synthetic": synthetic, "xstest": xstest}
    for key in ([args.only] if args.only else list(sets)):
        data = sets[key]()
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
                for d in designs_of(data)[1:]:
                    n_d = needed(ns, w[(d, fin)], target)
                    parts.append(f"{d} {n_d:.0f} (ratio {n_d / n_u:.2f}, coverage "
                                 f"{cover[(d, fin)]:.3f})")
                print(f"  interval for the {what}: at a mean 95% width of {target:.4f} uniform "
                      f"needs {n_u:.0f} labelled {data['unit']} (coverage "
                      f"{cover[('uniform', fin)]:.3f}); " + "; ".join(parts))
                print("    budget        " + " ".join(f"{n:6d}" for n in ns))
                for d in designs_of(data):
                    print(f"    {d:14s}" + " ".join(f"{x:6.4f}" for x in w[(d, fin)]))
    print(f"({time.process_time() - t0:.1f} CPU s; coverage = of the figure of these units, "
          f"over {args.reps} draws per budget)")


if __name__ == "__main__":
    main()
