"""Rater ids of perturbed panel variants (``judgekit probe``): ``<judge>~<variant>``; item ids of
perturbed item copies: ``<item>~<variant>`` (:data:`_ITEM_VARIANTS`, a reserved marker).

A probe that re-asks a judge under a perturbation (its rubric's labels listed in another order,
a neutral padding appended to the response) stores those ratings under a variant rater id, so
they never stand in for the judge's own ratings: :func:`judgekit.agreement.report.agreement_report`
leaves variant raters out unless they are named (``--judges``).

Variant items (the ``padding`` copies) are not items of the study: :meth:`judgekit.store.database.Store.
items` and :meth:`~judgekit.store.database.Store.ratings` leave them out unless asked for (item or rater
ids named, or ``variants=True``), so sampling, agreement, analyses, fidelity and budgets never
see them.
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


#: the perturbations that make item copies (stored as ``<item>~<variant>``)
_ITEM_VARIANTS = ("padding",)


def variant_item(item_id: str, variant: str) -> str:
    """The item id of ``item_id``'s copy under ``variant``: ``item~variant``."""
    return f"{item_id}{SEP}{variant}"


def is_variant_item(item_id: str) -> bool:
    """True for an item id that :func:`variant_item` makes (``<item>~padding``)."""
    head, sep, tail = str(item_id).rpartition(SEP)
    return bool(sep and head and tail in _ITEM_VARIANTS)


def variant_item_sql(column: str = "item_id") -> tuple[str, list[str]]:
    """An SQL condition (and its arguments) true for rows whose ``column`` is not a variant item."""
    conds = " AND ".join(f"{column} NOT GLOB ?" for _ in _ITEM_VARIANTS)  # GLOB: case-sensitive
    return f"({conds})", [f"?*{SEP}{v}" for v in _ITEM_VARIANTS]
