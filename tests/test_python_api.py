"""The Python API as a newcomer expects it: judgekit.agree() and judgekit.gate()
with rubric names and store paths, result objects with to_frame(); confusion_matrix infers its
labels as cohen_kappa does; UntrustedJudgeError speaks to a Python caller."""

from __future__ import annotations

import importlib
import json

import pytest
from click.testing import CliRunner

import judgekit
from judgekit.agreement.confusion import confusion_matrix
from judgekit.agreement.kappa import cohen_kappa
from judgekit.cli import main
from judgekit.errors import UntrustedJudgeError

LABELS = ["full_refusal", "full_compliance", "partial_refusal"]


@pytest.fixture()
def study(tmp_path):
    rows = []
    for n in range(60):
        truth = LABELS[n % 3]
        judge = truth if n % 5 else LABELS[(n + 1) % 3]  # wrong on 12 of 60
        rows.append(f"i{n},p{n},r{n},{truth},{truth},{judge},{'a' if n < 30 else 'b'}")
    csv = tmp_path / "s.csv"
    csv.write_text("item_id,prompt,response,ann1,ann2,j,model\n" + "\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    r = CliRunner().invoke(main, ["import", str(csv), "--rubric", "refusal", "--raters", "ann1,ann2",
                                  "--judges", "j", "--store", str(db)])
    assert r.exit_code == 0, r.output
    policy = tmp_path / "policy.yaml"
    policy.write_text("rubric: refusal\njudges: [j]\nhumans: [ann1, ann2]\nchecks:\n  min_items: 30\n"
                      "  metric: kappa\n  min_lower_bound: 0.9\n", encoding="utf-8")
    return db, policy


def test_agree_takes_a_store_path_and_a_rubric_name_and_gives_a_frame(study):
    db, _ = study
    res = judgekit.agree(db, "refusal", by=["model"], resamples=200)
    frame = res.to_frame()
    assert list(frame["slice"]) == ["all items", "model = a", "model = b"]
    assert set(frame["judge"]) == {"j"}
    # the same figures as the command line's JSON
    r = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", str(db), "--by", "model",
                                  "--resamples", "200", "--json"])
    cli = json.loads(r.stdout)
    assert frame.loc[0, "kappa"] == cli["slices"][0]["judges"]["j"]["vs_reference"]["kappa"]["value"]
    # 48 of 60 agree; 3 balanced classes, the judge's labels too: p_e = 1/3, kappa = (0.8 - 1/3) / (2/3) = 0.7
    assert frame.loc[0, "kappa"] == pytest.approx(0.7, abs=1e-6)
    assert frame.loc[0, "kappa_low"] < 0.7 < frame.loc[0, "kappa_high"]
    assert res.to_dict()["rubric"] == "refusal@1"
    assert judgekit.agree.__doc__ and res.to_frame.__doc__


def test_gate_is_callable_before_and_after_its_package_is_imported(study):
    db, policy = study
    res = judgekit.gate(db, policy)
    importlib.import_module("judgekit.gate.run")  # the package is now an attribute of judgekit

    again = judgekit.gate(str(db), str(policy))
    assert res.state == again.state == "fail"  # kappa 0.7: its lower bound is below 0.9
    frame = res.to_frame()
    row = frame[frame["check"] == "min_kappa_lower_bound"].iloc[0]
    assert row["state"] == "fail" and row["threshold"] == 0.9 and row["figure"] < 0.7
    assert res.trusted == []
    assert judgekit.gate.run_gate is not None  # still the package


def test_confusion_matrix_infers_its_labels_like_cohen_kappa():
    ref, jud = ["b", "a", "c", "a"], ["b", "b", "c", "a"]
    res = confusion_matrix(ref, jud)
    assert res.labels == ["a", "b", "c"]  # observed, sorted, as cohen_kappa's default
    assert res.matrix.tolist() == [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
    # cohen_kappa from the same matrix: p_o = 3/4, p_e = (2*1 + 1*2 + 1*1)/16 = 5/16
    assert cohen_kappa(ref, jud) == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))


def test_untrusted_judge_error_speaks_to_python_and_the_cli_adds_its_flag(study, tmp_path):
    db, policy = study
    res = judgekit.gate(db, policy)
    path = res.write(tmp_path / "verdict.json")
    with pytest.raises(UntrustedJudgeError) as err:
        judgekit.require_trusted(path, judge="j", rubric="refusal")
    assert "--" not in str(err.value)  # no command-line flag in the library's message
    assert "untrusted" in str(err.value) and err.value.cli_hint == "On the command line: --untrusted."
