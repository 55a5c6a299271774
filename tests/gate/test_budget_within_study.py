"""A label budget never asks for more than the study holds without saying so: a need beyond the
study reads "cannot be decided with this study: needs about N …, the study holds M …" with the
reason, and a figure's certificate never pairs "would need about N more" with checks that no
number of labels decides as if N would establish it."""

from __future__ import annotations

from types import SimpleNamespace

from judgekit.gate.budget import label_budget
from judgekit.verdict.certify import certify
from judgekit.verdict.check import Budget, Check, Interval, Subject


def _kappa(n: int = 100) -> Check:
    return Check("min_lower_bound", "j", 0.55, 0.6, n, "", interval=Interval(0.55, 0.75, "bootstrap", 0.95),
                 metric="kappa", min_n=30)


def test_a_need_beyond_the_study_says_what_it_needs_and_what_the_study_holds():
    b = label_budget(_kappa(), point=0.65, available=20)
    assert b.items is None
    assert b.sentence.startswith("min_kappa_lower_bound: cannot be decided with this study: needs about ")
    assert "more human-rated items, the study holds 20 more" in b.sentence
    assert "because" in b.sentence  # the reason
    assert "undecidable" not in b.sentence and "would need" not in b.sentence


def test_no_more_human_rated_items_when_every_item_has_a_human_label():
    b = label_budget(_kappa(), point=0.65, available=0)
    assert "the study holds no more: every item it holds already has a human label" in b.sentence


def _fid(model: str, budget: Budget | None) -> Check:
    return Check("analysis_fidelity", "j", 0.03, 0.05, 40, "", interval=Interval(0.0, 0.08, "bootstrap", 0.9),
                 subject=Subject(analysis="calibration", figure="drift", cell=f"drift(model={model})", model=model),
                 unit="conversations", min_n=10, budget=budget)


def test_a_certificate_with_undecidable_checks_does_not_say_labels_would_establish_it():
    policy = SimpleNamespace(checks=SimpleNamespace(analysis_fidelity=SimpleNamespace(chosen=["drift"])))
    checks = [_fid("a", Budget(13, "x", {}, 13, "conversations")), _fid("b", Budget(None, "y")),
              _fid("c", Budget(None, "z"))]
    sentence = certify(checks, policy)["drift"]["sentence"]
    assert "cannot be established with this study" in sentence, sentence
    assert "2 of its 3 open checks cannot be decided with it" in sentence
    assert "about 13 more conversations would decide the other 1" in sentence
    assert "would need about 13 more conversations;" not in sentence


def test_a_need_far_beyond_the_study_is_not_printed_as_a_count():
    # the estimate 0.6995 sits 0.0005 from the threshold: 1/√n extrapolation asks for millions
    ch = Check("min_lower_bound", "j", 0.60, 0.7, 300, "", interval=Interval(0.60, 0.80, "bootstrap", 0.95),
               metric="kappa")
    b = label_budget(ch, point=0.6995, available=0)
    assert b.items is None
    assert "needs more than ten times the 300 human-rated items the study holds" in b.sentence, b.sentence
    assert "sits 0.0005 from the threshold 0.7" in b.sentence
    assert not any(len(w.replace(",", "")) > 5 and w.replace(",", "").isdigit() for w in b.sentence.split())


def test_a_judge_with_undecidable_checks_is_not_told_labels_would_decide_it():
    from judgekit.gate.budget import judge_budget

    open_ = [_fid("a", Budget(13, "a: about 13 more", {}, 13, "conversations")),
             _fid("b", Budget(None, "b: undecidable: x.")), _fid("c", Budget(None, "c: undecidable: y."))]
    s = judge_budget("j", open_).sentence
    assert "would likely decide it" not in s, s
    assert "about 13 more conversations would likely decide 1 of its 3 open checks" in s
    assert "2 cannot be decided with this study (each says why)" in s


def test_the_reason_a_need_is_beyond_the_study_gives_the_estimate_with_its_n():
    b = label_budget(_kappa(), point=0.65, available=20)
    assert "because the estimate 0.65 on 100 human-rated items sits 0.05 from the threshold 0.6" in b.sentence, (
        b.sentence)
