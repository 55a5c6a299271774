"""Agreement statistics: can a judge's ratings stand in for human raters'?

Pure functions over a raters x units matrix (rows are raters, columns are units; list of lists,
numpy array or DataFrame; missing ratings as None or NaN), the layout of Krippendorff's papers.
Units that fewer than two raters rated cannot be paired: they never change Krippendorff's alpha,
Cohen's kappa, Scott's pi or percent agreement, while Fleiss', Conger's kappa, Gwet's AC1/AC2
and Brennan-Prediger follow Gwet's irrCAC (the reference implementation), where such a unit
enters the chance term. An undefined statistic is NaN, never a silent 0 or 1;
:func:`undefined_reason` says why. :func:`alt_test` is the alternative annotator test (can a
judge replace the human raters?).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.agreement.alpha import LEVELS, krippendorff_alpha
    from judgekit.agreement.alternative_annotator import AltTestHuman, AltTestResult, alt_test
    from judgekit.agreement.bootstrap import (
        ac1_ci,
        ac2_ci,
        alpha_ci,
        bootstrap_ci,
        bp_ci,
        conger_ci,
        fleiss_ci,
        kappa_ci,
        percent_agreement_ci,
        scott_ci,
    )
    from judgekit.agreement.chance import (
        brennan_prediger,
        gwet_ac1,
        gwet_ac2,
        percent_agreement,
        undefined_reason,
    )
    from judgekit.agreement.confusion import ConfusionResult, confusion_matrix
    from judgekit.agreement.conger import conger_kappa
    from judgekit.agreement.kappa import cohen_kappa, fleiss_kappa, scott_pi
    from judgekit.agreement.report import agreement_report
    from judgekit.agreement.report_data import AgreementReport

# Imported on first use, so that importing one statistic (or the CLI) loads no more than it
# needs: scipy comes only with alt_test, for instance.
_LAZY = {
    "LEVELS": "alpha",
    "krippendorff_alpha": "alpha",
    "AltTestHuman": "alternative_annotator",
    "AltTestResult": "alternative_annotator",
    "alt_test": "alternative_annotator",
    "ac1_ci": "bootstrap",
    "ac2_ci": "bootstrap",
    "alpha_ci": "bootstrap",
    "bootstrap_ci": "bootstrap",
    "bp_ci": "bootstrap",
    "conger_ci": "bootstrap",
    "fleiss_ci": "bootstrap",
    "kappa_ci": "bootstrap",
    "percent_agreement_ci": "bootstrap",
    "scott_ci": "bootstrap",
    "brennan_prediger": "chance",
    "gwet_ac1": "chance",
    "gwet_ac2": "chance",
    "percent_agreement": "chance",
    "undefined_reason": "chance",
    "ConfusionResult": "confusion",
    "confusion_matrix": "confusion",
    "conger_kappa": "conger",
    "cohen_kappa": "kappa",
    "fleiss_kappa": "kappa",
    "scott_pi": "kappa",
    "agreement_report": "report",
    "AgreementReport": "report_data",
}

__all__ = [
    "LEVELS",
    "AgreementReport",
    "AltTestHuman",
    "AltTestResult",
    "ConfusionResult",
    "ac1_ci",
    "ac2_ci",
    "agreement_report",
    "alpha_ci",
    "alt_test",
    "bootstrap_ci",
    "bp_ci",
    "brennan_prediger",
    "cohen_kappa",
    "conger_ci",
    "conger_kappa",
    "confusion_matrix",
    "fleiss_ci",
    "fleiss_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "kappa_ci",
    "krippendorff_alpha",
    "percent_agreement",
    "percent_agreement_ci",
    "scott_ci",
    "scott_pi",
    "undefined_reason",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
