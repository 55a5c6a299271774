"""Perturbation probes: the same items asked again with something changed that should not matter.

Each perturbation is a **panel variant** run through :func:`judgekit.judges.panel.run_panel`
like any panel (cached, resumable, ``dry_run`` estimates the cost), its ratings stored under the
variant rater id ``<judge>~<variant>`` (:mod:`judgekit.store.variants`), which the agreement report
leaves out unless named:

* ``label_order``: the rubric's labels listed in the reverse order in the judge's prompt (and its
  answer schema). The variant rubric keeps the rubric's id (``name@version``) and gets its own
  content hash, so its calls have their own cache keys and its ratings sit beside the judge's
  under that hash. A priority-ordered rubric (the first listed label wins) is refused: there the
  order is part of the rubric.
* ``padding``: a neutral note appended to each response (:data:`~judgekit.probes.probefile.
  DEFAULT_PADDING` unless the probe file gives one), the items stored as ``<item>~padding``
  (new items: the originals and their human labels are untouched).

The probe then compares, item by item, the judge's label (majority over trials) with the
variant's: the **flip rate** (Wilson CI) and the **change in agreement with the reference**,
variant − original on the same items, a paired difference of proportions
``(c − b) / n`` (b: items only the original got right, c: only the variant), its Wald interval
with 0.5 added to every cell of the paired table (Agresti & Min 2005).

CALM (Ye et al. 2024) lists position and verbosity among the biases of LLM judges; these are
their absolute-rubric counterparts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.stats.intervals import Z95
from judgekit.store.variants import variant_item, variant_rater


def variant_rubric(rubric: Rubric) -> Rubric:
    """The ``label_order`` variant: the same rubric with its labels in reverse order (same id,
    another content hash). Refused for a priority-ordered rubric."""
    if rubric.priority_ordered:
        raise JudgekitError(
            f"Rubric {rubric.id} lists its labels in priority order, so their order is part of the "
            "rubric; drop label_order from the probe file's perturb.variants."
        )
    fields = {k: getattr(rubric, k) for k in type(rubric).model_fields}
    fields["labels"] = list(reversed(rubric.labels))
    return type(rubric).model_construct(**fields)


def _padded_id(item_id: str) -> str:
    """The item id of an item's ``padding`` variant (:func:`judgekit.store.variants.variant_item`)."""
    return variant_item(item_id, "padding")


def padded_items(items: pd.DataFrame, padding: str) -> pd.DataFrame:
    """The ``padding`` variant of a panel's items: ids ``<item>~padding``, response + padding."""
    out = items.copy()
    out["item_id"] = out["item_id"].astype(str).map(_padded_id)
    out["response"] = out["response"].map(lambda r: ("" if r is None else str(r)) + padding)
    # a copy is not a turn of the conversation it was made from
    for col in ("conversation_id", "turn"):
        if col in out.columns:
            out[col] = None
    return out


def _variant_panel(panel: Any, variant: str, judges: list[str], padding: str) -> Any:
    """The panel variant of ``panel`` for ``variant``: only ``judges``, renamed
    ``<judge>~<variant>``, no aggregates; ``label_order`` swaps in :func:`variant_rubric`,
    ``padding`` the :func:`padded_items`."""
    from judgekit.judges.panelfile import Panel

    entries = [e.model_copy(update={"id": variant_rater(e.id, variant)}) for e in panel.judges if e.id in judges]
    pf = panel.file.model_copy(update={"judges": entries, "aggregate": None})
    rubric = variant_rubric(panel.rubric) if variant == "label_order" else panel.rubric
    items = padded_items(panel.items, padding) if variant == "padding" else panel.items
    return Panel(file=pf, rubric=rubric, items=items, base_dir=panel.base_dir,
                 source=f"{panel.source} ({variant} variant)")


def run_variants(store: Any, panel_path: Any, *, judges: list[str] | None, variants: list[str],
                 padding: str, dry_run: bool = False, env: dict[str, str] | None = None,
                 where: str = "Probe file", key: str = "perturb.judges") -> dict[str, Any]:
    """Run each variant of the panel at ``panel_path`` (a path, or a loaded
    :class:`~judgekit.judges.panelfile.Panel`) into ``store`` (or estimate it with ``dry_run``).
    Returns per variant its summary (``calls``, ``answered``, ``cached``, ``pending``, costs)."""
    from judgekit.judges.panel import load_panel, run_panel

    panel = load_panel(panel_path) if isinstance(panel_path, str | Path) else panel_path
    ids = [e.id for e in panel.judges]
    chosen = list(judges) if judges is not None else ids
    unknown = [j for j in chosen if j not in ids]
    if unknown:
        raise JudgekitError(f"{where}: {key} names {unknown[0]!r}, which is not a judge of "
                            f"{panel_path} (its judges: {', '.join(ids)}); probe only panel judges or "
                            "list the ones to perturb in perturb.judges.")
    out: dict[str, Any] = {}
    for variant in variants:
        vp = _variant_panel(panel, variant, chosen, padding)
        summary = run_panel(vp, store, dry_run=dry_run, env=env)
        totals = summary.totals()
        out[variant] = {"judges": [variant_rater(j, variant) for j in chosen],
                        "calls": totals["attempts"], "answered": totals["called"], "cached": totals["cached"],
                        "pending": sum(j.pending for j in summary.judges),
                        "cost_usd": totals["cost_usd"], "dry_run": dry_run,
                        "estimated_cost_usd": round(sum(j.estimated_cost_usd for j in summary.judges), 6),
                        "rubric_hash": vp.rubric.hash, "lines": summary.lines()}
    return out


def flip_figures(original: pd.Series, variant: pd.Series, reference: pd.Series) -> dict[str, Any]:
    """Flip rate and change in agreement of a variant against the original (labels indexed by
    the original item id; items where both have an ok label). See the module docstring.
    ``original`` and ``variant`` are the percent agreement with the reference
    (:func:`judgekit.agreement.percent_agreement`); the paired difference and its interval are
    the probe's own statistic (no agreement figure)."""
    from judgekit.agreement.chance import percent_agreement

    both = original.dropna().index.intersection(variant.dropna().index)
    o, v = original.reindex(both), variant.reindex(both)
    flips = [str(i) for i in both if o[i] != v[i]]
    out: dict[str, Any] = {"n": len(both), "k": len(flips), "flipped": flips}
    ref = reference.reindex(both)
    has = ref.notna()
    n = int(has.sum())
    if n == 0:
        out["agreement_change"] = {"value": None, "low": None, "high": None, "n": 0,
                                   "undefined": "no item has a reference label"}
        return out
    ok_o, ok_v = (o[has] == ref[has]), (v[has] == ref[has])
    b = float((ok_o & ~ok_v).sum())
    c = float((~ok_o & ok_v).sum())
    a = float((ok_o & ok_v).sum())
    d = float(n - a - b - c)
    diff = (c - b) / n
    a2, b2, c2, d2 = a + 0.5, b + 0.5, c + 0.5, d + 0.5
    n2 = a2 + b2 + c2 + d2
    p = (c2 - b2) / n2
    se = math.sqrt(max((b2 + c2) / n2 - p * p, 0.0) / n2)
    out["agreement_change"] = {"value": diff, "low": max(-1.0, p - Z95 * se),
                               "high": min(1.0, p + Z95 * se), "n": n,
                               "original": percent_agreement([list(o[has]), list(ref[has])]),
                               "variant": percent_agreement([list(v[has]), list(ref[has])]),
                               "undefined": None}
    return out
