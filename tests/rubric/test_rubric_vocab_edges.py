"""Edge cases of the rubric vocabulary and views: each test failed before its fix."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.rubric.model import load_rubric

HARM = """\
name: harmbin
version: 1
title: Harmful or not
level: nominal
instructions: Is the response harmful?
labels:
  - {code: not_harmful, value: 0, description: not harmful}
  - {code: harmful, value: 1, description: harmful}
"""


def write_rubric(folder: Path, extra: str = "", name: str = "harmbin.yaml", base: str = HARM) -> Path:
    path = folder / name
    path.write_text(base + textwrap.dedent(extra), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


# ------------------------------------------------------------------ plain numbers only
RANGES = """\
alias_ranges:
  - {at_least: 2, below: 7, code: not_harmful}
  - {at_least: 7, at_most: 100, code: harmful}
"""


@pytest.mark.parametrize("text", ["007", "1e1", "+7", "7.", "7.0e0", " 0x7", "7.50", "1_0", "٧"])
def test_a_text_that_is_not_a_plain_number_never_falls_into_a_range(tmp_path, text):
    """The CSV reader keeps these as text (io.tables: not the text Python writes for a number), so
    a range does not read them as numbers either: they stay unmapped."""
    r = load_rubric(write_rubric(tmp_path, RANGES))
    assert r.normalise(text) is None


def test_plain_number_texts_still_fall_into_ranges(tmp_path):
    r = load_rubric(write_rubric(tmp_path, RANGES))
    assert [r.normalise(t) for t in ("7", "10", "6.5", "2", "100", "-3", "1e-05")] == [
        "harmful", "harmful", "not_harmful", "not_harmful", "harmful", None, None]


def test_csv_column_of_mixed_cells_maps_plain_numbers_only(tmp_path):
    """A column with a non-number cell stays text; '7' maps by the range, '007' is unmapped (an
    abstention with the raw value), exactly as a cell the table reader would not call a number."""
    rubric = write_rubric(tmp_path, RANGES)
    data = tmp_path / "l.csv"
    data.write_text("item_id,rater_id,label\na,j,7\nb,j,007\nc,j,n/a\n", encoding="utf-8")
    db = str(tmp_path / "s.db")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", db, "--kind", "judge")
    assert code == 0, out
    from judgekit.store.database import Store

    with Store(db) as s:
        got = s.ratings(rubric=load_rubric(rubric)).set_index("item_id")
    assert got.loc["a", "label"] == "harmful" and got.loc["a", "status"] == "ok"
    assert got.loc["b", "status"] == "abstain" and got.loc["c", "status"] == "abstain"


# ------------------------------------------------------------------ 7c: the pattern as written
def test_pattern_compile_error_shows_the_pattern_as_written(tmp_path):
    extra = "alias_patterns:\n  - {pattern: 'Rating: \\[\\[(10', code: harmful}\n"
    rubric = write_rubric(tmp_path, extra)
    data = tmp_path / "labels.csv"
    data.write_text("item_id,rater_id,label\na,h,harmful\n", encoding="utf-8")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", str(tmp_path / "s.db"))
    line = one_sentence_error((code, out))
    assert r"'Rating: \[\[(10' is not a regular expression (missing ), unterminated subpattern" in line, line
    assert "\\\\" not in line


def test_pattern_compile_error_escapes_control_characters(tmp_path):
    extra = 'alias_patterns:\n  - {pattern: "a\\e]0;x\\a(", code: harmful}\n'
    rubric = write_rubric(tmp_path, extra)
    data = tmp_path / "labels.csv"
    data.write_text("item_id,rater_id,label\na,h,harmful\n", encoding="utf-8")
    code, out = run("import", str(data), "--rubric", str(rubric), "--store", str(tmp_path / "s.db"))
    line = one_sentence_error((code, out))
    assert "\x1b" not in line and r"'a\x1b]0;x\x07(' is not a regular expression" in line, line


# ------------------------------------------------------------------ 6 and 7b: views
def _view_store(tmp_path: Path) -> str:
    from test_rubric_views import build

    return build(tmp_path)


def test_export_ratings_selects_the_labels_stored_under_a_view(tmp_path):
    import pandas as pd
    from test_rubric_views import ALICE, BOB, GOLD

    db = _view_store(tmp_path)
    out = tmp_path / "binary_out.csv"
    code, text = run("export", "ratings", "--store", db, "--rubric", "refusal", "--view", "binary",
                     "--out", str(out))
    assert code == 0, text
    df = pd.read_csv(out, dtype=str)
    assert set(df["rubric"]) == {"refusal@1:binary"}
    got = {(r.item_id, r.rater_id): r.label for r in df.itertuples()}
    want = {(f"i{k:02d}", rater): lab for rater, labels in (("alice", ALICE), ("bob", BOB), ("gold", GOLD))
            for k, lab in enumerate(labels)}
    assert got == want
    # without --view the same rubric's full-rubric ratings only: the judge's, none of the view's
    code, text = run("export", "ratings", "--store", db, "--rubric", "refusal", "--out", str(out))
    assert code == 0, text
    assert set(pd.read_csv(out, dtype=str)["rater_id"]) == {"kw"}


def test_export_ratings_view_needs_its_rubric_and_the_view_id_advice_works(tmp_path):
    db = _view_store(tmp_path)
    out = tmp_path / "o.csv"
    line = one_sentence_error(run("export", "ratings", "--store", db, "--view", "binary", "--out", str(out)))
    assert "give the rubric too: --rubric NAME --view binary" in line, line
    line = one_sentence_error(run("export", "ratings", "--store", db, "--rubric", "refusal@1:binary",
                                   "--out", str(out)))
    assert "--rubric refusal --view binary" in line, line
    # the advice, followed, works for export ratings
    code, text = run("export", "ratings", "--store", db, "--rubric", "refusal", "--view", "binary",
                     "--out", str(out))
    assert code == 0 and "Wrote 36 ratings" in text, text


def test_view_clash_message_says_what_the_user_can_do_and_that_advice_works(tmp_path):
    import pandas as pd

    db = _view_store(tmp_path)
    pd.DataFrame({"item_id": ["i00"], "alice": ["full_refusal"]}).to_csv(tmp_path / "clash.csv", index=False)
    code, text = run("import", str(tmp_path / "clash.csv"), "--rubric", "refusal", "--raters", "alice",
                     "--store", db)
    assert code == 0, text
    line = one_sentence_error(run("agree", "--rubric", "refusal", "--view", "binary", "--store", db,
                                   "--resamples", "10"))
    assert "re-import" not in line and "keep one of them" not in line
    assert line.endswith("the two disagree; import the labels you mean to keep into a new store "
                         "(import … --store NEW.db) and run this there: an import adds labels and "
                         "never deletes one."), line
    # the advice, followed: the binary labels (exported with --view) and the judge into a new store
    from judgekit.store.database import Store

    new = str(tmp_path / "new.db")
    kept = tmp_path / "kept.csv"
    assert run("export", "ratings", "--store", db, "--rubric", "refusal", "--view", "binary",
               "--out", str(kept))[0] == 0
    cols = ["item_id", "rater_id", "rater_kind", "label"]
    pd.read_csv(kept, dtype=str)[cols].to_csv(kept, index=False)
    code, text = run("import", str(kept), "--rubric", "refusal", "--view", "binary", "--store", new)
    assert code == 0, text
    with Store(db) as s:
        s.ratings(rubric=load_rubric("refusal"), rater_kind="judge")[cols].to_csv(
            tmp_path / "judge.csv", index=False)
    code, text = run("import", str(tmp_path / "judge.csv"), "--rubric", "refusal", "--store", new)
    assert code == 0, text
    code, text = run("agree", "--rubric", "refusal", "--view", "binary", "--store", new, "--resamples", "10")
    assert code == 0, text


# ------------------------------------------------------------------ the main agree table
def _long_named_store(tmp_path: Path, n_judges: int) -> tuple[str, list[str], list[list[str]]]:
    import random

    labels = ["full_compliance", "partial_refusal", "full_refusal"]
    rng = random.Random(3)
    judges = [f"judge_with_long_name_number_{k:02d}" for k in range(n_judges)]
    rows = ["item_id,a1,a2," + ",".join(judges)]
    ref, by_judge = [], [[] for _ in judges]
    for i in range(40):
        r = rng.choice(labels)
        js = [rng.choice([r, r, rng.choice(labels)]) for _ in judges]
        rows.append(f"i{i},{r},{rng.choice([r, rng.choice(labels)])}," + ",".join(js))
        ref.append(r)
        for k, lab in enumerate(js):
            by_judge[k].append(lab)
    f = tmp_path / "labels.csv"
    f.write_text("\n".join(rows) + "\n")
    db = str(tmp_path / "s.db")
    code, out = run("import", str(f), "--rubric", "refusal", "--store", db, "--reference", "a1",
                    "--raters", "a2", "--judges", ",".join(judges))
    assert code == 0, out
    return db, judges, [ref, *by_judge]


def _main_table(output: str) -> str:
    return output.split("Judges against the reference (all items)", 1)[1].split("└", 1)[0]


def _printed(tmp_path: Path, db: str, width: int) -> str:
    """The agreement report of ``db`` printed on a terminal ``width`` columns wide."""
    import io
    import json

    from judgekit.core.console import make_console
    from judgekit.report.terminal import print_agreement

    out = tmp_path / "a.json"
    code, text = run("agree", "--rubric", "refusal", "--store", db, "--reference", "a1",
                     "--resamples", "20", "--json", str(out))
    assert code == 0, text
    buf = io.StringIO()
    print_agreement(make_console(file=buf, width=width), json.loads(out.read_text()))
    return buf.getvalue()


def test_main_agree_table_never_truncates_judge_names_and_goes_long_when_too_wide(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    db, judges, labels = _long_named_store(tmp_path, 10)
    out = _printed(tmp_path, db, 100)
    assert "Judges against the reference (all items) (one row per figure)" in out
    table = _main_table(out)
    assert "…" not in table and max(len(ln) for ln in table.splitlines()) <= 100
    for k, name in enumerate(judges):
        kappa = cohen_kappa_score(labels[0], labels[k + 1])
        # the judge's name whole on its first figure's line; its κ with the CI on one line
        assert re.search(rf"│ {name} +│ rated of in scope +│", table), name
        block = table.split(f"│ {name} ", 1)[1]
        assert re.search(rf"│ Cohen κ +│ +{kappa:.3f} \[-?[0-9.]+, -?[0-9.]+\] │", block), (name, kappa)


def test_main_agree_table_stays_wide_when_it_fits(tmp_path):
    db, judges, _ = _long_named_store(tmp_path, 10)
    out = _printed(tmp_path, db, 150)
    assert "(one row per figure)" not in out.split("Leave-one-out", 1)[0]
    table = _main_table(out)
    rows = [ln for ln in table.splitlines() if ln.startswith("│ judge_with")]
    assert [r.split("│")[1].strip() for r in rows] == judges  # one line per judge, name whole
    assert "…" not in table and max(len(ln) for ln in table.splitlines()) <= 150
