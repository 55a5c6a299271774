"""The inputs of the gate's ``alt_test`` check: the humans x units matrix and each judge's labels
on the same units, read from the store, and the test's result per judge
(:func:`judgekit.agreement.alt_test`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judgekit.rubric.model import Rubric
from judgekit.verdict.policy import Policy

if TYPE_CHECKING:
    from judgekit.agreement.report import AgreementReport
    from judgekit.gate.figures import GateReport


def alt_inputs_results(store: Any, policy: Policy, rubric: Rubric,
                       report: AgreementReport | GateReport) -> dict[str, Any]:
    """The alternative annotator test of each policy judge on the in-scope items: the humans x
    units matrix of the report's ceiling humans (trials collapsed to their majority, ok labels
    only) and the judge's labels on the same units; nominal rubrics compare labels
    (``scoring="accuracy"``), ordinal/interval ones the labels' values (``"neg_rmse"``)."""
    import numpy as np
    import pandas as pd

    from judgekit.agreement import alt_test
    from judgekit.agreement.trials import collapse_trials

    at = policy.checks.alt_test
    assert at is not None
    raters = list(report.data.get("ceiling_raters") or [])
    ratings = collapse_trials(store.ratings(rubric=rubric))
    ok = ratings[ratings["status"] == "ok"]
    ok = ok.assign(item_id=ok["item_id"].astype(str), rater_id=ok["rater_id"].astype(str))
    hum = ok[ok["rater_id"].isin(raters)]
    units = sorted(hum["item_id"].unique())
    numeric = rubric.level in ("ordinal", "interval")

    def values(labels: pd.Series) -> pd.Series:
        return labels.map(rubric.values).astype(float) if numeric else labels.astype(object)

    matrix = (hum.assign(v=values(hum["label"])).pivot(index="rater_id", columns="item_id", values="v")
              .reindex(index=raters, columns=units))
    if not numeric:
        matrix = matrix.astype(object).where(matrix.notna(), None)
    out: dict[str, Any] = {}
    for judge in policy.judges:
        jr = ok[ok["rater_id"] == judge].set_index("item_id")["label"]
        jv = values(jr).reindex(units)
        judge_vals = jv.to_numpy(dtype=float) if numeric else np.array(
            [None if pd.isna(x) else x for x in jv], dtype=object)
        out[judge] = alt_test(matrix, judge_vals, epsilon=at.epsilon, q=at.q,
                              scoring="neg_rmse" if numeric else "accuracy",
                              min_units_per_human=at.min_units_per_human)
    return out
