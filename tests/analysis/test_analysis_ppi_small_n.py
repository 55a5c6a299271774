"""Coverage of the corrected refusal rate on few labelled conversations (slow simulation).

One conversation per unit, 300 in all, a refusal rate of 0.35; a fair judge (flips 10% of
its labels either way) and a biased one (calls 28% of the non-refusals refusals). Each study
labels n conversations at random; the target is the finite-population rate (people's label
on every conversation). Before the small-n floor the biased judge's corrected interval held it
in 0.65 (n = 5), 0.81 (8), 0.83 (10), 0.90 (15) of the studies. Reproduce the table of
docs/analysis.md with ``pytest -m slow -s tests/analysis/test_analysis_ppi_small_n.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgekit.analysis.correction.ppi_rows import mean_row

N_CONVERSATIONS = 300
STUDIES = 500
SIZES = (5, 8, 10, 15, 20, 30, 40)


def _study(rng: np.random.Generator, n: int, judge: str) -> tuple[np.ndarray, np.ndarray, float]:
    y = (rng.random(N_CONVERSATIONS) < 0.35).astype(float)
    f = y.copy()
    if judge == "biased":
        f[(y == 0) & (rng.random(N_CONVERSATIONS) < 0.28)] = 1.0
    else:
        flip = rng.random(N_CONVERSATIONS) < 0.10
        f[flip] = 1.0 - f[flip]
    lab = rng.choice(N_CONVERSATIONS, n, replace=False)
    y_lab = np.full(N_CONVERSATIONS, np.nan)
    y_lab[lab] = y[lab]
    return f, y_lab, float(y.mean())


def _coverage(judge: str, n: int) -> tuple[float, float, int]:
    """(coverage, mean width, rows reported) over :data:`STUDIES` studies."""
    rng = np.random.default_rng(1000 + n + (0 if judge == "fair" else 500))
    held, widths = [], []
    for _ in range(STUDIES):
        f, y_lab, truth = _study(rng, n, judge)
        row = mean_row("refusal rate", f, np.arange(N_CONVERSATIONS), y_lab)
        if math.isfinite(row["ci_low"]):
            held.append(row["ci_low"] <= truth <= row["ci_high"])
            widths.append(row["ci_high"] - row["ci_low"])
    return (float(np.mean(held)) if held else math.nan,
            float(np.mean(widths)) if widths else math.nan, len(held))


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["fair", "biased"])
def test_corrected_rate_covers_on_few_labelled_conversations(judge: str) -> None:
    for n in SIZES:
        cov, width, reported = _coverage(judge, n)
        print(f"{judge} judge, {n} labelled: coverage {cov:.3f}, mean width {width:.3f}, "
              f"{reported} of {STUDIES} studies reported")
        assert reported == STUDIES  # from 5 labelled conversations every figure is reported
        assert cov >= 0.93, (judge, n, cov)
