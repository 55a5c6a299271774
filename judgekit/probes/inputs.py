"""What the probes read from a store: the reference label and each judge's label per item (trials
collapsed to their majority, ``ok`` ratings only), the items' covariates, and the slices.

The labels come from the one representation every agreement figure is computed from: the
store's items x raters code matrix (:func:`judgekit.agreement.report.read_codes`, read once per
run, :class:`~judgekit.agreement.rating_codes.RatingCodes`), each rater's ``ok`` codes
(:func:`judgekit.agreement.rating_codes.ok_labels`) and the humans' consensus
(:func:`judgekit.agreement.report.consensus_codes`), as the agreement report and the gate take
them. A label outside the rubric is refused there in one sentence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgekit.agreement.rating_codes import RatingCodes, ok_labels
from judgekit.errors import JudgekitError, excerpt
from judgekit.probes.probefile import RESPONSE_LENGTH
from judgekit.rubric.model import Rubric

_CORE = ("item_id", "prompt", "messages", "response", "content_hash")


def read_matrix(store: Any, rubric: Rubric, *, variants: bool = False) -> RatingCodes:
    """The store's items x raters code matrix under ``rubric``, as the agreement report reads it
    (perturbed item copies only with ``variants``)."""
    from judgekit.agreement.report import read_codes

    return read_codes(store, rubric, variants=variants)


def rater_matrix(store: Any, rubric: Rubric, rater: str) -> RatingCodes:
    """The code matrix of one rater's ratings under ``rubric`` (a perturbed judge's: with its
    perturbed item copies, which the store gives when the rater is named)."""
    from judgekit.agreement.rating_codes import codes_from_frame

    return codes_from_frame(store.ratings(rubric=rubric, rater_ids=[rater]), rubric.codes)


def _series(codes: RatingCodes, column: np.ndarray, labels: Sequence[str]) -> pd.Series:
    """Labels indexed by item id from one column of codes (-1: no label, left out)."""
    keep = column >= 0
    ids = pd.Index([str(i) for i in codes.items[keep]], dtype=object)
    return pd.Series(np.asarray(labels, dtype=object)[column[keep]], index=ids, dtype=object)


def labels_of(codes: RatingCodes, rater: str, labels: Sequence[str]) -> pd.Series:
    """``rater``'s label per item (majority over trials; ok only), indexed by item id; ``labels``
    are the codes' rubric codes in order."""
    return _series(codes, ok_labels(codes, rater), labels)


def reference_labels(store: Any, codes: RatingCodes, rubric: Rubric, reference: str | None,
                     where: str) -> tuple[pd.Series, str]:
    """The reference label per item and the reference's name: the rater ``reference`` (a human or
    reference rater), or ``consensus`` (the majority of the human raters; ties have none). None
    means the one reference rater if there is exactly one, else consensus (as the agreement
    report does). ``codes``: :func:`read_matrix` of ``store``."""
    from judgekit.agreement.report import consensus_codes

    kinds = codes.kinds
    refs = sorted(r for r, k in kinds.items() if k == "reference")
    humans = sorted(r for r, k in kinds.items() if k == "human")
    if reference is None:
        reference = refs[0] if len(refs) == 1 else "consensus"
    if reference != "consensus":
        if kinds.get(reference) not in ("human", "reference"):
            raise JudgekitError(
                f"{where}: reference {excerpt(reference)} is not a human or reference rater under {rubric.ref} "
                f"in {store.path}; fix 'reference' (use one of {', '.join(refs + humans) or 'none'} or consensus)."
            )
        return labels_of(codes, reference, rubric.codes), reference
    if not humans:
        raise JudgekitError(f"{where}: reference is consensus but {store.path} has no human ratings under "
                            f"{rubric.ref}; import human labels or name a reference rater.")
    wide = np.column_stack([ok_labels(codes, h) for h in humans])
    return _series(codes, consensus_codes(wide, len(rubric.codes)), rubric.codes), "consensus"


def judge_labels(store: Any, codes: RatingCodes, rubric: Rubric, judges: Sequence[str],
                 where: str) -> dict[str, pd.Series]:
    """Each judge's label per item; a judge with no ratings under the rubric is one sentence."""
    known = {r for r, k in codes.kinds.items() if k == "judge"}
    out = {}
    for j in judges:
        if j not in known:
            raise JudgekitError(f"{where}: judge {excerpt(j)} has no ratings under {rubric.ref} in {store.path}; "
                                f"judges with ratings: {', '.join(sorted(known)) or 'none'}.")
        out[j] = labels_of(codes, j, rubric.codes)
    return out


def item_table(store: Any) -> pd.DataFrame:
    """The store's items indexed by id, with ``response_length`` (characters of the response text;
    missing when an item has no text)."""
    items = store.items().copy()
    items["item_id"] = items["item_id"].astype(str)
    items = items.set_index("item_id")
    resp = items["response"] if "response" in items.columns else pd.Series(None, index=items.index)
    items[RESPONSE_LENGTH] = resp.map(lambda r: None if r is None or (isinstance(r, float) and r != r)
                                      else len(str(r)))
    return items


def metadata_columns(items: pd.DataFrame) -> list[str]:
    return [c for c in items.columns if c not in _CORE]


def slices(items: pd.DataFrame, by: Sequence[str], where: str) -> list[tuple[str | None, str | None, pd.Index]]:
    """``(by, key, item ids)``: every item first (by None), then each value of each ``by`` spec
    (``a+b`` joins columns); an unknown column is one sentence."""
    cols = metadata_columns(items)
    out: list[tuple[str | None, str | None, pd.Index]] = [(None, None, items.index)]
    for spec in by:
        parts = spec.split("+")
        for col in parts:
            if col not in cols:
                raise JudgekitError(f"{where}: by names {excerpt(col)}, which is not an item metadata column; "
                                    f"fix 'by' (available: {', '.join(map(str, cols)) or 'none'}).")
        key = items[parts].astype(str).agg("+".join, axis=1)
        for value in sorted(key.unique()):
            out.append((spec, value, key.index[key == value]))
    return out


def slice_suffix(by: str | None, key: str | None) -> str:
    return "" if by is None else f"{by}={key}"
