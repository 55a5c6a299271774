"""Edge cases of the corrected estimates, judge-vs-judge agreement and the conversation sampler.
Each test failed before its fix."""

from __future__ import annotations

from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.analysis.correction.design import Reference
from judgekit.analysis.options import ItemColumns, Resampling
from judgekit.cli import main

pytest_plugins = ["tests.analysis_fixtures"]


def invoke(*args: object, terminal_width: int | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], terminal_width=terminal_width)


# --correct --reference must be a human or reference rater (the gate's rule)
def test_correct_refuses_a_judge_as_reference(synthetic_store) -> None:
    for ref in ("judge-b", "judge-a"):  # another judge, and the analysed judge itself
        r = invoke("analyze", "distribution", "--judge", "judge-a", "--rubric",
                   "restrictiveness", "--no-forms", "--verdict", synthetic_store["restrictiveness"],
                   "--store", synthetic_store["store"], "--quiet", "--bootstrap", "10",
                   "--correct", "rogan_gladen", "--reference", ref)
        line = one_sentence_error(
            r, f"--reference: reference '{ref}' is a judge rater, not a human or reference rater",
            "pass one of adjudicated")
        assert "raw and corrected" not in line
    r = invoke("analyze", "calibration", "--judge", "judge-a", "--verdict",
               synthetic_store["restrictiveness"], "--harm-column", "severity", "--store",
               synthetic_store["store"], "--quiet", "--bootstrap", "10", "--correct", "ppi",
               "--reference", "judge-b")
    one_sentence_error(r, "is a judge rater")


# two classes: corrected_weighted (what --correct uses) refuses exactly when corrected_rate does
def _se_sp_case(n_unl_pos: int, n_unl_neg: int, sp_neg: int = 32):
    """100 reference positives (90 judged positive: Se = .90) and 100 reference negatives
    (``sp_neg`` judged negative: Sp = sp_neg/100), plus unlabelled judge labels."""
    judge_l = ["ref"] * 90 + ["ok"] * 10 + ["ok"] * sp_neg + ["ref"] * (100 - sp_neg)
    ref_l = ["ref"] * 100 + ["ok"] * 100
    judge_all = judge_l + ["ref"] * n_unl_pos + ["ok"] * n_unl_neg
    return judge_all, judge_l, ref_l


def test_two_class_weighted_correction_uses_youden_like_corrected_rate() -> None:
    import pytest

    from judgekit.analysis.correction.multiclass import corrected_shares, corrected_weighted
    from judgekit.analysis.correction.rate import UnreliableCorrection, corrected_rate

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

    from judgekit.analysis.correction.multiclass import corrected_shares
    from judgekit.analysis.correction.rate import UnreliableCorrection

    # three classes, 20 labelled each; b and c are confused half the time: the columns of M for
    # b and c are equal, so M is singular (σ_min = 0) although each class is well represented
    judge_l = ["a"] * 20 + ["b"] * 10 + ["c"] * 10 + ["b"] * 10 + ["c"] * 10
    ref_l = ["a"] * 20 + ["b"] * 20 + ["c"] * 20
    m = np.array([[1, 0, 0], [0, .5, .5], [0, .5, .5]])
    assert np.linalg.svd(m, compute_uv=False).min() == pytest.approx(0.0)
    with pytest.raises(UnreliableCorrection, match="smallest singular value 0.000"):
        corrected_shares(judge_l, judge_labelled=judge_l, reference_labelled=ref_l,
                         codes=["a", "b", "c"], n_resamples=20)


# the raw interval beside a cluster-bootstrap corrected one is a cluster bootstrap too
def _clustered_labels(seed: int = 3):
    import numpy as np

    rng = np.random.default_rng(seed)
    # 40 conversations of 10 turns; a conversation refuses throughout or complies throughout
    conv = np.repeat(np.arange(40), 10)
    refuses = np.repeat(rng.random(40) < 0.3, 10)
    return ["ref" if x else "ok" for x in refuses], [f"c{c}" for c in conv]


def test_raw_interval_is_the_cluster_bootstrap_when_clustered() -> None:
    import numpy as np
    import pytest

    from judgekit.analysis.correction.clusters import corrected_weighted_clustered, raw_clustered
    from judgekit.stats.intervals import wilson_interval

    labels, conv = _clustered_labels()
    w = {"ok": 0.0, "ref": 1.0}
    # a judge without error, every item labelled: the corrected figure IS the raw one in every
    # replicate, so the two intervals (same draws) must be identical
    r = corrected_weighted_clustered(labels, labels, conv, weights=w, n_resamples=400, seed=5)
    assert r.corrected == pytest.approx(r.raw)
    assert (r.raw_ci_low, r.raw_ci_high) == pytest.approx((r.ci_low, r.ci_high))
    # independently: the percentile interval of the conversation-level ratio over the same draws
    n_c = 40
    draws = np.random.default_rng(5).multinomial(n_c, np.full(n_c, 1 / n_c), size=400)
    per = np.array([sum(w[labels[i]] for i in range(len(labels)) if conv[i] == f"c{c}")
                    for c in range(n_c)])
    reps = draws @ per / (draws @ np.full(n_c, 10.0))
    assert raw_clustered([w[x] for x in labels], conv, n_resamples=400, seed=5) == pytest.approx(
        (float(np.mean([w[x] for x in labels])), *np.percentile(reps, [2.5, 97.5])))
    # and it is wider than Wilson's (which treats the 400 turns as independent)
    k = sum(w[x] for x in labels)
    lo, hi = wilson_interval(k, len(labels), z=1.959963984540054)
    assert r.raw_ci_high - r.raw_ci_low > 1.8 * (hi - lo)


def test_correction_table_raw_interval_resamples_the_cluster_column() -> None:
    import pandas as pd
    import pytest

    from judgekit.analysis.correction.clusters import raw_clustered
    from judgekit.analysis.correction.tables import correction_tables
    from judgekit.rubric.model import load_rubric
    from tests.analysis_fixtures import ratings_frame

    rubric = load_rubric("refusal")
    codes = list(rubric.codes)
    pos, neg = codes[-1], codes[0]
    labels, conv = _clustered_labels()
    labels = [pos if x == "ref" else neg for x in labels]
    items = pd.DataFrame({"item_id": [f"i{n}" for n in range(len(labels))], "model": "m",
                          "conversation_id": conv})
    judge = ratings_frame(zip(items["item_id"], labels, strict=True), rubric, rater="j")
    ref = ratings_frame(zip(items["item_id"], labels, strict=True), rubric, rater="h",
                        kind="human")
    w = {c: (1.0 if c == pos else 0.0) for c in codes}
    (t,) = correction_tables(judge, Reference(ref, "h"), items, rubric=rubric, weights=w,
                             figure="refusal rate", method="rogan_gladen",
                             columns=ItemColumns(prompt="conversation_id"),
                             resampling=Resampling(n_resamples=300, seed=2))
    row = t.frame.iloc[0]
    expected = raw_clustered([w[x] for x in labels], conv, n_resamples=300, seed=2)
    assert (row["raw"], row["raw_ci_low"], row["raw_ci_high"]) == pytest.approx(expected)
    assert "both a bootstrap resampling conversation_id" in t.description


# agree --between: percent agreement has a Wilson interval; variant raters are refused
Z95 = 1.959963984540054


def _wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * (p * (1 - p) / n + Z95**2 / (4 * n * n)) ** 0.5
    return centre - half, centre + half


def _pair_frame(n: int, n_agree: int):
    import pandas as pd

    from judgekit.rubric.model import load_rubric

    rub = load_rubric("refusal")
    c = list(rub.codes)
    rows = []
    for i in range(n):
        a = c[i % 2]
        b = a if i < n_agree else c[2]
        rows += [(f"i{i}", "judge-a", a), (f"i{i}", "judge-b", b)]
    df = pd.DataFrame([{"item_id": iid, "rater_id": r, "rater_kind": "judge", "rubric": rub.id,
                        "rubric_hash": rub.hash, "label": lab, "value": rub.values[lab],
                        "trial": 0, "status": "ok"} for iid, r, lab in rows])
    return df, rub


def test_between_percent_agreement_interval_is_wilson_never_zero_width() -> None:
    import pytest

    from judgekit.agreement.between import between_report

    for n_agree in (20, 0, 14):
        df, rub = _pair_frame(20, n_agree)
        rep = between_report(df, rubric=rub, pair=("judge-a", "judge-b"), n_resamples=200)
        pa = next(r for r in rep["rows"] if r["by"] is None)["percent_agreement"]
        assert pa["value"] == pytest.approx(n_agree / 20) and pa["n"] == 20
        assert (pa["low"], pa["high"]) == pytest.approx(_wilson(n_agree, 20))
        assert pa["high"] - pa["low"] > 0.1
    # all agree on 20: 20 / (20 + z²) = 0.8389 — not the bootstrap's [1.0, 1.0]
    assert _wilson(20, 20)[0] == pytest.approx(20 / (20 + Z95**2))


def test_between_on_the_demo_panel_has_no_zero_width_share(tmp_path) -> None:
    import json

    import pytest

    from judgekit.judges.demo import run_demo_panel
    from judgekit.store.database import Store

    with Store(tmp_path / "panel.db") as store:
        run_demo_panel(store, tmp_path)
    out = tmp_path / "b.json"
    r = invoke("agree", "--rubric", "refusal", "--between", "keywords,panel:majority", "--by",
               "model", "--store", tmp_path / "panel.db", "--resamples", "100", "--json", out)
    assert r.exit_code == 0, r.output
    rows = json.loads(out.read_text())["rows"]
    shares = [row["percent_agreement"] for row in rows if row["n_both"]]
    assert any(f["value"] == 1.0 for f in shares)  # the case that was wrong
    for f in shares:
        k = round(f["value"] * f["n"])
        assert (f["low"], f["high"]) == pytest.approx(_wilson(k, f["n"]))
        assert f["low"] < f["high"]
    # a variant rater (rated perturbed copies under other item ids) is refused, one sentence
    r = invoke("agree", "--rubric", "refusal", "--between", "keywords,scripted-llm~padding",
               "--store", tmp_path / "panel.db")
    one_sentence_error(r, "--between 'scripted-llm~padding' is a probe variant rater",
                       "compare the judge itself ('scripted-llm')")


def test_between_report_refuses_a_variant_rater() -> None:
    import pytest

    from judgekit.agreement.between import between_all_pairs, between_report
    from judgekit.errors import JudgekitError

    df, rub = _pair_frame(20, 15)
    v = df[df["rater_id"] == "judge-b"].assign(rater_id="judge-b~label_order",
                                                item_id=lambda d: d["item_id"] + "~lo")
    import pandas as pd

    df = pd.concat([df, v])
    with pytest.raises(JudgekitError, match="is a probe variant rater"):
        between_report(df, rubric=rub, pair=("judge-a", "judge-b~label_order"), n_resamples=50)
    pairs = between_all_pairs(df, rubric=rub, judges=["judge-a", "judge-b", "judge-b~label_order"],
                              n_resamples=50)
    assert [p["between"] for p in pairs] == [["judge-a", "judge-b"]]


# --by-conversation: a per-stratum floor that overrides --size is said, in one line
def test_conversation_floor_over_size_warns(tmp_path) -> None:
    from judgekit.annotation.sampling import SampleSpec, draw_sample
    from judgekit.testing.study import make_study

    items = make_study(conversations_per_tier=4, lookalikes=2)[0]
    n_models = items["model"].nunique()
    turns = items.groupby("conversation_id").size()
    assert (turns == 6).all()
    spec = SampleSpec(name="d", size=60, strata=["model"], min_per_stratum=10,
                      by_conversation=True, seed=1)
    design, summary = draw_sample(items, spec)
    floor_items = n_models * 10 * 6  # strata × conversations × turns
    assert len(design) == floor_items == 180
    warn = [n for n in summary.notes if n.startswith("warning:")]
    assert warn == [f"warning: --min-per-stratum 10 conversations in each of the {n_models} strata "
                    f"alone takes {floor_items} items, more than --size 60, and wins: "
                    f"{floor_items} items are chosen (lower --min-per-stratum, or use fewer --by "
                    "columns, to keep to --size)."]
    assert "\n" not in warn[0]
    # a floor within --size: no warning
    _, ok = draw_sample(items, SampleSpec(name="d", size=200, strata=["model"], min_per_stratum=10,
                                          by_conversation=True, seed=1))
    assert not [n for n in ok.notes if n.startswith("warning:")]
    # the CLI prints it, and --help says the floor counts conversations
    path = tmp_path / "items.csv"
    items.to_csv(path, index=False)
    r = invoke("sample", "--name", "drift", "--size", "60", "--by-conversation", "--by", "model",
               "--min-per-stratum", "10", "--items", path, "--store", tmp_path / "s.db")
    assert r.exit_code == 0, r.output
    assert "warning: --min-per-stratum 10 conversations" in r.output
    assert f"Sample 'drift': {floor_items} of {len(items)} items" in r.output
    h = " ".join(invoke("sample", "--help", terminal_width=200).output.split())
    assert "(with --by-conversation: conversations, each with all its turns" in h
    assert "--size is a target in items, --min-per-stratum counts conversations" in h


# wording and exit codes
def test_ppi_refusal_names_the_labels_not_the_figure() -> None:
    import pytest

    from judgekit.analysis.correction.multiclass import corrected_weighted
    from judgekit.analysis.correction.rate import UnreliableCorrection

    w = {"comply": 0.0, "partial": 1.0, "refuse": 1.0}
    ref_l = ["refuse"] * 4 + ["partial"] * 3 + ["comply"] * 12  # 7 of 19 count as refusal
    judge_l = list(ref_l)
    judge_all = judge_l + ["comply"] * 30
    with pytest.raises(UnreliableCorrection) as exc:
        corrected_weighted(judge_all, judge_labelled=judge_l, reference_labelled=ref_l, weights=w,
                           name="refusal rate", method="ppi", n_resamples=50)
    assert str(exc.value) == (
        "Only 7 of the 19 labelled items are 'partial or refuse' by the reference (fewer than "
        "10); label more items before correcting the refusal rate.")
    # the short side is the non-refusals: named by their labels too
    ref_l = ["refuse"] * 15 + ["comply"] * 4
    with pytest.raises(UnreliableCorrection, match="Only 4 of the 19 labelled items are 'comply' "
                                                   "by the reference"):
        corrected_weighted(ref_l + ["refuse"] * 5, judge_labelled=ref_l, reference_labelled=ref_l,
                           weights=w, name="refusal rate", method="ppi", n_resamples=50)


def _criteria_file(tmp_path, a: str):
    crit = tmp_path / "c.yaml"
    crit.write_text(
        "rater: judge-a\ncriteria:\n"
        "  - {name: models differ, rubric: restrictiveness, label: r4_hard_refusal,"
        f" compare: {{column: model, a: {a}, b: synth-drifting}}, op: '<=', threshold: 0.5}}\n")
    return crit


def test_criteria_compare_level_no_item_has_is_one_sentence(synthetic_store, tmp_path) -> None:
    from tests.conftest import one_sentence_error, store_dump

    before = store_dump(synthetic_store["store"])
    crit = _criteria_file(tmp_path, "nosuch")
    r = invoke("analyze", "criteria", crit, "--verdict", synthetic_store["restrictiveness"],
               "--store", synthetic_store["store"])
    line = one_sentence_error(r)
    assert str(crit) in line
    assert "criterion 'models differ': compare a: 'nosuch' is not a value of 'model' in any item" \
        in line
    assert "'synth-calibrated'" in line and "fix 'compare'" in line
    assert store_dump(synthetic_store["store"]) == before


def test_criteria_compare_row_notes_its_independence_assumption(synthetic_store, tmp_path) -> None:
    import json

    from judgekit.analysis.criteria.estimate import NEWCOMBE_NOTE

    crit = _criteria_file(tmp_path, "synth-calibrated")
    r = invoke("analyze", "criteria", crit, "--verdict", synthetic_store["restrictiveness"],
               "--store", synthetic_store["store"], "--out", tmp_path / "o")
    assert r.exit_code in (0, 1), r.output
    data = json.loads((tmp_path / "o" / "criteria.json").read_text())
    (row,) = data["tables"]["criteria"]["rows"]
    assert row["note"] == NEWCOMBE_NOTE
    assert "treats the items as independent" in NEWCOMBE_NOTE
    assert "both treat the items as independent draws" in data["definitions"]["pooled"]
