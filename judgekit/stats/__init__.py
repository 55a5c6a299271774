"""Generic interval estimators and tests, pure functions over arrays (no I/O, no store).

* :mod:`~judgekit.stats.intervals` — the interval core: normal and t quantiles, t, Wilson,
  Clopper–Pearson and bootstrap percentile intervals (one NaN rule), the cluster bootstrap;
* :mod:`~judgekit.stats.concordance` — the concordance C of R with H from a contingency table;
* :mod:`~judgekit.stats.ppi`, :mod:`~judgekit.stats.ppi_strata`, :mod:`~judgekit.stats.ppi_pairs`,
  :mod:`~judgekit.stats.bounded` — prediction-powered inference with clusters and strata;
* :mod:`~judgekit.stats.power`, :mod:`~judgekit.stats.power_sim` — planning how many units decide
  a check, in closed form and by simulating the gate's rule;
* :mod:`~judgekit.stats.sequential` — anytime-valid confidence sequences;
* :mod:`~judgekit.stats.selective`, :mod:`~judgekit.stats.selective_cascade` — selective
  prediction with a guaranteed error rate;
* :mod:`~judgekit.stats.confidence` — a judge's confidence in a label.

The names below are imported on first use, so importing the package loads neither numpy nor scipy.
(:func:`judgekit.stats.concordance.concordance` shares its module's name, so it is not among them.)
"""

from __future__ import annotations

from judgekit.core.lazy import lazy_exports

_MODULES = {
    "bounded": ("bounded_mean_interval",),
    "concordance": ("Concordance",),
    "intervals": ("Z95", "abs_interval", "bootstrap_stat", "clopper_pearson_bound", "clopper_pearson_interval",
                  "cluster_weights", "normal_quantile", "percentile_ci", "percentile_interval", "t_interval",
                  "t_quantile", "wilson_interval", "z_two_sided"),
    "power": ("Undecidable", "n_for_kappa", "n_for_power", "smallest_margin", "what_it_shows"),
    "power_sim": ("SimPlan", "n_for_certification", "n_for_joint_certification"),
    "ppi": ("PPIMean", "TurnUnits", "ppi_drift", "ppi_mean"),
    "ppi_pairs": ("PPIPairwise", "ppi_concordance"),
    "ppi_strata": ("StratifiedPPIMean", "stratified_ppi_mean"),
    "selective": ("ThresholdCalibration", "calibrate_threshold"),
    "selective_cascade": ("CascadeCalibration", "calibrate_cascade"),
    "sequential": ("ConfidenceSequence", "SequentialDecision", "sequential_decision"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
