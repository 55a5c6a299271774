"""The headline judge-vs-human figure is like for like: with a consensus of several humans it is
the judge against the consensus of the other humans on the same items as the human figure beside
it (the leave-one-out comparison), and every figure carries its n in the JSON, the terminal table
and ``to_frame()``."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from judgekit.agreement.report import agreement_report
from judgekit.gate.api import AgreementResult
from judgekit.report.terminal import print_agreement
from judgekit.rubric.model import load_rubric

REFUSAL = load_rubric("refusal")


def _frame(raters: dict[str, str], kinds: dict[str, str]) -> pd.DataFrame:
    code = {"C": REFUSAL.codes[0], "P": REFUSAL.codes[1], "R": REFUSAL.codes[2]}
    rows = [(f"i{k + 1}", r, kinds.get(r, "human"), code[ch])
            for r, s in raters.items() for k, ch in enumerate(s) if ch != "."]
    df = pd.DataFrame(rows, columns=["item_id", "rater_id", "rater_kind", "label"])
    df["rubric"], df["rubric_hash"], df["status"], df["trial"] = REFUSAL.id, REFUSAL.hash, "ok", 0
    return df


# two humans disagreeing on 4 of 20 items; the judge copies h1 (so it "agrees perfectly" with the
# easy items where the humans agree, the only items the majority reference keeps)
H1 = "RRRRRCCCCCRRRRRCCCCC"
H2 = "RRRRRCCCCCCCRRRCCRRC"
RAW = _frame({"h1": H1, "h2": H2, "j": H1}, {"j": "judge"})


def _report() -> dict:
    return agreement_report(RAW, rubric=REFUSAL, n_resamples=200).to_dict()


def test_headline_is_the_leave_one_out_comparison_on_the_humans_items():
    overall = _report()["slices"][0]
    head = overall["judges"]["j"]["headline"]
    assert head["basis"] == "leave-one-out"
    # the majority reference keeps only the 16 items the humans agree on; the headline does not
    assert overall["judges"]["j"]["vs_reference"]["n"] == 16
    assert head["n"] == 20
    assert head["humans"]["n"] == head["n"] == head["kappa"]["n"]
    # the judge copies h1: against h2 it agrees on 16 of 20, against h1 on 20 of 20 -> mean 0.9;
    # the humans on the same items agree on 16 of 20 both ways -> 0.8
    assert head["percent_agreement"]["value"] == 0.9
    assert head["humans"]["percent_agreement"]["value"] == 0.8


def test_headline_with_an_adjudicated_reference_is_the_reference_comparison_with_its_n():
    raw = _frame({"h1": H1, "h2": H2, "gold": H1, "j": H1}, {"j": "judge", "gold": "reference"})
    overall = agreement_report(raw, rubric=REFUSAL, n_resamples=200).to_dict()["slices"][0]
    head = overall["judges"]["j"]["headline"]
    assert head["basis"] == "reference"
    assert head["n"] == overall["judges"]["j"]["vs_reference"]["n"] == 20


def test_terminal_headline_table_prints_the_n_of_both_figures():
    out = io.StringIO()
    print_agreement(Console(file=out, width=200, color_system=None), _report())
    text = out.getvalue()
    assert "leave-one-out" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("│ j ") or line.startswith("j "))
    assert " 20 " in row and "0.9" not in row.split("│")[1]


def test_to_frame_carries_the_n_of_each_figure():
    frame = AgreementResult(_report()).to_frame()
    row = frame.iloc[0]
    assert row["kappa_n"] == 16
    assert row["headline_n"] == 20
    assert row["human_kappa_n"] == 20
