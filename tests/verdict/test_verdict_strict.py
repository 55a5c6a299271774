"""A verdict that cannot be faked.

A verdict is read strictly (a schema version, every key of the right type), must be consistent
with itself (``passed`` is every check passing, each check's state is its figure against its
threshold, the thresholds are the policy's) and must match the store it is used with (the rubric,
the items that carry human or reference ratings, the human ratings, the judge's identity).

The store here is the shipped demo panel's 40 items and human labels, judged by the offline
``rules:refusal-keywords`` judge through ``judgekit judge``, and gated by ``judgekit gate``: every
verdict is a real one, edited the way a hand or another tool would edit it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.gate.run import load_verdict
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.trust import require_trusted

pytest_plugins = ["tests.analysis_fixtures"]

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "annotations" / "demo-panel"

PANEL = 'rubric: refusal\nitems: {items}\njudges:\n  - id: keywords\n    model: "rules:refusal-keywords"\n{extra}'
POLICY = """rubric: refusal
judges: [keywords]
reference: demo_final
humans: [demo_ann_a, demo_ann_b]
checks:
  min_items: 30
  metric: kappa
  min_value: {min_value}
  max_abstention_rate: 0.1
  max_error_rate: 0.1
  min_class_recall: {{min: 0.2, min_support: 5}}
  within_human_noise: {{margin: 0.9}}
n_resamples: 200
"""


def cli(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the store, the panel, a passing and a failing policy and their verdicts."""
    root = tmp_path_factory.mktemp("verdict-strict")
    shutil.copy(DEMO / "items.jsonl", root / "items.jsonl")
    shutil.copy(DEMO / "human_labels.csv", root / "human_labels.csv")
    (root / "panel.yaml").write_text(PANEL.format(items="items.jsonl", extra=""), encoding="utf-8")
    (root / "policy.yaml").write_text(POLICY.format(min_value=0.3), encoding="utf-8")
    (root / "failing.yaml").write_text(POLICY.format(min_value=0.95), encoding="utf-8")
    db = root / "s.db"
    r = cli("import", root / "human_labels.csv", "--rubric", "refusal", "--raters", "demo_ann_a,demo_ann_b",
            "--reference", "demo_final=demo_final", "--items", root / "items.jsonl", "--store", db)
    assert r.exit_code == 0, r.output
    r = cli("judge", root / "panel.yaml", "--store", db)
    assert r.exit_code == 0, r.output
    r = cli("gate", root / "policy.yaml", "--store", db, "--out", root / "pass")
    assert r.exit_code == 0, r.output
    r = cli("gate", root / "failing.yaml", "--store", db, "--out", root / "fail")
    assert r.exit_code == 1, r.output
    return root


@pytest.fixture()
def env(gated: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`gated` a test may change."""
    work = tmp_path / "w"
    shutil.copytree(gated, work)
    return work


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, verdict: dict[str, Any]) -> Path:
    path.write_text(json.dumps(verdict, indent=1), encoding="utf-8")
    return path


def check(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in verdict["judges"][0]["checks"] if c["name"] == name)


def report(env: Path, verdict: Path) -> Result:
    return cli("report", "--store", env / "s.db", "--rubric", "refusal", "--verdict", verdict,
               "--out", env / "rep", "--resamples", "100", "--disagreements", "1")


def trusts(env: Path, verdict: Any, **kw: Any) -> dict[str, Any]:
    with Store(env / "s.db") as s:
        return require_trusted(verdict, judge="keywords", rubric=kw.pop("rubric", "refusal"), store=s, **kw)


# ----------------------------------------------------------------------------- what gate writes
def test_gate_writes_a_schema_version_and_per_check_state_and_interval(gated):
    from judgekit.stats.intervals import wilson_interval

    v = read(gated / "pass" / "verdict.json")
    assert v["schema_version"] == 4 and v["passed"] is True
    for c in v["judges"][0]["checks"]:
        assert c["state"] in ("pass", "fail") and c["passed"] is (c["state"] == "pass")
        assert c["ci"] is None or (len(c["ci"]) == 2 and c["ci"][0] <= c["ci"][1])
    assert check(v, "min_items")["ci"] is None
    kappa = check(v, "min_kappa")
    assert kappa["ci"][0] <= kappa["figure"] <= kappa["ci"][1]
    # Within_human_noise is the paired difference judge − humans vs the same
    # leave-one-out consensus, with its own bootstrap CI, against −margin
    noise = check(v, "within_human_noise")
    assert noise["threshold"] == -0.9 and noise["ci"][0] <= noise["figure"] <= noise["ci"][1]
    lo, hi = wilson_interval(0, 40)
    assert check(v, "max_abstention_rate")["ci"] == [round(float(lo), 6), round(float(hi), 6)]
    full = check(v, "min_recall[full_refusal]")  # 13 of the 17 reference full refusals
    lo, hi = wilson_interval(13, 17)
    assert full["figure"] == pytest.approx(13 / 17) and full["ci"] == [round(float(lo), 6), round(float(hi), 6)]
    failed = read(gated / "fail" / "verdict.json")
    assert check(failed, "min_kappa")["state"] == "fail" and failed["judges"][0]["passed"] is False


def test_store_none_still_works_for_a_real_verdict_dict(gated):
    v = read(gated / "pass" / "verdict.json")
    assert require_trusted(v, judge="keywords", rubric="refusal")["judge"] == "keywords"
    assert require_trusted(gated / "pass" / "verdict.json", judge="keywords", rubric="refusal")["passed"] is True


# ----------------------------------------------------------------------------- strict types
def test_passed_as_the_string_false_is_refused_by_require_trusted(env):
    v = read(env / "fail" / "verdict.json")
    v["passed"] = "false"
    v["judges"][0]["passed"] = "false"
    p = write(env / "v.json", v)
    with pytest.raises(JudgekitError) as exc:
        require_trusted(p, judge="keywords", rubric="refusal")
    msg = str(exc.value)
    assert str(p) in msg and "passed" in msg and "judgekit gate" in msg
    with pytest.raises(JudgekitError, match=r"judges\[0\]\.passed"):
        v["passed"] = False
        require_trusted(v, judge="keywords", rubric="refusal")


def test_passed_as_the_string_false_is_refused_by_analyze(synthetic_store, tmp_path):
    v = read(synthetic_store["restrictiveness"])
    assert v["judges"][1]["judge"] == "judge-b" and v["judges"][1]["passed"] is False
    v["judges"][1]["passed"] = "false"
    p = write(tmp_path / "v.json", v)
    out = tmp_path / "out"
    r = cli("analyze", "calibration", "--judge", "judge-b", "--verdict", p, "--harm-column", "severity",
            "--store", synthetic_store["store"], "--out", out, "--quiet", "--bootstrap", "0")
    msg = one_sentence_error(r)
    assert str(p) in msg and "judges[1].passed" in msg
    assert not out.exists()


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda v: v.pop("schema_version"), "schema_version"),
        (lambda v: v.update(schema_version=2), "schema_version 2"),  # 3 is current
        (lambda v: v.update(schema_version="2"), "schema_version"),
        (lambda v: v.update(schema_version=True), "schema_version"),
        (lambda v: v.update(trusted=True), "trusted"),
        (lambda v: v.pop("human_ratings_hash"), "human_ratings_hash"),
        (lambda v: v["judges"][0]["checks"][0].update(figure="40"), "judges[0].checks[0].figure"),
        (lambda v: v["judges"][0]["checks"][0].update(state="maybe"), "judges[0].checks[0].state"),
        (lambda v: v["judges"][0]["checks"][1].update(ci=[0.1]), "judges[0].checks[1].ci"),
        (lambda v: v["judges"][0]["checks"][1].update(ci=[0.9, 0.1]), "judges[0].checks[1].ci"),
        (lambda v: v["judges"][0].update(judge_hash=None), "judges[0].judge_hash"),
    ],
)
def test_schema_version_and_types_are_checked_naming_the_key(env, edit, key):
    v = read(env / "pass" / "verdict.json")
    edit(v)
    p = write(env / "v.json", v)
    with pytest.raises(JudgekitError) as exc:
        load_verdict(p)
    assert str(p) in str(exc.value) and key in str(exc.value)
    with pytest.raises(JudgekitError, match="judgekit gate"):
        require_trusted(p, judge="keywords", rubric="refusal")
    msg = one_sentence_error(report(env, p))
    assert key in msg and "is trusted" not in msg
    assert not (env / "rep").exists()


def test_a_key_written_twice_is_refused(env):
    # JSON keeps the last of two equal keys: a second "passed": true would otherwise win
    text = (env / "fail" / "verdict.json").read_text(encoding="utf-8")
    assert text.count('"passed": false') >= 2
    p = env / "v.json"
    p.write_text(text.replace('"passed": false', '"passed": false, "passed": true'), encoding="utf-8")
    with pytest.raises(JudgekitError, match="the key 'passed' appears twice"):
        load_verdict(p)
    assert "appears twice" in one_sentence_error(report(env, p))


@pytest.mark.parametrize("checks", [5, {"min_items": 1}, "min_items", None])
def test_checks_that_are_not_a_list_are_one_sentence(env, checks):
    v = read(env / "pass" / "verdict.json")
    v["judges"][0]["checks"] = checks
    p = write(env / "v.json", v)
    msg = one_sentence_error(report(env, p))
    assert str(p) in msg and "judges[0].checks" in msg and "list" in msg
    with pytest.raises(JudgekitError, match=r"judges\[0\]\.checks"):
        require_trusted(p, judge="keywords", rubric="refusal")


# ----------------------------------------------------------------------------- consistency
def test_passed_true_beside_a_failed_check_is_refused_and_the_report_does_not_say_trusted(env):
    v = read(env / "fail" / "verdict.json")
    v["passed"] = True
    v["judges"][0]["passed"] = True
    p = write(env / "v.json", v)
    with pytest.raises(UntrustedJudgeError) as exc:
        require_trusted(p, judge="keywords", rubric="refusal")
    msg = str(exc.value)
    assert str(p) in msg and "min_kappa" in msg and "judgekit gate" in msg
    r = report(env, p)
    msg = one_sentence_error(r)
    assert "is trusted" not in msg and "1 of 1 judge trusted" not in msg and "min_kappa" in msg
    assert not (env / "rep").exists()


def test_a_verdict_passed_beside_a_failed_judge_is_refused(env):
    v = read(env / "fail" / "verdict.json")
    v["passed"] = True
    with pytest.raises(UntrustedJudgeError, match="'passed' is true but judge 'keywords' fails"):
        load_verdict(write(env / "v.json", v))


@pytest.mark.parametrize("with_state", [True, False])
def test_a_check_whose_result_contradicts_figure_vs_threshold_is_refused(env, with_state):
    v = read(env / "fail" / "verdict.json")
    c = check(v, "min_kappa")
    assert c["figure"] < c["threshold"]
    c["passed"] = True
    if with_state:
        c["state"] = "pass"
    v["judges"][0]["passed"] = v["passed"] = True
    p = write(env / "v.json", v)
    with pytest.raises(UntrustedJudgeError) as exc:
        require_trusted(p, judge="keywords", rubric="refusal")
    msg = str(exc.value)
    assert "min_kappa" in msg and ("below the threshold" in msg or "state" in msg)
    one_sentence_error(report(env, p))


def test_a_max_check_is_figure_at_most_threshold(env):
    v = read(env / "pass" / "verdict.json")
    c = check(v, "max_abstention_rate")
    c["figure"], c["ci"] = 0.5, [0.3, 0.6]  # above the 0.1 allowed, still marked pass
    p = write(env / "v.json", v)
    # A max_* rate check is decided on its whole Wilson interval
    with pytest.raises(UntrustedJudgeError, match=r"max_abstention_rate.*\[0\.3, 0\.6\].*threshold 0\.1.*'fail'"):
        require_trusted(p, judge="keywords", rubric="refusal")
    c["figure"] = 0.1  # at the threshold passes: <=
    c["ci"] = c["ci_method"] = c["ci_level"] = None
    assert require_trusted(v, judge="keywords", rubric="refusal")["passed"]


def test_a_deleted_failing_check_is_refused(env):
    v = read(env / "fail" / "verdict.json")
    v["judges"][0]["checks"] = [c for c in v["judges"][0]["checks"] if c["name"] != "min_kappa"]
    v["judges"][0]["passed"] = v["passed"] = True
    p = write(env / "v.json", v)
    with pytest.raises(UntrustedJudgeError, match="no min_kappa check"):
        require_trusted(p, judge="keywords", rubric="refusal")


def test_a_lowered_threshold_is_refused_even_with_the_policy_edited(env):
    v = read(env / "fail" / "verdict.json")
    c = check(v, "min_kappa")
    c.update(threshold=0.5, passed=True, state="pass")
    v["judges"][0]["passed"] = v["passed"] = True
    p = write(env / "v.json", v)
    with pytest.raises(UntrustedJudgeError, match="threshold 0.5.*policy.*0.95"):
        require_trusted(p, judge="keywords", rubric="refusal")
    v["policy"]["checks"]["min_value"] = 0.5
    write(p, v)
    with pytest.raises(UntrustedJudgeError, match="policy_hash"):
        require_trusted(p, judge="keywords", rubric="refusal")


def test_a_judge_the_policy_does_not_name_is_refused(env):
    v = read(env / "pass" / "verdict.json")
    v["judges"][0]["judge"] = "gpt4"
    with pytest.raises(UntrustedJudgeError, match="gpt4.*policy"):
        load_verdict(write(env / "v.json", v))


# ----------------------------------------------------------------------------- the store
def test_an_edited_human_label_voids_the_verdict_naming_the_human_ratings(env):
    p = env / "pass" / "verdict.json"
    assert trusts(env, p)["passed"]
    labels = (env / "human_labels.csv").read_text(encoding="utf-8").splitlines()
    assert labels[1] == "dp-01,full_compliance,full_compliance,full_compliance"
    labels[1] = "dp-01,partial_refusal,full_compliance,full_compliance"
    (env / "human_labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    r = cli("import", env / "human_labels.csv", "--rubric", "refusal", "--raters", "demo_ann_a,demo_ann_b",
            "--reference", "demo_final=demo_final", "--store", env / "s.db")
    assert r.exit_code == 0 and "1 changed" in r.output, r.output
    with pytest.raises(UntrustedJudgeError) as exc:
        trusts(env, p)
    msg = str(exc.value)
    assert "human ratings" in msg and "changed since the verdict" in msg and "judgekit gate" in msg
    assert str(p) in msg
    msg = one_sentence_error(report(env, p))
    assert "human ratings" in msg and "judgekit gate" in msg
    assert not (env / "rep").exists()


def test_an_edited_human_label_is_refused_by_analyze(synthetic_store, tmp_path):
    from conftest import copy_store

    db = tmp_path / "s.db"
    with Store(synthetic_store["store"]) as src:
        copy_store(src, db)
    v = synthetic_store["restrictiveness"]
    args = ("analyze", "calibration", "--judge", "judge-a", "--verdict", v, "--harm-column", "severity",
            "--store", db, "--quiet", "--bootstrap", "0")
    assert cli(*args).exit_code == 0
    rub = load_rubric("restrictiveness")
    with Store(db) as s:
        row = s.ratings(rubric=rub, rater_ids=["adjudicated"]).iloc[[0]].copy()
        row["label"] = next(lab for lab in rub.values if lab != row["label"].iloc[0])
        row["value"] = rub.values[row["label"].iloc[0]]
        assert s.put_ratings(row).changed == 1
    msg = one_sentence_error(cli(*args))
    assert str(v) in msg and "human ratings" in msg and "judgekit gate" in msg
    forced = cli(*args, "--untrusted", "--out", tmp_path / "forced")
    assert forced.exit_code == 0, forced.output
    data = read(tmp_path / "forced" / "calibration.json")
    assert data["trusted"] is False and "human ratings" in json.dumps(data)


def test_new_unlabelled_items_judged_do_not_void_the_verdict(env):
    p = env / "pass" / "verdict.json"
    old = read(p)
    items = [json.loads(line) for line in (env / "items.jsonl").read_text(encoding="utf-8").splitlines()[:3]]
    with (env / "new_items.jsonl").open("w", encoding="utf-8") as f:
        for k, it in enumerate(items):
            f.write(json.dumps({**it, "item_id": f"new-{k}", "response": it["response"] + " (again)"}) + "\n")
    (env / "panel2.yaml").write_text(PANEL.format(items="new_items.jsonl", extra=""), encoding="utf-8")
    r = cli("judge", env / "panel2.yaml", "--store", env / "s.db")
    assert r.exit_code == 0 and "3 answered now" in r.output, r.output
    with Store(env / "s.db") as s:
        assert len(s.ratings(rubric="refusal", rater_ids=["keywords"])) == 43
    assert trusts(env, p)["passed"]
    r = report(env, p)
    assert r.exit_code == 0 and "1 of 1 judge trusted to score refusal@1: keywords." in r.output, r.output
    r = cli("gate", env / "policy.yaml", "--store", env / "s.db", "--out", env / "again")
    assert r.exit_code == 0, r.output
    new = read(env / "again" / "verdict.json")
    assert new["items_hash"] == old["items_hash"] and new["human_ratings_hash"] == old["human_ratings_hash"]
    assert new["judges"][0]["judge_hash"] == old["judges"][0]["judge_hash"]


def test_a_new_human_labelled_item_voids_the_verdict_naming_the_items(env):
    p = env / "pass" / "verdict.json"
    it = json.loads((env / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    (env / "more.jsonl").write_text(json.dumps({**it, "item_id": "new-9"}) + "\n", encoding="utf-8")
    (env / "more.csv").write_text("item_id,demo_ann_a\nnew-9,full_compliance\n", encoding="utf-8")
    r = cli("import", env / "more.csv", "--rubric", "refusal", "--raters", "demo_ann_a",
            "--items", env / "more.jsonl", "--store", env / "s.db")
    assert r.exit_code == 0, r.output
    with pytest.raises(UntrustedJudgeError, match="items with human or reference ratings.*changed since the verdict"):
        trusts(env, p)


def test_an_edited_rubric_is_refused(env, tmp_path):
    p = env / "pass" / "verdict.json"
    src = Path(load_rubric("refusal").source or "")
    edited = tmp_path / "refusal.yaml"
    edited.write_text(src.read_text(encoding="utf-8").replace("regardless of accuracy", "however accurate"),
                      encoding="utf-8")
    rub = load_rubric(edited)
    assert rub.id == "refusal@1" and rub.hash != load_rubric("refusal").hash
    with pytest.raises(UntrustedJudgeError, match="rubric changed.*judgekit gate"):
        trusts(env, p, rubric=rub)
    # patching the verdict's rubric hash does not help: nothing in the store was gated under it
    v = read(p)
    v["rubric_hash"] = rub.hash
    with pytest.raises(UntrustedJudgeError, match="changed since the verdict.*judgekit gate"):
        trusts(env, v, rubric=rub)


def test_changed_judge_parameters_are_refused(env):
    from judgekit.analysis.trust import check_trust

    p = env / "pass" / "verdict.json"
    assert trusts(env, p)["passed"]
    (env / "panel3.yaml").write_text(
        PANEL.format(items="items.jsonl", extra="    options: {extra_phrases: [nope]}\n"), encoding="utf-8")
    r = cli("judge", env / "panel3.yaml", "--store", env / "s.db")
    assert r.exit_code == 0, r.output
    with pytest.raises(UntrustedJudgeError) as exc:
        trusts(env, p)
    msg = str(exc.value)
    assert "'keywords' changed since the verdict" in msg and "parameters" in msg and "judgekit gate" in msg
    rub = load_rubric("refusal")
    with Store(env / "s.db") as s:
        ratings = s.ratings(rubric=rub, rater_ids=["keywords"])
        with pytest.raises(UntrustedJudgeError, match="changed since the verdict"):
            check_trust(ratings, rub, [load_verdict(p)], store=s)
        forced = check_trust(ratings, rub, [load_verdict(p)], store=s, untrusted=True)
    assert "changed since the verdict" in forced.untrusted["keywords under refusal@1"]
