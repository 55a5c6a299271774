"""Agreement statistics: can a judge's ratings stand in for human raters'?

Pure functions over a raters x units matrix (rows are raters, columns are units; list of lists,
numpy array or DataFrame; missing ratings as None or NaN), the layout of Krippendorff's papers.
Units that fewer than two raters rated cannot be paired and never change a statistic. An
undefined statistic is NaN, never a silent 0 or 1; :func:`undefined_reason` says why.
"""

from judgekit.agreement.alpha import LEVELS, krippendorff_alpha
from judgekit.agreement.bootstrap import (
    ac1_ci,
    ac2_ci,
    alpha_ci,
    bootstrap_ci,
    fleiss_ci,
    kappa_ci,
    percent_agreement_ci,
)
from judgekit.agreement.chance import gwet_ac1, gwet_ac2, percent_agreement, undefined_reason
from judgekit.agreement.confusion import ConfusionResult, confusion_matrix
from judgekit.agreement.kappa import cohen_kappa, fleiss_kappa

__all__ = [
    "LEVELS",
    "ConfusionResult",
    "ac1_ci",
    "ac2_ci",
    "alpha_ci",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_ci",
    "fleiss_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "kappa_ci",
    "krippendorff_alpha",
    "percent_agreement",
    "percent_agreement_ci",
    "undefined_reason",
]
