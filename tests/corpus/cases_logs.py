"""Bad files other tools write: Label Studio exports (JSON, JSON_MIN, CSV), Inspect AI logs
(``.json``, ``.eval``) and verdicts (``verdict.json``, edited by hand or by another tool)."""

from __future__ import annotations

import copy
import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus.base import FOLDER, Case, Valid, text, zip_bytes

LATIN1 = '[{"data": {"item_id": "caf\xe9"}}]'.encode("latin-1")
DEEP = "[" * 100_000 + "]" * 100_000


# ----------------------------------------------------------------------------- Label Studio
def _ann(aid: int, user: Any, choice: str | list | None = "r2_partial", **over: Any) -> dict:
    result = []
    if choice is not None:
        result.append({"from_name": "restrictiveness", "to_name": "response", "type": "choices",
                       "value": {"choices": choice if isinstance(choice, list) else [choice]}})
    a = {"id": aid, "completed_by": user, "result": result, "was_cancelled": False,
         "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    a.update(over)
    return a


def _task(tid: int, item_id: str | None, anns: list, **data_over: Any) -> dict:
    data = {"item_id": item_id, "messages": [{"role": "user", "content": f"question {tid}"}],
            "response": f"answer {tid}", "severity": tid}
    data.update(data_over)
    if item_id is None:
        data.pop("item_id")
    return {"id": tid, "data": data, "annotations": anns}


def full_export() -> list[dict]:
    return [_task(1, "ls1", [_ann(1, 2, "r0_full_compliance"), _ann(2, 3, "r1_light_caveats")]),
            _task(2, "ls2", [_ann(3, 2, "r4_hard_refusal")])]


LS_ARGS = ("labelstudio", "pull", "--from-export", "{case}/export.%s", "--rubric", "restrictiveness",
           "--annotator-map", "2=alice@example.org,3=bob@example.org", "--store", "{store}")


def ls(cid: str, kind: str, content: bytes | object, expect: tuple, *, ext: str = "json",
       xfail: str | None = None, what: tuple = ("Label Studio export",)) -> Case:
    args = tuple(a % ext if "%s" in a else a for a in LS_ARGS)
    return Case(id=f"{kind}-{cid}", kind=kind, files={f"export.{ext}": content}, args=args,
                expect=(*what, *expect), xfail=xfail)


def edited(edit: Callable[[list[dict]], Any]) -> bytes:
    e = full_export()
    e[1]["annotations"][0]["result"][0]["value"]["choices"] = ["r3_deflection"]  # a second change
    edit(e)
    return text(json.dumps(e))


def _set(obj: dict, key: str, value: Any) -> None:
    obj[key] = value


LS_JSON_CASES = [
    ls("bad-choice", "ls-json", edited(lambda e: e[0]["annotations"][0]["result"][0]["value"].update(
        choices=["maybe"])), ("task 1", "choice 'maybe'")),
    ls("choice-number", "ls-json", edited(lambda e: e[0]["annotations"][0]["result"][0]["value"].update(
        choices=[7])), ("task 1", "7")),
    ls("choices-not-list", "ls-json", edited(lambda e: e[0]["annotations"][0]["result"][0]["value"].update(
        choices="r2_partial")), ("task 1", "'choices' is not a list")),
    ls("two-choices", "ls-json", edited(lambda e: e[0]["annotations"][0]["result"][0]["value"].update(
        choices=["r0_full_compliance", "r4_hard_refusal"])), ("task 1",)),
    ls("no-item-id", "ls-json", edited(lambda e: e[1]["data"].pop("item_id")), ("task 2", "no item_id")),
    ls("unknown-user-id", "ls-json", edited(lambda e: _set(e[0]["annotations"][0], "completed_by", 99)),
       ("annotator 99",)),
    ls("completed-by-list", "ls-json", edited(lambda e: _set(e[0]["annotations"][0], "completed_by", [2, 3])),
       ("task 1", "completed_by")),
    ls("annotator-object-no-email", "ls-json",
       edited(lambda e: _set(e[0]["annotations"][0], "completed_by", {"id": {"nested": 1}})),
       ("task 1",)),
    ls("messages-strings", "ls-json", edited(lambda e: _set(e[0]["data"], "messages", ["hi", "there"])),
       ("task 1", "messages")),
    ls("data-not-object", "ls-json", edited(lambda e: _set(e[0], "data", ["ls1"])), ("task 1", "'data'")),
    ls("annotations-not-list", "ls-json", edited(lambda e: _set(e[0], "annotations", {"id": 1})),
       ("task 1", "'annotations'")),
    ls("result-not-list", "ls-json", edited(lambda e: _set(e[0]["annotations"][0], "result", "r2_partial")),
       ("task 1", "'result'")),
    ls("value-not-object", "ls-json", edited(lambda e: _set(e[0]["annotations"][0]["result"][0], "value", 5)),
       ("task 1",)),
    ls("item-id-object", "ls-json", edited(lambda e: _set(e[0]["data"], "item_id", {"a": 1})),
       ("task 1", "item_id")),
    ls("item-id-space", "ls-json", edited(lambda e: _set(e[0]["data"], "item_id", "ls1 ")),
       (("task 1", "row 1"), "item_id")),
    ls("response-number", "ls-json", edited(lambda e: _set(e[0]["data"], "response", 5)),
       ("task 1", "response")),
    ls("cancelled-text-false", "ls-json", edited(lambda e: _set(e[0]["annotations"][0], "was_cancelled", "false")),
       ("task 1", "was_cancelled")),
    ls("updated-at-text", "ls-json", edited(lambda e: _set(e[0]["annotations"][0], "updated_at", "yesterday")),
       ("task 1", "updated_at")),
    ls("stored-item-other-text", "ls-json", edited(lambda e: _set(e[0]["data"], "item_id", "i0")),
       ("task 1", "item 'i0'", "another response")),
    ls("stored-item-other-conversation", "ls-json",
       edited(lambda e: e[0]["data"].update(item_id="i0", response="response 0")),
       ("task 1", "item 'i0'", "another conversation")),
    ls("invalid", "ls-json", text(json.dumps(full_export())[:-40]), ("invalid JSON",)),
    ls("object", "ls-json", text(json.dumps({"tasks": full_export()})), ("JSON list",)),
    ls("list-of-numbers", "ls-json", b"[1, 2]", ("JSON object",)),
    ls("latin1", "ls-json", LATIN1, ("UTF-8",)),
    ls("empty", "ls-json", b"", ()),
    ls("folder", "ls-json", FOLDER, (), what=()),
    ls("deep", "ls-json", text("[" + DEEP + "]"), ()),
]


def min_rows() -> list[dict]:
    return [{"id": 1, "item_id": "ls1", "response": "answer 1", "restrictiveness": "r0_full_compliance",
             "annotator": 2, "annotation_id": 1, "updated_at": "2026-01-01T00:00:00Z"},
            {"id": 2, "item_id": "ls2", "response": "answer 2", "restrictiveness": "r4_hard_refusal",
             "annotator": "carol@example.org", "annotation_id": 2, "updated_at": "2026-01-01T00:00:00Z"}]


def min_edited(edit: Callable[[list[dict]], Any]) -> list[dict]:
    rows = min_rows()
    rows[1]["restrictiveness"] = "r3_deflection"
    edit(rows)
    return rows


LS_MIN_CASES = [
    ls("bad-choice", "ls-min", text(json.dumps(min_edited(lambda r: _set(r[0], "restrictiveness", "maybe")))),
       ("'maybe'",)),
    ls("no-item-id", "ls-min", text(json.dumps(min_edited(lambda r: r[0].pop("item_id")))),
       ("row 1", "no item_id")),
    ls("annotator-list", "ls-min", text(json.dumps(min_edited(lambda r: _set(r[0], "annotator", [2, 3])))),
       ("row 1", "annotator")),
    ls("annotator-unknown-id", "ls-min", text(json.dumps(min_edited(lambda r: _set(r[0], "annotator", 99)))),
       ("annotator 99",)),
    ls("choice-object", "ls-min", text(json.dumps(min_edited(
        lambda r: _set(r[0], "restrictiveness", {"choices": {"a": 1}})))), (("task 1", "row 1"),)),
]


def _csv_rows(rows: list[dict]) -> bytes:
    cols = ["id", "item_id", "response", "restrictiveness", "annotator", "annotation_id", "updated_at"]
    lines = [",".join(cols)] + [",".join(str(r.get(c, "")) for c in cols) for r in rows]
    return text("\n".join(lines) + "\n")


LS_CSV_CASES = [
    ls("bad-choice", "ls-csv", _csv_rows(min_edited(lambda r: _set(r[0], "restrictiveness", "maybe"))),
       ("'maybe'",), ext="csv"),
    ls("no-annotator-column", "ls-csv", text("id,item_id,restrictiveness\n1,ls1,r0_full_compliance\n"),
       ("'annotator'",), ext="csv"),
    ls("no-item-id", "ls-csv", _csv_rows(min_edited(lambda r: _set(r[0], "item_id", ""))),
       (("row 1", "line 2"), "no item_id"), ext="csv"),
    ls("ragged", "ls-csv", _csv_rows(min_rows()) + b"3,ls3,answer 3,r2_partial,2,3,x,extra\n",
       ("line 4",), ext="csv"),
    ls("latin1", "ls-csv", "id,item_id,annotator\n1,caf\xe9,2\n".encode("latin-1"), (("UTF-8", "utf-8"),),
       ext="csv"),
    ls("empty", "ls-csv", b"", (), ext="csv"),
    ls("item-id-nul", "ls-csv", _csv_rows(min_edited(lambda r: _set(r[0], "item_id", "ls\x001"))),
       ("item_id",), ext="csv"),
]

# ----------------------------------------------------------------------------- Inspect logs
SPEC = {"eval_id": "e1", "run_id": "r1", "created": "2025-05-01T10:00:00+00:00", "task": "probe",
        "task_id": "t1", "task_version": 0, "dataset": {"name": "probe", "samples": 2},
        "model": "openai/gpt-4o-mini", "config": {"epochs": 1}}


def sample(sid: Any, **over: Any) -> dict:
    s = {"id": sid, "epoch": 1, "input": f"question {sid}", "target": "", "messages": [],
         "output": {"model": "m", "completion": f"answer {sid}"}, "metadata": {"category": "c"},
         "store": {}, "events": [], "model_usage": {}, "attachments": {},
         "scores": {"grader": {"value": "full_refusal", "explanation": "declines"}}}
    s.update(over)
    return s


def log(samples: list | None = None, **spec: Any) -> dict:
    return {"version": 2, "status": "success", "eval": {**copy.deepcopy(SPEC), **spec},
            "plan": {}, "results": {}, "stats": {},
            "samples": samples if samples is not None else [sample("s1"), sample("s2")]}


def eval_zip(lg: dict, *, raw_samples: dict[str, bytes] | None = None) -> bytes:
    entries = [("header.json", text(json.dumps({k: v for k, v in lg.items() if k != "samples"})))]
    for s in lg.get("samples") or []:
        entries.append((f"samples/{s['id']}_epoch_{s['epoch']}.json", text(json.dumps(s))))
    for name, data in (raw_samples or {}).items():
        entries.append((name, data))
    return zip_bytes(entries)


def corrupt_deflate() -> bytes:
    """A valid .eval whose second sample's deflate data starts with a reserved block type."""
    data = bytearray(eval_zip(log()))
    import io

    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("samples/s2_epoch_1.json")
    n, m = struct.unpack("<HH", bytes(data[info.header_offset + 26:info.header_offset + 30]))
    data[info.header_offset + 30 + n + m] = 0x07
    return bytes(data)


def zip_bomb(mib: int = 300) -> bytes:
    """An .eval whose one sample inflates to ``mib`` MiB of valid JSON (a few hundred KB)."""
    import io

    head, tail = json.dumps(sample("s1")).split('"category": "c"')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo("header.json", date_time=(2025, 5, 1, 10, 0, 0)),
                    json.dumps({k: v for k, v in log().items() if k != "samples"}))
        info = zipfile.ZipInfo("samples/s1_epoch_1.json", date_time=(2025, 5, 1, 10, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info._compresslevel = 1  # fast: the bytes only need to be many (zipfile reads this slot)
        with zf.open(info, "w", force_zip64=True) as fh:
            fh.write((head + '"pad": "').encode())
            chunk = b"a" * (1 << 20)
            for _ in range(mib):
                fh.write(chunk)
            fh.write(('"' + tail).encode())
    return buf.getvalue()


def insp(cid: str, lg: dict | bytes | Callable[[Path], bytes], expect: tuple, *, fmt: str = "json",
         xfail: str | None = None, subprocess: bool = False) -> Case:
    kind = f"inspect-{fmt}"
    content: bytes | Callable[[Path], bytes]
    if isinstance(lg, bytes) or callable(lg):
        content = lg
    else:
        content = text(json.dumps(lg)) if fmt == "json" else eval_zip(lg)
    return Case(id=f"{kind}-{cid}", kind=kind, files={f"log.{fmt}": content},
                args=("import", "{case}/log." + fmt, "--rubric", "refusal", "--store", "{store}"),
                expect=expect, xfail=xfail, subprocess=subprocess)


def _both(cid: str, lg: dict, expect: tuple, xfail: str | None = None) -> list[Case]:
    return [insp(cid, lg, expect, fmt="json", xfail=xfail), insp(cid, lg, expect, fmt="eval", xfail=xfail)]


def _deep_json_log() -> bytes:
    return text(json.dumps(log()).replace('"category": "c"', '"deep": ' + DEEP, 1))


INSPECT_CASES = [
    *_both("epochs-text", log(config={"epochs": "3"}), ("epochs",)),
    *_both("scores-list", log([sample("s1", scores=[{"value": "full_refusal"}])]), ("'s1'", "scores")),
    *_both("metadata-list", log([sample("s1", metadata=["a", "b"])]), ("'s1'", "metadata")),
    *_both("chat-of-strings", log([sample("s1", input=["How do I kill a process?", "and a thread?"])]),
           ("'s1'", "input")),
    *_both("input-number", log([sample("s1", input=42)]), ("'s1'", "input")),
    *_both("no-samples", log([]), ("sample",)),
    insp("id-float", log([sample(1.0)]), ("id",)),
    insp("id-object", log([sample({"a": 1})]), ("id",)),
    insp("explanation-list", log([sample("s1", scores={"grader": {"value": "full_refusal",
                                                                   "explanation": ["a"]}})]),
         ("'s1'", "explanation")),
    insp("model-object", log(model={"name": "x"}), ("model",)),
    insp("samples-object", {**log(), "samples": {"s1": sample("s1")}}, ("samples",)),
    insp("eval-not-object", {**log(), "eval": ["probe"]}, (("eval", "JSON list"),)),
    insp("deep-100k", _deep_json_log(), (("nested too deeply", "recursion"),)),
    insp("truncated", text(json.dumps(log())[:200]), ("invalid JSON",)),
    # .eval archives
    insp("corrupt-deflate", corrupt_deflate(), ("samples/s2_epoch_1.json",), fmt="eval"),
    insp("not-a-zip", text(json.dumps(log())), ("zip",), fmt="eval"),
    insp("truncated-zip", eval_zip(log())[:300], (), fmt="eval"),
    insp("no-header", zip_bytes([("samples/s1_epoch_1.json", text(json.dumps(sample("s1"))))]),
         ("header",), fmt="eval"),
    insp("header-invalid-json", zip_bytes([("header.json", b"{not json"),
                                           ("samples/s1_epoch_1.json", text(json.dumps(sample("s1"))))]),
         ("header.json",), fmt="eval"),
    insp("sample-invalid-json", eval_zip(log([sample("s1")]), raw_samples={"samples/s2_epoch_1.json": b"{oops"}),
         ("samples/s2_epoch_1.json",), fmt="eval"),
    insp("sample-deep", eval_zip(log([sample("s1")]), raw_samples={
        "samples/s2_epoch_1.json": text(json.dumps(sample("s2")).replace('"category": "c"', '"d": ' + DEEP))}),
         ("samples/s2_epoch_1.json",), fmt="eval"),
    insp("zip-bomb", lambda _template: zip_bomb(), ("samples/s1_epoch_1.json",), fmt="eval", subprocess=True),
]

# ----------------------------------------------------------------------------- verdicts
ANALYZE = ("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms",
           "--verdict", "{case}/verdict.json", "--store", "{store}", "--bootstrap", "0", "--quiet",
           "--out", "{out}")
REPORT = ("report", "--store", "{store}", "--rubric", "refusal", "--verdict", "{case}/verdict.json",
          "--out", "{out}", "--resamples", "100", "--disagreements", "1")


def verdict_from(edit: Callable[[dict], Any]) -> Callable[[Path], bytes]:
    """A real verdict (the template's gate run), edited. Its ``created_at`` is kept: the
    template store records the digest of the verdict its gate wrote, so the unedited verdict is
    accepted on (a copy of) that store only as written."""

    def make(template: Path) -> bytes:
        v = json.loads((template / "verdict.json").read_text(encoding="utf-8"))
        edit(v)
        return text(json.dumps(v, indent=1))

    return make


def verdict(cid: str, content: Any, expect: tuple, *, report: bool = False, xfail: str | None = None) -> Case:
    return Case(id=f"verdict-{cid}" + ("-report" if report else ""), kind="verdict",
                files={"verdict.json": content}, args=REPORT if report else ANALYZE,
                expect=expect, xfail=xfail,
                no_output=("{out}",))


def _judge(v: dict) -> dict:
    return v["judges"][0]


def _fail_check(v: dict) -> None:
    """The one check fails (threshold above the figure), the judge and the verdict still say pass."""
    c = _judge(v)["checks"][0]
    c["threshold"] = 1000
    c["passed"] = False
    if "state" in c:
        c["state"] = "fail"


def _contradict(v: dict) -> None:
    c = _judge(v)["checks"][0]
    c["threshold"] = 1000  # still marked passed


VERDICT_CASES = [
    verdict("passed-string-false", verdict_from(lambda v: (v.update(passed="false"),
                                                           _judge(v).update(passed="false"))),
            ("passed",)),
    verdict("passed-one", verdict_from(lambda v: (v.update(passed=1), _judge(v).update(passed=1))),
            ("passed",)),
    verdict("passed-beside-failed-check", verdict_from(_fail_check), ("min_items",)),
    verdict("passed-beside-failed-check", verdict_from(_fail_check), ("min_items",), report=True),
    verdict("check-contradicts-threshold", verdict_from(_contradict), ("min_items",)),
    verdict("items-hash-forged", verdict_from(lambda v: v.update(items_hash="0" * 16)), ("items",)),
    verdict("human-ratings-hash-forged", verdict_from(lambda v: v.update(human_ratings_hash="0" * 16)),
            ("human",)),
    verdict("schema-version-future", verdict_from(lambda v: v.update(schema_version=99)),
            ("schema_version",)),
    verdict("checks-not-list", verdict_from(lambda v: _judge(v).update(checks=5)), ("checks",)),
    verdict("checks-not-list", verdict_from(lambda v: _judge(v).update(checks={"min_items": 1})), ("checks",),
            report=True),
    verdict("check-not-object", verdict_from(lambda v: _judge(v).update(checks=["min_items"])), ("checks",)),
    verdict("judges-not-list", verdict_from(lambda v: v.update(judges={"j1": True})), ("judges",)),
    verdict("judge-without-name", verdict_from(lambda v: _judge(v).pop("judge")), ("judges[0]",)),
    verdict("judge-name-number", verdict_from(lambda v: _judge(v).update(judge=1)), ("judges[0]",)),
    verdict("rubric-hash-other", verdict_from(lambda v: v.update(rubric_hash="0" * 12)),
            ("is for rubric refusal@1#000000000000",)),
    verdict("other-judge-only", verdict_from(lambda v: _judge(v).update(judge="j2")), ("j1",)),
    verdict("figure-nan", verdict_from(lambda v: _judge(v)["checks"][0].update(figure=float("nan"))),
            ("figure",)),
    verdict("invalid-json", text('{"judges": [}'), ("invalid JSON",)),
    verdict("empty", b"", ()),
    verdict("top-list", text("[]"), ("judges",)),
    verdict("latin1", '{"rubric": "caf\xe9"}'.encode("latin-1"), ("UTF-8",)),
    verdict("folder", FOLDER, ("folder",)),
    verdict("deep", text('{"judges": ' + DEEP + "}"), ()),
    verdict("binary", b"\x89PNG\r\n\x1a\n\x00\x00", ()),
]

CASES: list[Case] = [*LS_JSON_CASES, *LS_MIN_CASES, *LS_CSV_CASES, *INSPECT_CASES, *VERDICT_CASES]

VALID = [
    Valid("ls-json", {"export.json": text(json.dumps(full_export()))}, tuple(a % "json" if "%s" in a else a
                                                                              for a in LS_ARGS)),
    Valid("ls-min", {"export.json": text(json.dumps(min_rows()))}, tuple(a % "json" if "%s" in a else a
                                                                         for a in LS_ARGS)),
    Valid("ls-csv", {"export.csv": _csv_rows(min_rows())}, tuple(a % "csv" if "%s" in a else a for a in LS_ARGS)),
    Valid("inspect-json", {"log.json": text(json.dumps(log()))},
          ("import", "{case}/log.json", "--rubric", "refusal", "--store", "{store}")),
    Valid("inspect-eval", {"log.eval": eval_zip(log())},
          ("import", "{case}/log.eval", "--rubric", "refusal", "--store", "{store}")),
    Valid("verdict-analyze", {"verdict.json": verdict_from(lambda v: None)}, ANALYZE),
    Valid("verdict-report", {"verdict.json": verdict_from(lambda v: None)}, REPORT),
]
