"""A rate check's "what it shows" sentence reads the same interval that decided the check: a
sentence never claims a bound inside the threshold beside a check left inconclusive by its
interval's upper end."""

from __future__ import annotations

from pathlib import Path

from judgekit.gate.run import run_gate
from judgekit.io.ratings import import_ratings
from judgekit.rubric.model import load_rubric
from judgekit.stats.intervals import wilson_interval
from judgekit.store.database import Store

REFUSAL = load_rubric("refusal")
CODES = REFUSAL.codes


def _every_item_labelled(tmp_path: Path, n: int, *, status: str, bad: int) -> Path:
    """``n`` items, each rated by the judge ``j`` and the reference ``ref``; the judge's first
    ``bad`` calls have ``status`` (abstain or error)."""
    rows = [f"i{k},ref,reference,{CODES[k % 3]},ok\ni{k},j,judge," + (f",{status}" if k < bad else f"{CODES[k % 3]},ok")
            for k in range(n)]
    (tmp_path / "r.csv").write_text("\n".join(["item_id,rater_id,rater_kind,label,status", *rows]) + "\n")
    with Store(tmp_path / "s.db") as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL)
    return tmp_path / "s.db"


def _check(tmp_path: Path, db: Path, checks: str, name: str) -> dict:
    p = tmp_path / "p.yaml"
    p.write_text(f"rubric: refusal\njudges: [j]\nreference: ref\nn_resamples: 200\nchecks:\n{checks}")
    with Store(db) as s:
        v, _ = run_gate(s, p)
    return next(c for c in v["judges"][0]["checks"] if c["name"] == name)


def test_abstention_sentence_states_the_bound_that_left_it_inconclusive(tmp_path: Path) -> None:
    db = _every_item_labelled(tmp_path, 359, status="abstain", bad=2)
    c = _check(tmp_path, db, "  min_items: 30\n  min_value: 0.1\n  max_abstention_rate: 0.02\n", "max_abstention_rate")
    high = float(wilson_interval(2, 359)[1])
    assert high > 0.02 and c["state"] == "inconclusive"
    assert abs(c["ci"][1] - high) < 1e-6
    sentence = c["budget"]["sentence"]
    assert "2 of 359 abstentions" in sentence
    assert f"≤ {high:.3g}" in sentence, sentence
    assert "0.0174" not in sentence


def test_failed_calls_sentence_matches_the_interval_column(tmp_path: Path) -> None:
    db = _every_item_labelled(tmp_path, 300, status="error", bad=0)
    c = _check(tmp_path, db, "  min_items: 30\n  min_value: 0.1\n  max_error_rate: 0.01\n", "max_error_rate")
    high = float(wilson_interval(0, 300)[1])
    assert c["state"] == "inconclusive" and abs(c["ci"][1] - high) < 1e-6
    sentence = c["budget"]["sentence"]
    assert "0 of 300 failed calls" in sentence
    assert f"≤ {high:.3g}" in sentence, sentence
    assert "0.00994" not in sentence


def test_the_bound_is_printed_apart_from_the_threshold_it_misses() -> None:
    # an upper end that rounds to the threshold at 3 digits is printed with the digits that separate it
    from judgekit.gate.budget import rate_budget
    from judgekit.verdict.check import Interval, new_check

    ch = new_check("max_error_rate", "j", 0.0, 0.02, 180, "0 of 180 calls failed",
                   interval=Interval(0.0, 0.020004, "wilson", 0.95), min_n=30)
    assert ch.state == "inconclusive"
    sentence = rate_budget(ch, k=0, unjudged=0).sentence
    assert "shows ≤ 0.020004 (95% CI), not ≤ 0.02" in sentence, sentence


def test_a_human_noise_margin_of_zero_is_a_threshold_of_zero(tmp_path: Path) -> None:
    rows = [f"i{k},{h},human,{CODES[(k + (h == 'h2' and k % 7 == 0)) % 3]},ok"
            for k in range(60) for h in ("h1", "h2")]
    rows += [f"i{k},j,judge,{CODES[k % 3]},ok" for k in range(60)]
    (tmp_path / "r.csv").write_text("\n".join(["item_id,rater_id,rater_kind,label,status", *rows]) + "\n")
    with Store(tmp_path / "s.db") as s:
        import_ratings(s, tmp_path / "r.csv", REFUSAL)
    (tmp_path / "p.yaml").write_text("rubric: refusal\njudges: [j]\nn_resamples: 200\nchecks:\n"
                                     "  min_items: 30\n  within_human_noise: {margin: 0}\n")
    with Store(tmp_path / "s.db") as s:
        verdict, _ = run_gate(s, tmp_path / "p.yaml", record=False)
    ch = next(c for c in verdict["judges"][0]["checks"] if c["name"] == "within_human_noise")
    assert ch["threshold"] == 0.0 and str(ch["threshold"]) == "0.0", ch
