"""`analyze` refuses only the figures the verdict does not
certify. On the synthetic calibration-drift study (44% of the conversations labelled), the gate
certifies C and Drift(t) for the fair judge while Drift(t | tier) is "not established" (its tier
cells are small); `analyze calibration` then keeps C and Drift(t), leaves Drift(t | tier) out (or
shows it stamped UNTRUSTED with --untrusted), and says which. The judge leaning toward compliance
(Drift UNTRUSTED) is refused, and so is a judge below the agreement floor. Also the Python error
names no CLI flag, and `analyze --json`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis.options import Resampling
from judgekit.analysis.trust import TrustContext
from judgekit.cli import main
from judgekit.errors import UntrustedJudgeError


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("certwire")
    paths = write_study(root, figures=("C", "drift", "drift_tier"), n_resamples=300, human_share=0.44)
    with Store(root / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        verdict, _ = run_gate(store, paths["policy"])
        # the same labels gated for the Drift figures alone: the leaning judge is certified for none
        drift_only = root / "drift.yaml"
        drift_only.write_text(paths["policy"].read_text().replace("figures: [C, drift, drift_tier]",
                                                                  "figures: [drift, drift_tier]"))
        v_drift, _ = run_gate(store, drift_only)
    (root / "verdict.json").write_text(json.dumps(verdict))
    (root / "verdict_drift.json").write_text(json.dumps(v_drift))
    states = {j["judge"]: {f: c["state"] for f, c in j["figures"].items()} for j in verdict["judges"]}
    # the situation the tests are about (a property of the seeded study, checked, not assumed)
    assert next(j for j in verdict["judges"] if j["judge"] == "judge-fair")["state"] != "pass"
    assert states["judge-fair"] == {"C": "pass", "drift": "pass", "drift_tier": "inconclusive"}
    # the leaning judge moves Drift, not C (concordance of R with H barely changes)
    assert states["judge-lean"] == {"C": "pass", "drift": "fail", "drift_tier": "fail"}, states
    assert "pass" not in {c["state"] for j in v_drift["judges"] if j["judge"] == "judge-lean"
                          for c in j["figures"].values()}
    return {"root": root, "verdict": verdict, **paths}


def _analyze(study: dict, judge: str, *extra: str, verdict: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    res = runner.invoke(main, [
        "analyze", "calibration", "--store", str(study["root"] / "s.db"), "--judge", judge,
        "--verdict", str(verdict or study["root"] / "verdict.json"), "--harm-column", "severity",
        "--bootstrap", "30", "--quiet", *extra])
    return res.exit_code, res.stdout, res.stderr


def _values(doc: dict, table: str, column: str) -> list:
    return [r.get(column) for r in doc["tables"][table]["rows"]]


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@pytest.fixture(scope="module")
def trusted(study: dict) -> dict:
    code, out, err = _analyze(study, "judge-fair", "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def forced(study: dict) -> dict:
    code, out, err = _analyze(study, "judge-fair", "--untrusted", "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_certified_figures_are_trusted_and_drift_tier_is_not_established(trusted: dict) -> None:
    figs = trusted["meta"]["figures"]
    assert figs["C"]["state"] == figs["drift"]["state"] == "pass"
    assert figs["C"]["shown"] and figs["drift"]["shown"]
    assert figs["drift_tier"]["state"] == "inconclusive" and not figs["drift_tier"]["shown"]
    assert figs["drift_tier"]["sentence"].startswith("drift_tier: not established (cannot be established with this study")
    assert trusted["trusted"] is True
    assert not trusted["title"].startswith("UNTRUSTED")
    assert any("certifies C, drift only" in n for n in trusted["notes"])
    assert any(n.startswith("Not certified: drift_tier: not established (cannot be established with this study") for n in trusted["notes"])
    # C and Drift(t) are there, Drift(t | tier) is left out (its column emptied, its charts gone)
    assert not any(_missing(v) for v in _values(trusted, "summary", "C"))
    assert not any(_missing(v) for v in _values(trusted, "summary", "drift_last_turn"))
    assert sum(not _missing(v) for v in _values(trusted, "by_turn", "drift")) >= 15
    assert all(_missing(v) for v in _values(trusted, "by_tier_turn", "drift"))
    assert "drift_by_turn" in trusted["charts"]
    assert not [k for k in trusted["charts"] if k.startswith("drift_by_tier_")]
    # a figure the policy does not check (RCE) is not certified either
    assert figs["RCE"]["state"] == "unchecked" and all(_missing(v) for v in _values(trusted, "summary", "RCE"))


def test_the_kept_figures_are_the_analysis_own(trusted: dict, forced: dict) -> None:
    """Leaving figures out changes none of those kept (the forced run shows every figure)."""
    assert _values(trusted, "summary", "C") == _values(forced, "summary", "C")
    assert _values(trusted, "by_turn", "drift") == _values(forced, "by_turn", "drift")


def test_untrusted_shows_the_uncertified_figures_stamped(forced: dict) -> None:
    assert forced["trusted"] is False
    assert forced["notes"][0].startswith("UNTRUSTED: figures the verdict does not certify are shown")
    assert "drift_tier" in forced["notes"][0]
    assert forced["meta"]["figures"]["drift_tier"]["shown"] is True
    assert sum(not _missing(v) for v in _values(forced, "by_tier_turn", "drift")) > 0
    assert forced["tables"]["by_tier_turn"]["title"].startswith("UNTRUSTED")
    assert all(c["title"].startswith("UNTRUSTED") for k, c in forced["charts"].items()
               if k.startswith("drift_by_tier_"))


def test_the_leaning_judge_keeps_only_its_certified_c(study: dict, tmp_path: Path) -> None:
    out = tmp_path / "lean.json"
    code, _, err = _analyze(study, "judge-lean", "--json", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text())
    figs = doc["meta"]["figures"]
    assert figs["C"]["shown"] and not figs["drift"]["shown"] and figs["drift"]["sentence"].startswith("drift: UNTRUSTED (")
    assert not any(_missing(x) for x in _values(doc, "summary", "C"))
    assert all(_missing(x) for x in _values(doc, "by_turn", "drift"))


def test_the_leaning_judge_is_refused(study: dict) -> None:
    code, out, err = _analyze(study, "judge-lean", verdict=study["root"] / "verdict_drift.json")
    err = one_sentence_error((code, out + err))
    assert "certifies none of this analysis's figures for judge 'judge-lean'" in err
    assert "drift: UNTRUSTED (" in err
    assert "On the command line: --untrusted." in err


def test_a_judge_below_the_agreement_floor_stays_refused(study: dict, tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store

    pol = tmp_path / "floor.yaml"
    pol.write_text(Path(study["policy"]).read_text().replace("min_value: 0.7", "min_value: 0.999"))
    with Store(study["root"] / "s.db") as store:
        v, _ = run_gate(store, pol)
    fair = next(j for j in v["judges"] if j["judge"] == "judge-fair")
    assert {c["state"] for c in fair["figures"].values()} == {"fail"}
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(v))
    code, _, err = _analyze(study, "judge-fair", verdict=path)
    one_sentence_error((code, err), "certifies none of this analysis's figures for judge 'judge-fair'")


def test_from_python_the_refusal_names_no_cli_flag(study: dict) -> None:
    from judgekit.analysis import inputs
    from judgekit.analysis.calibration.estimate import calibration
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    rubric = load_rubric("restrictiveness")
    verdicts = inputs.load_verdicts([study["root"] / "verdict_drift.json"])
    with Store.open_existing(str(study["root"] / "s.db")) as store:
        for judge, given in (("judge-lean", verdicts), ("judge-fair", [])):
            data = inputs.calibration_inputs(store, rubric, judge, harm_column="severity", verdicts=given)
            with pytest.raises(UntrustedJudgeError) as err:
                calibration(data.ratings, data.items, data.harm, rubric=rubric,
                            trust=TrustContext(verdicts=given, store=store, judge_hashes=data.judge_hashes),
                            resampling=Resampling(n_resamples=0))
            assert "--" not in str(err.value), str(err.value)
            assert "untrusted" in str(err.value) and "--untrusted" in (err.value.cli_hint or "")


def test_no_verdict_from_the_cli_names_the_flags(study: dict) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["analyze", "calibration", "--store", str(study["root"] / "s.db"),
                               "--judge", "judge-fair", "--harm-column", "severity", "--quiet"])
    one_sentence_error(res, "On the command line: --verdict verdict.json, or --untrusted.")


def test_json_path_writes_the_file_and_prints_the_tables(study: dict, tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    code, stdout, err = _analyze(study, "judge-fair", "--json", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["kind"] == "calibration" and doc["meta"]["figures"]["drift"]["state"] == "pass"
    assert "Calibration per model" in stdout and f"wrote {out}" in stdout


def test_distribution_keeps_the_certified_refusal_rate(study: dict, tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store

    text = Path(study["policy"]).read_text()
    pol = tmp_path / "dist.yaml"
    pol.write_text(text[:text.index("  analysis_fidelity:")] + (
        "  analysis_fidelity:\n    analysis: distribution\n"
        "    figures: [refusal_rate, refusal_rate_t, share_not_constant]\n"
        "    max_abs_diff: 0.02\n    min_units: 10\n"))
    with Store(study["root"] / "s.db") as store:
        v, _ = run_gate(store, pol)
    states = {j["judge"]: {f: c["state"] for f, c in j["figures"].items()} for j in v["judges"]}
    assert states["judge-fair"]["refusal_rate"] == "pass"
    assert states["judge-fair"]["refusal_rate_t"] != "pass"
    assert "pass" not in states["judge-lean"].values()
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(v))

    def run(judge: str) -> tuple[int, str, str]:
        res = CliRunner().invoke(main, [
            "analyze", "distribution", "--store", str(study["root"] / "s.db"), "--judge", judge,
            "--rubric", "restrictiveness", "--verdict", str(path), "--bootstrap", "20", "--quiet", "--json"])
        return res.exit_code, res.stdout, res.stderr

    code, out, err = run("judge-fair")
    assert code == 0, err
    doc = json.loads(out)  # --json alone: stdout is the JSON and nothing else
    assert doc["meta"]["figures"]["refusal_rate"] == {
        "state": "pass", "sentence": "refusal_rate: certified (3 checks pass, and every primary check)", "shown": True}
    assert not doc["meta"]["figures"]["refusal_rate_t"]["shown"]
    assert not any(_missing(x) for x in _values(doc, "by_model", "mean_rate"))
    assert all(_missing(x) for x in _values(doc, "by_turn", "mean_rate"))
    assert all(_missing(x) for x in _values(doc, "by_model", "pooled_rate"))  # no figure covers it
    assert "per_prompt" not in doc["tables"]
    code, _, err = run("judge-lean")
    one_sentence_error((code, err), "refusal_rate: UNTRUSTED (")


def test_tables_no_certificate_covers_are_left_out_or_stamped() -> None:
    """Every calibration figure certified, yet the look-alikes (no figure covers them) are not."""
    import pandas as pd

    from judgekit.analysis.result import AnalysisResult, Table
    from judgekit.analysis.trust import TrustReport
    from judgekit.analysis.trust_figures import CALIBRATION, apply_figures

    def make() -> tuple[AnalysisResult, TrustReport]:
        res = AnalysisResult("calibration", "t", tables=[
            Table("summary", "Summary", pd.DataFrame({"model": ["m"], "C": [0.9], "tied_share": [0.1]})),
            Table("lookalikes", "Look-alikes", pd.DataFrame({"model": ["m"], "mean_R": [0.2]}))])
        certs = {f: {"state": "pass", "sentence": f"{f}: certified"} for f in CALIBRATION.figures}
        return res, TrustReport(trusted={"j under r": "v"}, figures={"j under r": certs})

    res, trust = make()
    apply_figures(res, trust, CALIBRATION, untrusted=False)
    assert [t.key for t in res.tables] == ["summary"] and res.trusted
    assert res.table("summary")["C"].tolist() == [0.9] and res.table("summary")["tied_share"].isna().all()
    res, trust = make()
    apply_figures(res, trust, CALIBRATION, untrusted=True)
    assert res.table("lookalikes")["mean_R"].tolist() == [0.2]
    assert [t.title for t in res.tables] == ["UNTRUSTED — Summary", "UNTRUSTED — Look-alikes"]
    assert not res.trusted and res.notes[0].startswith("UNTRUSTED:")
