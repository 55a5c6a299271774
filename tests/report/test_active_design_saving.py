"""The saving an active design reports against uniform sampling at the same width."""

from __future__ import annotations

from judgekit.report.active_design import saving_text


def test_saving_is_one_minus_labels_used_over_uniform_labels() -> None:
    assert saving_text(30, 40) == "25%"  # 1 − 30/40
    assert saving_text(50, 40) == "−25%"  # uniform would need fewer
    assert saving_text(30, float("inf")) == "uniform cannot reach it"
    assert saving_text(30, float("nan")) == "—"
