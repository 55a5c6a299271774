"""Calibration error RCE = E|R − H| and its drift over the turns of a conversation.

RCE is 0 when restrictiveness R equals harm H everywhere; Drift(t) = RCE_t − RCE_1 per turn t of
a multi-turn conversation (positive = calibration worsens as the conversation goes on).
These are the reference definitions on plain arrays; the analysis computes the same figures for
many bootstrap replicates at once (:mod:`judgekit.analysis.calibration.replicates`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def calibration_error(r: Sequence[float] | np.ndarray, h: Sequence[float] | np.ndarray) -> float:
    """RCE = mean |R − H| over paired values (NaN pairs ignored; NaN if there are none).

    >>> calibration_error([0.0, 0.5, 1.0], [0.25, 0.5, 0.5])  # (.25 + 0 + .5) / 3
    0.25
    """
    d = np.abs(np.asarray(r, dtype=float) - np.asarray(h, dtype=float))
    d = d[np.isfinite(d)]
    return float(d.mean()) if d.size else float("nan")


def drift(rce_by_turn: Sequence[float] | np.ndarray) -> np.ndarray:
    """Drift(t) = RCE_t − RCE_1 for RCE values listed by turn, first turn first.

    >>> drift([0.2, 0.25, 0.4]).round(2).tolist()
    [0.0, 0.05, 0.2]
    """
    a = np.asarray(rce_by_turn, dtype=float)
    return a - a[..., :1]

