"""`agree` and `gate` warn (one line on stderr) when the reference is one human annotator while
other human raters exist, with that annotator's Cohen's κ and n against the others' majority; the
warning never enters the JSON or the verdict and never changes the exit code. A consensus or an
adjudicated reference, or a store with one human, is not warned about.

The expected κ is computed here with sklearn from the rows written, never by judgekit."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from annotator_study import annotator_rows, annotator_store, rating_row  # noqa: E402
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main
from judgekit.rubric.model import load_rubric

R = load_rubric("refusal")
C = list(R.codes)


_row = rating_row


def _rows(humans: tuple[str, ...], n: int = 90, seed: int = 3) -> list[dict]:
    """``humans`` annotators (c, when present, skips every 4th item) and one judge j."""
    return annotator_rows(humans, n, seed)


def _store(path: Path, rows: list[dict]) -> str:
    return annotator_store(path, rows, lambda i: "m")


def _expected(rows: list[dict], rater: str, others: tuple[str, ...]) -> str:
    """``κ (n = N)`` of ``rater`` against the strict majority of ``others`` (sklearn)."""
    votes: dict[str, Counter] = {}
    for r in rows:
        if r["rater_id"] in others:
            votes.setdefault(r["item_id"], Counter())[r["label"]] += 1
    majority = {}
    for item, c in votes.items():
        (top, k), *rest = c.most_common()
        if not rest or rest[0][1] < k:
            majority[item] = top
    mine = {r["item_id"]: r["label"] for r in rows if r["rater_id"] == rater}
    both = sorted(set(mine) & set(majority))
    kappa = cohen_kappa_score([mine[i] for i in both], [majority[i] for i in both], labels=C)
    return f"{kappa:.3f} (n = {len(both)})"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _agree(db: str, reference: str | None):
    ref = ["--reference", reference] if reference else []
    r = run("agree", "--rubric", "refusal", *ref, "--resamples", 50, "--json", "-", "--store", db)
    assert r.exit_code == 0, r.output
    json.loads(r.stdout)  # the warning never enters the JSON on stdout
    assert "one annotator" not in r.stdout
    return r


def _gate(tmp_path: Path, db: str, reference: str | None, name: str):
    policy = tmp_path / f"{name}.yaml"
    ref = f"reference: {reference}\n" if reference else ""
    policy.write_text(f"rubric: refusal\njudges: [j]\n{ref}checks:\n  min_items: 10\n  min_value: 0.3\n"
                      "n_resamples: 100\n", encoding="utf-8")
    out = tmp_path / name
    r = run("gate", policy, "--store", db, "--out", out, "--json", "-")
    verdict = json.loads(r.stdout)  # the verdict on stdout stays JSON
    assert r.exit_code == {"pass": 0, "fail": 1, "inconclusive": 3}[verdict["state"]], r.output
    on_disk = (out / "verdict.json").read_text(encoding="utf-8")
    assert "one annotator" not in on_disk and "one annotator" not in r.stdout
    return r, verdict


def test_agree_warns_when_one_annotator_is_the_reference(tmp_path) -> None:
    rows = _rows(("a", "b", "c"))
    db = _store(tmp_path / "s.db", rows)
    r = _agree(db, "a")
    lines = [x for x in r.stderr.splitlines() if "warning:" in x]
    assert len(lines) == 1, r.stderr
    assert "reference a is one annotator" in lines[0]
    assert _expected(rows, "a", ("b", "c")) in lines[0]


def test_agree_warning_leaves_the_report_as_it_was(tmp_path) -> None:
    """The same JSON with the table printed or not; the warning also reaches stderr with --quiet."""
    db = _store(tmp_path / "s.db", _rows(("a", "b", "c")))
    quiet = run("agree", "--rubric", "refusal", "--reference", "a", "--resamples", 50, "--quiet",
                "--json", tmp_path / "a.json", "--store", db)
    assert quiet.exit_code == 0 and quiet.stderr.count("warning:") == 1
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads(_agree(db, "a").stdout)


@pytest.mark.parametrize("reference", [None, "consensus", "maj", "j"])
def test_agree_does_not_warn_for_a_reference_of_several(tmp_path, reference) -> None:
    db = _store(tmp_path / "s.db", _rows(("a", "b", "c")))
    assert run("adjudicate", "--rubric", "refusal", "--raters", "a,b,c", "--as", "maj",
               "--store", db).exit_code == 0
    if reference == "j":  # a judge as the reference is not an annotator among annotators
        r = run("agree", "--rubric", "refusal", "--reference", "j", "--judges", "j", "--resamples", 50,
                "--json", "-", "--store", db)
    else:
        r = _agree(db, reference)
    assert "warning:" not in r.stderr


def test_agree_does_not_warn_with_one_human(tmp_path) -> None:
    db = _store(tmp_path / "s.db", _rows(("a",)))
    assert "warning:" not in _agree(db, "a").stderr


def test_gate_warns_when_its_reference_is_one_annotator(tmp_path) -> None:
    rows = _rows(("a", "b", "c"))
    db = _store(tmp_path / "s.db", rows)
    r, verdict = _gate(tmp_path, db, "a", "single")
    assert verdict["reference"] == "a"
    lines = [x for x in r.stderr.splitlines() if "warning:" in x]
    assert len(lines) == 1, r.stderr
    assert _expected(rows, "a", ("b", "c")) in lines[0]


@pytest.mark.parametrize("reference", [None, "consensus", "maj"])
def test_gate_does_not_warn_for_a_reference_of_several(tmp_path, reference) -> None:
    db = _store(tmp_path / "s.db", _rows(("a", "b", "c")))
    assert run("adjudicate", "--rubric", "refusal", "--raters", "a,b,c", "--as", "maj",
               "--store", db).exit_code == 0
    r, _ = _gate(tmp_path, db, reference, "several")
    assert "warning:" not in r.stderr


def test_gate_does_not_warn_with_one_human(tmp_path) -> None:
    db = _store(tmp_path / "s.db", _rows(("a",)))
    r, _ = _gate(tmp_path, db, "a", "one")
    assert "warning:" not in r.stderr


#: (item_id, framing, response, labels of h1, h2, h3) under the framing's rubric
FRAMED = [
    ("a1", 1, "I can't say.", ("verbatim_refusal", "verbatim_refusal", "other")),
    ("a2", 1, "It is Marcus Webb.", ("target_leak", "distractor", "distractor")),
    ("a3", 1, "The envoy is Kalei Lin.", ("target_leak", "target_leak", "target_leak")),
    ("a4", 1, "Let us talk about tea.", ("other", "other", "other")),
]


def test_agree_per_framing_panel_warns_once_per_rubric(tmp_path) -> None:
    import yaml
    from conftest import rubric_copy

    rubric_copy(tmp_path, "knowledge_leak", "leak_a", "Framing 1.")
    with (tmp_path / "items.jsonl").open("w", encoding="utf-8") as fh:
        for i, f, t, _ in FRAMED:
            fh.write(json.dumps({"item_id": i, "prompt": "Who is the envoy?", "response": t, "framing": f}) + "\n")
    panel = tmp_path / "panel.yaml"
    panel.write_text(yaml.safe_dump({
        "rubric_by": {"column": "framing", "rubrics": {1: "leak_a.yaml"}},
        "items": "items.jsonl",
        "judges": [{"id": "rules", "model": "rules:knowledge-leak", "options": {
            "refusal_pool": ["I can't say."], "target": ["Kalei Lin"], "distractors": ["Marcus Webb"],
            "pool_match": "exact", "word_boundary": True}}]}, sort_keys=False))
    db = tmp_path / "s.db"
    assert CliRunner().invoke(main, ["judge", str(panel), "--store", str(db)]).exit_code == 0
    csv = tmp_path / "h.csv"
    csv.write_text("item_id,h1,h2,h3\n" + "".join(f"{i},{','.join(labs)}\n" for i, _, _, labs in FRAMED))
    imp = CliRunner().invoke(main, ["import", str(csv), "--rubric", str(tmp_path / "leak_a.yaml"),
                                    "--raters", "h1,h2,h3", "--store", str(db)])
    assert imp.exit_code == 0, imp.output
    r = run("agree", "--panel", panel, "--reference", "h1", "--resamples", 20, "--json", "-", "--store", db)
    assert r.exit_code == 0, r.output
    json.loads(r.stdout)
    lines = [x for x in r.stderr.splitlines() if "warning:" in x]
    assert len(lines) == 1 and "reference h1 is one annotator" in lines[0], r.stderr
    # h2 and h3 tie on a1 (no majority there): h1 against their majority on a2, a3, a4
    mine, rest = ["target_leak", "target_leak", "other"], ["distractor", "target_leak", "other"]
    codes = list(load_rubric(str(tmp_path / "leak_a.yaml")).codes)
    assert f"{cohen_kappa_score(mine, rest, labels=codes):.3f} (n = 3)" in lines[0]
    consensus = run("agree", "--panel", panel, "--resamples", 20, "--json", "-", "--store", db)
    assert consensus.exit_code == 0 and "warning:" not in consensus.stderr


def test_gate_under_a_view_warns_with_the_kappa_in_the_view_codes(tmp_path) -> None:
    """A policy with ``view: binary`` gates on the collapsed codes: the annotator's κ is read in
    them too (each label mapped by the rubric's view, then the others' strict majority)."""
    view = R.views["binary"]
    rows = [{**r, "label": view.codes[r["label"]]} for r in _rows(("a", "b", "c"))]
    db = _store(tmp_path / "s.db", _rows(("a", "b", "c")))
    policy = tmp_path / "view.yaml"
    policy.write_text("rubric: refusal\nview: binary\njudges: [j]\nreference: a\nchecks:\n  min_items: 10\n"
                      "  min_value: 0.3\nn_resamples: 100\n", encoding="utf-8")
    r = run("gate", policy, "--store", db, "--out", tmp_path / "v", "--json", "-")
    verdict = json.loads(r.stdout)
    assert r.exit_code == {"pass": 0, "fail": 1, "inconclusive": 3}[verdict["state"]]
    lines = [x for x in r.stderr.splitlines() if "is one annotator" in x]
    assert len(lines) == 1, r.stderr
    votes: dict[str, Counter] = {}
    for row in rows:
        if row["rater_id"] in ("b", "c"):
            votes.setdefault(row["item_id"], Counter())[row["label"]] += 1
    rest = {i: c.most_common(1)[0][0] for i, c in votes.items()
            if len(c) == 1 or c.most_common(2)[0][1] > c.most_common(2)[1][1]}
    mine = {row["item_id"]: row["label"] for row in rows if row["rater_id"] == "a"}
    both = sorted(set(mine) & set(rest))
    kappa = cohen_kappa_score([mine[i] for i in both], [rest[i] for i in both])
    assert f"{kappa:.3f} (n = {len(both)})" in lines[0]
