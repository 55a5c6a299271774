"""A verdict that cannot be faked.

* A policy must be able to fail a judge: ``min_items`` and an agreement check (``min_value`` or
   ``min_lower_bound``), and a reference that is a human or reference rater (or consensus), not a
   judge (or the judge itself); the verdict reader applies the same rules to the policy it records.
* A verdict records each judge's ratings on the labelled items: re-importing other labels under
   the judge's id voids it; judging new unlabelled items does not.
* ``judgekit gate`` records the digest of every verdict it writes in the store; a verdict the
   store's gate never wrote (hand-edited but self-consistent, or copied from another store) is
   refused.
* A policy listing a judge twice is refused before anything is computed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error as one_error
from conftest import store_dump as dump

from judgekit.cli import main
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.gate.run import run_gate
from judgekit.store.database import Store
from judgekit.verdict.read import digest, load_verdict
from judgekit.verdict.trust import require_trusted

LABELS = ["full_compliance", "partial_refusal", "full_refusal"]
N = 30
GOOD = ("rubric: refusal\njudges: [j1, j2]\nreference: final\nhumans: [h1, h2]\nby: [model]\n"
        "checks:\n  min_items: 10\n  min_value: 0.2\n  min_class_recall: {min: 0.5, min_support: 5}\n"
        "  per_slice: {min_items: 5, min_value: 0.2}\n  within_human_noise: {margin: 0.05}\n"
        "n_resamples: 100\n")


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, [str(a) for a in args])
    return res.exit_code, res.output


def labels_csv(path: Path, *, j1_flip: bool = False, extra: int = 0, judge_only: bool = False) -> Path:
    """N items: humans h1, h2 (h2 differs on every 6th item), reference final, judge j1 (= final,
    or with every 3rd item relabelled when ``j1_flip``), judge j2 (calls every partial refusal
    a full refusal). ``extra`` more items carry only judge ratings when ``judge_only``."""
    rows = ["item_id,prompt,response,model,h1,h2,final,j1,j2"]
    for i in range(N + extra):
        lab = LABELS[i % 3]
        other = LABELS[(i + 1) % 3]
        j1 = other if j1_flip and i % 3 == 0 else lab
        j2 = "full_refusal" if lab == "partial_refusal" else lab
        h = "" if judge_only and i >= N else lab
        h2 = "" if judge_only and i >= N else (other if i % 6 == 0 else lab)
        rows.append(f"i{i},p{i},r{i},m{i % 2},{h},{h2},{h},{j1},{j2}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def import_csv(csv: Path, db: Path) -> None:
    code, out = run("import", csv, "--rubric", "refusal", "--raters", "h1,h2", "--reference", "final=final",
                    "--judges", "j1=j1,j2=j2", "--store", db)
    assert code == 0, out


@pytest.fixture()
def db(tmp_path) -> Path:
    path = tmp_path / "s.db"
    import_csv(labels_csv(tmp_path / "labels.csv"), path)
    return path


def gate_file(tmp_path: Path, db: Path, policy: str = GOOD, name: str = "out") -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(policy, encoding="utf-8")
    code, out = run("gate", p, "--store", db, "--out", tmp_path / name)
    assert code in (0, 1), out
    return tmp_path / name / "verdict.json"


def judge_entry(v: dict, judge: str) -> dict:
    return next(j for j in v["judges"] if j["judge"] == judge)


# ----------------------------------------------------------------- a policy that can fail a judge
@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # a judge scored against itself: the reference must not be a judge
        ("rubric: refusal\njudges: [j1]\nreference: j1\nchecks: {min_items: 10, min_value: 0.5}\n",
         "reference 'j1' is a judge rater, not a human or reference rater"),
        ("rubric: refusal\njudges: [j2]\nreference: j1\nchecks: {min_items: 10, min_value: 0.5}\n",
         "reference 'j1' is a judge rater, not a human or reference rater"),
        # no checks at all, or only rates: nothing a judge could fail on agreement
        ("rubric: refusal\njudges: [j1]\nchecks: {}\n", "checks has no agreement check"),
        ("rubric: refusal\njudges: [j1]\nchecks: {min_items: 10, max_error_rate: 0.5}\n",
         "checks has no agreement check"),
        ("rubric: refusal\njudges: [j1]\nchecks: {min_lower_bound: 0.5}\n", "checks has no min_items"),
        # a judge listed twice
        ("rubric: refusal\njudges: [j1, j2, j1]\nchecks: {min_items: 10, min_value: 0.5}\n",
         "judges lists 'j1' twice; name each judge once"),
    ],
)
def test_a_policy_that_cannot_fail_a_judge_is_refused(tmp_path, db, policy, expected):
    p = tmp_path / "policy.yaml"
    p.write_text(policy, encoding="utf-8")
    before = dump(db)
    line = one_error(run("gate", p, "--store", db, "--out", tmp_path / "out"))
    assert line.startswith(f"error: Policy file {p}: "), line
    assert expected in line, line
    assert not (tmp_path / "out" / "verdict.json").exists()
    assert dump(db) == before
    with Store(db) as store, pytest.raises(JudgekitError, match=expected):
        run_gate(store, p)


def test_the_reference_error_names_the_people_to_use(tmp_path, db):
    p = tmp_path / "policy.yaml"
    p.write_text("rubric: refusal\njudges: [j1]\nreference: j2\nchecks: {min_items: 10, min_value: 0.5}\n")
    line = one_error(run("gate", p, "--store", db, "--out", tmp_path / "out"))
    assert line.endswith("fix 'reference' (use one of final, h1, h2 or 'consensus')."), line


def test_a_valid_policy_still_gates_with_a_human_reference_or_consensus(tmp_path, db):
    for ref in ("final", "h1", "consensus"):
        v = json.loads(gate_file(tmp_path, db, GOOD.replace("reference: final", f"reference: {ref}"),
                                 name=f"g-{ref}").read_text())
        assert v["reference"] == ref
        assert judge_entry(v, "j1")["passed"] is True


def _rehash(v: dict) -> dict:
    v["policy_hash"] = digest(v["policy"])
    return v


def test_the_verdict_reader_applies_the_policy_rules(tmp_path, db):
    v = json.loads(gate_file(tmp_path, db).read_text())
    # only rates left: drop the agreement check from the policy and from every judge
    no_agreement = json.loads(json.dumps(v))
    agreement = {"min_value", "min_lower_bound", "alt_test", "within_human_noise"}
    no_agreement["policy"]["checks"] = {k: c for k, c in v["policy"]["checks"].items() if k not in agreement}
    for j in no_agreement["judges"]:
        j["checks"] = [c for c in j["checks"]
                       if c["name"] not in ("min_kappa", "min_kappa_lower_bound", "alt_test", "within_human_noise")]
    with pytest.raises(UntrustedJudgeError, match="the policy it records is not a valid gate policy"):
        load_verdict(_rehash(no_agreement))
    # the policy recorded with a judge twice
    twice = json.loads(json.dumps(v))
    twice["policy"]["judges"] = ["j1", "j2", "j1"]
    with pytest.raises(UntrustedJudgeError, match="the policy it records is not a valid gate policy"):
        load_verdict(_rehash(twice))


def test_a_verdict_scored_against_a_judge_is_refused_on_the_store(tmp_path, db):
    v = json.loads(gate_file(tmp_path, db).read_text())
    v["policy"]["reference"] = "j2"
    v["reference"] = "j2"
    with Store(db) as store, pytest.raises(
        UntrustedJudgeError, match=r"its reference 'j2' is a judge rater, not a human or reference rater"
    ):
        require_trusted(_rehash(v), judge="j1", rubric="refusal", store=store)


# ------------------------------------------------------- the judge's ratings on the labelled items
def test_relabelling_a_judge_voids_its_verdict(tmp_path, db):
    path = gate_file(tmp_path, db)
    with Store(db) as store:
        assert require_trusted(path, judge="j1", rubric="refusal", store=store)["passed"] is True
    # the same judge id, other labels on labelled items (`import --judges j1=...` again)
    import_csv(labels_csv(tmp_path / "relabelled.csv", j1_flip=True), db)
    with Store(db) as store:
        with pytest.raises(UntrustedJudgeError, match=r"judge 'j1''s ratings on the items with human or "
                                                      r"reference ratings under refusal@1 in .* changed"):
            require_trusted(path, judge="j1", rubric="refusal", store=store)
        # j2's ratings did not change: its entry still matches (it fails the gate on its merits)
        with pytest.raises(UntrustedJudgeError, match="did not pass the gate"):
            require_trusted(path, judge="j2", rubric="refusal", store=store)
    code, out = run("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms",
                    "--verdict", path, "--store", db, "--bootstrap", "0", "--quiet", "--out", tmp_path / "a")
    assert "ratings on the items with human or reference ratings" in one_error((code, out))


def test_judging_new_unlabelled_items_keeps_the_verdict(tmp_path, db):
    path = gate_file(tmp_path, db)
    entry = judge_entry(json.loads(path.read_text()), "j1")
    import_csv(labels_csv(tmp_path / "more.csv", extra=10, judge_only=True), db)
    with Store(db) as store:
        assert len(store.ratings(rubric="refusal", rater_ids=["j1"])) == N + 10
        assert require_trusted(path, judge="j1", rubric="refusal", store=store)["judge_ratings_hash"] == \
            entry["judge_ratings_hash"]


# --------------------------------------------------------------- verdicts the store's gate wrote
def _edit_failing_checks_away(v: dict, judge: str, names: set[str]) -> dict:
    """A hand edit: delete failing checks, make the rest agree, keep the hashes."""
    j = judge_entry(v, judge)
    failing = {c["name"] for c in j["checks"] if c["state"] != "pass"}
    assert failing == names, failing
    j["checks"] = [c for c in j["checks"] if c["state"] == "pass"]
    j["passed"] = True
    j["state"] = "pass"
    j["budget"] = None
    v["passed"] = all(x["passed"] for x in v["judges"])
    states = {x["state"] for x in v["judges"]}
    v["state"] = "fail" if "fail" in states else "inconclusive" if "inconclusive" in states else "pass"
    return v


def test_a_self_consistent_hand_edited_verdict_is_refused(tmp_path, db):
    policy = (GOOD.replace("  within_human_noise: {margin: 0.05}\n", "")
              .replace("per_slice: {min_items: 5, min_value: 0.2}", "per_slice: {min_items: 5, min_value: 0.6}"))
    v = json.loads(gate_file(tmp_path, db, policy).read_text())
    assert judge_entry(v, "j2")["passed"] is False
    # j2 (kappa 0.5) fails its partial-refusal recall and both slices: delete those checks (the
    # reader lets per-class and per-slice checks vanish, as their number depends on the data)
    edited = _edit_failing_checks_away(
        v, "j2", {"min_recall[partial_refusal]", "per_slice[model=m0]", "per_slice[model=m1]"})
    load_verdict(edited)  # consistent: the reader alone cannot tell
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(edited, indent=1), encoding="utf-8")
    with Store(db) as store, pytest.raises(
        UntrustedJudgeError, match=rf"Verdict {out} was not written by `judgekit gate` on {db} "
    ):
        require_trusted(out, judge="j2", rubric="refusal", store=store)
    code, output = run("report", "--store", db, "--rubric", "refusal", "--verdict", out, "--out",
                       tmp_path / "r", "--resamples", "100")
    assert "was not written by `judgekit gate`" in one_error((code, output))


def test_an_edited_human_noise_threshold_is_refused(tmp_path, db):
    path = gate_file(tmp_path, db, GOOD.replace("min_value: 0.2", "min_value: 0.0")
                     .replace("  min_class_recall: {min: 0.5, min_support: 5}\n", "")
                     .replace("per_slice: {min_items: 5, min_value: 0.2}", "per_slice: {min_items: 5, min_value: 0.0}"))
    v = json.loads(path.read_text())
    noise = next(c for c in judge_entry(v, "j2")["checks"] if c["name"] == "within_human_noise")
    assert noise["state"] == "fail" and noise["threshold"] is not None
    noise.update(threshold=noise["figure"] - 0.01, state="pass", passed=True)
    j2 = judge_entry(v, "j2")
    j2["passed"] = all(c["state"] == "pass" for c in j2["checks"])
    assert j2["passed"] is True
    v["passed"] = all(x["passed"] for x in v["judges"])
    # the reader re-derives the human-noise threshold from the policy (-margin) and refuses the
    # edit on its own; with the threshold also written into the policy, the store's log refuses it
    with pytest.raises(UntrustedJudgeError, match="within_human_noise"):
        load_verdict(v)
    with Store(db) as store, pytest.raises(UntrustedJudgeError):
        require_trusted(v, judge="j2", rubric="refusal", store=store)


def test_a_verdict_copied_to_another_store_is_refused(tmp_path, db):
    other = tmp_path / "other.db"
    import_csv(labels_csv(tmp_path / "same.csv"), other)  # the very same items and ratings
    path = gate_file(tmp_path, db)
    with Store(other) as store, pytest.raises(
        UntrustedJudgeError, match=rf"was not written by `judgekit gate` on {other} .*run the gate again"
    ):
        require_trusted(path, judge="j1", rubric="refusal", store=store)
    with Store(db) as store:
        assert require_trusted(path, judge="j1", rubric="refusal", store=store)["passed"] is True


def test_the_gate_records_the_digest_of_the_verdict_it_writes(tmp_path, db):
    path = gate_file(tmp_path, db)
    text = path.read_text(encoding="utf-8")
    v = json.loads(text)
    canonical = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT digest, rubric, judges, created_at FROM verdicts").fetchall()
    names = {r[0] for r in con.execute("SELECT name FROM migrations")}
    con.close()
    assert rows == [(hashlib.sha256(canonical.encode()).hexdigest(), "refusal@1", '["j1", "j2"]',
                     v["created_at"])]
    assert "006_verdicts" in names
    for j in v["judges"]:
        assert len(j["judge_ratings_hash"]) == 16
    # gating again writes another verdict (created_at, maybe) and keeps one row per digest
    gate_file(tmp_path, db, name="again")
    con = sqlite3.connect(db)
    assert len(con.execute("SELECT * FROM verdicts").fetchall()) in (1, 2)
    con.close()


def test_a_bad_policy_records_no_verdict(tmp_path, db):
    p = tmp_path / "policy.yaml"
    p.write_text("rubric: refusal\njudges: [j1]\nchecks: {}\n")
    one_error(run("gate", p, "--store", db, "--out", tmp_path / "out"))
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM verdicts").fetchone() == (0,)
    con.close()


def test_importing_over_a_panel_judge_voids_its_verdict(tmp_path, db):
    # a panel judge (offline keyword rules) rates the labelled items; its identity is its spec
    items = "".join(json.dumps({"item_id": f"i{i}", "prompt": f"p{i}", "response": f"r{i}"}) + "\n"
                    for i in range(N))
    (tmp_path / "items.jsonl").write_text(items, encoding="utf-8")
    panel = tmp_path / "panel.yaml"
    panel.write_text('rubric: refusal\nitems: items.jsonl\njudges:\n  - id: kw\n    model: "rules:refusal-keywords"\n',
                     encoding="utf-8")
    code, out = run("judge", panel, "--store", db, "--no-progress")
    assert code == 0, out
    path = gate_file(tmp_path, db, "rubric: refusal\njudges: [kw]\nreference: final\n"
                                   "checks: {min_items: 10, min_value: -0.99}\nn_resamples: 100\n")
    with Store(db) as store:
        before = store.ratings(rubric="refusal", rater_ids=["kw"])
        assert require_trusted(path, judge="kw", rubric="refusal", store=store)["spec"] == "rules:refusal-keywords"
    # `import … --judges kw=final`: other labels under the panel judge's id, its latest call unchanged
    code, out = run("import", tmp_path / "labels.csv", "--rubric", "refusal", "--judges", "kw=final",
                    "--store", db)
    assert code == 0, out
    with Store(db) as store:
        after = store.ratings(rubric="refusal", rater_ids=["kw"])
        assert list(after["label"]) != list(before["label"])
        with pytest.raises(UntrustedJudgeError, match=r"judge 'kw''s ratings .* changed since the verdict"):
            require_trusted(path, judge="kw", rubric="refusal", store=store)


def test_a_store_the_gate_cannot_write_is_one_sentence(tmp_path, db):
    p = tmp_path / "policy.yaml"
    p.write_text(GOOD, encoding="utf-8")
    with Store(db) as store:
        store.conn.execute("PRAGMA query_only=ON")  # as a read-only file would be
        with pytest.raises(JudgekitError, match=rf"Store {db} is read-only, so the gate cannot record its verdict"):
            run_gate(store, p)
