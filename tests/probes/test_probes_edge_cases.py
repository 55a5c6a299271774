"""Edge cases of the bias probes: each test failed before its fix."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import chi2

from judgekit.probes.bands import decide
from judgekit.probes.marginal import stuart_maxwell
from judgekit.probes.stability import stability


# ----------------------------------------------------------------------------- 7 Stuart–Maxwell
def test_stuart_maxwell_drops_a_perfectly_agreed_class():
    sm = stuart_maxwell([[5, 0, 0], [0, 3, 2], [0, 1, 4]])
    # label 0 has no off-diagonal count (d_0 = 0, S row/column 0): dropped; on [[3, 2], [1, 4]]
    # d = (3 + 2) − (3 + 1) = 1, S = n_1. + n_.1 − 2 n_11 = 5 + 4 − 6 = 3, χ² = 1² / 3
    assert sm["undefined"] is None
    assert sm["statistic"] == pytest.approx(1 / 3) and sm["df"] == 1
    assert sm["p"] == pytest.approx(chi2.sf(1 / 3, 1))


def test_stuart_maxwell_all_agreed_is_zero():
    sm = stuart_maxwell([[5, 0], [0, 3]])
    assert sm["statistic"] == 0.0 and sm["p"] == 1.0


# ----------------------------------------------------------------------------- 6 zero-width intervals
def _stable_judge(n: int) -> pd.DataFrame:
    ids = [f"i{k}" for k in range(n)]
    labs = ["x" if k < 20 else "y" for k in range(n)]
    return pd.DataFrame({"item_id": ids * 2, "trial": [0] * n + [1] * n, "label": labs * 2})


def test_stability_without_flips_is_not_certain():
    res = stability(_stable_judge(39), codes=["x", "y"], n_resamples=200)
    assert res["alpha"] == pytest.approx(1.0) and res["flip_share"] == 0.0
    # Wilson 95% upper bound on 0 of 39: z² / (n + z²)
    z = 1.959963984540054
    f_high = z * z / (39 + z * z)
    assert res["flip_high"] == pytest.approx(f_high)
    # D_e (nominal) on the 78 pairable values: 40 x, 38 y: 2·40·38 / (78·77)
    d_e = 2 * 40 * 38 / (78 * 77)
    assert res["alpha_bound"] == pytest.approx(1 - f_high / d_e)
    assert res["se"] == pytest.approx((1 - (1 - f_high / d_e)) / z)
    row = {"probe": "stability", "n": res["n"], "estimate": res["alpha"], "se": res["se"], "detail": "d"}
    # α >= 0.9 is not shown by 39 unflipped items (the bound allows α ≈ 0.82): inconclusive, not PASS
    (out,) = decide([row], mode="min", threshold=0.9, min_n=30)
    assert out["state"] == "inconclusive"
    assert out["low"] == pytest.approx(1 - z * res["se"])
    # ... while α >= 0.8 is (the low end 0.823 clears it)
    (out2,) = decide([dict(row)], mode="min", threshold=0.8, min_n=30)
    assert out2["state"] == "pass"


def test_zero_width_interval_does_not_decide():
    for mode, est, thr in (("abs", 0.0, 0.05), ("abs", 0.2, 0.05), ("min", 1.0, 0.8)):
        probe = "stability" if mode == "min" else "drift"
        (out,) = decide([{"probe": probe, "n": 50, "estimate": est, "se": 0.0, "detail": "d"}],
                        mode=mode, threshold=thr, min_n=30)
        assert out["state"] == "inconclusive", (mode, est)
        assert out["check"]["ci"] is None and "zero width" in out["check"]["detail"]


# ----------------------------------------------------------------------------- 1 probes.json states
@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory):
    from probe_fixtures import write_store

    return write_store(tmp_path_factory.mktemp("probes_fix"))


@pytest.fixture(scope="module")
def long_probes(synthetic_db, tmp_path_factory):
    """probes.json of the judge built to over-call refusal on long responses (covariate fail)."""
    import json

    from click.testing import CliRunner
    from probe_fixtures import PROBES

    from judgekit.cli import main

    tmp = tmp_path_factory.mktemp("long")
    pf = tmp / "probes.yaml"
    pf.write_text(PROBES.replace("judges: [clean, long, selfish, flaky]", "judges: [long]"))
    res = CliRunner().invoke(main, ["probe", str(pf), "--store", str(synthetic_db), "--out", str(tmp / "o")])
    assert res.exit_code == 1, res.output  # a failing probe
    return json.loads((tmp / "o" / "probes.json").read_text())


def test_report_refuses_probes_json_with_edited_states(synthetic_db, long_probes, tmp_path):
    import copy
    import json

    from click.testing import CliRunner
    from conftest import one_sentence_error

    from judgekit.cli import main
    from judgekit.report.probes import read_probes

    doc = long_probes
    assert doc["state"] == "fail"
    read_probes_ok = tmp_path / "ok.json"
    read_probes_ok.write_text(json.dumps(doc))
    assert read_probes(read_probes_ok, doc["rubric"])["state"] == "fail"  # the real file is accepted
    forged = copy.deepcopy(doc)
    forged["state"] = "pass"
    for j in forged["judges"]:
        j["state"] = "pass"
        for r in j["probes"]:
            r["state"] = r["check"]["state"] = "pass"
            r["check"]["passed"] = True
    failing = next(k for k, r in enumerate(doc["judges"][0]["probes"]) if r["state"] == "fail")
    bad = tmp_path / "forged.json"
    bad.write_text(json.dumps(forged))
    args = ["report", "--store", str(synthetic_db), "--rubric", "refusal", "--resamples", "100"]
    res = CliRunner().invoke(main, [*args, "--probes", str(bad), "--out", str(tmp_path / "r")])
    line = one_sentence_error(res)
    assert str(bad) in line and f"judges[0].probes[{failing}].state" in line and "'fail'" in line
    assert not (tmp_path / "r").exists()
    # only the judge's state edited: refused too
    forged2 = copy.deepcopy(doc)
    forged2["judges"][0]["state"] = "pass"
    bad.write_text(json.dumps(forged2))
    with pytest.raises(Exception, match=r"judges\[0\]\.state"):
        read_probes(bad, doc["rubric"])
    # the interval edited so that it clears the band while the check's stays: refused
    forged3 = copy.deepcopy(doc)
    r = forged3["judges"][0]["probes"][failing]
    r["low"], r["high"] = 0.0, 0.01
    bad.write_text(json.dumps(forged3))
    with pytest.raises(Exception, match="do not match the check's interval"):
        read_probes(bad, doc["rubric"])


# ----------------------------------------------------------------------------- 3 perturb only probed judges
def _perturb_setup(tmp, fake):
    pytest.register_assert_rewrite("test_probes_perturb")
    from test_probes_perturb import _setup

    return _setup(tmp, fake)


def test_perturb_asks_only_the_probe_files_judges(tmp_path):
    from click.testing import CliRunner
    from test_probes_perturb import N, order_sensitive

    from judgekit.cli import main
    from judgekit.store.database import Store
    from judgekit.testing.fakeserver import FakeServer

    with FakeServer(order_sensitive) as fake:
        db, env = _perturb_setup(tmp_path, fake)
        sent = fake.stats.requests
        pf = tmp_path / "only.yaml"
        pf.write_text((tmp_path / "probes.yaml").read_text().replace("judges: [steady, orderly]", "judges: [orderly]"))
        res = CliRunner().invoke(main, ["probe", str(pf), "--store", str(db), "--out", str(tmp_path / "o")], env=env)
        assert res.exit_code == 1, res.output
        assert fake.stats.requests == sent + 2 * N  # one judge x two variants x N items, not the whole panel
    with Store(db) as s:
        raters = set(s.ratings(variants=True)["rater_id"])
    assert "orderly~padding" in raters and "steady~padding" not in raters and "steady~label_order" not in raters


def test_probe_judge_not_in_the_panel_is_refused_before_any_call(tmp_path):
    import yaml
    from click.testing import CliRunner
    from conftest import one_sentence_error, store_dump
    from test_probes_perturb import order_sensitive

    from judgekit.cli import main
    from judgekit.testing.fakeserver import FakeServer

    with FakeServer(order_sensitive) as fake:
        db, env = _perturb_setup(tmp_path, fake)
        panel = yaml.safe_load((tmp_path / "panel.yaml").read_text())
        panel["judges"] = [j for j in panel["judges"] if j["id"] == "steady"]
        (tmp_path / "panel.yaml").write_text(yaml.safe_dump(panel, sort_keys=False))
        sent, before = fake.stats.requests, store_dump(db)
        res = CliRunner().invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db),
                                        "--out", str(tmp_path / "o")], env=env)
        line = one_sentence_error(res)
        assert "probes.yaml" in line and "'orderly'" in line and "judges names" in line
        assert fake.stats.requests == sent and store_dump(db) == before


def test_perturb_judges_must_be_probed(tmp_path):
    from judgekit.errors import JudgekitError
    from judgekit.probes.probefile import load_probe_file

    pf = tmp_path / "p.yaml"
    pf.write_text("rubric: refusal\njudges: [a]\nperturb:\n  panel: panel.yaml\n  judges: [a, b]\n")
    with pytest.raises(JudgekitError, match=r"perturb\.judges names 'b', which is not in judges"):
        load_probe_file(pf)


# ----------------------------------------------------------------------------- 2 variant items
def test_padded_copies_are_not_items_of_the_study(tmp_path):
    import json

    from click.testing import CliRunner
    from test_probes_perturb import N, order_sensitive

    from judgekit.cli import main
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store
    from judgekit.testing.fakeserver import FakeServer

    with FakeServer(order_sensitive) as fake:
        db, env = _perturb_setup(tmp_path, fake)
        res = CliRunner().invoke(main, ["probe", str(tmp_path / "probes.yaml"), "--store", str(db),
                                        "--out", str(tmp_path / "o")], env=env)
        assert res.exit_code == 1, res.output
    with Store(db) as s:
        assert len(s.items()) == N and not any(i.endswith("~padding") for i in s.items()["item_id"])
        assert len(s.items(variants=True)) == 2 * N  # the copies are kept, only out of ordinary reads
        assert len(s.items(["it000~padding"])) == 1  # asked for by id: returned
        rub = load_rubric("refusal")
        assert not any(str(i).endswith("~padding") for i in s.ratings(rubric=rub)["item_id"])
        padded = s.ratings(rubric=rub, rater_ids=["steady~padding"])
        assert len(padded) == N  # the probe reads its variant's ratings by rater id
    js = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--json", str(js)])
    assert res.exit_code == 0, res.output
    assert "no reference label" not in res.output
    doc = json.loads(js.read_text())
    assert not any("no reference label" in w for w in doc.get("warnings", []))
    from judgekit.annotation.sampling import SampleSpec, sample_items

    with Store(db) as s:
        design, _summary = sample_items(s, SampleSpec(name="t", size=N, rubric="refusal", random_share=1.0),
                                        record=False)
    assert len(design) == N and not design["item_id"].str.endswith("~padding").any()


def test_padded_copies_leave_their_conversation():
    import pandas as pd

    from judgekit.probes.perturb import padded_items
    from judgekit.store.variants import is_variant_item, variant_item

    items = pd.DataFrame({"item_id": ["c1-t1"], "prompt": ["p"], "response": ["r"],
                          "conversation_id": ["c1"], "turn": [1]})
    out = padded_items(items, " PAD")
    assert out["item_id"].tolist() == [variant_item("c1-t1", "padding")] == ["c1-t1~padding"]
    assert out["conversation_id"].isna().all() and out["turn"].isna().all()
    assert is_variant_item("c1-t1~padding") and not is_variant_item("~padding") and not is_variant_item("a~PADDING")


# ----------------------------------------------------------------------------- 4 settings that do nothing
@pytest.fixture(scope="module")
def once_db(synthetic_db, tmp_path_factory):
    """The synthetic store plus a judge ``once`` rated with a single trial (a copy of ``clean``)."""
    import shutil

    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    tmp = tmp_path_factory.mktemp("once")
    db = tmp / "once.db"
    shutil.copy(synthetic_db, db)
    with Store(db) as s:
        r = s.ratings(rubric=load_rubric("refusal"), rater_ids=["clean"])
        r = r[r["trial"] == 0]
        rows = ["item_id,rater_id,rater_kind,label,trial,status"]
        rows += [f"{i},once,judge,{lab},0,ok" for i, lab in zip(r["item_id"], r["label"], strict=True)]
        (tmp / "once.csv").write_text("\n".join(rows) + "\n")
        import_ratings(s, tmp / "once.csv", load_rubric("refusal"))
    return db


def _probe(tmp_path, db, text, env=None):
    from click.testing import CliRunner

    from judgekit.cli import main

    pf = tmp_path / "probes.yaml"
    pf.write_text(text)
    return pf, CliRunner().invoke(main, ["probe", str(pf), "--store", str(db), "--out", str(tmp_path / "o")])


HEAD = "rubric: refusal\njudges: [clean]\nreference: ref\nn_resamples: 200\n"


@pytest.mark.parametrize("body, words", [
    ("", ["asks for no probe", "covariates, self_preference, stability, drift or perturb"]),
    ("families: {column: model, judges: {clean: A}, models: {model-a: A, model-b: B, model-c: C}}\n",
     ["families is given but self_preference is not"]),
])
def test_probe_file_that_would_do_nothing_is_refused(once_db, tmp_path, body, words):
    from conftest import one_sentence_error

    pf, res = _probe(tmp_path, once_db, HEAD + body)
    line = one_sentence_error(res)
    assert str(pf) in line and all(w in line for w in words), line
    assert not (tmp_path / "o").exists()


def test_family_of_an_unknown_judge_is_refused(once_db, tmp_path):
    from conftest import one_sentence_error

    fam = ("families: {column: model, judges: {clean: A, nosuch: openai}, models: {model-a: A, model-b: B, "
           "model-c: C}}\nself_preference: {margin: 0.1}\n")
    pf, res = _probe(tmp_path, once_db, HEAD + fam)
    line = one_sentence_error(res)
    assert str(pf) in line and "families.judges names 'nosuch'" in line
    # a family for another judge of the store (a shared block) is fine; none for a probed judge is not
    pf, res = _probe(tmp_path, once_db, HEAD + fam.replace("nosuch: openai", "long: A"))
    assert res.exit_code == 0, res.output
    pf, res = _probe(tmp_path, once_db, HEAD + fam.replace("clean: A, nosuch: openai", "long: A"))
    line = one_sentence_error(res)
    assert "gives no family to any judge probed here (clean)" in line


def test_gate_family_of_an_unknown_judge_is_refused(once_db, tmp_path):
    from click.testing import CliRunner
    from conftest import one_sentence_error

    from judgekit.cli import main

    pol = tmp_path / "policy.yaml"
    pol.write_text("rubric: refusal\njudges: [clean]\nreference: ref\nn_resamples: 200\nchecks:\n  min_items: 30\n"
                   "  min_value: 0.0\n  max_self_preference:\n    max: 0.1\n    column: model\n"
                   "    judges: {clean: A, nosuch: openai}\n    models: {model-a: A, model-b: B, model-c: C}\n")
    res = CliRunner().invoke(main, ["gate", str(pol), "--store", str(once_db), "--out", str(tmp_path / "g")])
    line = one_sentence_error(res)
    assert "checks.max_self_preference.judges names 'nosuch'" in line


def test_stability_on_a_judge_without_trials_is_refused(once_db, tmp_path):
    from conftest import one_sentence_error

    pf, res = _probe(tmp_path, once_db, HEAD.replace("[clean]", "[clean, once]") + "stability: {min_alpha: 0.8}\n")
    line = one_sentence_error(res)
    assert str(pf) in line and "stability needs trials" in line and "once" in line and "trials: 2" in line
    # naming the judges with trials runs it
    pf, res = _probe(tmp_path, once_db, HEAD.replace("[clean]", "[clean, once]")
                     + "stability: {min_alpha: 0.8, judges: [clean]}\n")
    assert res.exit_code == 0, res.output


def test_covariate_levels_that_are_not_values_are_refused(once_db, tmp_path):
    from conftest import one_sentence_error

    pf, res = _probe(tmp_path, once_db, HEAD + "covariates:\n  - {column: model, high: [nosuch], margin: 0.1}\n")
    line = one_sentence_error(res)
    assert str(pf) in line and "covariates[0].high names 'nosuch'" in line and "model-a" in line
    pf, res = _probe(tmp_path, once_db, HEAD + "covariates:\n  - {column: model, high: [model-a], margin: 0.1}\n")
    assert res.exit_code in (0, 3), res.output


# ----------------------------------------------------------------------------- 5 budgets that labels cannot meet
def test_probe_checks_that_labels_cannot_decide_say_what_would(once_db, tmp_path):
    from click.testing import CliRunner

    from judgekit.cli import main
    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store
    from judgekit.verdict.read import validate_verdict

    pol = tmp_path / "policy.yaml"
    pol.write_text("rubric: refusal\njudges: [clean, once]\nreference: ref\nn_resamples: 200\nchecks:\n"
                   "  min_items: 30\n  min_value: 0.0\n  max_self_preference:\n    max: 0.1\n    column: model\n"
                   "    judges: {clean: A}\n    models: {model-a: A, model-b: B, model-c: C}\n"
                   "  min_stability: {min: 0.8}\n  max_flip_rate: {max: 0.1, variants: [padding]}\n")
    with Store(once_db) as s:
        verdict, _ = run_gate(s, pol)
    validate_verdict(json_roundtrip(verdict))
    once = next(j for j in verdict["judges"] if j["judge"] == "once")
    checks = {c["name"]: c for c in once["checks"]}
    sp, st, fl = checks["max_self_preference"], checks["min_stability"], checks["max_flip_rate[padding]"]
    for c in (sp, st, fl):
        assert c["state"] == "inconclusive" and c["budget"]["items"] is None, c
        assert "more human-rated items would" not in c["budget"]["sentence"]
    assert "give the judge a family" in sp["budget"]["sentence"]
    assert "trials: 2 or more" in st["budget"]["sentence"]
    assert "run `judgekit probe` with a perturb section" in fl["budget"]["sentence"]
    # the judge's budget names them instead of asking for labels
    assert "trials: 2 or more" in once["budget"]["sentence"] and "give the judge a family" in once["budget"]["sentence"]
    # the clean judge (trials, a family) still gets a flip budget that is not about human labels
    clean = {c["name"]: c for c in next(j for j in verdict["judges"] if j["judge"] == "clean")["checks"]}
    assert "perturb section" in clean["max_flip_rate[padding]"]["budget"]["sentence"]
    res = CliRunner().invoke(main, ["gate", str(pol), "--store", str(once_db), "--out", str(tmp_path / "g")])
    assert res.exit_code == 3 and "trials: 2 or more" in res.output


def json_roundtrip(x):
    import json

    return json.loads(json.dumps(x))


# ----------------------------------------------------------------------------- 8 interval level in gate output
def test_gate_explain_prints_the_holm_level_of_a_probe_interval(synthetic_db, tmp_path):
    from judgekit.gate.run import explain, run_gate
    from judgekit.store.database import Store

    pol = tmp_path / "policy.yaml"
    pol.write_text("rubric: refusal\njudges: [long]\nreference: ref\nn_resamples: 200\nby: [model]\nchecks:\n"
                   "  min_items: 30\n  min_value: 0.0\n  max_covariate_effect: {column: response_chars, "
                   "target: full_refusal, max: 0.1, per_slice: true}\n")
    with Store(synthetic_db) as s:
        verdict, _ = run_gate(s, pol)
    text = "\n".join(explain(verdict))
    overall = next(c for c in verdict["judges"][0]["checks"]
                   if c["name"] == "max_covariate_effect[response_chars:full_refusal]")
    assert overall["state"] == "fail" and "Holm level" in overall["detail"]
    # four tested slices: the smallest p gets α/4 = 0.00625 one-sided, a 1 − 2·0.00625 = 98.75% interval
    levels = {c["name"]: c["detail"].split("(")[-1] for c in verdict["judges"][0]["checks"] if "Holm" in c["detail"]}
    assert len(levels) == 4
    line = next(x for x in text.splitlines() if "max_covariate_effect[response_chars:full_refusal]" in x)
    assert "95% CI" not in line and "98.75% interval" in line


# ----------------------------------------------------------------------------- 9 wording
def test_budget_slices_are_slices_and_p_values_are_readable(long_probes, tmp_path):
    from dataclasses import replace

    from judgekit.gate.budget import judge_budget, label_budget
    from judgekit.probes.bands import fmt_p
    from judgekit.report.probes import markdown_section
    from judgekit.verdict.check import Check, Interval, Subject

    covariate = Subject(column="response_chars", target="full_refusal")
    overall = Check("max_covariate_effect", "j", 0.08, 0.1, 100, "", subject=covariate,
                    interval=Interval(0.03, 0.13, "normal", 0.95), min_n=30)
    sliced = replace(overall, subject=replace(covariate, by="prompt_safety", key="unsafe"))
    assert sliced.name == "max_covariate_effect[response_chars:full_refusal|prompt_safety=unsafe]"
    b1, b2 = label_budget(sliced), label_budget(overall)
    assert list(b1.slices) == ["prompt_safety=unsafe"] and "in slice prompt_safety=unsafe " in b1.sentence
    assert b2.slices == {} and b2.items  # a covariate is not a slice: an overall budget
    # half-width facing the threshold 0.13 − 0.08 = 0.05, distance 0.02: n (h/d)² = 100 · 6.25 = 625 at least
    assert b2.items >= 625 - 100
    flip = label_budget(replace(overall, kind="max_flip_rate", subject=Subject(variant="padding")))
    assert flip.slices == {}
    jb = judge_budget("j", [sliced.with_budget(b1), overall.with_budget(b2)])
    assert "in slices prompt_safety=unsafe: " in jb.sentence and "slices response_chars" not in jb.sentence
    assert fmt_p(0.0) == "< 0.001" and fmt_p(0.00099) == "< 0.001" and fmt_p(0.0234) == "0.0234" and fmt_p(None) == "n/a"
    md = "\n".join(markdown_section(long_probes, "#"))
    cov = next(r for r in long_probes["judges"][0]["probes"] if r["probe"] == "covariate" and r["state"] == "fail")
    assert cov["p_holm"] < 0.001
    assert "< 0.001" in md and "| 0 |" not in md


def test_the_variant_item_marker_is_reserved():
    import pandas as pd

    from judgekit.errors import JudgekitError
    from judgekit.store.data import validate_items

    df = pd.DataFrame({"item_id": ["a", "b~padding"], "prompt": ["p", "q"], "response": ["r", "s"]})
    with pytest.raises(JudgekitError, match=r"items.csv: item_id 'b~padding' ends in a marker judgekit reserves"):
        validate_items(df, source="items.csv")
    assert len(validate_items(df.assign(item_id=["a", "b~pad"]), source="items.csv")) == 2
