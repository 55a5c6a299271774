"""Regression tests for reviewer findings on the corrected estimates, judge-vs-judge agreement
and the conversation sampler (issue 11 review, fix3). Each test failed before its fix."""

from __future__ import annotations

from click.testing import CliRunner

from judgekit.cli import main

pytest_plugins = ["tests.analysis_fixtures"]


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


# 1. --correct --reference must be a human or reference rater (the gate's rule)
def test_correct_refuses_a_judge_as_reference(synthetic_store) -> None:
    for ref in ("judge-b", "judge-a"):  # another judge, and the analysed judge itself
        r = invoke("analyze", "distribution", "--judge", "judge-a", "--rubric",
                   "restrictiveness", "--no-forms", "--verdict", synthetic_store["restrictiveness"],
                   "--store", synthetic_store["store"], "--quiet", "--bootstrap", "10",
                   "--correct", "rogan_gladen", "--reference", ref)
        assert r.exit_code == 2, r.output
        assert f"--reference: reference '{ref}' is a judge rater, not a human or reference rater" \
            in r.output
        assert "pass one of adjudicated" in r.output
        assert "Traceback" not in r.output and "raw and corrected" not in r.output
    r = invoke("analyze", "calibration", "--judge", "judge-a", "--verdict",
               synthetic_store["restrictiveness"], "--harm-column", "severity", "--store",
               synthetic_store["store"], "--quiet", "--bootstrap", "10", "--correct", "ppi",
               "--reference", "judge-b")
    assert r.exit_code == 2 and "is a judge rater" in r.output, r.output


# 2. two classes: corrected_weighted (what --correct uses) refuses exactly when corrected_rate does
def _se_sp_case(n_unl_pos: int, n_unl_neg: int, sp_neg: int = 32):
    """100 reference positives (90 judged positive: Se = .90) and 100 reference negatives
    (``sp_neg`` judged negative: Sp = sp_neg/100), plus unlabelled judge labels."""
    judge_l = ["ref"] * 90 + ["ok"] * 10 + ["ok"] * sp_neg + ["ref"] * (100 - sp_neg)
    ref_l = ["ref"] * 100 + ["ok"] * 100
    judge_all = judge_l + ["ref"] * n_unl_pos + ["ok"] * n_unl_neg
    return judge_all, judge_l, ref_l


def test_two_class_weighted_correction_uses_youden_like_corrected_rate() -> None:
    import pytest

    from judgekit.analysis.corrected import UnreliableCorrection, corrected_rate
    from judgekit.analysis.corrected_multiclass import corrected_shares, corrected_weighted

    judge_all, judge_l, ref_l = _se_sp_case(600, 200)
    # q = (90 + 68 + 600) / 1000 = 0.758; J = .90 + .32 − 1 = .22; π = (q − (1 − Sp)) / J
    expected = (0.758 - 0.68) / 0.22
    r = corrected_rate(judge_all, judge_labelled=judge_l, reference_labelled=ref_l,
                       positive="ref", n_resamples=200)
    assert r.corrected == pytest.approx(expected)
    w = corrected_weighted(judge_all, judge_labelled=judge_l, reference_labelled=ref_l,
                           weights={"ok": 0.0, "ref": 1.0}, name="refusal rate",
                           n_resamples=200)
    assert w.corrected == pytest.approx(expected)
    shares = corrected_shares(judge_all, judge_labelled=judge_l, reference_labelled=ref_l,
                              codes=["ok", "ref"], n_resamples=200)
    assert shares["ref"].corrected == pytest.approx(expected)
    # Sp = .29: J = .19 < .2, both refuse with the Youden sentence
    judge_all, judge_l, ref_l = _se_sp_case(600, 200, sp_neg=29)
    with pytest.raises(UnreliableCorrection, match="sensitivity \\+ specificity − 1"):
        corrected_rate(judge_all, judge_labelled=judge_l, reference_labelled=ref_l,
                       positive="ref", n_resamples=50)
    with pytest.raises(UnreliableCorrection,
                       match="sensitivity \\+ specificity − 1 for 'ref' is 0.190"):
        corrected_weighted(judge_all, judge_labelled=judge_l, reference_labelled=ref_l,
                           weights={"ok": 0.0, "ref": 1.0}, n_resamples=50)


def test_multiclass_rule_is_still_the_smallest_singular_value() -> None:
    import numpy as np
    import pytest

    from judgekit.analysis.corrected import UnreliableCorrection
    from judgekit.analysis.corrected_multiclass import corrected_shares

    # three classes, 20 labelled each; b and c are confused half the time: the columns of M for
    # b and c are equal, so M is singular (σ_min = 0) although each class is well represented
    judge_l = ["a"] * 20 + ["b"] * 10 + ["c"] * 10 + ["b"] * 10 + ["c"] * 10
    ref_l = ["a"] * 20 + ["b"] * 20 + ["c"] * 20
    m = np.array([[1, 0, 0], [0, .5, .5], [0, .5, .5]])
    assert np.linalg.svd(m, compute_uv=False).min() == pytest.approx(0.0)
    with pytest.raises(UnreliableCorrection, match="smallest singular value 0.000"):
        corrected_shares(judge_l, judge_labelled=judge_l, reference_labelled=ref_l,
                         codes=["a", "b", "c"], n_resamples=20)
