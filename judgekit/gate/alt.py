"""The inputs of the gate's ``alt_test`` check: the humans x units matrix and each judge's labels
on the same units, taken from the store's items x raters code matrix (the one representation
every agreement figure is computed from: :func:`judgekit.agreement.report.read_codes`), and the
test's result per judge (:func:`judgekit.agreement.alt_test`, the one implementation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgekit.rubric.model import Rubric
from judgekit.verdict.policy import Policy

if TYPE_CHECKING:
    from judgekit.agreement.rating_codes import RatingCodes
    from judgekit.agreement.report import AgreementReport
    from judgekit.gate.figures import GateReport


def alt_inputs_results(store: Any, policy: Policy, rubric: Rubric,
                       report: AgreementReport | GateReport, codes: RatingCodes | None = None) -> dict[str, Any]:
    """The alternative annotator test of each policy judge on the in-scope items: the humans x
    units matrix of the report's ceiling humans (trials collapsed to their majority, ok labels
    only; the units are the items one of them labelled) and the judge's labels on the same units;
    nominal rubrics compare labels (``scoring="accuracy"``), ordinal/interval ones the labels'
    values (``"neg_rmse"``). ``codes``: the store's code matrix under ``rubric`` without the
    perturbed item copies, when already read (else read here)."""
    import numpy as np
    import pandas as pd

    from judgekit.agreement import alt_test
    from judgekit.agreement.rating_codes import ok_labels
    from judgekit.agreement.report import read_codes

    at = policy.checks.alt_test
    assert at is not None
    if codes is None:
        codes = read_codes(store, rubric)
    raters = [str(r) for r in report.data.get("ceiling_raters") or []]
    humans = np.column_stack([ok_labels(codes, h) for h in raters]) if raters else np.full((len(codes.items), 0), -1)
    on = (humans >= 0).any(axis=1)  # the units: items a ceiling human labelled, sorted by id
    units = [str(i) for i in codes.items[on]]
    numeric = rubric.level in ("ordinal", "interval")
    if numeric:
        table = np.append(np.asarray([rubric.values[c] for c in rubric.codes], dtype=float), np.nan)
    else:
        table = np.asarray([*rubric.codes, None], dtype=object)  # code -1 -> the last entry: missing
    matrix = pd.DataFrame(table[humans[on]].T, index=pd.Index(raters, name="rater_id"),
                          columns=pd.Index(units, name="item_id"))
    out: dict[str, Any] = {}
    for judge in policy.judges:
        judge_vals = table[ok_labels(codes, judge)[on]]
        out[judge] = alt_test(matrix, judge_vals, epsilon=at.epsilon, q=at.q,
                              scoring="neg_rmse" if numeric else "accuracy",
                              min_units_per_human=at.min_units_per_human)
    return out
