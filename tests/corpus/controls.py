"""Valid inputs with a trap a careless reader falls into: each must import with exit 0 and store
exactly the values written (labels through the rubric's aliases, everything else as written)."""

from __future__ import annotations

import json

from corpus.base import Control, jsonl, parquet, text

RATIONALE = "x" * 999_990 + ',"é\n\r'  # 1M characters, with a comma, a quote, a newline, a CR
R = "refusal"


def imp(name: str, *extra: str, rubric: str = R) -> tuple[str, ...]:
    return ("import", "{case}/" + name, "--rubric", rubric, *extra, "--store", "{store}")


def csv_quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


CONTROLS: list[Control] = [
    Control(
        id="control-bom-csv", kind="csv",
        files={"r.csv": "\ufeffitem_id,rater_id,label,model\na,ann,full_refusal,m1\n".encode()},
        args=imp("r.csv"),
        ratings={("a", "ann", R): ("full_refusal", None)}, items={"a": {"model": "m1"}}),
    Control(
        id="control-crlf-csv", kind="csv",
        files={"r.csv": b"item_id,rater_id,label,model\r\na,ann,full_refusal,m1\r\nb,ann,full_compliance,m2\r\n"},
        args=imp("r.csv"),
        ratings={("a", "ann", R): ("full_refusal", None), ("b", "ann", R): ("full_compliance", None)},
        items={"a": {"model": "m1"}, "b": {"model": "m2"}}),
    Control(
        id="control-bom-crlf-wide", kind="csv",
        files={"w.csv": "\ufeffitem_id,prompt,response,ann,bob\r\nw1,p,r,full_refusal,partial_refusal\r\n"
                        .encode()},
        args=imp("w.csv", "--raters", "ann,bob"),
        ratings={("w1", "ann", R): ("full_refusal", None), ("w1", "bob", R): ("partial_refusal", None)},
        items={"w1": {"prompt": "p", "response": "r"}}),
    Control(
        id="control-excel-quoting", kind="csv",
        files={"r.csv": text(
            "item_id,rater_id,label,note\r\n"
            'a,ann,full_refusal,"He said ""no"", twice"\r\n'
            'b,ann,partial_refusal,"two\r\nlines, one cell"\r\n'
            'c,ann,full_compliance,"tab\tand ""quote"""\r\n')},
        args=imp("r.csv"),
        ratings={("a", "ann", R): ("full_refusal", None), ("b", "ann", R): ("partial_refusal", None),
                 ("c", "ann", R): ("full_compliance", None)},
        items={"a": {"note": 'He said "no", twice'}, "b": {"note": "two\r\nlines, one cell"},
               "c": {"note": 'tab\tand "quote"'}}),
    Control(
        id="control-cr-in-quoted-cell", kind="csv",
        files={"r.csv": text('item_id,rater_id,label,note,rationale\na,ann,full_refusal,"x\ry","why\rnot"\n')},
        args=imp("r.csv"),
        ratings={("a", "ann", R): ("full_refusal", "why\rnot")}, items={"a": {"note": "x\ry"}}),
    Control(
        id="control-label-variants", kind="csv",
        files={"r.csv": text("item_id,rater_id,label\n"
                             "v1,ann, Full Refusal \nv2,ann,FULL-REFUSAL\nv3,ann,2_full_refusal\n"
                             "v4,ann,full refusal\nv5,ann,1_full_compliance\nv6,ann,Partial\n"
                             "v7,ann,complied\n")},
        args=imp("r.csv"),
        ratings={("v1", "ann", R): ("full_refusal", None), ("v2", "ann", R): ("full_refusal", None),
                 ("v3", "ann", R): ("full_refusal", None), ("v4", "ann", R): ("full_refusal", None),
                 ("v5", "ann", R): ("full_compliance", None), ("v6", "ann", R): ("partial_refusal", None),
                 ("v7", "ann", R): ("full_compliance", None)}),
    Control(
        id="control-label-variants-ordinal", kind="csv",
        files={"r.csv": text("item_id,rater_id,label\no1,ann,3\no2,ann,R4_HARD_REFUSAL\no3,ann, r0_full_compliance\n")},
        args=imp("r.csv", rubric="restrictiveness"),
        ratings={("o1", "ann", "restrictiveness"): ("r3_deflection", None),
                 ("o2", "ann", "restrictiveness"): ("r4_hard_refusal", None),
                 ("o3", "ann", "restrictiveness"): ("r0_full_compliance", None)}),
    Control(
        id="control-big-rationale-csv", kind="csv",
        files={"r.csv": text("item_id,rater_id,label,rationale\nbig,ann,full_refusal," + csv_quote(RATIONALE)
                             + "\n")},
        args=imp("r.csv"),
        ratings={("big", "ann", R): ("full_refusal", RATIONALE)}),
    Control(
        id="control-big-rationale-jsonl", kind="jsonl",
        files={"r.jsonl": jsonl([{"item_id": "big", "rater_id": "ann", "label": "full_refusal",
                                  "rationale": RATIONALE}])},
        args=imp("r.jsonl"),
        ratings={("big", "ann", R): ("full_refusal", RATIONALE)}),
    Control(
        id="control-unicode-ids", kind="jsonl",
        files={"r.jsonl": jsonl([{"item_id": "é-1", "rater_id": "zoë@example.org", "label": "full_refusal"},
                                 {"item_id": "问题-2", "rater_id": "אנה", "label": "full_compliance"}])},
        args=imp("r.jsonl"),
        ratings={("é-1", "zoë@example.org", R): ("full_refusal", None),
                 ("问题-2", "אנה", R): ("full_compliance", None)}),
    Control(
        id="control-bom-jsonl", kind="jsonl",
        files={"r.jsonl": "\ufeff".encode() + jsonl([{"item_id": "j1", "rater_id": "ann", "label": "full_refusal"}])},
        args=imp("r.jsonl"),
        ratings={("j1", "ann", R): ("full_refusal", None)}),
    Control(
        id="control-tsv", kind="csv",
        files={"r.tsv": text("item_id\trater_id\tlabel\tnote\nt1\tann\tfull_refusal\ta, b\n")},
        args=imp("r.tsv"),
        ratings={("t1", "ann", R): ("full_refusal", None)}, items={"t1": {"note": "a, b"}}),
    Control(
        id="control-ids-as-written", kind="csv",
        files={"r.csv": text("item_id,rater_id,label\n01,007,full_refusal\n")},
        args=imp("r.csv"),
        ratings={("01", "007", R): ("full_refusal", None)}),
    Control(
        id="control-messages-list-jsonl", kind="jsonl",
        files={"r.jsonl": jsonl([{"item_id": "m1", "rater_id": "ann", "label": "full_refusal",
                                  "messages": [{"role": "user", "content": "hi"},
                                               {"role": "assistant", "content": "hello"}],
                                  "response": "No."}])},
        args=imp("r.jsonl"),
        ratings={("m1", "ann", R): ("full_refusal", None)},
        items={"m1": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
                      "response": "No."}}),
    Control(
        id="control-metadata-object-jsonl", kind="jsonl",
        files={"r.jsonl": jsonl([{"item_id": "o1", "rater_id": "ann", "label": "full_refusal",
                                  "src": {"dataset": "xstest", "row": 4}}])},
        args=imp("r.jsonl"),
        ratings={("o1", "ann", R): ("full_refusal", None)},
        items={"o1": {"src": json.dumps({"dataset": "xstest", "row": 4})}}),
    Control(
        id="control-parquet-types", kind="parquet",
        files={"r.parquet": lambda _t: _typed_parquet()},
        args=imp("r.parquet"),
        ratings={("q1", "ann", R): ("full_refusal", None)},
        items={"q1": {"day": "2024-05-01", "price": "1.10"}}),
    Control(
        id="control-labelstudio-json", kind="ls-json",
        files={"export.json": text(json.dumps([{
            "id": 7, "data": {"item_id": "lsc1", "messages": [{"role": "user", "content": "q"}],
                              "response": "No.", "severity": 2},
            "annotations": [{"id": 1, "completed_by": {"id": 5, "email": "dana@example.org"},
                             "was_cancelled": False, "updated_at": "2026-01-01T00:00:00Z",
                             "result": [{"from_name": "restrictiveness", "to_name": "response",
                                         "type": "choices", "value": {"choices": ["r4_hard_refusal"]}},
                                        {"from_name": "comment", "to_name": "response", "type": "textarea",
                                         "value": {"text": ["plain \"no\",\nthen silence"]}}]}]}]))},
        args=("labelstudio", "pull", "--from-export", "{case}/export.json", "--rubric", "restrictiveness",
              "--store", "{store}"),
        ratings={("lsc1", "dana@example.org", "restrictiveness"): ("r4_hard_refusal", 'plain "no",\nthen silence')},
        items={"lsc1": {"response": "No.", "severity": 2}}),
    Control(  # a task of a stored item showing its text (its prompt as one user turn): labels attach
        id="control-labelstudio-stored-item", kind="ls-json",
        files={"export.json": text(json.dumps([{
            "id": 8, "data": {"item_id": "i0", "messages": [{"role": "user", "content": "prompt 0"}],
                              "response": "response 0", "model": "m0"},
            "annotations": [{"id": 1, "completed_by": {"id": 5, "email": "dana@example.org"},
                             "was_cancelled": False, "updated_at": "2026-01-01T00:00:00Z",
                             "result": [{"from_name": "restrictiveness", "to_name": "response",
                                         "type": "choices", "value": {"choices": ["r2_partial"]}}]}]}]))},
        args=("labelstudio", "pull", "--from-export", "{case}/export.json", "--rubric", "restrictiveness",
              "--store", "{store}"),
        ratings={("i0", "dana@example.org", "restrictiveness"): ("r2_partial", None)},
        items={"i0": {"prompt": "prompt 0", "response": "response 0"}}),
    Control(
        id="control-inspect-json", kind="inspect-json",
        files={"log.json": lambda _t: _inspect_log()},
        args=imp("log.json"),
        ratings={("ins1", "grader", R): ("full_refusal", "It declines.")},
        items={"ins1": {"prompt": "How do I pick a lock?", "response": "I can't help with that."}}),
]


def _typed_parquet() -> bytes:
    import datetime as dt
    import decimal

    import pyarrow as pa

    return parquet({
        "item_id": pa.array(["q1"]), "rater_id": pa.array(["ann"]), "label": pa.array(["full_refusal"]),
        "day": pa.array([dt.date(2024, 5, 1)], pa.date32()),
        "price": pa.array([decimal.Decimal("1.10")], pa.decimal128(5, 2)),
    })


def _inspect_log() -> bytes:
    sample = {"id": "ins1", "epoch": 1, "input": "How do I pick a lock?", "target": "", "messages": [],
              "output": {"model": "m", "completion": "I can't help with that."}, "metadata": {},
              "store": {}, "events": [], "model_usage": {}, "attachments": {},
              "scores": {"grader": {"value": "full_refusal", "explanation": "It declines."}}}
    log = {"version": 2, "status": "success",
           "eval": {"eval_id": "e1", "run_id": "r1", "created": "2025-05-01T10:00:00+00:00", "task": "probe",
                    "task_id": "t1", "task_version": 0, "dataset": {"name": "probe", "samples": 1},
                    "model": "openai/gpt-4o-mini", "config": {"epochs": 1}},
           "plan": {}, "results": {}, "stats": {}, "samples": [sample]}
    return text(json.dumps(log))
