"""Terminal tables with many judges switch to one row per judge."""

from __future__ import annotations

import json
import random
import re

from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main

LABELS = ["full_compliance", "partial_refusal", "full_refusal"]


def _store(tmp_path, n_judges: int) -> tuple[str, dict[str, dict[str, list[str]]]]:
    """Three annotators (the reference is the first), ``n_judges`` judges, two models; returns the
    store and, per model, the reference and each judge's labels."""
    rng = random.Random(n_judges)
    judges = [f"judge_{k:02d}" for k in range(n_judges)]
    rows = ["item_id,model,a1,a2,a3," + ",".join(judges)]
    truth: dict[str, dict[str, list[str]]] = {"m0": {}, "m1": {}}
    for i in range(60):
        model = f"m{i % 2}"
        ref = rng.choice(LABELS)
        cells = [ref, rng.choice([ref, ref, rng.choice(LABELS)]), rng.choice([ref, rng.choice(LABELS)])]
        js = [rng.choice([ref, ref, rng.choice(LABELS)]) for _ in judges]
        rows.append(f"i{i},{model}," + ",".join(cells + js))
        truth[model].setdefault("ref", []).append(ref)
        for name, lab in zip(judges, js, strict=True):
            truth[model].setdefault(name, []).append(lab)
    f = tmp_path / "labels.csv"
    f.write_text("\n".join(rows) + "\n")
    db = str(tmp_path / "s.db")
    res = CliRunner().invoke(main, ["import", str(f), "--rubric", "refusal", "--store", db,
                                    "--reference", "a1", "--raters", "a2,a3", "--judges", ",".join(judges)])
    assert res.exit_code == 0, res.output
    return db, truth


def _agree(db: str, tmp_path) -> tuple[str, dict]:
    out = tmp_path / "a.json"
    res = CliRunner().invoke(main, ["agree", "--rubric", "refusal", "--store", db, "--by", "model",
                                    "--reference", "a1", "--resamples", "20", "--json", str(out)])
    assert res.exit_code == 0, res.output
    return res.output, json.loads(out.read_text())


def test_eleven_judges_get_one_row_per_judge_and_every_figure_whole(tmp_path):
    db, truth = _store(tmp_path, 11)
    output, report = _agree(db, tmp_path)
    assert "By model (one row per judge)" in output
    table = output.split("By model (one row per judge)", 1)[1].split("└", 1)[0]
    assert "…" not in table
    assert max(len(line) for line in table.splitlines()) <= 150  # the runner's console width
    for model in ("m0", "m1"):
        for name in [k for k in truth[model] if k != "ref"]:
            kappa = cohen_kappa_score(truth[model]["ref"], truth[model][name])
            # the judge's own row of this model's block: its name, n rated, κ and % agree whole
            agree = sum(a == b for a, b in zip(truth[model]["ref"], truth[model][name], strict=True)) / 30
            row = re.search(rf"│\s*(?:{model})?\s*│[^│]*│[^│]*│[^│]*│ {name}\s*│\s*30 │ {kappa:.3f} \[[^]]+\]\s*│"
                            rf"\s*{100 * agree:.1f}% │", table)
            assert row is not None, (model, name, f"{kappa:.3f}")
    assert report["slices"][1]["judges"]["judge_00"]["n_rated"] == 30


def test_two_judges_keep_the_wide_table(tmp_path):
    db, truth = _store(tmp_path, 2)
    output, _ = _agree(db, tmp_path)
    assert "By model\n" in output and "one row per judge" not in output
    table = output.split("By model\n", 1)[1].split("└", 1)[0]
    assert "…" not in table and max(len(line) for line in table.splitlines()) <= 150
    # one line per model (no cell wrapped onto a second line), each judge's κ whole on it
    assert [ln[:5] for ln in table.splitlines() if ln.startswith("│")] == ["│ m0 ", "│ m1 "]
    for model in ("m0", "m1"):
        line = next(ln for ln in table.splitlines() if ln.startswith(f"│ {model} "))
        for name in ("judge_00", "judge_01"):
            assert f"{cohen_kappa_score(truth[model]['ref'], truth[model][name]):.3f} [" in line


def test_a_grid_too_wide_for_the_terminal_is_one_row_per_figure():
    import io

    from judgekit.core.console import make_console
    from judgekit.report.terminal import print_grid
    from judgekit.report.trust import Grid

    header = ["judge", *[f"class_{k} precision / recall / F1" for k in range(8)]]
    rows = [[f"j{r}", *[f"0.{r}{k}1 / 0.{r}{k}2 / 0.{r}{k}3" for k in range(8)]] for r in range(3)]
    buf = io.StringIO()
    console = make_console(file=buf, width=100)
    print_grid(console, Grid("Per class", header, rows, list(range(1, 9))))
    out = buf.getvalue()
    assert "Per class (one row per figure)" in out and "…" not in out
    lines = [ln for ln in out.splitlines() if ln.startswith("│")]
    assert len(lines) == 3 * 8  # one line per judge and class
    assert max(len(ln) for ln in out.splitlines()) <= 100
    block = out.split("│ j2 ", 1)[1]  # the judge's name on its first figure, the others below it
    assert block.startswith("   │ class_0 precision / recall / F1 │ 0.201 / 0.202 / 0.203 │")
    assert "│       │ class_7 precision / recall / F1 │ 0.271 / 0.272 / 0.273 │" in block
    # a grid that fits keeps its layout
    buf = io.StringIO()
    print_grid(make_console(file=buf, width=100), Grid("Small", ["judge", "n"], [["j0", "3"]], [1]))
    assert "one row per figure" not in buf.getvalue() and "│ j0    │ 3 │" in buf.getvalue()
