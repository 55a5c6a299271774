"""Gather a report's extras from a store: tokens and cost per judge, and the worst disagreements.

Both are read-only queries over the store; nothing is written. The extras also hold each judge's
current identity hash, so a verdict given to an earlier spec of the judge vouches for nothing.

* Costs come from the ``calls`` table (one row per judge call, cached or not) under the rubric's
  current hash. Judges whose labels were imported (no calls) have no cost entry.
* Disagreements are items where a judge's label (its majority over trials) differs from the
  reference label: the adjudicated ``reference`` rater, or the humans' majority when the
  agreement report used the consensus. "Worst" first: the largest distance between the two
  labels' rubric values (full compliance called full refusal before partial called full), then
  the items where the most humans agree with the reference; remaining ties in a stable order
  spread over the data. Abstentions and errors are not disagreements.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from judgekit.agreement.rating_codes import OK, RatingCodes
from judgekit.agreement.report import consensus_codes
from judgekit.report.escape import excerpt
from judgekit.rubric.model import Rubric
from judgekit.store.calls import usage_by_judge
from judgekit.store.database import Store

__all__ = ["collect_extras", "collect_view_extras", "judge_hashes", "report_by",
           "turn_column", "worst_disagreements"]


def _costs_by_judge(store: Store, rubric: Rubric) -> dict[str, dict[str, Any]]:
    """judge_id → ``{"calls", "input_tokens", "output_tokens", "cached_tokens", "cost_usd"}``."""
    return {
        u.judge_id: {"calls": u.calls, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                     "cached_tokens": u.cached_tokens, "cost_usd": round(u.cost_usd, 6)}
        for u in usage_by_judge(store, rubric.id, rubric.hash)
    }


def _text_of(item: dict[Any, Any], role: str) -> str | None:
    key = "response" if role == "assistant" else "prompt"
    v = item.get(key)
    if isinstance(v, str) and v.strip():
        return v
    msgs = item.get("messages")
    if isinstance(msgs, str):
        try:
            msgs = json.loads(msgs)
        except json.JSONDecodeError:
            msgs = None
    if isinstance(msgs, list):
        for m in reversed(msgs):
            if isinstance(m, dict) and m.get("role") == role and m.get("content"):
                return str(m["content"])
    return None


def worst_disagreements(
    store: Store,
    rubric: Rubric,
    agreement: dict[str, Any],
    *,
    per_judge: int = 20,
    codes: Any = None,
) -> list[dict[str, Any]]:
    """The ``per_judge`` worst disagreements of each judge with the reference (see module doc).

    Each entry: ``item_id, judge_id, judge_label, reference, humans`` (rater → label),
    ``distance``, ``response_excerpt``, ``prompt_excerpt``, ``rationale`` (the judge's). ``codes``: the ratings as the
    agreement report read them (:func:`judgekit.agreement.report.read_codes`), so they are not
    read again (:mod:`judgekit.report.collect`).
    """
    if codes is not None:

        return _with_texts(store, _worst_from_codes(codes, rubric, agreement, per_judge=per_judge), rubric)
    from judgekit.agreement.report import collapse_trials
    from judgekit.agreement.unit_frames import read_ratings

    ratings = read_ratings(store, rubric)
    if ratings.empty or per_judge <= 0:
        return []
    judges = [str(j) for j in agreement.get("judges") or []]
    humans = [str(h) for h in agreement.get("humans") or []]
    ref_rater = (agreement.get("reference") or {}).get("rater")
    col = collapse_trials(ratings)
    col = col[col["status"] == "ok"]
    labels = col.pivot(index="item_id", columns="rater_id", values="label")
    hcols = [h for h in humans if h in labels.columns]
    if ref_rater:
        if ref_rater not in labels.columns:
            return []
        ref = labels[ref_rater]
    else:
        from judgekit.agreement.trials import consensus

        # the humans' majority label (None on a tie), counted over the rubric's labels at once
        ref = consensus(labels[hcols], rubric.codes) if hcols else pd.Series(dtype=object)
    values = rubric.values
    out: list[dict[str, Any]] = []
    for j in judges:
        if j not in labels.columns:
            continue
        both = labels[j].notna() & ref.reindex(labels.index).notna()
        frame = pd.DataFrame({"judge": labels.loc[both, j], "ref": ref.reindex(labels.index)[both]})
        frame = frame[frame["judge"] != frame["ref"]]
        if frame.empty:
            continue
        frame["distance"] = [abs(values[a] - values[b]) for a, b in zip(frame["judge"], frame["ref"], strict=True)]
        if hcols:
            frame["sure"] = labels.loc[frame.index, hcols].eq(frame["ref"], axis=0).sum(axis=1)
        else:
            frame["sure"] = 0
        frame = frame.rename_axis("item_id").reset_index()
        # ties are broken by a hash of the item id, not the id itself, so the list is stable but
        # not all drawn from whichever model sorts first
        frame["spread"] = [hashlib.sha256(str(i).encode()).hexdigest() for i in frame["item_id"]]
        frame = frame.sort_values(["distance", "sure", "spread"], ascending=[False, False, True]).head(per_judge)
        for r in frame.itertuples(index=False):
            hum = {h: labels.at[r.item_id, h] for h in hcols if isinstance(labels.at[r.item_id, h], str)}
            out.append({"item_id": str(r.item_id), "judge_id": j, "judge_label": r.judge, "reference": r.ref,
                        "humans": hum, "distance": _dist(r.distance)})
    return _with_texts(store, out, rubric)


def _with_texts(store: Store, out: list[dict[str, Any]], rubric: Rubric | None = None) -> list[dict[str, Any]]:
    """The disagreements with their items' response and prompt excerpts, and each judge's
    rationale for its label (``rationale``: the first ``ok`` trial's, None when it gave none)."""
    texts: dict[str, dict[str, Any]] = {str(d["item_id"]): {} for d in out}
    why: dict[tuple[str, str], str] = {}
    if out and rubric is not None and hasattr(store, "ratings"):
        judges = sorted({str(d["judge_id"]) for d in out})
        try:
            rows = store.ratings(rubric=rubric, rater_ids=judges,
                                 columns=["item_id", "rater_id", "trial", "status", "label", "rationale"])
        except TypeError:  # a view over a store (judgekit.rubric.views.ViewSource) reads whole rows
            rows = store.ratings(rubric=rubric, rater_ids=judges)
        wanted = {(str(d["item_id"]), str(d["judge_id"])): str(d.get("judge_label")) for d in out}
        for r in sorted(rows.to_dict("records"), key=lambda r: (r["trial"] is None, r["trial"] or 0)):
            key = (str(r["item_id"]), str(r["rater_id"]))
            if key in wanted and key not in why and r["status"] == "ok" and r["label"] == wanted[key] \
                    and isinstance(r["rationale"], str) and r["rationale"].strip():
                why[key] = excerpt(r["rationale"], 600)
    if texts:
        items = store.items(list(texts))
        for rec in items.to_dict("records"):
            texts[str(rec["item_id"])] = {
                "response_excerpt": excerpt(_text_of(rec, "assistant"), 1200) or None,
                "prompt_excerpt": excerpt(_text_of(rec, "user"), 600) or None,
            }
    for d in out:
        d.update({"response_excerpt": None, "prompt_excerpt": None, **texts.get(d["item_id"], {})})
        d["rationale"] = why.get((str(d["item_id"]), str(d["judge_id"])))
    return out


def _dist(x: Any) -> float:
    return round(float(x), 6)


def judge_hashes(store: Store, agreement: dict[str, Any]) -> dict[str, str]:
    """judge_id → the judge's current identity hash (:func:`judgekit.gate.run.judge_identity`), so
    the report can tell a judge whose spec or parameters changed since its verdict."""
    from judgekit.store.judge_identity import judge_identity

    rubric, rubric_hash = agreement.get("rubric"), agreement.get("rubric_hash")
    return {str(j): str(judge_identity(store, str(j), rubric, rubric_hash)["judge_hash"])
            for j in agreement.get("judges") or []}


def collect_extras(store: Store, rubric: Rubric, agreement: dict[str, Any], *, per_judge: int = 20,
                   verdict: dict[str, Any] | None = None, codes: Any = None) -> dict[str, Any]:
    """``{"costs": ..., "disagreements": ..., "judge_hashes": ...}`` for
    :func:`judgekit.report.render_report`, and ``"fidelity"`` when ``verdict``'s policy has an
    ``analysis_fidelity`` check (:func:`judgekit.report.fidelity.fidelity_extras`). ``codes``:
    the ratings the agreement report was computed from
    (:func:`judgekit.agreement.report.read_codes`): the disagreements and the judge-vs-judge
    comparisons then reuse them instead of reading every rating again."""
    extras: dict[str, Any] = {"judge_hashes": judge_hashes(store, agreement)}
    if verdict is not None:
        from judgekit.report.fidelity import fidelity_extras

        fid = fidelity_extras(store, rubric, verdict)
        if fid is not None:
            extras["fidelity"] = fid
    costs = _costs_by_judge(store, rubric)
    if costs:
        extras["costs"] = costs
    dis = worst_disagreements(store, rubric, agreement, per_judge=per_judge, codes=codes)
    if dis:
        extras["disagreements"] = dis
    judges = [str(j) for j in agreement.get("judges") or []]
    if len(judges) >= 2:  # judge vs judge on every item both rated (judgekit.agreement.between)
        from judgekit.agreement.between import between_all_pairs

        extras["between"] = between_all_pairs(store, rubric=rubric, judges=judges,
                                              n_resamples=int(agreement.get("n_resamples") or 1000),
                                              seed=0, codes=codes)
    return extras


def turn_column(store: Store) -> str | None:
    """The items' turn column (:data:`judgekit.report.turns.TURN_COLUMNS`) when it holds at
    least two turns, else None: agreement per turn is then a slice of the report."""
    from judgekit.report.turns import TURN_COLUMNS

    if hasattr(store, "item_values"):
        # which keys exist (one scan), then those keys' values by SQL, instead of every item
        from judgekit.agreement.unit_frames import metadata_keys

        present = metadata_keys(store, TURN_COLUMNS)
        found = [store.item_values(col) if present is None or col in present else {} for col in TURN_COLUMNS]
        if all(v is not None for v in found):
            ids: set[str] | None = None
            for col, values in zip(TURN_COLUMNS, found, strict=True):
                if not values:
                    continue
                if ids is None:
                    ids = set(store.item_ids())  # the items store.items() gives (no variant copies)
                kept = [v for i, v in values.items() if i in ids]
                if pd.Series(kept, dtype=object).dropna().nunique() >= 2:
                    return col
            return None
    items = store.items()
    for col in TURN_COLUMNS:
        if col in items.columns and items[col].dropna().nunique() >= 2:
            return col
    return None


def report_by(store: Store, by: list[str]) -> list[str]:
    """The slices the report asks the agreement report for: ``by``, plus the turn column when
    the items carry one (per-turn agreement is always shown for multi-turn data)."""
    col = turn_column(store)
    return [*by, col] if col is not None and col not in by else list(by)


def collect_view_extras(store: Any, view: Any, agreement: dict[str, Any], *, per_judge: int = 20,
                        verdict: dict[str, Any] | None = None, codes: Any = None) -> dict[str, Any]:
    """:func:`collect_extras` for a report under a view (:class:`judgekit.rubric.views.ViewRubric`,
    ``store`` a :class:`~judgekit.rubric.views.ViewSource`): the judges answered under the full
    rubric, so their identity hashes and costs are read from their calls there."""
    from judgekit.store.judge_identity import judge_identity

    extras = collect_extras(store, view, agreement, per_judge=per_judge, verdict=verdict, codes=codes)
    extras["judge_hashes"] = {str(j): str(judge_identity(store, str(j), view)["judge_hash"])
                              for j in agreement.get("judges") or []}
    extras.pop("costs", None)
    costs = _costs_by_judge(store, view.base)
    if costs:
        extras["costs"] = costs
    return extras


# The report's worst disagreements from the agreement report's code matrix
# (:class:`judgekit.agreement.rating_codes.RatingCodes`), without reading the ratings again.
#
# The same list as :func:`judgekit.report.collect.worst_disagreements` computes from the ratings
# (see there for the order: the largest distance between the two labels' rubric values first,
# then the items where the most humans agree with the reference, then a hash of the item id): the
# labels are the ``ok`` ratings (trials already collapsed to their majority), the reference is the
# adjudicated rater's label or the humans' majority (None on a tie). Only the items that can still
# reach the top ``per_judge`` have their id hashed.

def _worst_from_codes(codes: RatingCodes, rubric: Rubric, agreement: dict[str, Any], *,
                     per_judge: int) -> list[dict[str, Any]]:
    """Entries ``item_id, judge_id, judge_label, reference, humans, distance`` (no excerpts)."""
    if codes.empty or per_judge <= 0:
        return []
    judges = [str(j) for j in agreement.get("judges") or []]
    humans = [str(h) for h in agreement.get("humans") or []]
    ref_rater = (agreement.get("reference") or {}).get("rater")
    ok = codes.status == OK
    labels = np.where(ok, codes.labels, -1)
    with_ok = {r for i, r in enumerate(codes.raters) if ok[:, i].any()}  # the pivot's columns
    hcols = [h for h in humans if h in with_ok]
    hidx = [codes.column(h) for h in hcols]
    if ref_rater:
        if ref_rater not in with_ok:
            return []
        ref = labels[:, codes.column(ref_rater)]
    elif hcols:
        ref = consensus_codes(labels[:, hidx], len(rubric.codes))
    else:
        return []
    names = np.array(rubric.codes, dtype=object)
    values = np.array([float(rubric.values[c]) for c in rubric.codes])
    out: list[dict[str, Any]] = []
    for j in judges:
        if j not in with_ok:
            continue
        judge = labels[:, codes.column(j)]
        rows = np.flatnonzero((judge >= 0) & (ref >= 0) & (judge != ref))
        if rows.size == 0:
            continue
        distance = np.abs(values[judge[rows]] - values[ref[rows]])
        sure = ((labels[rows][:, hidx] == ref[rows, None]).sum(axis=1) if hidx
                else np.zeros(rows.size, dtype=np.int64))
        order = np.lexsort((-sure, -distance))  # distance, then sure, both descending
        if order.size > per_judge:
            # every item tied with the last one kept may still enter on its hash
            d, s = distance[order[per_judge - 1]], sure[order[per_judge - 1]]
            better = (distance > d) | ((distance == d) & (sure > s))
            order = np.flatnonzero(better | ((distance == d) & (sure == s)))
        spread = [hashlib.sha256(str(codes.items[rows[i]]).encode()).hexdigest() for i in order]
        ranked = sorted(range(order.size), key=lambda k: (-distance[order[k]], -sure[order[k]], spread[k]))
        for k in ranked[:per_judge]:
            r = int(rows[order[k]])
            hum = {h: str(names[labels[r, c]]) for h, c in zip(hcols, hidx, strict=True) if labels[r, c] >= 0}
            out.append({"item_id": str(codes.items[r]), "judge_id": j, "judge_label": str(names[judge[r]]),
                        "reference": str(names[ref[r]]), "humans": hum,
                        "distance": round(float(distance[order[k]]), 6)})
    return out
