"""Selective judging on a store: policy, calibration, application, the escalate CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.selective.apply import (
    apply_policy,
    escalated_design,
    record_escalation,
    selective_labels,
)
from judgekit.selective.calibrate import (
    calibrate_judgments,
    calibrate_policy,
    read_calibration,
    write_calibration,
)
from judgekit.selective.judgments import read_judgments, split_labelled
from judgekit.selective.policy import SelectivePolicy, load_selective_policy
from judgekit.stats.selective import clopper_pearson_upper
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")
CODES = list(REFUSAL.codes)


def _rating(item, rater, kind, label, trial=0):
    return {"item_id": item, "rater_id": rater, "rater_kind": kind, "rubric": REFUSAL.id,
            "rubric_hash": REFUSAL.hash, "label": label, "value": REFUSAL.values[label],
            "trial": trial, "status": "ok", "rationale": None, "created_at": 0.0, "source": "test"}


def _put(path: Path, rows: list[dict]) -> None:
    items = sorted({r["item_id"] for r in rows})
    with Store(path) as s:
        s.put_items(pd.DataFrame({"item_id": items, "prompt": "p", "response": [f"r {i}" for i in items]}))
        s.put_ratings(pd.DataFrame(rows))


def _policy(**over) -> SelectivePolicy:
    raw = {"rubric": "refusal", "reference": "final", "alpha": 0.1, "delta": 0.1,
           "cascade": [{"judge": "j", "confidence": {"source": "trials"}}]}
    raw.update(over)
    return SelectivePolicy(**raw)


# ------------------------------------------------------------------------ a worked case
def worked_rows() -> list[dict]:
    """60 labelled items, judge j with 3 trials: on 40 items all three trials say the true label
    (confidence 1); on 20 items two of three trials agree (confidence 2/3) and that label is wrong
    on 10 of them. 10 more items have no human label (5 confident, 5 not)."""
    rows = []
    for i in range(70):
        truth = CODES[i % 3]
        other = CODES[(i + 1) % 3]
        iid = f"i{i:02d}"
        if i < 60:
            rows.append(_rating(iid, "final", "reference", truth))
        if i < 40 or 60 <= i < 65:
            trials = [truth] * 3
        elif i < 50:
            trials = [truth, truth, other]
        else:
            trials = [other, other, truth]
        rows += [_rating(iid, "j", "judge", lab, t) for t, lab in enumerate(trials)]
    return rows


def test_worked_case_threshold_coverage_and_held_out(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    with Store(tmp_path / "s.db") as store:
        cal, j = calibrate_policy(store, _policy())
    # confidences: 1 on 45 items, 2/3 on 25; the 60 labelled ones all calibrate (fraction 1)
    assert cal.n_labelled == 60 and cal.n_calibration == 60 and cal.n_held_out == 0 and cal.n_new == 10
    # lambda in (2/3, 1]: 40 kept, 0 disagreements: U = 1 - 0.1^(1/40) = 0.0559 <= 0.1, passes;
    # lambda <= 2/3: 60 kept, 10 disagreements: U >= 10/60 > 0.1, fails. The lowest grid point
    # above 2/3 of linspace(0, 1, 5000) is 3333/4999.
    assert pytest.approx(0.05599, abs=1e-4) == 1 - 0.1 ** (1 / 40)
    (stage,) = cal.stages
    assert stage.threshold == pytest.approx(3333 / 4999, abs=1e-12)
    assert stage.n_kept == 40 and stage.coverage == pytest.approx(40 / 60)
    assert stage.agreement == 1.0
    assert stage.upper_bound == pytest.approx(1 - 0.1 ** (1 / 40), abs=1e-12)
    assert cal.met and cal.selective_agreement == 1.0
    assert "judge j's expected agreement with the humans (final) is >= 0.90 with probability >= 0.90 over the calibration sample" in cal.to_dict()["guarantee"][0]
    assert "67% of items it keeps" in cal.to_dict()["guarantee"][0]
    # the two-thirds items' modal label is the (wrong or right) majority of the trials
    k = j.item_ids.index("i55")
    assert j.labels[0][k] == CODES[56 % 3] and j.confidences[0][k] == pytest.approx(2 / 3)


def test_held_out_split_is_a_random_share_of_the_labelled_items(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    with Store(tmp_path / "s.db") as store:
        pol = _policy(calibration={"fraction": 0.5, "seed": 3}, min_kept=10, alpha=0.2)
        cal, j = calibrate_policy(store, pol)
    assert (cal.n_calibration, cal.n_held_out) == (30, 30)
    cal_idx, held = split_labelled(j, 0.5, 3)
    assert set(cal_idx).isdisjoint(held) and len(set(cal_idx) | set(held)) == 60
    # the confident calibration items have no disagreement: 1 - 0.2^(1/n1) <= 0.2 for n1 >= 8;
    # all 30 with the 2/3 items fail (they hold k >= 1 disagreements among < 30 items...)
    n1 = int(np.sum(j.confidences[0][cal_idx] == 1.0))
    assert 1 - 0.2 ** (1 / n1) <= 0.2
    assert cal.stages[0].threshold is not None and cal.stages[0].threshold > 2 / 3
    # held out: exactly the confident items are kept, and they are all right
    assert cal.held_out_coverage == pytest.approx(np.mean(j.confidences[0][held] == 1.0))
    assert cal.held_out_agreement == 1.0


def test_cascade_panel_and_by_label_confidence(tmp_path):
    """A cheap judge trusted where it says full_refusal, then a judge trusted where the cheap one
    agrees with it: panel support (1 + 1) / 2 = 1, else (1 + 0) / 2 = 0.5."""
    rows = []
    for i in range(90):
        truth = CODES[i % 3]
        iid = f"k{i:02d}"
        rows.append(_rating(iid, "final", "reference", truth))
        rows.append(_rating(iid, "cheap", "judge", truth if truth == "full_refusal" else "full_compliance"))
        rows.append(_rating(iid, "strong", "judge", truth))
    _put(tmp_path / "s.db", rows)
    pol = _policy(cascade=[
        {"judge": "cheap", "confidence": {"source": "by_label", "values": {"full_refusal": 1.0}}},
        {"judge": "strong", "confidence": {"source": "panel", "with": ["cheap"]}},
    ], alpha=0.1, delta=0.1, min_kept=20)
    with Store(tmp_path / "s.db") as store:
        j = read_judgments(store, pol)
        cal, _ = calibrate_policy(store, pol)
    conf_cheap = dict(zip(j.item_ids, j.confidences[0], strict=True))
    conf_strong = dict(zip(j.item_ids, j.confidences[1], strict=True))
    assert CODES == ["full_compliance", "partial_refusal", "full_refusal"]
    assert conf_cheap["k02"] == 1.0 and conf_cheap["k00"] == 0.0  # by label
    assert conf_strong["k00"] == 1.0  # both say full_compliance: (1 + 1) / 2
    assert conf_strong["k01"] == 0.5  # cheap full_compliance, strong partial_refusal: (1 + 0) / 2
    # cheap keeps its 30 full_refusal items (all right: U = 1 - 0.1^(1/30) = 0.0739 <= 0.1);
    # strong sees the other 60 items, all right: U = 1 - 0.1^(1/60) = 0.0377: keeps all 60
    assert [s.n_kept for s in cal.stages] == [30, 60]
    assert cal.coverage == 1.0 and cal.selective_agreement == 1.0


def test_simulation_through_calibrate_on_a_synthetic_store(tmp_path):
    """A population of 3000 items in a store; a judge with 5 trials whose chance of being right
    grows with how many trials agree. Over 200 random calibration splits (15% of the items), the
    disagreement on the population's items at the calibrated threshold is <= alpha in at least
    1 - delta of the splits (up to simulation noise: 3 standard errors of a proportion)."""
    rng = np.random.default_rng(11)
    n, trials = 3000, 5
    rows = []
    for i in range(n):
        truth = CODES[i % 3]
        wrong = CODES[(i + 1) % 3]
        p_right = rng.uniform(0.55, 1.0)
        votes = [truth if rng.random() < p_right else wrong for _ in range(trials)]
        iid = f"s{i:04d}"
        rows.append(_rating(iid, "final", "reference", truth))
        rows += [_rating(iid, "j", "judge", v, t) for t, v in enumerate(votes)]
    _put(tmp_path / "s.db", rows)
    alpha, delta, reps = 0.1, 0.1, 200
    pol = _policy(alpha=alpha, delta=delta)
    with Store(tmp_path / "s.db") as store:
        j = read_judgments(store, pol)
    conf, agree = j.confidences[0], j.agreements(np.arange(n))[0]
    failures, kept = 0, []
    for seed in range(reps):
        p = pol.model_copy(update={"calibration": pol.calibration.model_copy(update={"fraction": 0.15, "seed": seed})})
        cal = calibrate_judgments(j, p, curves=False)
        lam = cal.stages[0].threshold
        if lam is None:
            continue
        keep = conf >= lam
        kept.append(keep.mean())
        failures += (1 - agree[keep].mean()) > alpha
    assert failures / reps <= delta + 3 * math.sqrt(delta * (1 - delta) / reps)
    assert np.mean(kept) > 0.2  # the guarantee is not bought by keeping nothing


# ------------------------------------------------------------------------ apply, record, push
def test_apply_records_who_labels_what(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    pol = _policy()
    with Store(tmp_path / "s.db") as store:
        cal, _ = calibrate_policy(store, pol)
        write_calibration(tmp_path / "cal.json", cal)
        calfile = read_calibration(tmp_path / "cal.json", pol)
        out = apply_policy(store, pol, calfile)
        # the 10 unlabelled items: i60-i64 confidence 1 (kept), i65-i69 confidence 2/3 (escalated)
        assert {a.item_id: a.judge for a in out} == {
            **{f"i{i}": "j" for i in range(60, 65)}, **{f"i{i}": None for i in range(65, 70)}}
        record_escalation(store, "sel", out)
        esc = escalated_design(store, "sel")
        assert sorted(esc["item_id"]) == [f"i{i}" for i in range(65, 70)]
        assert set(esc["stratum"]) == {"humans"} and (esc["weight"] == 1.0).all()
        with pytest.raises(JudgekitError, match="already exists"):
            record_escalation(store, "sel", out)
        # a person labels two escalated items: the selective labels say who labelled what
        store.put_ratings(pd.DataFrame([_rating("i65", "ann", "human", "full_refusal"),
                                        _rating("i66", "ann", "human", "full_compliance")]))
        labels = selective_labels(store, "sel", pol).set_index("item_id")
    assert labels.loc["i60", "labelled_by"] == "j" and labels.loc["i60", "source"] == "judge"
    assert labels.loc["i60", "label"] == CODES[60 % 3]
    assert labels.loc["i65", "label"] == "full_refusal" and labels.loc["i65", "source"] == "human"
    assert pd.isna(labels.loc["i67", "label"]) and labels.loc["i67", "labelled_by"] == "humans"


def test_escalated_design_refuses_a_plain_sample(tmp_path):
    from judgekit.annotation.sampling import record_sample

    _put(tmp_path / "s.db", worked_rows())
    with Store(tmp_path / "s.db") as store:
        record_sample(store, "pilot", pd.DataFrame([{"item_id": "i01", "reason": "random", "stratum": None,
                                                      "weight": 1.0, "overlap": 0}]))
        with pytest.raises(JudgekitError, match="is not a selective escalation"):
            escalated_design(store, "pilot")


# ------------------------------------------------------------------------ the CLI and bad input
def _run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _policy_file(tmp_path, text: str) -> Path:
    p = tmp_path / "sel.yaml"
    p.write_text(text)
    return p


POLICY = """rubric: refusal
reference: final
alpha: {alpha}
delta: 0.1
cascade:
  - judge: j
    confidence: {{source: trials}}
"""


def test_cli_calibrate_then_apply(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    pol = _policy_file(tmp_path, POLICY.format(alpha=0.1))
    res = _run("escalate", "calibrate", pol, "--store", tmp_path / "s.db", "--out", tmp_path / "cal.json")
    assert res.exit_code == 0, res.output
    assert "threshold 0.6667  keeps 40 of 60 (coverage 66.7% of all)" in res.output
    data = json.loads((tmp_path / "cal.json").read_text())
    assert data["stages"][0]["n_kept"] == 40
    res = _run("escalate", "apply", pol, tmp_path / "cal.json", "--store", tmp_path / "s.db", "--record", "sel")
    assert res.exit_code == 0, res.output
    assert "kept by j" in res.output and "escalated to people" in res.output
    res = _run("escalate", "labels", pol, "sel", "--store", tmp_path / "s.db", "--out", tmp_path / "labels.csv")
    assert res.exit_code == 0, res.output
    assert "human: 5 items, 0 labelled" in res.output and "judge: 5 items, 5 labelled" in res.output
    out = pd.read_csv(tmp_path / "labels.csv")
    assert list(out.columns) == ["item_id", "label", "labelled_by", "source"]
    assert sorted(out[out.source == "human"].item_id) == [f"i{i}" for i in range(65, 70)]


def test_cli_refuses_when_no_threshold_meets_the_target(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    # 40 items without disagreement bound the rate at 0.056 only: alpha 0.05 is out of reach
    assert clopper_pearson_upper(0, 40, 0.1) > 0.05
    pol = _policy_file(tmp_path, POLICY.format(alpha=0.05))
    res = _run("escalate", "calibrate", pol, "--store", tmp_path / "s.db", "--out", tmp_path / "cal.json")
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1].startswith("error: No judge of")
    assert "nothing written" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "cal.json").exists()


@pytest.mark.parametrize("text, phrase", [
    (POLICY.format(alpha=1.5), "alpha"),
    (POLICY.format(alpha='"0.1"'), "alpha"),
    (POLICY.format(alpha=0.1) + "extra: 1\n", "extra"),
    (POLICY.format(alpha=0.1).replace("{source: trials}", "{source: panel}"), "with"),
    (POLICY.format(alpha=0.1).replace("{source: trials}", "{source: by_label, values: {refusal: 1.0}}"),
     "sel.yaml: cascade[0] (j) confidence.values names label 'refusal'"),
    (POLICY.format(alpha=0.1).replace("reference: final", "reference: nobody"), "sel.yaml: the reference 'nobody'"),
    (POLICY.format(alpha=0.1).replace("judge: j", "judge: final"), "reference"),
])
def test_bad_policy_is_one_sentence_exit_2(tmp_path, text, phrase):
    _put(tmp_path / "s.db", worked_rows())
    pol = _policy_file(tmp_path, text)
    res = _run("escalate", "calibrate", pol, "--store", tmp_path / "s.db", "--out", tmp_path / "cal.json")
    one_sentence_error(res, phrase)
    assert not (tmp_path / "cal.json").exists()


def test_calibration_file_must_match_the_policy(tmp_path):
    _put(tmp_path / "s.db", worked_rows())
    with Store(tmp_path / "s.db") as store:
        cal, _ = calibrate_policy(store, _policy())
    write_calibration(tmp_path / "cal.json", cal)
    other = _policy_file(tmp_path, POLICY.format(alpha=0.2))
    res = _run("escalate", "apply", other, tmp_path / "cal.json", "--store", tmp_path / "s.db")
    one_sentence_error(res, "its alpha is 0.1 but the policy's is 0.2")
    # a different confidence source under the same judges and target: the policy hash differs
    src = _policy_file(tmp_path, POLICY.format(alpha=0.1).replace("{source: trials}", "{source: constant, value: 1.0}"))
    res = _run("escalate", "apply", src, tmp_path / "cal.json", "--store", tmp_path / "s.db")
    one_sentence_error(res, "policy hash")
    # a hand-edited file: NaN, a threshold out of range, not JSON
    text = (tmp_path / "cal.json").read_text()
    pol = _policy_file(tmp_path, POLICY.format(alpha=0.1))
    for bad, phrase in ((text.replace('"coverage": ', '"coverage": NaN, "x": ', 1), "NaN"),
                        ("{", "not valid JSON"), ("[]", "not a judgekit calibration")):
        (tmp_path / "bad.json").write_text(bad)
        res = _run("escalate", "apply", pol, tmp_path / "bad.json", "--store", tmp_path / "s.db")
        one_sentence_error(res, phrase)
    data = json.loads(text)
    data["stages"][0]["threshold"] = 1.5
    (tmp_path / "bad.json").write_text(json.dumps(data))
    res = _run("escalate", "apply", pol, tmp_path / "bad.json", "--store", tmp_path / "s.db")
    one_sentence_error(res, "threshold")


def test_load_policy_with_alias_with(tmp_path):
    p = _policy_file(tmp_path, POLICY.format(alpha=0.1).replace("{source: trials}",
                                                                "{source: panel, with: [a, b]}"))
    pol = load_selective_policy(p)
    assert pol.cascade[0].confidence.with_ == ["a", "b"]
    assert pol.raters() == ["j", "a", "b", "final"]


def test_labelstudio_push_escalated_sends_exactly_the_escalated_items(tmp_path, monkeypatch):
    """The selection of items, without a Label Studio server: the client and the push are
    replaced by recorders (the real push is tested against a server in test_labelstudio_*)."""
    import judgekit.annotation.labelstudio as ls

    sent: dict = {}

    class _Client:
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

    class _Result:
        def lines(self):
            return ["pushed"]

    def _push(client, items, rubs, project, **kw):
        sent["items"] = sorted(items["item_id"])
        sent["overlap"] = kw["overlap"]
        return _Result()

    monkeypatch.setattr(ls, "LabelStudioClient", _Client)
    monkeypatch.setattr(ls, "push", _push)
    _put(tmp_path / "s.db", worked_rows())
    pol = _policy_file(tmp_path, POLICY.format(alpha=0.1))
    db = tmp_path / "s.db"
    assert _run("escalate", "calibrate", pol, "--store", db, "--out", tmp_path / "cal.json").exit_code == 0
    assert _run("escalate", "apply", pol, tmp_path / "cal.json", "--store", db, "--record", "sel").exit_code == 0
    res = _run("labelstudio", "push", "--rubric", "refusal", "--project", "p", "--escalated", "sel", "--store", db)
    assert res.exit_code == 0, res.output
    assert sent["items"] == [f"i{i}" for i in range(65, 70)]
    assert "pushed" in res.output
    # one source of items only; a plain sample is not an escalation
    res = _run("labelstudio", "push", "--rubric", "refusal", "--project", "p", "--escalated", "sel",
               "--sample", "sel", "--store", db)
    one_sentence_error(res, "exactly one of")
    res = _run("labelstudio", "push", "--rubric", "refusal", "--project", "p", "--escalated", "nope", "--store", db)
    one_sentence_error(res, "'nope' is not in")


def test_cost_per_kept_label_from_recorded_calls(tmp_path):
    from judgekit.selective.calibrate import cascade_costs
    from judgekit.selective.judgments import Judgments
    from judgekit.store.calls import CallRow, write_calls

    items = ("x", "y", "z", "w")
    j = Judgments(("a", "b"), items, (("full_refusal",) * 4, ("full_refusal",) * 4),
                  (np.ones(4), np.ones(4)), ("full_refusal",) * 4)
    with Store(tmp_path / "s.db") as store:
        write_calls(store, [
            CallRow(key=f"{judge}{i}", judge_id=judge, spec="s", params="{}", rubric=REFUSAL.id,
                    rubric_hash=REFUSAL.hash, item_id=i, item_hash="h", trial=0, raw="r", status="ok",
                    label="full_refusal", rationale=None, error=None, cost_usd=usd)
            for judge, usd in (("a", 0.001), ("b", 0.01)) for i in items])
        cost = cascade_costs(store, REFUSAL.id, REFUSAL.hash, j, [0.5, 0.25])
        # a costs 0.004 / 4 items, b 0.04 / 4; a sees every item, b the half a did not keep:
        # 1 * 0.001 + 0.5 * 0.01 = 0.006 per item, / 0.75 kept = 0.008 per kept label
        assert cost["per_item"] == {"a": pytest.approx(0.001), "b": pytest.approx(0.01)}
        assert cost["cascade_per_item"] == pytest.approx(0.006)
        assert cost["per_kept_label"] == pytest.approx(0.008)
        # a judge without recorded calls: unknown, not zero
        none = cascade_costs(store, REFUSAL.id, "other-hash", j, [0.5, 0.25])
        assert none["per_kept_label"] is None and none["per_item"] == {"a": None, "b": None}


def test_authors_rule_threshold_without_guarantee_is_not_stated_as_one(tmp_path):
    """The authors' code returns its most confident candidate even when that fails the test: the
    guarantee sentence must not claim one then."""
    _put(tmp_path / "s.db", worked_rows())
    with Store(tmp_path / "s.db") as store:
        cal, _ = calibrate_policy(store, _policy(alpha=0.05, rule="authors"))
    (stage,) = cal.stages
    assert stage.threshold is not None and not stage.met and not cal.met
    (sentence,) = cal.to_dict()["guarantee"]
    assert "WITHOUT a guarantee" in sentence and "with probability" not in sentence
