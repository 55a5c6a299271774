"""A plan that can be acted on: plain text without markdown escapes, an assumption printed as an
assumption, a coverage check counted in the judge's calls, and a closing line that says what to
label next."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.gate.plan import _check_row
from judgekit.gate.plan_rows import PlanRow, summarise
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store
from judgekit.verdict.check import Check, Interval

REFUSAL = load_rubric("refusal")


def test_the_plan_prints_check_names_without_markdown_escapes(tmp_path: Path) -> None:
    codes = REFUSAL.codes
    lines, items = ["item_id,rater_id,rater_kind,label,status"], ["item_id,grp,prompt,response"]
    for k in range(80):
        ref = codes[k % 3]
        lines += [f"i{k},ref,reference,{ref},ok", f"i{k},j,judge,{codes[(k + 1) % 3] if k % 5 == 0 else ref},ok"]
        items.append(f"i{k},{'a' if k < 40 else 'b'},p{k},r{k}")
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "items.csv").write_text("\n".join(items) + "\n")
    with Store(tmp_path / "s.db") as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL, items_path=tmp_path / "items.csv")
    (tmp_path / "p.yaml").write_text("rubric: refusal\njudges: [j]\nby: [grp]\nn_resamples: 200\nchecks:\n"
                                     "  min_items: 50\n  min_value: 0.6\n  per_slice: {min_items: 20, min_value: 0.6}\n")
    res = CliRunner().invoke(main, ["plan", str(tmp_path / "p.yaml"), "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output
    assert "per_slice[grp=a]" in res.output and "\\[" not in res.output


def test_a_coverage_check_is_planned_in_the_judges_calls_not_human_labels() -> None:
    cov = Check("min_coverage", "j", 0.97, 0.95, 200, "", interval=Interval(0.94, 0.99, "wilson", 0.95))
    row = _check_row("j", cov, 200, None, {}, None, 1)
    assert row is not None and row.unit == "calls of j (no human label)"


def test_an_assumed_kappa_is_printed_as_an_assumption_beside_the_pilots_estimate() -> None:
    k = Check("min_lower_bound", "j", 0.55, 0.6, 100, "", interval=Interval(0.55, 0.75, "bootstrap", 0.95),
              metric="kappa")
    line = _check_row("j", k, 100, None, {}, 0.8, 2).line()  # type: ignore[union-attr]
    assert "estimate +0.800" not in line
    assert "assumed +0.800 (--assume-kappa), the pilot's estimate +0.650" in line


def test_the_closing_line_says_what_to_label_when_the_pilot_already_suffices() -> None:
    rows = [PlanRow("j", "min_kappa_lower_bound", "human-rated items", 254, 0.8, 0.6, 150)]
    out = summarise(rows, policy=SimpleNamespace(secondary=[], rubric="refusal"), per=1.0, study=0, budget=None,
                    have=254)
    last = out["lines"][-1]
    assert "0 human-rated items more" not in last, last
    assert "the pilot's 254 human-rated items already reach the 150" in last and "label none more" in last


def test_a_figure_needing_more_conversations_than_the_study_says_so_in_the_study_sentence() -> None:
    rows = [PlanRow("j", "figure drift", "conversations", 60, 0.0, 0.05, 2882)]
    out = summarise(rows, policy=SimpleNamespace(secondary=[], rubric="refusal"), per=6.0, study=480, budget=None,
                    have=60)
    assert ("cannot be decided with this study: needs about 2,882 conversations for 80% power, the study holds 480"
            in out["lines"][0]), out["lines"][0]


def test_the_closing_line_says_what_to_label_next_and_how_to_draw_it() -> None:
    rows = [PlanRow("j", "figure drift", "conversations", 60, 0.0, 0.05, 140)]
    out = summarise(rows, policy=SimpleNamespace(secondary=[], rubric="refusal"), per=6.0, study=480, budget=None,
                    have=60)
    last = out["lines"][-1]
    assert last.startswith("Plan: label 140 conversations (about 840 items)"), last
    # what to label next: the 80 conversations beyond the pilot, and the command that draws them
    assert ("Label next: 80 more whole conversations (about 480 items) beyond the pilot's 60 — "
            "`judgekit sample --name main --from-plan PLAN.json` draws them") in last, last


def test_a_budget_below_the_pilot_does_not_ask_to_sample_zero_more() -> None:
    rows = [PlanRow("j", "min_kappa_lower_bound", "human-rated items", 254, 0.65, 0.6, 400)]
    out = summarise(rows, policy=SimpleNamespace(secondary=[], rubric="refusal"), per=1.0, study=0, budget=200,
                    have=254)
    last = out["lines"][-1]
    assert "0 human-rated items more" not in last and "Label next: 0" not in last, last
    assert "--from-plan" not in last, last
    assert "your --budget" in last and "254" in last, last


def test_an_assumed_kappa_stands_for_a_weighted_kappa_too() -> None:
    k = Check("min_lower_bound", "j", 0.55, 0.6, 100, "", interval=Interval(0.55, 0.75, "bootstrap", 0.95),
              metric="weighted_kappa")
    line = _check_row("j", k, 100, None, {}, 0.8, 2).line()  # type: ignore[union-attr]
    assert "assumed +0.800 (--assume-kappa), the pilot's estimate +0.650" in line


def test_an_assumed_kappa_is_refused_for_a_policy_on_another_metric(tmp_path: Path) -> None:
    codes = REFUSAL.codes
    lines, items = ["item_id,rater_id,rater_kind,label,status"], ["item_id,prompt,response"]
    for k in range(40):
        ref = codes[k % 3]
        lines += [f"i{k},ref,reference,{ref},ok", f"i{k},j,judge,{ref},ok"]
        items.append(f"i{k},p{k},r{k}")
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "items.csv").write_text("\n".join(items) + "\n")
    with Store(tmp_path / "s.db") as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL, items_path=tmp_path / "items.csv")
    (tmp_path / "p.yaml").write_text("rubric: refusal\njudges: [j]\nn_resamples: 200\nchecks:\n"
                                     "  metric: ac1\n  min_items: 30\n  min_value: 0.6\n")
    res = CliRunner().invoke(main, ["plan", str(tmp_path / "p.yaml"), "--store", str(tmp_path / "s.db"),
                                    "--assume-kappa", "0.8"])
    one_sentence_error(res, "--assume-kappa assumes a κ", "checks ac1")
