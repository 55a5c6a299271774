"""The stability probe's interval on Krippendorff's α never leaves α's range: its upper bound is at
most 1, even when a wide normal interval around an α near 1 would pass it."""

from __future__ import annotations

from judgekit.probes.bands import decide


def test_stability_alpha_interval_is_clipped_at_one():
    row = {"probe": "stability", "name": "min_stability", "by": None, "key": "all", "n": 40,
           "estimate": 1.0, "se": 0.075, "detail": "all items", "upper": 1.0}
    out = decide([row], mode="min", threshold=0.8, min_n=10)[0]
    assert out["low"] < 1.0
    assert out["high"] == 1.0
    assert out["check"]["ci"][1] <= 1.0
