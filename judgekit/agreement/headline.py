"""The headline judge-vs-human comparison of a slice, like for like with the human figure beside it.

With a consensus reference of several humans, the majority drops the items where the humans tie,
so the judge against that reference is measured on the easy items while the human–human figure is
on all of them. The headline is then the leave-one-out comparison (:mod:`.ceiling`): the judge
against the consensus of the other humans on the same items as each human, beside the humans on
those items. With an adjudicated or single-rater reference it is the judge against the reference.
Either way it carries its n, and the human figure beside it carries its own.

``headline`` per judge: ``{"basis": "leave-one-out" | "reference", "against", "n",
"percent_agreement", "kappa", "weighted_kappa", "humans": {"n", <the same figures>}, "difference"}``.
"""

from __future__ import annotations

from typing import Any

FIGS = ("percent_agreement", "kappa", "weighted_kappa")


def _figs(src: dict[str, Any]) -> dict[str, Any]:
    """The headline figures ``src`` holds (a report restricted to the gate's figures holds fewer:
    a figure it did not compute is left out, never written as null)."""
    return {m: src[m] for m in FIGS if m in src}


def judge_headline(sl: dict[str, Any], judge: dict[str, Any], *, consensus: bool) -> dict[str, Any]:
    """The headline comparison of one ``judge`` (its figures in slice ``sl``); ``consensus``: the
    reference is the humans' majority."""
    hc = sl.get("human_ceiling") or {}
    loo = hc.get("loo") or {}
    mean = ((judge.get("vs_loo") or {}).get("mean")) or {}
    if consensus and not loo.get("undefined") and len(hc.get("raters") or []) >= 2 and mean.get("n"):
        n = int(mean["n"])
        return {"basis": "leave-one-out", "against": "the consensus of the other humans", "n": n,
                **_figs(mean), "humans": {"n": n, **_figs(mean.get("human_same_items") or {})},
                "difference": _figs(mean.get("difference") or {})}
    vs = judge.get("vs_reference") or {}
    return {"basis": "reference", "against": "the reference", "n": vs.get("n"), **_figs(vs),
            "humans": {"n": hc.get("n"), **_figs(hc)}, "difference": None}


def add_headlines(sl: dict[str, Any], *, consensus: bool) -> None:
    """Add ``headline`` to every judge of a full slice (one with ``vs_loo``)."""
    for judge in (sl.get("judges") or {}).values():
        if "vs_loo" in judge and "alpha" in (judge.get("vs_reference") or {}):
            judge["headline"] = judge_headline(sl, judge, consensus=consensus)
