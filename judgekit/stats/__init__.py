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

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.stats.bounded import bounded_mean_interval
    from judgekit.stats.concordance import Concordance
    from judgekit.stats.intervals import (
        Z95,
        abs_interval,
        bootstrap_stat,
        clopper_pearson_bound,
        clopper_pearson_interval,
        cluster_weights,
        normal_quantile,
        percentile_ci,
        percentile_interval,
        t_interval,
        t_quantile,
        wilson_interval,
        z_two_sided,
    )
    from judgekit.stats.power import (
        Undecidable,
        n_for_kappa,
        n_for_power,
        smallest_margin,
        what_it_shows,
    )
    from judgekit.stats.power_sim import SimPlan, n_for_certification, n_for_joint_certification
    from judgekit.stats.ppi import PPIMean, TurnUnits, ppi_drift, ppi_mean
    from judgekit.stats.ppi_pairs import PPIPairwise, ppi_concordance
    from judgekit.stats.ppi_strata import StratifiedPPIMean, stratified_ppi_mean
    from judgekit.stats.selective import ThresholdCalibration, calibrate_threshold
    from judgekit.stats.selective_cascade import CascadeCalibration, calibrate_cascade
    from judgekit.stats.sequential import (
        ConfidenceSequence,
        SequentialDecision,
        sequential_decision,
    )

_LAZY = {
    "bounded_mean_interval": "bounded",
    "Concordance": "concordance",
    "Z95": "intervals",
    "abs_interval": "intervals",
    "bootstrap_stat": "intervals",
    "clopper_pearson_bound": "intervals",
    "clopper_pearson_interval": "intervals",
    "cluster_weights": "intervals",
    "normal_quantile": "intervals",
    "percentile_ci": "intervals",
    "percentile_interval": "intervals",
    "t_interval": "intervals",
    "t_quantile": "intervals",
    "wilson_interval": "intervals",
    "z_two_sided": "intervals",
    "Undecidable": "power",
    "n_for_kappa": "power",
    "n_for_power": "power",
    "smallest_margin": "power",
    "what_it_shows": "power",
    "SimPlan": "power_sim",
    "n_for_certification": "power_sim",
    "n_for_joint_certification": "power_sim",
    "PPIMean": "ppi",
    "TurnUnits": "ppi",
    "ppi_drift": "ppi",
    "ppi_mean": "ppi",
    "PPIPairwise": "ppi_pairs",
    "ppi_concordance": "ppi_pairs",
    "StratifiedPPIMean": "ppi_strata",
    "stratified_ppi_mean": "ppi_strata",
    "ThresholdCalibration": "selective",
    "calibrate_threshold": "selective",
    "CascadeCalibration": "selective_cascade",
    "calibrate_cascade": "selective_cascade",
    "ConfidenceSequence": "sequential",
    "SequentialDecision": "sequential",
    "sequential_decision": "sequential",
}

__all__ = [
    "abs_interval",
    "bootstrap_stat",
    "bounded_mean_interval",
    "calibrate_cascade",
    "calibrate_threshold",
    "CascadeCalibration",
    "clopper_pearson_bound",
    "clopper_pearson_interval",
    "cluster_weights",
    "Concordance",
    "ConfidenceSequence",
    "n_for_certification",
    "n_for_joint_certification",
    "n_for_kappa",
    "n_for_power",
    "normal_quantile",
    "percentile_ci",
    "percentile_interval",
    "ppi_concordance",
    "ppi_drift",
    "ppi_mean",
    "PPIMean",
    "PPIPairwise",
    "sequential_decision",
    "SequentialDecision",
    "SimPlan",
    "smallest_margin",
    "stratified_ppi_mean",
    "StratifiedPPIMean",
    "t_interval",
    "t_quantile",
    "ThresholdCalibration",
    "TurnUnits",
    "Undecidable",
    "what_it_shows",
    "wilson_interval",
    "Z95",
    "z_two_sided",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
