"""Regression tests for the reviewer's findings on the bias probes (issue 14 review, fix2)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import chi2

from judgekit.probes.bands import decide
from judgekit.probes.marginal import stuart_maxwell
from judgekit.probes.stability import stability


# ----------------------------------------------------------------------------- 7 Stuart–Maxwell
def test_stuart_maxwell_drops_a_perfectly_agreed_class():
    sm = stuart_maxwell([[5, 0, 0], [0, 3, 2], [0, 1, 4]])
    # label 0 has no off-diagonal count (d_0 = 0, S row/column 0): dropped; on [[3, 2], [1, 4]]
    # d = (3 + 2) − (3 + 1) = 1, S = n_1. + n_.1 − 2 n_11 = 5 + 4 − 6 = 3, χ² = 1² / 3
    assert sm["undefined"] is None
    assert sm["statistic"] == pytest.approx(1 / 3) and sm["df"] == 1
    assert sm["p"] == pytest.approx(chi2.sf(1 / 3, 1))


def test_stuart_maxwell_all_agreed_is_zero():
    sm = stuart_maxwell([[5, 0], [0, 3]])
    assert sm["statistic"] == 0.0 and sm["p"] == 1.0


# ----------------------------------------------------------------------------- 6 zero-width intervals
def _stable_judge(n: int) -> pd.DataFrame:
    ids = [f"i{k}" for k in range(n)]
    labs = ["x" if k < 20 else "y" for k in range(n)]
    return pd.DataFrame({"item_id": ids * 2, "trial": [0] * n + [1] * n, "label": labs * 2})


def test_stability_without_flips_is_not_certain():
    res = stability(_stable_judge(39), codes=["x", "y"], n_resamples=200)
    assert res["alpha"] == pytest.approx(1.0) and res["flip_share"] == 0.0
    # Wilson 95% upper bound on 0 of 39: z² / (n + z²)
    z = 1.959963984540054
    f_high = z * z / (39 + z * z)
    assert res["flip_high"] == pytest.approx(f_high)
    # D_e (nominal) on the 78 pairable values: 40 x, 38 y: 2·40·38 / (78·77)
    d_e = 2 * 40 * 38 / (78 * 77)
    assert res["alpha_bound"] == pytest.approx(1 - f_high / d_e)
    assert res["se"] == pytest.approx((1 - (1 - f_high / d_e)) / z)
    row = {"name": "min_stability", "n": res["n"], "estimate": res["alpha"], "se": res["se"], "detail": "d"}
    # α >= 0.9 is not shown by 39 unflipped items (the bound allows α ≈ 0.82): inconclusive, not PASS
    (out,) = decide([row], mode="min", threshold=0.9, min_n=30)
    assert out["state"] == "inconclusive"
    assert out["low"] == pytest.approx(1 - z * res["se"])
    # ... while α >= 0.8 is (the low end 0.823 clears it)
    (out2,) = decide([dict(row)], mode="min", threshold=0.8, min_n=30)
    assert out2["state"] == "pass"


def test_zero_width_interval_does_not_decide():
    for mode, est, thr in (("abs", 0.0, 0.05), ("abs", 0.2, 0.05), ("min", 1.0, 0.8)):
        name = "min_stability" if mode == "min" else "max_label_drift"
        (out,) = decide([{"name": name, "n": 50, "estimate": est, "se": 0.0, "detail": "d"}],
                        mode=mode, threshold=thr, min_n=30)
        assert out["state"] == "inconclusive", (mode, est)
        assert out["check"]["ci"] is None and "zero width" in out["check"]["detail"]
