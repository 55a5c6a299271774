"""The agreement figures a gate policy's checks read, and only those (:func:`decide_figures`).

There is one path for every agreement figure: :func:`judgekit.agreement.agreement_report` over
the store's items x raters code matrix (:func:`judgekit.agreement.report.read_codes`, read once)
and its pattern table. The gate asks it for the figures its policy's checks read
(:func:`wanted_by`: per judge the policy's ``metric`` against the reference with its interval, the
abstention and error counts, and — when the policy has the check — the coverage, the confusion
matrix (class recall), the signed bias, the leave-one-out comparison, and the metric or the bias
in each slice of ``by``); ``run_gate(..., full_report=True)`` asks it for every figure. Either way
each figure comes from the same function on the same items with the same seed, so the verdict is
the same. A case the path refuses (a label outside the rubric) is refused in the one sentence
the agreement report gives.
"""

from __future__ import annotations

from typing import Any

from judgekit.agreement.report_data import AgreementReport
from judgekit.agreement.slice_figures import Wanted
from judgekit.rubric.model import Rubric
from judgekit.store.variants import is_variant_rater

#: The figures the gate decides on: the agreement report, with only the wanted figures.
GateReport = AgreementReport


def wanted_by(policy: Any) -> Wanted:
    """The figures ``policy``'s checks read (:class:`judgekit.agreement.slice_figures.Wanted`)."""
    c = policy.checks
    return Wanted(metric=c.metric, coverage=c.min_coverage is not None, confusion=c.min_class_recall is not None,
                  bias=c.max_abs_bias is not None, loo=c.within_human_noise is not None,
                  slice_metric=c.per_slice is not None,
                  slice_bias=c.max_abs_bias is not None and bool(c.max_abs_bias.per_slice))


def reads_variants(policy: Any) -> bool:
    """Whether the policy's figures read perturbed item copies (it names a perturbed judge)."""
    return any(is_variant_rater(j) for j in policy.judges)


def decide_figures(store: Any, policy: Any, policy_path: Any, rubric: Rubric, *,
                   full_report: bool) -> tuple[AgreementReport, Any]:
    """The figures the gate decides on and the ratings they came from: the agreement report of
    the policy's raters (after they are checked in ``store``,
    :func:`judgekit.verdict.policy.check_policy_raters`) with the figures of :func:`wanted_by`,
    or every figure with ``full_report``; and the code matrix it read
    (:class:`judgekit.agreement.rating_codes.RatingCodes`), for the verdict's hashes."""
    from judgekit.agreement.report import agreement_report, read_codes
    from judgekit.verdict.policy import check_policy_raters

    check_policy_raters(policy, policy_path, store, rubric, read_items=False)
    codes = read_codes(store, rubric, variants=reads_variants(policy))
    report = agreement_report(store, rubric=rubric, by=policy.by, judges=policy.judges, humans=policy.humans,
                              reference=policy.reference, n_resamples=policy.n_resamples, seed=policy.seed,
                              codes=codes, wanted=None if full_report else wanted_by(policy))
    return report, codes


def has_probes(policy: Any) -> bool:
    """Whether the policy has a probe check (:func:`judgekit.gate.probe_checks.gate_checks` has work)."""
    c = policy.checks
    return any((c.max_covariate_effect, c.max_self_preference, c.min_stability, c.max_flip_rate))
