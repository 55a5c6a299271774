"""CPU seconds per simulated study of the two PPI simulation tests, and their outputs for a
before/after comparison (not a test; run by hand from a tree's root).

    PYTHONPATH=$PWD python bench/ppi_sim_speed.py 10 /tmp/after.pkl
    PYTHONPATH=/old/tree python bench/ppi_sim_speed.py 10 /tmp/before.pkl   # from /old/tree
    python bench/ppi_sim_speed.py --compare /tmp/before.pkl /tmp/after.pkl

Studies are those of tests/analysis/test_analysis_ppi_simulation.py (``run_study``: both judges, random
and stratified designs alternating) and of tests/stats/test_stats_ppi.py (``_study``/``_figures``:
both designs, both judges); ``--compare`` asserts every row and figure is equal bit for bit
(NaN equal to NaN)."""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))


def run(n: int) -> dict[str, Any]:
    import numpy as np

    import tests.stats.test_stats_ppi as stats_sim
    from tests.ppi_study_sim import run_study

    out: dict[str, Any] = {"sim": {}, "stats": {}}
    run_study(0, "random")  # imports and caches outside the clock
    t = time.process_time()
    for s in range(1, n + 1):
        design = "random" if s % 2 == 0 else "stratified"
        out["sim"][(s, design)] = run_study(s, design)
    print(f"analysis simulation: {(time.process_time() - t) / n:.3f} CPU s per study")
    t = time.process_time()
    for i in range(n):
        s = stats_sim._study(10_000 + i)
        rng = np.random.default_rng(i)
        for design in stats_sim.DESIGNS:
            lab = stats_sim._label(s, design, stats_sim.SHARES[i % 3], rng)
            for judge in stats_sim.JUDGES:
                out["stats"][(i, design, judge)] = stats_sim._figures(s, judge, design, lab)
    print(f"stats simulation: {(time.process_time() - t) / n:.3f} CPU s per study")
    return out


def compare(a: dict[str, Any], b: dict[str, Any]) -> None:
    import pandas as pd

    for k in a["sim"]:
        pd.testing.assert_frame_equal(a["sim"][k], b["sim"][k], check_exact=True)
    for k, figs in a["stats"].items():
        for fig, x in figs.items():
            y = b["stats"][k][fig]
            assert all(u == v or (u != u and v != v) for u, v in zip(x, y, strict=True)), (k, fig)
    print(f"identical: {len(a['sim'])} analysis studies, {len(a['stats'])} stats studies")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        with open(sys.argv[2], "rb") as fa, open(sys.argv[3], "rb") as fb:
            compare(pickle.load(fa), pickle.load(fb))
    else:
        result = run(int(sys.argv[1]))
        if len(sys.argv) > 2:
            with open(sys.argv[2], "wb") as fh:
                pickle.dump(result, fh)
