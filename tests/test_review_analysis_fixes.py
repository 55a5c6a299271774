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
