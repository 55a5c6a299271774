"""Round trip against a real Label Studio server (started once per run by the fixture).

push two rubrics → two annotators (created through the REST API with the official SDK) annotate,
one cancels, one revises → pull → ratings in the store → agreement report.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from sklearn.metrics import cohen_kappa_score

from judgekit.cli import main
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

pytest_plugins = ["labelstudio_fixtures"]
# the first test also waits for the install (~90 s) and the first start (~25-60 s)
pytestmark = [pytest.mark.labelstudio, pytest.mark.timeout(1800)]

RESTR = load_rubric("restrictiveness")
FORM = load_rubric("refusal_form")

# What the two annotators say about 8 items (alice rates all, bob cancels the last).
ALICE_R = ["r0_full_compliance", "r1_light_caveats", "r2_partial", "r3_deflection",
           "r4_hard_refusal", "r4_hard_refusal", "r0_full_compliance", "r2_partial"]
BOB_R = ["r0_full_compliance", "r2_partial", "r2_partial", "r3_deflection",
         "r4_hard_refusal", "r3_deflection", "r0_full_compliance", None]
ALICE_F = ["full_compliance", "caveated_compliance", "refusal_with_alternative", "in_fiction_deflection",
           "direct_refusal", "direct_refusal", "full_compliance", "early_scene_closure"]
BOB_F = ["full_compliance", "caveated_compliance", "refusal_with_alternative", "early_scene_closure",
         "direct_refusal", "refusal_with_alternative", "caveated_compliance", None]


def _items(n: int = 8, prefix: str = "it") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"{prefix}{i}" for i in range(n)],
            "prompt": [f"Question number {i}?" for i in range(n)],
            "response": [f"Answer number {i}." for i in range(n)],
            "severity": [1 + i % 3 for i in range(n)],
            "prompt_type": ["homonyms" if i % 2 else "privacy" for i in range(n)],
            "gpt4_label": ["full_refusal"] * n,  # a judge's output: must never reach annotators
        }
    )


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _tasks(sdk, project: str) -> dict[str, int]:
    pid = next(p.id for p in sdk.projects.list() if p.title == project)
    return {t.data["item_id"]: t.id for t in sdk.tasks.list(project=pid)}, pid


def _choices(restr: str | None, form: str | None) -> list[dict]:
    out = []
    for name, choice in (("restrictiveness", restr), ("refusal_form", form)):
        if choice is not None:
            out.append({"from_name": name, "to_name": "response", "type": "choices",
                        "value": {"choices": [choice]}})
    return out


def _user(sdk, name: str) -> int:
    return sdk.users.create(username=name, email=f"{name}@example.org", password="pw-" + name * 2).id


def test_round_trip(ls_env, ls_sdk, tmp_path):
    db = str(tmp_path / "judgekit.db")
    items_csv = tmp_path / "items.csv"
    _items().to_csv(items_csv, index=False)

    # push two rubrics in chunks of 3; pushing again adds nothing
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "restrictiveness", "--rubric", "refusal_form",
               "--items", str(items_csv), "--project", "round trip", "--chunk-size", "3", "--meta", "all",
               "--store", db)
    assert "8 new tasks, 0 already there" in out
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "restrictiveness", "--rubric", "refusal_form",
               "--items", str(items_csv), "--project", "round trip", "--store", db)
    assert "0 new tasks, 8 already there" in out
    tasks, pid = _tasks(ls_sdk, "round trip")
    assert sorted(tasks) == [f"it{i}" for i in range(8)]
    for t in ls_sdk.tasks.list(project=pid):
        assert "gpt4_label" not in t.data and t.annotations in (None, [])  # blind, no pre-labels
        assert t.data["severity"] in (1, 2, 3) and t.data["messages"][0]["role"] == "user"

    # two annotators; bob cancels the last item
    alice, bob = _user(ls_sdk, "alice"), _user(ls_sdk, "bob")
    alice_ann = {}
    for i in range(8):
        tid = tasks[f"it{i}"]
        alice_ann[i] = ls_sdk.annotations.create(id=tid, result=_choices(ALICE_R[i], ALICE_F[i]),
                                                 completed_by=alice).id
        if BOB_R[i] is None:
            ls_sdk.annotations.create(id=tid, result=[], was_cancelled=True, completed_by=bob)
        else:
            ls_sdk.annotations.create(id=tid, result=_choices(BOB_R[i], BOB_F[i]), completed_by=bob)

    out = _run("labelstudio", "pull", "--project", "round trip", "--store", db)
    assert "Pulled 30 human ratings" in out and "1 cancelled annotations skipped" in out
    with Store(db) as store:
        r = store.ratings(rubric=RESTR)
        assert len(r) == 15
        assert set(r["rater_kind"]) == {"human"} and set(r["rubric_hash"]) == {RESTR.hash}
        by_rater = r.pivot(index="item_id", columns="rater_id", values="label")
        assert by_rater["alice@example.org"].tolist() == ALICE_R
        assert by_rater["bob@example.org"].fillna("-").tolist() == [x or "-" for x in BOB_R]
        assert len(store.ratings(rubric=FORM)) == 15
        # the pushed items (with metadata) are in the store for slicing
        assert store.items().set_index("item_id").loc["it3", "prompt_type"] == "homonyms"

    # pulling twice does not duplicate
    out = _run("labelstudio", "pull", "--project", "round trip", "--store", db)
    assert "0 new, 0 revised, 30 unchanged" in out
    # the API is read page by page: small pages give every task once, with its annotations
    from judgekit.annotation.labelstudio import LabelStudioClient

    with LabelStudioClient() as client:
        paged = list(client.tasks(pid, page_size=3))
    assert sorted(t["data"]["item_id"] for t in paged) == [f"it{i}" for i in range(8)]
    assert sum(len(t["annotations"]) for t in paged) == 16
    with Store(db) as store:
        assert len(store.ratings()) == 30 and store.rating_history().empty

    # alice revises item 1 (r1 → r2): the new label replaces the old, which goes to history
    ls_sdk.annotations.update(id=alice_ann[1], result=_choices("r2_partial", "caveated_compliance"))
    out = _run("labelstudio", "pull", "--project", "round trip", "--store", db)
    assert "0 new, 1 revised, 29 unchanged" in out
    alice_r = ALICE_R.copy()
    alice_r[1] = "r2_partial"
    with Store(db) as store:
        r = store.ratings(rubric=RESTR)
        assert len(r) == 15
        assert r.pivot(index="item_id", columns="rater_id", values="label")["alice@example.org"].tolist() == alice_r
        hist = store.rating_history()
        assert hist[["item_id", "rater_id", "label"]].values.tolist() == [["it1", "alice@example.org", "r1_light_caveats"]]

        # the agreement report reads them: human ceiling on the 7 items both rated
        from judgekit.agreement.report import agreement_report

        judge = r[r.rater_id == "alice@example.org"].assign(rater_id="gpt4", rater_kind="judge", source="test")
        store.put_ratings(judge)
        for rubric, a_lab, b_lab in ((RESTR, alice_r, BOB_R), (FORM, ALICE_F, BOB_F)):
            if rubric is FORM:
                f = store.ratings(rubric=FORM)
                store.put_ratings(f[f.rater_id == "alice@example.org"].assign(rater_id="gpt4", rater_kind="judge"))
            report = agreement_report(store, rubric=rubric, n_resamples=50)
            ceiling = report.slice()["human_ceiling"]
            pairs = [(a, b) for a, b in zip(a_lab, b_lab, strict=True) if b is not None]
            agree = sum(a == b for a, b in pairs) / len(pairs)
            assert ceiling["percent_agreement"]["n"] == 7
            assert ceiling["percent_agreement"]["value"] == pytest.approx(agree)
            expected_kappa = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], labels=rubric.codes)
            assert ceiling["kappa"]["value"] == pytest.approx(expected_kappa)

    # neither the token nor the address reached the store (database file and its WAL)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("judgekit.db*"))
    assert ls_env.token.encode() not in stored and ls_env.url.encode() not in stored


def test_token_and_password_stay_off_the_command_line_and_out_of_the_log(labelstudio_server):
    # any local user can read a process's command line (ps); only its owner its environment
    cmdline = Path(f"/proc/{labelstudio_server.pid}/cmdline").read_bytes().split(b"\0")
    assert b"label-studio" in b" ".join(cmdline)
    assert labelstudio_server.token.encode() not in b" ".join(cmdline)
    assert b"--password" not in cmdline and b"--user-token" not in cmdline
    assert labelstudio_server.token not in (labelstudio_server.data_dir / "server.log").read_text()


def test_exports_pull_like_the_api(ls_env, ls_sdk, tmp_path):
    """JSON, JSON_MIN and CSV exports downloaded from the server give the API's ratings."""
    db = str(tmp_path / "api.db")
    items_csv = tmp_path / "items.csv"
    _items(4, prefix="ex").to_csv(items_csv, index=False)
    _run("labelstudio", "push", "--show-ids", "--rubric", "restrictiveness", "--items", str(items_csv),
         "--project", "export check", "--store", db)
    tasks, pid = _tasks(ls_sdk, "export check")
    carol, dan = _user(ls_sdk, "carol"), _user(ls_sdk, "dan")
    for i, (c, d) in enumerate([("r0_full_compliance", "r1_light_caveats"), ("r4_hard_refusal", None),
                                ("r2_partial", "r2_partial"), ("r3_deflection", "r4_hard_refusal")]):
        tid = tasks[f"ex{i}"]
        ls_sdk.annotations.create(id=tid, result=_choices(c, None), completed_by=carol)
        if d is None:
            ls_sdk.annotations.create(id=tid, result=[], was_cancelled=True, completed_by=dan)
        else:
            ls_sdk.annotations.create(id=tid, result=_choices(d, None), completed_by=dan)
    _run("labelstudio", "pull", "--project", "export check", "--store", db)
    with Store(db) as s:
        expect = s.ratings().sort_values(["item_id", "rater_id"])[["item_id", "rater_id", "label"]]
    assert len(expect) == 7
    with httpx.Client(base_url=ls_env.url, headers={"Authorization": f"Token {ls_env.token}"}) as http:
        for fmt, suffix in (("JSON", "json"), ("JSON_MIN", "json"), ("CSV", "csv")):
            resp = http.get(f"/api/projects/{pid}/export", params={"exportType": fmt})
            assert resp.status_code == 200
            path = tmp_path / f"export-{fmt}.{suffix}"
            path.write_bytes(resp.content)
            fdb = str(tmp_path / f"{fmt}.db")
            _run("labelstudio", "pull", "--from-export", str(path), "--rubric", "restrictiveness", "--store", fdb)
            with Store(fdb) as s:
                got = s.ratings().sort_values(["item_id", "rater_id"])[["item_id", "rater_id", "label"]]
            pd.testing.assert_frame_equal(got.reset_index(drop=True), expect.reset_index(drop=True))

    # an annotation deleted in Label Studio after a pull: kept in the store, but the pull says so
    ann = ls_sdk.annotations.list(id=tasks["ex0"])
    ls_sdk.annotations.delete(id=next(a.id for a in ann if a.completed_by == carol))
    out = _run("labelstudio", "pull", "--project", "export check", "--store", db)
    assert "0 new, 0 revised, 6 unchanged" in out
    assert "1 ratings pulled earlier from Label Studio project 'export check' have no annotation" in out


def test_sample_push_sets_overlap(ls_env, ls_sdk, tmp_path):
    db = str(tmp_path / "judgekit.db")
    items = _items(20, prefix="ov")
    with Store(db) as s:
        s.put_items(items.drop(columns=["gpt4_label"]))
    _run("sample", "--name", "overlap pilot", "--size", "10", "--by", "severity", "--overlap", "0.3",
         "--random-share", "0.5", "--store", db)
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--sample", "overlap pilot",
               "--project", "overlap pilot", "--store", db)
    assert "10 new tasks" in out and "3 tasks ask for at least two annotators" in out
    with Store(db) as s:
        from judgekit.annotation.sampling import sample_design

        design = sample_design(s, "overlap pilot").set_index("item_id")
    _, pid = _tasks(ls_sdk, "overlap pilot")
    got = {t.data["item_id"]: t.overlap for t in ls_sdk.tasks.list(project=pid)}
    assert set(got) == set(design.index)
    assert got == {i: 2 if design.loc[i, "overlap"] else 1 for i in design.index}


def test_overlap_reaches_tasks_pushed_before_the_sample(ls_env, ls_sdk, tmp_path):
    """Items already in the project (an earlier --items push, or a push interrupted before the
    overlap step) get the sample's overlap on the next push; a third push changes nothing."""
    db = str(tmp_path / "judgekit.db")
    items = _items(12, prefix="pre").drop(columns=["gpt4_label"])
    with Store(db) as s:
        s.put_items(items)
    _run("sample", "--name", "pre pilot", "--size", "12", "--overlap", "0.25", "--store", db)
    items_csv = tmp_path / "items.csv"
    items.to_csv(items_csv, index=False)
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--items", str(items_csv),
               "--project", "pre pilot", "--store", db)
    assert "12 new tasks" in out and "annotators" not in out
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--sample", "pre pilot",
               "--project", "pre pilot", "--store", db)
    assert "0 new tasks, 12 already there" in out and "3 tasks ask for at least two annotators" in out
    with Store(db) as s:
        from judgekit.annotation.sampling import sample_design

        design = sample_design(s, "pre pilot").set_index("item_id")
    _, pid = _tasks(ls_sdk, "pre pilot")
    got = {t.data["item_id"]: t.overlap for t in ls_sdk.tasks.list(project=pid)}
    assert got == {i: 2 if design.loc[i, "overlap"] else 1 for i in design.index}
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--sample", "pre pilot",
               "--project", "pre pilot", "--store", db)
    assert "0 new tasks, 12 already there" in out and "annotators" not in out


# ------------------------------------------------------------------- bad input
def _fails(*args: str) -> str:
    return one_sentence_error(CliRunner().invoke(main, list(args)))


def test_wrong_token_names_the_variable(ls_env, monkeypatch, tmp_path):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "not-the-token-0123456789")
    out = _fails("labelstudio", "pull", "--project", "round trip", "--store", str(tmp_path / "j.db"))
    assert "refused the API token (401)" in out and "LABEL_STUDIO_API_KEY" in out
    assert "not-the-token" not in out and ls_env.url not in out


def test_unknown_project(ls_env, tmp_path):
    out = _fails("labelstudio", "pull", "--project", "no such project", "--store", str(tmp_path / "j.db"))
    assert "project 'no such project' does not exist" in out


def test_pull_with_a_rubric_the_project_does_not_rate(ls_env, tmp_path):
    db = str(tmp_path / "j.db")
    items_csv = tmp_path / "items.csv"
    _items(2, prefix="rr").to_csv(items_csv, index=False)
    _run("labelstudio", "push", "--show-ids", "--rubric", "restrictiveness", "--items", str(items_csv),
         "--project", "rubric check", "--store", db)
    out = _fails("labelstudio", "pull", "--project", "rubric check", "--rubric", "refusal", "--store", db)
    assert "rates restrictiveness@1, not refusal@1" in out
    out = _run("labelstudio", "pull", "--project", "rubric check", "--rubric", "restrictiveness", "--store", db)
    assert "Pulled 0 human ratings" in out


def test_bad_choice_and_missing_item_id_change_nothing(ls_env, ls_sdk, tmp_path):
    db = str(tmp_path / "judgekit.db")
    items_csv = tmp_path / "items.csv"
    _items(3, prefix="bad").to_csv(items_csv, index=False)
    _run("labelstudio", "push", "--show-ids", "--rubric", "restrictiveness", "--items", str(items_csv),
         "--project", "bad input", "--store", db)
    tasks, pid = _tasks(ls_sdk, "bad input")
    erin = _user(ls_sdk, "erin")
    ls_sdk.annotations.create(id=tasks["bad0"], result=_choices("r0_full_compliance", None), completed_by=erin)
    _run("labelstudio", "pull", "--project", "bad input", "--store", db)
    with Store(db) as s:
        before = s.ratings()
    assert len(before) == 1

    # a choice that is not in the rubric (e.g. a config edited by hand in Label Studio)
    bad = ls_sdk.annotations.create(id=tasks["bad1"], result=_choices("maybe", None), completed_by=erin)
    ls_sdk.annotations.create(id=tasks["bad2"], result=_choices("r4_hard_refusal", None), completed_by=erin)
    out = _fails("labelstudio", "pull", "--project", "bad input", "--store", db)
    assert "choice 'maybe' for restrictiveness is not in rubric restrictiveness@1" in out
    assert "erin@example.org" in out
    with Store(db) as s:
        pd.testing.assert_frame_equal(s.ratings(), before)
    ls_sdk.annotations.delete(id=bad.id)

    # a task without item_id (imported into the project by hand)
    ls_sdk.projects.import_tasks(id=pid, request=[{"messages": [{"role": "user", "content": "q"}], "response": "r"}])
    stray = next(t.id for t in ls_sdk.tasks.list(project=pid) if "item_id" not in t.data)
    ls_sdk.annotations.create(id=stray, result=_choices("r2_partial", None), completed_by=erin)
    out = _fails("labelstudio", "pull", "--project", "bad input", "--store", db)
    assert f"task {stray} has no item_id" in out
    with Store(db) as s:
        pd.testing.assert_frame_equal(s.ratings(), before)


def test_push_draws_and_records_a_spec(ls_env, ls_sdk, tmp_path):
    db = str(tmp_path / "judgekit.db")
    with Store(db) as s:
        s.put_items(_items(12, prefix="sp").drop(columns=["gpt4_label"]))
    spec = tmp_path / "spec pilot.yaml"
    spec.write_text("name: spec pilot\nsize: 6\nstrata: [prompt_type]\nmin_per_stratum: 2\noverlap: 0.5\n")
    out = _run("labelstudio", "push", "--show-ids", "--rubric", "refusal", "--sample", str(spec), "--project", "spec pilot",
               "--meta", "severity", "--store", db)
    assert out.startswith("Sample 'spec pilot': 6 of 12 items") and "6 new tasks" in out
    with Store(db) as s:
        from judgekit.annotation.sampling import sample_design

        design = sample_design(s, "spec pilot")
    _, pid = _tasks(ls_sdk, "spec pilot")
    data = [t.data for t in ls_sdk.tasks.list(project=pid)]
    assert sorted(d["item_id"] for d in data) == sorted(design["item_id"])
    assert all(set(d) == {"item_id", "messages", "response", "severity"} for d in data)
