"""Kept for the documented import path ``from judgekit.analysis.intervals import ...``: the
interval helpers live in :mod:`judgekit.stats.intervals`, below every layer that uses them."""

from judgekit.stats.intervals import (
    abs_interval,
    bootstrap_stat,
    cluster_weights,
    percentile_ci,
    wilson_interval,
)

__all__ = ["abs_interval", "bootstrap_stat", "cluster_weights", "percentile_ci", "wilson_interval"]
