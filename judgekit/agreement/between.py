"""Agreement between two judges (or a judge and a panel aggregate) on every item both rated.

Humans label a sample; the judges label everything. A judge that agrees with the humans on the
sample but drifts from the other judges on the unlabelled bulk shows up only when the judges are
compared with each other where no human looked. :func:`between_report` runs the ordinary
:func:`judgekit.agreement.report.agreement_report` with the second rater in the place of the
reference (so every figure, its bootstrap CI and its "undefined because" are the same code), on
all items both rated, overall, per ``by`` slice, and split by ``human_rated`` (``yes``: a human
or the reference rated the item under the rubric; ``no``: no human looked).

Neither judge is the truth here: the figures are symmetric agreement (percent agreement, kappa,
alpha, AC1), not one judge's accuracy.

Percent agreement is a share ``k / n`` of items (one label per rater and item), so its interval
is Wilson's score interval (Wilson 1927, *JASA* 22:209) rather than the percentile bootstrap:
a slice with no disagreement (or no agreement) then gets ``100.0 [83.9, 100.0]`` on 20 items,
not the zero-width ``[100.0, 100.0]`` every resample of an all-agreeing slice gives. The other
figures keep the bootstrap interval of :func:`~judgekit.agreement.report.agreement_report`.

Variant raters (``judge~padding``, :mod:`judgekit.store.variants`: a judge re-asked on perturbed
copies of the items, stored under other item ids) share no item with any rater, so they are
refused here rather than compared on nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import pandas as pd

from judgekit.agreement.figures import wilson_fig
from judgekit.agreement.rating_codes import RatingCodes
from judgekit.agreement.report import agreement_report
from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Rubric
from judgekit.store.variants import is_variant_rater

#: the slice column added to every comparison
HUMAN_RATED = "human_rated"
#: the figures kept per slice (when the rubric's level defines them)
FIGURES = ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")


def parse_pair(spec: str) -> tuple[str, str]:
    """``"judge-a,judge-b"`` → ``("judge-a", "judge-b")`` (exactly two different rater ids)."""
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise JudgekitError(
            f"--between {spec!r} must name two different raters separated by a comma, e.g. "
            "--between judge-a,judge-b (a panel aggregate is a rater too: panel:majority)."
        )
    _refuse_variants(parts)
    return parts[0], parts[1]


def _refuse_variants(raters: Sequence[str]) -> None:
    """One sentence if one of ``raters`` is a probe variant rater (module docstring)."""
    for p in raters:
        if is_variant_rater(p):
            raise JudgekitError(
                f"--between {excerpt(p)} is a probe variant rater, which rated perturbed copies "
                "of the items under other item ids and so shares no item with another rater; "
                f"compare the judge itself ({excerpt(p.rpartition('~')[0])})."
            )


def _wilson_agreement(figure: dict[str, Any] | None, confidence: float) -> dict[str, Any] | None:
    """A percent-agreement figure with its Wilson interval in place of the bootstrap one (the
    share ``k / n``, ``k = value · n``); unchanged when undefined or not a share of ``n``."""
    if not figure or figure.get("value") is None or not figure.get("n"):
        return figure
    n = int(figure["n"])
    k = float(figure["value"]) * n
    if abs(k - round(k)) > n * 5e-7 + 1e-9 or n >= 10**6:  # the value is rounded to 6 decimals
        return figure
    return {**figure, **wilson_fig(int(round(k)), n, confidence, "no item")}


def between_report(
    source: Any,
    *,
    rubric: Rubric,
    pair: tuple[str, str],
    items: pd.DataFrame | None = None,
    by: Sequence[str] = (),
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    codes: RatingCodes | None = None,
) -> dict[str, Any]:
    """Agreement of ``pair[0]`` with ``pair[1]`` on the items both rated, per slice.

    ``source``: a Store (its ratings under ``rubric`` and its items) or a long ratings frame
    (then ``items`` for the ``by`` columns). Returns ``{"rubric", "between", "by",
    "confidence", "n_resamples", "rows", "warnings"}``; each row is one slice (``by``, ``key``,
    ``n_both``: items both rated with a label, and each of :data:`FIGURES` as ``{"value", "low",
    "high", "n", "undefined"}`` or None where the rubric's level has no such figure).

    ``codes``: the store's ratings under ``rubric`` already read
    (:func:`judgekit.agreement.report.read_codes`), e.g. by the report for its other figures;
    then no rating is read again (``by`` needs ``items`` then).
    """
    a, b = pair
    _refuse_variants(pair)
    if codes is not None:
        pair_codes, items = _pair_codes(source, codes, a, b, rubric, items)
        rep = agreement_report(None, codes=pair_codes, rubric=rubric, items=items,
                               by=[*dict.fromkeys(by), HUMAN_RATED], judges=[a], humans=[],
                               reference=b, n_resamples=n_resamples, confidence=confidence,
                               seed=seed).to_dict()
        return _between_rows(rep, a, b, by, rubric, n_resamples, confidence)
    if hasattr(source, "ratings"):
        ratings = source.ratings(rubric=rubric)
        if items is None:
            items = source.items()
    else:
        ratings = source[source["rubric"] == rubric.id] if "rubric" in source.columns else source
    known = sorted(ratings["rater_id"].astype(str).unique())
    for r in (a, b):
        if r not in known:
            raise JudgekitError(
                f"--between: rater {r!r} has no ratings under {rubric.id}; raters with ratings: "
                f"{', '.join(known) or 'none'}."
            )
    people = set(ratings.loc[ratings["rater_kind"].isin(["human", "reference"]), "item_id"]
                 .astype(str))
    if items is None:
        items = pd.DataFrame({"item_id": sorted(ratings["item_id"].astype(str).unique())})
    if HUMAN_RATED in items.columns:
        raise JudgekitError(
            f"The items have a column {HUMAN_RATED!r}, which --between adds itself (yes/no: a "
            "human rated the item); rename that column."
        )
    items = items.assign(item_id=items["item_id"].astype(str))
    items[HUMAN_RATED] = items["item_id"].isin(people).map({True: "yes", False: "no"})
    pair_r = ratings[ratings["rater_id"].isin([a, b])].copy()
    pair_r["rater_kind"] = pair_r["rater_id"].map({a: "judge", b: "reference"})
    slices = [*dict.fromkeys(by), HUMAN_RATED]
    rep = agreement_report(pair_r, rubric=rubric, items=items, by=slices, judges=[a], humans=[],
                           reference=b, n_resamples=n_resamples, confidence=confidence,
                           seed=seed).to_dict()
    return _between_rows(rep, a, b, by, rubric, n_resamples, confidence)


def _pair_codes(source: Any, codes: RatingCodes, a: str, b: str, rubric: Rubric,
                items: pd.DataFrame | None) -> tuple[RatingCodes, pd.DataFrame]:
    """The two raters' codes (``a`` as the judge, ``b`` as the reference) on the items either
    rated, and their slicing metadata with :data:`HUMAN_RATED`, from the report's codes."""
    import numpy as np

    known = sorted(codes.raters)
    for r in (a, b):
        if r not in known:
            raise JudgekitError(
                f"--between: rater {r!r} has no ratings under {rubric.id}; raters with ratings: "
                f"{', '.join(known) or 'none'}."
            )
    if items is not None and HUMAN_RATED in items.columns or (items is None and _has_key(source, HUMAN_RATED)):
        raise JudgekitError(
            f"The items have a column {HUMAN_RATED!r}, which --between adds itself (yes/no: a "
            "human rated the item); rename that column."
        )
    people = [codes.column(r) for r, k in codes.kinds.items() if k in ("human", "reference")]
    human_rated = (codes.status[:, people] != 0).any(axis=1)
    cols = [codes.column(r) for r in sorted((a, b))]
    keep = (codes.status[:, cols] != 0).any(axis=1)
    ids = codes.items[keep]
    pair_codes = RatingCodes(ids, sorted((a, b)), {a: "judge", b: "reference"}, codes.labels[keep][:, cols],
                             codes.status[keep][:, cols], int((codes.status[keep][:, cols] != 0).sum()))
    if items is None and hasattr(source, "item_ids"):
        items = pd.DataFrame({"item_id": source.item_ids()})  # the store's items, as items() has them
    if items is None:
        meta = pd.DataFrame({"item_id": ids, HUMAN_RATED: np.where(human_rated[keep], "yes", "no")})
    else:
        # as the per-item path: the items table with human_rated; a rated item missing from it
        # is in the slice "(missing)" (and the report warns)
        meta = items.assign(item_id=items["item_id"].astype(str))
        people_ids = set(codes.items[human_rated].tolist())
        meta[HUMAN_RATED] = np.where(meta["item_id"].isin(people_ids), "yes", "no")
    return pair_codes, meta


def _has_key(source: Any, key: str) -> bool:
    """Whether some item of ``source`` (a store) has the metadata key ``key``."""
    from judgekit.agreement.unit_frames import metadata_keys

    present = metadata_keys(source, [key])
    if present is not None:
        return key in present
    return bool(hasattr(source, "item_values") and source.item_values(key))


def _between_rows(rep: dict[str, Any], a: str, b: str, by: Sequence[str], rubric: Rubric,
                  n_resamples: int, confidence: float) -> dict[str, Any]:
    rows = []
    for sl in rep["slices"]:
        st = (sl.get("judges") or {}).get(a) or {}
        vs = st.get("vs_reference") or {}
        rows.append({"by": sl["by"], "key": sl["key"], "n_both": int(vs.get("n") or 0),
                     **{f: vs.get(f) for f in FIGURES},
                     "percent_agreement": _wilson_agreement(vs.get("percent_agreement"),
                                                           confidence)})
    seen = {r["key"] for r in rows if r["by"] == HUMAN_RATED}
    for missing in [k for k in ("yes", "no") if k not in seen]:
        why = "no such item" if missing == "yes" else "a human rated every item"
        rows.append({"by": HUMAN_RATED, "key": missing, "n_both": 0,
                     **{f: ({"value": None, "low": None, "high": None, "n": 0, "undefined": why}
                            if f in FIGURES and any(r.get(f) for r in rows) else None)
                        for f in FIGURES}})
    warnings = [w.replace("no reference label", f"no label by {b}")
                 .replace("judges are not scored on them", "they are not compared")
                for w in rep.get("warnings") or []]
    return {"rubric": rubric.id, "between": [a, b], "by": list(by), "confidence": confidence,
            "n_resamples": n_resamples, "rows": rows, "warnings": warnings}


def between_all_pairs(
    source: Any,
    *,
    rubric: Rubric,
    judges: Sequence[str],
    items: pd.DataFrame | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    codes: RatingCodes | None = None,
) -> list[dict[str, Any]]:
    """:func:`between_report` for every pair of ``judges`` (in the order given), overall and by
    ``human_rated`` — the report's "Judges compared where no human looked" section."""
    return [between_report(source, rubric=rubric, pair=(a, b), items=items,
                           n_resamples=n_resamples, seed=seed, codes=codes)
            for a, b in combinations([j for j in dict.fromkeys(judges)
                                      if not is_variant_rater(j)], 2)]
