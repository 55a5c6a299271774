"""The reason a result is untrusted is a field of the result, kept when tables are added."""

from __future__ import annotations

import pandas as pd

from judgekit.analysis.correction.tables import add_correction
from judgekit.analysis.result import UNTRUSTED, AnalysisResult, Table

REASON = "Judge 'j1' did not pass the gate for refusal@1 (failed: kappa: 0.4 < 0.7)"


def _table(key: str) -> Table:
    return Table(key, f"Table {key}", pd.DataFrame({"model": ["m"], "raw": [0.5]}))


def test_a_trusted_result_has_no_reason() -> None:
    res = AnalysisResult("distribution", "Refusal", tables=[_table("by_model")])
    assert res.trusted and res.untrusted_reason is None


def test_stamping_records_the_reason_and_says_it_in_the_first_note() -> None:
    res = AnalysisResult("distribution", "Refusal", notes=["a note"], tables=[_table("by_model")])
    res.stamp_untrusted(REASON)
    assert not res.trusted and res.untrusted_reason == REASON
    assert res.notes == [f"{UNTRUSTED}: {REASON}", "a note"]
    assert res.title == f"{UNTRUSTED} — Refusal" and res.tables[0].title == f"{UNTRUSTED} — Table by_model"


def test_tables_added_later_are_stamped_with_the_same_reason_whatever_the_notes_say() -> None:
    res = AnalysisResult("distribution", "Refusal", tables=[_table("by_model")])
    res.stamp_untrusted(REASON)
    res.notes.insert(0, "Corrected figures: a note that came first")  # notes are prose, in any order
    add_correction(res, [_table("corrected")], method="ppi", reference_name="ref")
    assert res.untrusted_reason == REASON
    assert [n for n in res.notes if n.startswith(UNTRUSTED)] == [f"{UNTRUSTED}: {REASON}"]
    assert res.table("corrected") is res.tables[1].frame
    assert res.tables[1].title == f"{UNTRUSTED} — Table corrected"


def test_a_partly_certified_result_is_untrusted_without_stamping_every_title() -> None:
    res = AnalysisResult("criteria", "Criteria", tables=[_table("criteria")])
    res.mark_untrusted("figures the verdict does not certify are shown")
    assert not res.trusted and res.untrusted_reason == "figures the verdict does not certify are shown"
    assert res.tables[0].title == "Table criteria" and res.notes[0].startswith(f"{UNTRUSTED}: ")
