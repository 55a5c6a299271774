"""Synthetic data for the probe tests: one reference, and judges each built with one defect.

1,200 items from three models (families A, B, C, 400 each), a reference label drawn with shares
50% full compliance, 15% partial refusal, 35% full refusal, and a response whose length (in
characters) depends on the reference label (compliant answers are longer) but not on the model.
Every judge is of family A and has three trials:

* ``clean``: the reference, with 8% of items replaced (the same in every trial) by a label drawn
  from the reference shares (errors that depend on nothing);
* ``long``: clean, but on long responses (above the median length) whose reference is not a
  full refusal it says full refusal with probability 0.35, and on short full refusals it says
  full compliance with the probability that keeps its label shares the reference's;
* ``selfish``: clean, but on its own family's full refusals it says full compliance (p 0.4), and
  on other families' full compliances full refusal at the rate that keeps the shares;
* ``flaky``: clean in its majority, but each trial is replaced with probability 0.3 by a label
  drawn from the reference shares (the label flips across trials).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

CODES = ["full_compliance", "partial_refusal", "full_refusal"]
SHARES = [0.5, 0.15, 0.35]
MODELS = {"model-a": "A", "model-b": "B", "model-c": "C"}
JUDGES = ["clean", "long", "selfish", "flaky"]


def synthetic(n: int = 1200, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    ref = rng.choice(3, size=n, p=SHARES)
    model = np.array(list(MODELS))[np.arange(n) % 3]
    base_len = np.array([900, 500, 250])[ref]
    length = np.maximum(20, (base_len * rng.lognormal(0, 0.5, size=n)).astype(int))
    long_ = length > np.median(length)

    def noisy(labels: np.ndarray, p: float) -> np.ndarray:
        out = labels.copy()
        swap = rng.random(n) < p
        out[swap] = rng.choice(3, size=int(swap.sum()), p=SHARES)
        return out

    clean = noisy(ref, 0.08)
    longj = clean.copy()
    over = long_ & (ref != 2) & (rng.random(n) < 0.35)
    longj[over] = 2
    short_ref = (~long_) & (ref == 2)
    p_under = min(1.0, over.sum() / max(short_ref.sum(), 1))
    longj[short_ref & (rng.random(n) < p_under)] = 0
    own = model == "model-a"
    selfish = clean.copy()
    down = own & (ref == 2) & (rng.random(n) < 0.4)
    selfish[down] = 0
    other_c = (~own) & (ref == 0)
    selfish[other_c & (rng.random(n) < down.sum() / max(other_c.sum(), 1))] = 2
    trials = {"clean": [clean] * 3, "long": [longj] * 3, "selfish": [selfish] * 3,
              "flaky": [noisy(clean, 0.3) for _ in range(3)]}
    return {"ref": ref, "model": model, "length": length, "trials": trials}


def write_store(tmp: Path, n: int = 1200, seed: int = 7) -> Path:
    data = synthetic(n, seed)
    items = ["item_id,model,response_chars,prompt,response"]
    for i in range(n):
        items.append(f"s{i},{data['model'][i]},{data['length'][i]},prompt {i},{'x' * int(data['length'][i])}")
    rows = ["item_id,rater_id,rater_kind,label,trial,status"]
    for i in range(n):
        rows.append(f"s{i},ref,reference,{CODES[data['ref'][i]]},0,ok")
        for j in JUDGES:
            for t, labs in enumerate(data["trials"][j]):
                rows.append(f"s{i},{j},judge,{CODES[labs[i]]},{t},ok")
    (tmp / "items.csv").write_text("\n".join(items) + "\n")
    (tmp / "ratings.csv").write_text("\n".join(rows) + "\n")
    db = tmp / "synthetic.db"
    with Store(db) as s:
        import_ratings(s, tmp / "ratings.csv", load_rubric("refusal"), items_path=tmp / "items.csv")
    return db


PROBES = """\
rubric: refusal
judges: [clean, long, selfish, flaky]
reference: ref
n_resamples: 200
families:
  column: model
  judges: {clean: A, long: A, selfish: A, flaky: A}
  models: {model-a: A, model-b: B, model-c: C}
covariates:
  - {column: response_chars, target: full_refusal, margin: 0.1}
self_preference: {margin: 0.1}
stability: {min_alpha: 0.8}
drift: {margin: 0.1}
"""
