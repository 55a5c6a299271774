"""Certify figures, not only judges. On the synthetic calibration-drift study with
at most 150 human-labelled conversations, the fair judge is TRUSTED for C, RCE_t and Drift(t)
(Drift(t | tier) certified or "not established" without blocking them); the judge leaning toward
compliance is UNTRUSTED for Drift(t) and Drift(t | tier); `require_trusted(figure=)` trusts a judge
only for the figures its verdict certifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judgekit.errors import JudgekitError, UntrustedJudgeError


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from judgekit.gate.run import run_gate
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.study import write_study

    root = tmp_path_factory.mktemp("certify")
    paths = write_study(root, figures=("C", "RCE_t", "drift", "drift_tier"), n_resamples=300, human_share=0.44)
    ratings, items = pd.read_csv(paths["ratings"]), pd.read_csv(paths["items"])
    labelled = set(ratings.loc[ratings["rater_id"] == "adjudicated", "item_id"])
    n_conv = items.loc[items["item_id"].isin(labelled), "conversation_id"].nunique()
    with Store(root / "s.db") as store:
        import_ratings(store, paths["ratings"], load_rubric("restrictiveness"), items_path=paths["items"])
        verdict, _ = run_gate(store, paths["policy"])
    (root / "verdict.json").write_text(json.dumps(verdict))
    return {"verdict": verdict, "n_conv": n_conv, "root": root, **paths}


def _judge(v: dict, name: str) -> dict:
    return next(j for j in v["judges"] if j["judge"] == name)


def test_the_fair_judge_is_trusted_for_the_figures_its_checks_support(study: dict) -> None:
    assert study["n_conv"] <= 150
    fair = _judge(study["verdict"], "judge-fair")
    figs = {f: c["state"] for f, c in fair["figures"].items()}
    assert figs["C"] == figs["RCE_t"] == figs["drift"] == "pass"
    assert figs["drift_tier"] in ("pass", "inconclusive")
    if figs["drift_tier"] == "inconclusive":
        assert fair["figures"]["drift_tier"]["sentence"].startswith("drift_tier: not established (")


def test_the_leaning_judge_is_untrusted_for_drift(study: dict) -> None:
    lean = _judge(study["verdict"], "judge-lean")
    assert lean["state"] == "fail"
    assert lean["figures"]["drift"]["state"] == "fail" or lean["figures"]["drift_tier"]["state"] == "fail"
    # every model whose Drift(6) it moves by more than the margin (the whole CI of |d| above 0.05) fails
    for ch in lean["checks"]:
        if ch["name"].startswith("analysis_fidelity[calibration:drift(") and ch["ci"] and ch["ci"][0] > 0.05:
            assert ch["state"] == "fail"


def test_the_verdict_reads_back_and_explain_names_the_certified_figures(study: dict) -> None:
    from judgekit.gate.run import explain
    from judgekit.verdict.read import load_verdict

    v = load_verdict(study["root"] / "verdict.json")
    lines = explain(v)
    assert any(line.startswith("Figures of judge-fair: TRUSTED for C, RCE_t, drift") for line in lines)
    # each fidelity check's interval is labelled at its own level (1 − 2α = 90%), not as a 95% CI
    fid = [line for line in lines if line.lstrip().startswith(("ok   calibration", "FAIL calibration"))
           and "% CI " in line.split(";")[0]]  # those with an interval (a flat one has none)
    assert len(fid) > 10 and all("[90% CI " in line and "95%" not in line for line in fid), fid[:3]
    from judgekit.verdict.check import Interval

    assert Interval(0.0, 0.1, "bootstrap", 0.9).label() == "90% CI"
    assert Interval(0.0, 0.1, "confidence-sequence", 0.9).label() == "90% confidence sequence"
    assert Interval(0.0, 0.1, "holm-normal", 1 - 2 * 0.025 / 3).label() == "98.33% interval"


def test_require_trusted_per_figure(study: dict) -> None:
    from judgekit.store.database import Store
    from judgekit.verdict.trust import require_trusted

    path = study["root"] / "verdict.json"
    with Store(study["root"] / "s.db") as store:
        for fig in ("C", "RCE_t", "drift"):
            require_trusted(path, judge="judge-fair", rubric="restrictiveness", store=store, figure=fig)
        # without figure= the judge must pass every check, as before
        if _judge(study["verdict"], "judge-fair")["state"] != "pass":
            with pytest.raises(UntrustedJudgeError, match="did not pass the gate"):
                require_trusted(path, judge="judge-fair", rubric="restrictiveness", store=store)
        with pytest.raises(UntrustedJudgeError, match="does not certify 'drift' for judge 'judge-lean'"):
            require_trusted(path, judge="judge-lean", rubric="restrictiveness", store=store, figure="drift")
        with pytest.raises(UntrustedJudgeError, match="not 'refusal_rate'"):
            require_trusted(path, judge="judge-fair", rubric="restrictiveness", store=store, figure="refusal_rate")


def test_an_edited_figure_certificate_is_refused(study: dict, tmp_path: Path) -> None:
    from judgekit.verdict.trust import require_trusted

    v = json.loads(json.dumps(study["verdict"]))
    lean = _judge(v, "judge-lean")
    lean["figures"]["drift"] = {"state": "pass", "sentence": "drift: certified"}
    with pytest.raises(UntrustedJudgeError, match="records figures its checks do not certify"):
        require_trusted(v, judge="judge-lean", rubric="restrictiveness", figure="drift")


def test_a_figure_margin_of_its_own(study: dict, tmp_path: Path) -> None:
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import load_verdict

    pol = tmp_path / "p.yaml"
    pol.write_text(study["policy"].read_text().replace("    max_abs_diff: 0.05\n",
                                                       "    max_abs_diff: 0.05\n    margins: {drift_tier: 0.1}\n"))
    with Store(study["root"] / "s.db") as store:
        v, _ = run_gate(store, pol)
    thr = {c["threshold"] for c in _judge(v, "judge-fair")["checks"]
           if c["name"].startswith("analysis_fidelity[calibration:drift_tier(")}
    assert thr == {0.1}
    load_verdict(json.loads(json.dumps(v)))  # the reader takes the figure's own margin
    bad = tmp_path / "bad.yaml"
    bad.write_text(study["policy"].read_text().replace("    max_abs_diff: 0.05\n",
                                                       "    max_abs_diff: 0.05\n    margins: {refusal_rate: 0.1}\n"))
    from judgekit.verdict.policy import load_policy

    with pytest.raises(JudgekitError, match="margins names 'refusal_rate', which is not one of the figures checked"):
        load_policy(bad)


#: a figure (and its interval) of each state, against a floor (``≥ 0.5``) and a ceiling (``≤ 0.05``)
_FLOOR = {"pass": (1.0, (0.9, 1.0)), "fail": (0.1, (0.0, 0.2)), "inconclusive": (0.5, (0.3, 0.7))}
_CEILING = {"pass": (0.01, (0.0, 0.02)), "fail": (0.1, (0.06, 0.2)), "inconclusive": (0.04, (0.01, 0.07))}


def _check(kind: str, state: str) -> Any:
    from judgekit.verdict.check import Check, Interval

    ceiling = kind.startswith("max_")
    fig, (lo, hi) = (_CEILING if ceiling else _FLOOR)[state]
    ch = Check(kind, "j", fig, 0.05 if ceiling else 0.5, 100, "", interval=Interval(lo, hi, "wilson", 0.95),
               metric="kappa")
    assert ch.state == state
    return ch


def _fidelity(figure: str, model: str, state: str, turn: str | None = None) -> Any:
    from judgekit.verdict.check import Check, Interval, Subject

    fig, (lo, hi) = _CEILING[state]
    cell = f"{figure}(model={model}" + (f", turn={turn})" if turn else ")")
    ch = Check("analysis_fidelity", "j", fig, 0.05, 100, "", interval=Interval(lo, hi, "bootstrap", 0.9),
               subject=Subject(analysis="calibration", figure=figure, cell=cell, model=model, turn=turn))
    assert ch.state == state
    return ch


def test_secondary_checks_do_not_block_a_figure(tmp_path: Path) -> None:
    from judgekit.verdict.certify import certify
    from judgekit.verdict.policy import Policy

    raw = {"rubric": "restrictiveness", "judges": ["j"], "checks": {
        "min_items": 30, "min_value": 0.5, "max_error_rate": 0.01,
        "analysis_fidelity": {"analysis": "calibration", "figures": ["C"], "max_abs_diff": 0.05}}}
    from judgekit.verdict.check import Budget

    entry = [_check("min_items", "pass"), _check("min_value", "pass"),
             _check("max_error_rate", "inconclusive").with_budget(Budget(None, "x")), _fidelity("C", "a", "pass")]
    assert certify(entry, Policy(**raw))["C"]["state"] == "inconclusive"  # every check primary by default
    assert certify(entry, Policy(**raw, secondary=["max_error_rate"]))["C"]["state"] == "pass"
    with pytest.raises(ValueError, match="secondary names 'min_value'"):
        Policy(**raw, secondary=["min_value"])


def test_the_reader_refuses_edited_figures(study: dict) -> None:
    from judgekit.verdict.read import load_verdict

    v = json.loads(json.dumps(study["verdict"]))
    _judge(v, "judge-lean")["figures"]["drift"] = {"state": "pass", "sentence": "drift: certified"}
    with pytest.raises(UntrustedJudgeError, match=r"judges\[1\] \(judge-lean\) records figures its checks do not certify"):
        load_verdict(v)


def test_the_report_says_which_figures_each_judge_is_certified_for(study: dict, tmp_path: Path) -> None:
    """The judge report (HTML, Markdown, JSON) carries the verdict's certificates, recomputed from
    its checks, with the per-model states where a judge moves one model's figure and not another's."""
    from click.testing import CliRunner

    from judgekit.cli import main

    res = CliRunner().invoke(main, ["report", "--store", str(study["root"] / "s.db"), "--verdict",
                                    str(study["root"] / "verdict.json"), "--rubric", "restrictiveness",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "report.json").read_text())
    rows = {j["judge"]: j for j in doc["summary"]["judges"]}
    lean = _judge(study["verdict"], "judge-lean")
    # the certificate per model is the checks' own: a model fails when one of its drift checks fails
    per_model: dict[str, list[str]] = {}
    for ch in lean["checks"]:
        if ch["name"].startswith("analysis_fidelity[calibration:drift(model="):
            per_model.setdefault(ch["name"].split("model=")[1].split(",")[0], []).append(ch["state"])
    want = {m: "fail" if "fail" in s else ("pass" if set(s) == {"pass"} else "inconclusive")
            for m, s in per_model.items()}
    assert rows["judge-lean"]["figures"]["drift"]["models"] == want
    assert rows["judge-fair"]["sentence"].endswith("Figures: certified C, RCE_t, drift; not established drift_tier.") \
        or "Figures: certified C, RCE_t, drift, drift_tier." in rows["judge-fair"]["sentence"]
    failing = sorted(m for m, s in want.items() if s == "fail")
    assert failing and f"UNTRUSTED for {', '.join(failing)}" in rows["judge-lean"]["sentence"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Figures: certified C, RCE_t, drift" in md and "Figures: certified C, RCE_t, drift" in html


def test_per_model_states_keep_a_model_whose_name_has_a_comma() -> None:
    from judgekit.verdict.certify import certify
    from judgekit.verdict.policy import Policy

    policy = Policy(rubric="restrictiveness", judges=["j"], reference="r", checks={
        "min_items": 10, "metric": "weighted_kappa", "min_value": 0.5,
        "analysis_fidelity": {"analysis": "calibration", "figures": ["C", "drift"], "max_abs_diff": 0.05,
                              "harm_column": "severity"}})
    judge = [_check("min_items", "pass"), _check("min_value", "pass"),
             _fidelity("C", "llama, 70b", "pass"), _fidelity("C", "llama, 8b", "fail"),
             _fidelity("drift", "llama, 70b", "pass", turn="2"), _fidelity("drift", "llama, 8b", "inconclusive", turn="2")]
    assert judge[-1].name == "analysis_fidelity[calibration:drift(model=llama, 8b, turn=2)]"
    certs = certify(judge, policy)
    assert certs["C"]["models"] == {"llama, 70b": "pass", "llama, 8b": "fail"}
    assert certs["drift"]["models"] == {"llama, 70b": "pass", "llama, 8b": "inconclusive"}
    assert certs["C"]["state"] == "fail" and certs["drift"]["state"] == "inconclusive"


def _fidelity_cis(verdict: dict) -> dict[tuple[str, str], list[float]]:
    return {(j["judge"], c["name"]): c["ci"] for j in verdict["judges"] for c in j["checks"]
            if c["name"].startswith("analysis_fidelity[") and c["ci"]}


def test_alpha_sets_the_interval_the_checks_read_and_the_report_reads_it_back(study: dict, tmp_path: Path) -> None:
    """The policy's alpha reaches every fidelity interval (1 − 2α: 90% at 0.05, 95% at 0.025), the
    verdict records it, and the report's fidelity section recomputes each figure at the level its
    verdict was decided at — 95% for a verdict recorded before alpha existed."""
    from judgekit.gate.run import run_gate
    from judgekit.report.fidelity import fidelity_extras, fidelity_grid
    from judgekit.rubric.model import load_rubric
    from judgekit.stats.intervals import abs_interval
    from judgekit.store.database import Store

    v90 = study["verdict"]
    assert v90["policy"]["checks"]["analysis_fidelity"]["alpha"] == 0.05  # written out though the file omits it
    strict = tmp_path / "policy.yaml"
    strict.write_text(Path(study["policy"]).read_text().replace("    min_units: 10\n",
                                                                "    min_units: 10\n    alpha: 0.025\n"))
    with Store(study["root"] / "s.db") as store:
        v95, _ = run_gate(store, strict, record=False)
    ci90, ci95 = _fidelity_cis(v90), _fidelity_cis(v95)
    assert ci90.keys() == ci95.keys() and len(ci90) > 20
    # the same resamples: each 95% interval holds the 90% one, and is wider where the interval has width
    for name, (lo, hi) in ci90.items():
        lo95, hi95 = ci95[name]
        assert lo95 <= lo + 1e-9 and hi <= hi95 + 1e-9, name
    assert sum((ci95[n][1] - ci95[n][0]) > (hi - lo) + 1e-9 for n, (lo, hi) in ci90.items()) > len(ci90) // 2
    # the report: a verdict without alpha (written before it) is recomputed at 95%, labelled so
    old = json.loads(json.dumps(v95))
    del old["policy"]["checks"]["analysis_fidelity"]["alpha"]
    rubric = load_rubric("restrictiveness")
    with Store(study["root"] / "s.db") as store:
        for verdict, level, cis in ((v90, "90%", ci90), (old, "95%", ci95)):
            fid = fidelity_extras(store, rubric, verdict)
            assert fid is not None and "rows" in fid, fid
            grid = fidelity_grid(fid)
            assert grid is not None and f"difference [{level} CI]" in grid.header and f"its {level} paired" in grid.note
            # each row's interval of d gives the check's interval of |d| in the verdict decided at that level
            compared = 0
            for r in fid["rows"]:
                key = (r["judge"], f"analysis_fidelity[{r['analysis']}:{r['name']}]")
                if r["ci"] and key in cis:
                    assert list(abs_interval(*r["ci"])) == pytest.approx(cis[key], abs=2e-6), key
                    compared += 1
            assert compared > 10
