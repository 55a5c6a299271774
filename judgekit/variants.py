"""Rater ids of perturbed panel variants (``judgekit probe``): ``<judge>~<variant>``.

A probe that re-asks a judge under a perturbation (its rubric's labels listed in another order,
a neutral padding appended to the response) stores those ratings under a variant rater id, so
they never stand in for the judge's own ratings: :func:`judgekit.agreement.report.agreement_report`
leaves variant raters out unless they are named (``--judges``).
"""

from __future__ import annotations

#: the perturbations ``judgekit probe`` knows, in the order it runs them
VARIANTS = ("label_order", "padding")
SEP = "~"


def variant_rater(judge: str, variant: str) -> str:
    """The rater id of ``judge`` asked under ``variant``: ``judge~variant``."""
    return f"{judge}{SEP}{variant}"


def is_variant_rater(rater_id: str) -> bool:
    """True for a rater id that :func:`variant_rater` makes (``<judge>~label_order`` ...)."""
    head, sep, tail = str(rater_id).rpartition(SEP)
    return bool(sep and head and tail in VARIANTS)
