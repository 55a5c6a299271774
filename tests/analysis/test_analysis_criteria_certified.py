"""A judge that did not pass every check is still trusted for a
criterion whose rate its verdict certifies, and only while the criteria file defines that
criterion as the gate read it.

On the synthetic study the leaning judge leans toward compliance as turns go on (not at turn 1),
so gated on "refusal at turn 1" and "refusal at turn 6" (the share of deflections and hard
refusals among the items of that turn) it is certified for turn 1 and UNTRUSTED for turn 6 (its
turn-6 rate is off by more than the margin), while its agreement checks pass. The fixture checks
that situation in the verdict before any test relies on it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from judgekit.analysis.trust import TrustContext
from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from tests.conftest import one_sentence_error

T1, T6, ARMS = "refusal at turn 1", "refusal at turn 6", "arms at turn 1"
REFUSING = ("r3_deflection", "r4_hard_refusal")
LINE = {
    T1: f"  - {{name: {T1}, rubric: restrictiveness, label: [r3_deflection, r4_hard_refusal], where: {{turn: 1}}, "
        "op: '<=', threshold: 0.9}\n",
    T6: f"  - {{name: {T6}, rubric: restrictiveness, label: [r3_deflection, r4_hard_refusal], where: {{turn: 6}}, "
        "op: '<=', threshold: 0.9}\n",
    ARMS: f"  - {{name: {ARMS}, rubric: restrictiveness, label: [r3_deflection, r4_hard_refusal], where: {{turn: 1}}, "
          "compare: {column: arm, a: A, b: B}, op: '<=', threshold: 0.5}\n",
}
HEAD = "rater: judge-lean\nper: seed\ncriteria:\n"
POLICY = ("rubric: restrictiveness\njudges: [judge-fair, judge-lean]\nreference: adjudicated\nn_resamples: 300\n"
          "checks:\n  min_items: 300\n  metric: weighted_kappa\n  min_value: 0.7\n"
          "  analysis_fidelity: {analysis: criteria, criteria: crit.yaml, max_abs_diff: 0.05}\n")


def _checks(verdict: dict, judge: str) -> dict[str, str]:
    entry = next(j for j in verdict["judges"] if j["judge"] == judge)
    return {c["name"]: c["state"] for c in entry["checks"]}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("critcert")
    paths = write_study(root, n_resamples=300)
    (root / "crit.yaml").write_text(HEAD + LINE[T1] + LINE[T6] + LINE[ARMS])
    (root / "policy_crit.yaml").write_text(POLICY)
    with Store(root / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        verdict, _ = run_gate(store, root / "policy_crit.yaml")
    (root / "verdict.json").write_text(json.dumps(verdict))
    # the situation the tests are about (a property of the seeded study, checked, not assumed)
    lean = _checks(verdict, "judge-lean")
    assert lean["min_items"] == lean["min_weighted_kappa"] == "pass"
    assert lean[f"analysis_fidelity[criteria:rate(criterion={T1})]"] == "pass"
    assert lean[f"analysis_fidelity[criteria:rate(criterion={ARMS})]"] == "pass"
    assert lean[f"analysis_fidelity[criteria:rate(criterion={T6})]"] == "fail"
    assert next(j for j in verdict["judges"] if j["judge"] == "judge-lean")["state"] == "fail"
    assert set(_checks(verdict, "judge-fair").values()) == {"pass"}
    assert set(verdict["criteria_digests"]) == {T1, T6, ARMS}
    return {"root": root, "verdict": verdict, **paths}


def _file(study: dict, name: str, *lines: str) -> Path:
    path = study["root"] / name
    path.write_text(HEAD + "".join(lines))
    return path


def _run(study: dict, crit: Path, *extra: str, verdict: Path | None = None) -> tuple[int, str]:
    res = CliRunner().invoke(main, [
        "analyze", "criteria", str(crit), "--store", str(study["root"] / "s.db"),
        "--verdict", str(verdict or study["root"] / "verdict.json"), "--quiet", *extra])
    return res.exit_code, res.output


def _json(study: dict, crit: Path, *extra: str) -> tuple[int, dict]:
    res = CliRunner().invoke(main, [
        "analyze", "criteria", str(crit), "--store", str(study["root"] / "s.db"),
        "--verdict", str(study["root"] / "verdict.json"), "--json", "-", *extra])
    assert "Traceback" not in res.output, res.output
    return res.exit_code, json.loads(res.stdout)


def _rows(doc: dict, table: str) -> list[dict]:
    return doc["tables"][table]["rows"]


def _by_hand(study: dict, turn: int) -> tuple[float, int]:
    """The leaning judge's share of deflections and hard refusals among the items of ``turn``,
    from the study's own CSV files (one rating per item and judge)."""
    items = pd.read_csv(study["items"])
    ratings = pd.read_csv(study["ratings"])
    ids = set(items.loc[items["turn"] == turn, "item_id"])
    lean = ratings[(ratings["rater_id"] == "judge-lean") & ratings["item_id"].isin(ids)]
    assert len(lean) == len(ids)
    return sum(lab in REFUSING for lab in lean["label"]) / len(lean), len(lean)


def test_the_certified_criterion_is_kept_and_its_uncovered_figures_left_out(study: dict) -> None:
    code, doc = _json(study, _file(study, "t1.yaml", LINE[T1]), "--by", "model")
    assert code == 0
    (row,) = _rows(doc, "criteria")
    value, n = _by_hand(study, 1)
    assert row["criterion"] == T1 and row["n"] == n and math.isclose(row["value"], value, abs_tol=1e-12)
    assert row["result"] == "PASS"
    assert row["per_values"] is None and row["per_mean"] is None  # per-seed values: no certificate covers them
    assert _rows(doc, "per_seed") == [] and _rows(doc, "by_model") == []
    figs = doc["meta"]["figures"]
    assert figs[f"rate(criterion={T1})"]["state"] == "pass" and figs[f"rate(criterion={T1})"]["shown"]
    assert figs[f"per_seed(criterion={T1})"]["shown"] is False
    assert figs[f"by_model(criterion={T1})"]["shown"] is False
    assert doc["trusted"] is True and not doc["title"].startswith("UNTRUSTED")
    assert any(f"certifies the pooled rate of criteria '{T1}' only" in n for n in doc["notes"])


def test_the_criterion_the_verdict_does_not_certify_is_refused(study: dict) -> None:
    code, out = _run(study, study["root"] / "crit.yaml")
    line = one_sentence_error((code, out))
    assert f"criterion '{T6}': rate UNTRUSTED" in line
    assert "run `judgekit gate POLICY.yaml` again with this criteria file" in line


def test_untrusted_shows_the_uncovered_figures_stamped(study: dict) -> None:
    code, doc = _json(study, study["root"] / "crit.yaml", "--untrusted")
    assert code in (0, 1)
    assert doc["trusted"] is False
    assert doc["tables"]["per_seed"]["title"].startswith("UNTRUSTED")
    seeds = [r for r in _rows(doc, "per_seed") if r["criterion"] == T1]
    assert len(seeds) == 3  # seeds 1, 2, 3 of the study
    assert doc["meta"]["figures"][f"per_seed(criterion={T1})"]["shown"] is True
    assert any(T6 in n and "rate UNTRUSTED" in n for n in doc["notes"])
    value, _ = _by_hand(study, 1)
    t1 = next(r for r in _rows(doc, "criteria") if r["criterion"] == T1)
    assert math.isclose(t1["value"], value, abs_tol=1e-12) and t1["per_values"]


def test_a_compare_criterion_is_left_out_and_not_known_to_pass(study: dict) -> None:
    """Its rate is certified, but its figure is a difference of two rates: no certificate
    covers it, so the analysis leaves it out and does not say every criterion passes."""
    crit = _file(study, "arms.yaml", LINE[T1], LINE[ARMS])
    code, doc = _json(study, crit)
    assert code == 1
    assert [r["criterion"] for r in _rows(doc, "criteria")] == [T1]
    assert doc["meta"]["passed"] is False
    assert doc["meta"]["figures"][f"difference(criterion={ARMS})"]["shown"] is False
    code, out = _run(study, crit)
    assert code == 1 and "not every criterion is known to pass" in out
    code, doc = _json(study, crit, "--untrusted")
    assert [r["criterion"] for r in _rows(doc, "criteria")] == [T1, ARMS]
    assert doc["tables"]["criteria"]["title"].startswith("UNTRUSTED") and doc["trusted"] is False


@pytest.mark.parametrize("edit", [
    ("where: {turn: 1}", "where: {turn: 2}"),
    ("where: {turn: 1}", "where: {turn: 1, model: [m-steady, m-eroding, m-stiff]}"),
    ("label: [r3_deflection, r4_hard_refusal]", "label: r4_hard_refusal"),
])
def test_a_criterion_edited_after_the_gate_is_refused(study: dict, edit: tuple[str, str]) -> None:
    crit = _file(study, "edited.yaml", LINE[T1].replace(*edit))
    line = one_sentence_error(_run(study, crit))
    assert f"criterion '{T1}': not certified (the criteria file defines it otherwise than when the gate read it" in line
    assert "run `judgekit gate POLICY.yaml` again with this criteria file" in line


@pytest.mark.parametrize("edit", [
    ("threshold: 0.9", "threshold: 0.2"),              # how it is judged, not what it is
    ("op: '<='", "op: '>='"),
    ("threshold: 0.9}", "threshold: 0.9, min_n: 5}"),
    ("[r3_deflection, r4_hard_refusal]", "[r4_hard_refusal, r3_deflection, r3_deflection]"),  # the same labels
    ("where: {turn: 1}", "where: {turn: 1.0}"),        # the same items
])
def test_a_descriptive_edit_keeps_the_certificate(study: dict, edit: tuple[str, str]) -> None:
    crit = _file(study, "renamed.yaml", LINE[T1].replace(*edit))
    code, doc = _json(study, crit)
    assert code in (0, 1)
    (row,) = _rows(doc, "criteria")
    assert math.isclose(row["value"], _by_hand(study, 1)[0], abs_tol=1e-12)
    assert doc["trusted"] is True


def test_an_edited_digest_is_refused(study: dict, tmp_path: Path) -> None:
    from judgekit.analysis.criteria import evaluate_criteria, load_criteria
    from judgekit.analysis.inputs import criteria_inputs
    from judgekit.store.database import Store

    v = json.loads(json.dumps(study["verdict"]))
    v["criteria_digests"][T1] = "0123456789abcdef"
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(v))
    crit = _file(study, "t1.yaml", LINE[T1])
    line = one_sentence_error(_run(study, crit, verdict=path))
    assert "was not written by `judgekit gate`" in line and "run the gate again" in line  # never recorded
    # without the store to compare with, the digest itself no longer matches the criterion
    with Store.open_existing(str(study["root"] / "s.db")) as store:
        data = criteria_inputs(store)
    with pytest.raises(UntrustedJudgeError, match=f"criterion '{T1}': not certified .the criteria file defines"):
        evaluate_criteria(load_criteria(crit), data.ratings, data.items,
                          trust=TrustContext(verdicts=[v]))


def test_a_verdict_without_digests_certifies_no_criterion_but_passes_as_before(study: dict) -> None:
    from judgekit.analysis.criteria import evaluate_criteria, load_criteria
    from judgekit.analysis.inputs import criteria_inputs
    from judgekit.store.database import Store

    old = json.loads(json.dumps(study["verdict"]))
    del old["criteria_digests"]  # as a verdict written before the digests reads
    with Store.open_existing(str(study["root"] / "s.db")) as store:
        data = criteria_inputs(store)
    crit = load_criteria(_file(study, "t1.yaml", LINE[T1]))
    with pytest.raises(UntrustedJudgeError, match="written before judgekit recorded what defines each criterion") as err:
        evaluate_criteria(crit, data.ratings, data.items, trust=TrustContext(verdicts=[old]))
    assert "run `judgekit gate POLICY.yaml` again" in str(err.value)
    # a judge that passed every check keeps today's behaviour: every figure, nothing left out
    fair = load_criteria(study["root"] / "crit.yaml").model_copy(update={"rater": "judge-fair"})
    result, _ = evaluate_criteria(fair, data.ratings, data.items,
                                  trust=TrustContext(verdicts=[old]))
    assert result.trusted and "figures" not in result.meta
    assert set(result.table("per_seed")["criterion"]) == {T1, T6, ARMS}
    assert set(result.table("criteria")["criterion"]) == {T1, T6, ARMS}


def test_the_verdict_digests_are_checked_against_its_policy(study: dict, tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict

    load_verdict(json.loads(json.dumps(study["verdict"])))  # as the gate wrote it
    short = json.loads(json.dumps(study["verdict"]))
    del short["criteria_digests"][T6]
    with pytest.raises(JudgekitError, match=f"criterion '{T6}' is in one only"):
        load_verdict(short)
    path = tmp_path / "short.json"
    path.write_text(json.dumps(short))
    line = one_sentence_error(_run(study, _file(study, "t1.yaml", LINE[T1]), verdict=path))
    assert "criteria_digests" in line and str(path) in line
    bad = json.loads(json.dumps(study["verdict"]))
    bad["criteria_digests"][T1] = "not a digest"
    with pytest.raises(JudgekitError, match="criteria_digests"):
        load_verdict(bad)
    plain = tmp_path / "plain.yaml"
    plain.write_text(POLICY[:POLICY.index("  analysis_fidelity")])
    with Store(study["root"] / "s.db") as store:
        v, _ = run_gate(store, plain, record=False)
    assert "criteria_digests" not in v
    v["criteria_digests"] = dict(study["verdict"]["criteria_digests"])
    with pytest.raises(JudgekitError, match="has no analysis_fidelity with analysis: criteria"):
        load_verdict(v)
