"""Label Studio bridge without a server: labeling config, task data, export files, bad input."""

from __future__ import annotations

import json
import socket
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, HTTPServer

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.annotation.labelstudio import (
    LabelStudioClient,
    label_config,
    parse_annotator_map,
    parse_marker,
    pull,
    rubric_marker,
    task_data,
)
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.rubric.model import load_rubric
from judgekit.store.database import Store

RESTR = load_rubric("restrictiveness")
FORM = load_rubric("refusal_form")


# ----------------------------------------------------------------------- config
def test_config_has_one_choice_control_per_rubric_in_rubric_order():
    root = ET.fromstring(label_config([RESTR, FORM]))
    controls = root.findall(".//Choices")
    assert [c.get("name") for c in controls] == ["restrictiveness", "refusal_form"]
    for ctl, rubric in zip(controls, (RESTR, FORM), strict=True):
        assert ctl.get("toName") == "response"
        assert ctl.get("required") == "true"
        assert [ch.get("value") for ch in ctl.findall("Choice")] == rubric.codes
    # the ordinal scale is shown from r0 to r4, each with its description
    first = controls[0].findall("Choice")[0]
    assert "Everything asked for is provided" in first.get("html", "")
    assert first.get("hint", "").startswith("Example: ")
    # conversation turn by turn + the response; the comment box is optional
    para = root.find(".//Paragraphs")
    assert para is not None and para.get("value") == "$messages" and para.get("layout") == "dialogue"
    assert root.find(".//Text[@name='response']").get("value") == "$response"
    assert root.find(".//TextArea[@name='comment']") is not None
    assert ET.fromstring(label_config([RESTR], comment=False)).find(".//TextArea") is None


def test_priority_ordered_rubric_tells_annotators_to_pick_the_first():
    leak = load_rubric("knowledge_leak")
    assert leak.priority_ordered
    headers = [h.get("value") for h in ET.fromstring(label_config([leak])).findall(".//Header")]
    assert any("choose the first one listed" in (h or "") for h in headers)


def test_same_rubric_twice_is_an_error():
    with pytest.raises(JudgekitError, match="given twice"):
        label_config([RESTR, load_rubric("restrictiveness")])


def test_marker_round_trip():
    text = "Some words.\n" + rubric_marker([RESTR, FORM])
    assert parse_marker(text) == [RESTR.ref, FORM.ref]
    assert parse_marker("no marker here") == []


# ------------------------------------------------------------------------ tasks
def test_task_data_is_blind_to_labels_and_wraps_a_prompt_as_one_turn():
    items = pd.DataFrame(
        {
            "item_id": ["a", "b"],
            "prompt": ["How do I kill a process?", None],
            "messages": [None, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                {"role": "user", "content": "now tell me"}]],
            "response": ["Use kill.", "No."],
            "severity": [1, 3],
            "gpt4_label": ["full_compliance", "full_refusal"],
            "judge_score": [0.1, 0.9],
            "gpt4_rationale": ["It helps.", "It declines."],  # a judge's reasons are its output too
            "is_refusal": [False, True],
            "collected": pd.to_datetime(["2026-01-01", "2026-01-02"]),
        }
    )
    # by default no metadata at all: annotators do not see which model wrote a response
    assert [set(d) for d in task_data(items)] == [{"item_id", "messages", "response"}] * 2
    data = task_data(items, meta="all")
    assert data[0] == {
        "item_id": "a",
        "messages": [{"role": "user", "content": "How do I kill a process?"}],
        "response": "Use kill.",
        "severity": 1,
        "collected": "2026-01-01 00:00:00",
    }
    json.dumps(data)  # what goes over the wire
    assert [m["role"] for m in data[1]["messages"]] == ["user", "assistant", "user"]
    assert all(set(d) <= {"item_id", "messages", "response", "severity", "collected"} for d in data)
    # explicit metadata list
    assert set(task_data(items, meta=[])[0]) == {"item_id", "messages", "response"}
    with pytest.raises(JudgekitError, match="'nope', which is not an item column"):
        task_data(items, meta=["nope"])


def test_task_without_text_is_an_error():
    items = pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": [None]})
    with pytest.raises(JudgekitError, match="Item 'a' has no response text"):
        task_data(items)


# --------------------------------------------------------------------- exports
def _ann(aid, user, choices=None, *, updated="2026-01-01T00:00:00Z", cancelled=False, comment=None):
    result = []
    for name, choice in (choices or {}).items():
        result.append({"from_name": name, "to_name": "response", "type": "choices",
                       "value": {"choices": [choice]}})
    if comment:
        result.append({"from_name": "comment", "to_name": "response", "type": "textarea",
                       "value": {"text": [comment]}})
    return {"id": aid, "completed_by": user, "result": result, "was_cancelled": cancelled,
            "created_at": updated, "updated_at": updated}


def _task(tid, item_id, anns):
    return {"id": tid, "data": {"item_id": item_id, "messages": [{"role": "user", "content": f"q{tid}"}],
                                "response": f"r{tid}", "severity": tid}, "annotations": anns}


FULL_EXPORT = [
    _task(1, "i1", [
        _ann(1, 2, {"restrictiveness": "r0_full_compliance", "refusal_form": "full_compliance"}),
        _ann(2, 3, {"restrictiveness": "r1_light_caveats", "refusal_form": "caveated_compliance"},
             comment="adds a warning"),
    ]),
    _task(2, "i2", [
        # annotator 2 revised: the later annotation wins
        _ann(3, 2, {"restrictiveness": "r2_partial", "refusal_form": "refusal_with_alternative"},
             updated="2026-01-01T00:00:00Z"),
        _ann(5, 2, {"restrictiveness": "r4_hard_refusal", "refusal_form": "direct_refusal"},
             updated="2026-01-02T00:00:00Z"),
        _ann(4, 3, {}, cancelled=True),
    ]),
    _task(3, "i3", []),
]
USERS = {2: "alice@example.org", 3: "bob@example.org"}


def _write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


def test_pull_full_json_export(tmp_path, store):
    path = _write(tmp_path, "export.json", FULL_EXPORT)
    summary = pull(store, from_export=path, rubrics=["restrictiveness", "refusal_form"], annotator_map=USERS)
    got = store.ratings(rubric=RESTR).sort_values(["item_id", "rater_id"])
    assert got[["item_id", "rater_id", "label"]].values.tolist() == [
        ["i1", "alice@example.org", "r0_full_compliance"],
        ["i1", "bob@example.org", "r1_light_caveats"],
        ["i2", "alice@example.org", "r4_hard_refusal"],
    ]
    assert set(got["rater_kind"]) == {"human"}
    assert set(got["rubric_hash"]) == {RESTR.hash}
    assert got["value"].tolist() == [0.0, 0.25, 1.0]
    assert got.loc[got["rater_id"] == "bob@example.org", "rationale"].tolist() == ["adds a warning"]
    form = store.ratings(rubric=FORM)
    assert len(form) == 3
    assert summary.cancelled == 1 and summary.superseded == 1 and summary.new == 6
    # items unknown to the store are added from the task data, metadata included
    items = store.items().set_index("item_id")
    assert items.loc["i2", "prompt"] == "q2" and items.loc["i2", "response"] == "r2"
    assert items.loc["i2", "severity"] == 2
    # pulling the same export again writes nothing new
    again = pull(store, from_export=path, rubrics=["restrictiveness", "refusal_form"], annotator_map=USERS)
    assert (again.new, again.changed, again.unchanged) == (0, 0, 6)
    assert len(store.ratings()) == 6 and store.rating_history().empty


def test_revision_between_pulls_replaces_and_keeps_history(tmp_path, store):
    path = _write(tmp_path, "export.json", FULL_EXPORT)
    pull(store, from_export=path, rubrics=["restrictiveness"], annotator_map=USERS)
    revised = json.loads(json.dumps(FULL_EXPORT))
    revised[0]["annotations"][0]["result"][0]["value"]["choices"] = ["r3_deflection"]
    revised[0]["annotations"][0]["updated_at"] = "2026-02-01T00:00:00Z"
    summary = pull(store, from_export=_write(tmp_path, "v2.json", revised), rubrics=["restrictiveness"],
                   annotator_map=USERS)
    assert summary.changed == 1 and summary.unchanged == 2
    r = store.ratings(rubric=RESTR)
    assert r.loc[(r.item_id == "i1") & (r.rater_id == "alice@example.org"), "label"].tolist() == ["r3_deflection"]
    hist = store.rating_history()
    assert hist[["item_id", "rater_id", "label"]].values.tolist() == [["i1", "alice@example.org", "r0_full_compliance"]]


def test_pull_json_min_and_csv_exports(tmp_path, store):
    rows = [
        {"id": 1, "item_id": "i1", "response": "r1", "restrictiveness": "r0_full_compliance",
         "annotator": 2, "annotation_id": 1, "updated_at": "2026-01-01T00:00:00Z", "severity": 1},
        {"id": 1, "item_id": "i1", "response": "r1", "restrictiveness": "r2_partial",
         "annotator": 3, "annotation_id": 2, "updated_at": "2026-01-01T00:00:00Z", "severity": 1,
         "comment": "unsure"},
        {"id": 2, "item_id": "i2", "response": "r2", "restrictiveness": "r4_hard_refusal",
         "annotator": "carol@example.org", "annotation_id": 3, "updated_at": "2026-01-01T00:00:00Z"},
        {"id": 3, "item_id": "i3", "response": "r3"},  # nobody annotated this task
    ]
    pull(store, from_export=_write(tmp_path, "min.json", rows), rubrics=["restrictiveness"], annotator_map=USERS)
    expect = [["i1", "alice@example.org", "r0_full_compliance"], ["i1", "bob@example.org", "r2_partial"],
              ["i2", "carol@example.org", "r4_hard_refusal"]]
    got = store.ratings(rubric=RESTR).sort_values(["item_id", "rater_id"])
    assert got[["item_id", "rater_id", "label"]].values.tolist() == expect
    csv_store = Store(tmp_path / "csv.db")
    csv_path = tmp_path / "export.csv"
    pd.DataFrame(rows).to_csv(csv_path, index=False)
    pull(csv_store, from_export=csv_path, rubrics=["restrictiveness"], annotator_map=USERS)
    got = csv_store.ratings(rubric=RESTR).sort_values(["item_id", "rater_id"])
    assert got[["item_id", "rater_id", "label"]].values.tolist() == expect
    csv_store.close()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda e: e[0]["annotations"][0]["result"][0]["value"].update(choices=["maybe"]),
         r"task 1 \(item 'i1'\), annotation 1 by alice@example.org: choice 'maybe' for restrictiveness "
         r"is not in rubric restrictiveness@1"),
        (lambda e: e[1]["data"].pop("item_id"), r"task 2 has no item_id"),
        (lambda e: e[0]["annotations"][0].update(completed_by=99),
         r"annotator 99 is a Label Studio user id judgekit cannot name"),
    ],
)
def test_bad_export_changes_nothing(tmp_path, store, mutate, message):
    pull(store, from_export=_write(tmp_path, "ok.json", FULL_EXPORT), rubrics=["restrictiveness"],
         annotator_map=USERS)
    before = store.ratings()
    bad = json.loads(json.dumps(FULL_EXPORT))
    # change something else too, so a partial write would show
    bad[0]["annotations"][1]["result"][0]["value"]["choices"] = ["r4_hard_refusal"]
    mutate(bad)
    with pytest.raises(JudgekitError, match=message):
        pull(store, from_export=_write(tmp_path, "bad.json", bad), rubrics=["restrictiveness"],
             annotator_map=USERS)
    pd.testing.assert_frame_equal(store.ratings(), before)
    assert store.rating_history().empty


def test_annotator_map_parsing():
    assert parse_annotator_map("2=a@x.org, 3=bob") == {2: "a@x.org", 3: "bob"}
    with pytest.raises(JudgekitError, match="must look like 'ID=email'"):
        parse_annotator_map("2")


# ----------------------------------------------------------- client / CLI errors
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_missing_address_or_token_names_the_variable(monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    with pytest.raises(JudgekitError, match="LABEL_STUDIO_URL"):
        LabelStudioClient()
    with pytest.raises(JudgekitError, match="LABEL_STUDIO_API_KEY"):
        LabelStudioClient("http://127.0.0.1:1")


def test_cli_server_down_is_one_sentence_without_address_or_token(tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}"
    secret = "s3cr3t-token-value"
    monkeypatch.setenv("LABEL_STUDIO_URL", url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", secret)
    db = tmp_path / "j.db"
    result = CliRunner().invoke(main, ["labelstudio", "pull", "--project", "pilot", "--store", str(db)])
    line = one_sentence_error(result)
    assert line.startswith("error: Cannot reach the Label Studio server in --url / LABEL_STUDIO_URL")
    assert secret not in result.output and url not in result.output


@pytest.mark.parametrize(
    ("url", "token", "message"),
    [
        ("http://127.0.0.1:notaport", "s3cr3t-token-value", "is not a valid URL"),
        ("http://[::1", "s3cr3t-token-value", "is not a valid URL"),
        ("http://127.0.0.1:1", "s3cr3t-tökén-value", "not plain ASCII"),
        ("http://127.0.0.1:1", "s3cr3t-token value", "contains spaces"),
    ],
)
def test_cli_malformed_address_or_token_is_one_sentence(tmp_path, monkeypatch, url, token, message):
    monkeypatch.setenv("LABEL_STUDIO_URL", url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    result = CliRunner().invoke(main, ["labelstudio", "pull", "--project", "pilot", "--store",
                                       str(tmp_path / "j.db")])
    one_sentence_error(result, message)
    assert "s3cr3t" not in result.output and url not in result.output


def test_token_surrounding_whitespace_is_ignored(monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "  abc123\n")
    seen = []

    class Answer(BaseHTTPRequestHandler):  # what the server receives, not the client's internals
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            body = b'{"id": 1}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with LabelStudioClient(f"http://127.0.0.1:{server.server_port} ") as client:
            client.whoami()
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["Token abc123"]


def test_cli_pull_from_export(tmp_path):
    path = _write(tmp_path, "export.json", FULL_EXPORT)
    db = tmp_path / "j.db"
    args = ["labelstudio", "pull", "--from-export", str(path), "--rubric", "restrictiveness",
            "--annotator-map", "2=alice@example.org,3=bob@example.org", "--store", str(db)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Pulled 3 human ratings" in result.output
    assert "1 cancelled annotations skipped" in result.output
    # an export naming annotators only by id, without a map or a server: exit 2, nothing written
    db2 = tmp_path / "k.db"
    result = CliRunner().invoke(main, args[:-4] + ["--store", str(db2)])
    one_sentence_error(result, "--annotator-map")
    with Store(db2) as s:
        assert s.ratings().empty


def test_cli_help_has_examples():
    for cmd in (["labelstudio", "push"], ["labelstudio", "pull"], ["labelstudio", "config"], ["sample"]):
        out = CliRunner().invoke(main, [*cmd, "--help"]).output
        assert "Example" in out, cmd


def test_cli_config_prints_xml():
    result = CliRunner().invoke(main, ["labelstudio", "config", "--rubric", "refusal"])
    assert result.exit_code == 0
    root = ET.fromstring(result.output)
    assert [c.get("value") for c in root.findall(".//Choice")] == load_rubric("refusal").codes


def test_adjudicator_labels_become_the_reference(tmp_path, store):
    path = _write(tmp_path, "export.json", FULL_EXPORT)
    pull(store, from_export=path, rubrics=["restrictiveness"], annotator_map=USERS,
         reference=["bob@example.org"])
    r = store.ratings(rubric=RESTR)
    assert dict(zip(r["rater_id"], r["rater_kind"], strict=False)) == {
        "alice@example.org": "human", "bob@example.org": "reference"}
    with pytest.raises(JudgekitError, match="--reference 'zoe@example.org' rated nothing there"):
        pull(store, from_export=path, rubrics=["restrictiveness"], annotator_map=USERS,
             reference=["zoe@example.org"])


def test_push_of_a_spec_records_nothing_when_the_server_is_down(tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "x" * 20)
    db = tmp_path / "j.db"
    with Store(db) as s:
        s.put_items(pd.DataFrame({"item_id": ["a", "b", "c"], "prompt": "p", "response": "r"}))
    spec = tmp_path / "pilot.yaml"
    spec.write_text("name: pilot\nsize: 2\n")
    result = CliRunner().invoke(main, ["labelstudio", "push", "--rubric", "refusal", "--sample", str(spec),
                                       "--project", "pilot", "--store", str(db)])
    one_sentence_error(result, "Cannot reach the Label Studio server")
    with Store(db) as s:
        assert s.sample_names() == []


def test_push_of_a_sample_to_a_mistyped_store_creates_nothing(tmp_path, monkeypatch):
    # a sample is drawn from (or recorded in) an existing store: a mistyped --store is one
    # sentence, and no empty store file is left behind (items from a file may start a store)
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "x" * 20)
    db = tmp_path / "typo.db"
    for sample in ("pilot", str(tmp_path / "pilot.yaml")):
        (tmp_path / "pilot.yaml").write_text("name: pilot\nsize: 2\n")
        result = CliRunner().invoke(main, ["labelstudio", "push", "--rubric", "refusal", "--sample", sample,
                                           "--project", "pilot", "--store", str(db)])
        one_sentence_error(result, f"Store {db} does not exist")
        assert not db.exists()


# ------------------------------------------------- the test server's start/stop
_FAKE_START = """#!/usr/bin/env bash
# stands in for scripts/labelstudio-server.sh start: $5 is --data-dir's value
sleep 300 >/dev/null 2>&1 </dev/null &
echo $! > "$5/server.pid"
echo "fake server log line" > "$5/server.log"
{tail}
"""


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("sleep 60", "did not start within 3 s"),  # hangs past the timeout
        ('echo "labelstudio-server: it broke" >&2; exit 2', "exit 2"),  # fails after starting
        ("exit 0", "exit 0"),  # claims success without printing the address
    ],
)
def test_failed_server_start_stops_the_started_pid(tmp_path, tail, message):
    from labelstudio_fixtures import ServerStartError, alive, start_server

    script = tmp_path / "fake-start.sh"
    script.write_text(_FAKE_START.format(tail=tail))
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(ServerStartError, match=message) as info:
        start_server(data, "t" * 40, script=script, timeout=3)
    pid = int((data / "server.pid").read_text())
    assert not alive(pid)
    assert "fake server log line" in str(info.value) and "t" * 40 not in str(info.value)


def test_server_script_stop_signals_only_the_label_studio_it_started(tmp_path):
    """A stale server.pid (server gone, its number reused) must not get an unrelated process killed."""
    import subprocess
    import sys

    from labelstudio_fixtures import SCRIPT, alive

    data = tmp_path / "data"
    data.mkdir()
    stop = ["bash", str(SCRIPT), "stop", "--data-dir", str(data)]
    bystander = subprocess.Popen(["sleep", "300"])
    # looks like the server this data dir started: python keeps the arguments in its cmdline
    lookalike = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "label-studio",
                                  "start", "--no-browser", "--data-dir", str(data), "--username", "x"])
    try:
        (data / "server.pid").write_text(f"{bystander.pid}\n")
        done = subprocess.run(stop, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "not a Label Studio" in done.stderr and "signalled nothing" in done.stderr
        assert alive(bystander.pid) and not (data / "server.pid").exists()

        (data / "server.pid").write_text(f"{lookalike.pid}\n")
        done = subprocess.run(stop, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert lookalike.wait(timeout=30) is not None and not (data / "server.pid").exists()
    finally:
        for p in (bystander, lookalike):
            p.kill()
            p.wait()


def test_export_without_timestamps(tmp_path, store):
    # JSON_MIN / CSV from older servers or other tools may carry no created_at / updated_at
    rows = [{"id": 1, "item_id": "i1", "response": "r1", "restrictiveness": "r2_partial", "annotator": 2},
            {"id": 2, "item_id": "i2", "response": "r2", "restrictiveness": "r0_full_compliance", "annotator": 3}]
    before = time.time()
    summary = pull(store, from_export=_write(tmp_path, "min.json", rows), rubrics=["restrictiveness"],
                   annotator_map=USERS)
    assert summary.new == 2
    r = store.ratings(rubric=RESTR).sort_values("item_id")
    assert r["label"].tolist() == ["r2_partial", "r0_full_compliance"]
    assert (r["created_at"] >= before).all()  # the time of the pull


@pytest.mark.parametrize(
    ("export", "message"),
    [
        ([{"id": 1, "data": "x", "annotations": []}], "'data' is not an object"),
        ([{"id": 1, "data": {"item_id": "a"}, "annotations": ["x"]}], "'annotations' is not a list of objects"),
        ([{"id": 1, "data": {"item_id": "a"}, "annotations": [{"id": 7, "completed_by": 2, "result": ["x"]}]}],
         "annotation 7: 'result' is not a list of objects"),
        ([{"id": 1, "data": {"item_id": "a"}, "annotations": [
            {"id": 7, "completed_by": 2, "result": [{"from_name": "refusal", "value": {"choices": "full_refusal"}}]}]}],
         "annotation 7: 'choices' is not a list"),
    ],
)
def test_malformed_json_export_is_one_sentence(tmp_path, store, export, message):
    with pytest.raises(JudgekitError, match=r"task 1 is not in Label Studio's JSON export shape \(.*"
                       + message.replace("(", r"\(")):
        pull(store, from_export=_write(tmp_path, "e.json", export), rubrics=["refusal"], annotator_map=USERS)
    assert store.ratings().empty


def test_pre_1_0_export_with_completions(tmp_path, store):
    old = [{"id": 1, "data": {"item_id": "a", "prompt": "p", "response": "r"},
            "completions": [{"id": 4, "completed_by": 2, "created_at": 1700000000,
                             "result": [{"from_name": "refusal", "value": {"choices": ["full_refusal"]}}]}]}]
    pull(store, from_export=_write(tmp_path, "old.json", old), rubrics=["refusal"], annotator_map=USERS)
    assert store.ratings()[["item_id", "rater_id", "label"]].values.tolist() == [
        ["a", "alice@example.org", "full_refusal"]]


def test_pull_notes_ratings_whose_annotation_is_gone(tmp_path, store):
    path = _write(tmp_path, "export.json", FULL_EXPORT)
    pull(store, from_export=path, rubrics=["restrictiveness"], annotator_map=USERS)
    later = json.loads(json.dumps(FULL_EXPORT))
    del later[0]["annotations"][1]  # bob's annotation of i1 was deleted in Label Studio
    summary = pull(store, from_export=_write(tmp_path, "export.json", later), rubrics=["restrictiveness"],
                   annotator_map=USERS)
    assert (summary.new, summary.changed, summary.unchanged) == (0, 0, 2)
    assert summary.notes == [
        "1 ratings pulled earlier from Label Studio export export.json have no annotation there any "
        "more (deleted or skipped since); they stay in the store and still count."]
    assert len(store.ratings()) == 3  # nothing is deleted
    # an unrelated source does not trigger the note
    other = pull(store, from_export=_write(tmp_path, "other.json", later), rubrics=["restrictiveness"],
                 annotator_map=USERS)
    assert other.notes == []
