"""Bad files for ``judgekit import``: CSV, JSONL, JSON and Parquet, long and wide, and --items."""

from __future__ import annotations

import json

from corpus.base import FOLDER, Case, Valid, jsonl, parquet, text

HEAD = "item_id,rater_id,label\n"
GOOD_ROW = "a,ann,full_refusal\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def imp(name: str, *extra: str) -> tuple[str, ...]:
    return ("import", "{case}/" + name, "--rubric", "refusal", *extra, "--store", "{store}")


def case(cid: str, kind: str, name: str, content, expect: tuple[str, ...], *extra: str,
         xfail: str | None = None, files: dict | None = None, names: str | None = None) -> Case:
    return Case(id=f"{kind}-{cid}", kind=kind, files={name: content, **(files or {})}, args=imp(name, *extra),
                expect=expect, xfail=xfail, names=names)


def csv(cid: str, content: str | bytes, expect: tuple[str, ...], *extra: str, xfail: str | None = None,
        name: str = "r.csv") -> Case:
    data = text(content) if isinstance(content, str) else content
    return case(cid, "csv", name, data, expect, *extra, xfail=xfail)


WIDE = ("--raters", "ann,bob")
WIDE_HEAD = "item_id,prompt,response,ann,bob\n"

CSV_CASES = [
    # files that are not a table
    csv("empty", b"", ("is empty",)),
    csv("header-only", HEAD, ("has a header but no rows",)),
    csv("blank-lines-only", b"\n\n\n", ()),
    csv("latin1", (HEAD + "caf\xe9,ann,full_refusal\n").encode("latin-1"), ("not UTF-8",)),
    csv("utf16", (HEAD + GOOD_ROW).encode("utf-16"), ()),
    csv("binary", PNG, ()),
    csv("folder", FOLDER, ()),  # refused by click: "is a directory"
    csv("nul-bytes", text(HEAD + "a,ann,full_\x00refusal\n"), ("line 2",)),
    # the layout
    csv("no-rater-column", "item_id,label\nx,full_refusal\n", ("missing column 'rater_id'",)),
    csv("no-label-column", "item_id,rater_id\nx,ann\n", ("missing column 'label'",)),
    csv("no-item-id-column", "rater_id,label\nann,full_refusal\n", ("item_id",)),
    csv("extra-cell", HEAD + GOOD_ROW + "b,ann,full_refusal,x\n", ("line 3",)),
    csv("missing-cell", HEAD + GOOD_ROW + "b,ann\n", ("line 3",)),
    csv("unquoted-newline-wide", "item_id,note,ann\na,one,full_refusal\nb,multi\nline,full_compliance\n",
        ("line 3",), "--raters", "ann"),
    csv("lone-cr-in-cell", "item_id,note,ann\na,x\ry,full_refusal\nb,z,full_compliance\n", ("line 2",),
        "--raters", "ann"),
    csv("empty-id-wide", "item_id,note,ann\na,one\n,two,full_refusal\nb,three\n,four,full_compliance\n",
        ("line 2",), "--raters", "ann"),
    csv("unclosed-quote", 'item_id,rater_id,label,note\na,ann,full_refusal,"open\nb,ann,x,y\n', ("line 2",)),
    csv("dup-label-header", "item_id,rater_id,label,label\na,ann,full_refusal,full_compliance\n",
        ("line 1", "'label'")),
    csv("header-no-name", ",item_id,rater_id,label\n0,a,ann,full_refusal\n", ("column 1",)),
    # the values
    csv("label-unknown", HEAD + GOOD_ROW + "b,ann,maybe\n", ("line 3", "label 'maybe' is not in rubric")),
    csv("label-huge", HEAD + "a,ann," + "z" * 1_000_000 + "\n", ("line 2", "label 'zzz", "…")),
    csv("label-nan", HEAD + "a,ann,NaN\n", ("line 2",)),
    csv("label-empty", HEAD + "a,ann,\n", ("line 2",)),
    csv("duplicate-rating", HEAD + GOOD_ROW + "a,ann,full_compliance\n",
        ("line 2 and", "line 3", "duplicate rating of item 'a' by rater 'ann'")),
    csv("empty-item-id", HEAD + ",ann,full_refusal\n", ("line 2: empty item_id",)),
    csv("empty-rater-id", HEAD + "a,,full_refusal\n", ("line 2",)),
    csv("rater-kind-unknown", "item_id,rater_id,rater_kind,label\na,ann,robot,full_refusal\n",
        ("line 2", "rater_kind 'robot'")),
    csv("status-unknown", "item_id,rater_id,label,status\na,ann,full_refusal,maybe\n", ("line 2", "status")),
    csv("trial-text", "item_id,rater_id,label,trial\na,ann,full_refusal,abc\n", ("line 2", "trial")),
    csv("trial-fraction", "item_id,rater_id,label,trial\na,ann,full_refusal,0\na,ann,full_refusal,1.9\n",
        ("line 3", "trial")),
    csv("trial-huge", "item_id,rater_id,label,trial\na,ann,full_refusal," + "9" * 5000 + "\n",
        ("line 2", "trial")),
    csv("trial-exponent", "item_id,rater_id,label,trial\na,ann,full_refusal,1e0\n", ("line 2", "trial")),
    csv("trial-underscore", "item_id,rater_id,label,trial\na,ann,full_refusal,1_0\n", ("line 2", "trial")),
    csv("trial-arabic-digit", "item_id,rater_id,label,trial\na,ann,full_refusal,\u0661\n", ("line 2", "trial")),
    csv("trial-hex", "item_id,rater_id,label,trial\na,ann,full_refusal,0x1\n", ("line 2", "trial")),
    csv("semicolons", "item_id;rater_id;label\na;ann;full_refusal\n", ("missing column",)),
    csv("excel-sep-line", "sep=,\n" + HEAD + GOOD_ROW, (("missing column", "malformed CSV"),)),
    csv("rater-trailing-space", HEAD + "a,ann_ws,full_refusal\nb,ann_ws ,full_refusal\n",
        ("line 3", "rater_id 'ann_ws '")),
    csv("item-leading-space", HEAD + " a,ann,full_refusal\n", ("line 2", "item_id")),
    csv("rater-nul", HEAD + "a,ann\x00x,full_refusal\n", ("line 2", "rater_id")),
    csv("item-escape", HEAD + "a\x1b[2J,ann,full_refusal\n", ("line 2", "item_id")),
    csv("created-at-text", "item_id,rater_id,label,created_at\na,ann,full_refusal,yesterday\n",
        ("line 2", "created_at")),
    csv("created-at-inf", "item_id,rater_id,label,created_at\na,ann,full_refusal,1e400\n",
        ("line 2", "created_at")),
    csv("metadata-clash", "item_id,rater_id,label,model\na,ann,full_refusal,m1\nb,ann,full_refusal,m1\n"
        "a,bob,full_refusal,m2\n", ("'a'", "line 4")),
    csv("stored-item-other-text", "item_id,prompt,response,rater_id,label\ni0,another prompt,response 0,ann,"
        "full_refusal\n", ("i0",)),
    # wide files
    csv("wide-missing-column", WIDE_HEAD + "a,p,r,full_refusal,full_refusal\n", ("carol",),
        "--raters", "ann,carol"),
    csv("wide-label-unknown", WIDE_HEAD + "a,p,r,full_refusal,full_refusal\nb,p,r,maybe,full_refusal\n",
        ("line 3", "label 'maybe'"), *WIDE),
    csv("wide-dup-rater-column", "item_id,prompt,response,ann,ann\na,p,r,full_refusal,full_compliance\n",
        ("'ann'",), "--raters", "ann"),
    csv("wide-dup-item", WIDE_HEAD + "a,p,r,full_refusal,full_refusal\na,p,r,full_compliance,full_refusal\n",
        ("'a'",), *WIDE),
    csv("wide-nan-label", WIDE_HEAD + "a,p,r,NaN,full_refusal\n", ("line 2",), *WIDE),
    csv("wide-reference-unknown", WIDE_HEAD + "a,p,r,full_refusal,maybe\n", ("line 2", "'maybe'"),
        "--raters", "ann", "--reference", "final=bob"),
]

# ----------------------------------------------------------------------------- JSONL
R = {"item_id": "a", "rater_id": "ann", "label": "full_refusal"}


def jl(cid: str, content: str | bytes, expect: tuple, *extra: str, xfail: str | None = None) -> Case:
    data = text(content) if isinstance(content, str) else content
    # in a JSONL file row N is line N (no blank lines here): today's messages say row, the fix's line
    expect = tuple((e, "line" + e[3:]) if isinstance(e, str) and e.startswith("row ") else e for e in expect)
    return case(cid, "jsonl", "r.jsonl", data, expect, *extra, xfail=xfail)


def row(**over) -> str:
    return json.dumps({**R, **over}) + "\n"


DEEP = "[" * 100_000 + "]" * 100_000

JSONL_CASES = [
    jl("empty", b"", ("is empty",)),
    jl("blank-lines", "\n \n\n", ("no rows",)),
    jl("broken-line", row() + '{"item_id": "b", oops}\n', ("line 2", "not valid JSON")),
    jl("list-line", row() + "[1, 2, 3]\n", ("line 2", "not a JSON object")),
    jl("number-line", "42\n", ("line 1", "not a JSON object")),
    jl("latin1", (row()[:-2] + ', "note": "caf\xe9"}\n').encode("latin-1"), ("not UTF-8",)),
    jl("binary", PNG, ()),
    jl("truncated", row()[:30], ("line 1",)),
    jl("label-unknown", row() + row(item_id="b", label="maybe"), ("row 2", "label 'maybe'")),
    jl("label-number", row(label=7), ("label 7",)),
    jl("label-object", row(label={"code": "full_refusal"}), (("row 1", "line 1"), "label")),
    jl("label-list", row(label=["full_refusal"]), (("row 1", "line 1"), "label")),
    jl("label-nan", row()[:-2].replace('"full_refusal"', "NaN") + "}\n", (("row 1", "line 1"), ("nan", "NaN"))),
    jl("label-bool", row(label=True), ("row 1", "label")),
    jl("label-null", row(label=None), ("row 1",)),
    jl("dup-key", '{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "label": "full_compliance"}\n',
       ("line 1", "'label'")),
    jl("ids-1-and-1.0", '{"item_id": 1, "rater_id": "ann", "label": "full_refusal"}\n'
       '{"item_id": 1.0, "rater_id": "bob", "label": "full_refusal"}\n', ("line 2", "item_id")),
    jl("id-bool", row(item_id=True), ("item_id",)),
    jl("id-object", row(item_id={"a": 1}), ("item_id",)),
    jl("id-null", row(item_id=None), ("row 1", "item_id")),
    jl("id-huge-int", '{"item_id": ' + "1" * 5000 + ', "rater_id": "ann", "label": "full_refusal"}\n',
       ("line 1",)),
    jl("rater-list", row(rater_id=["ann", "bob"]), ("rater_id",)),
    jl("rater-nul", row(rater_id="ann\u0000"), ("rater_id",)),
    jl("trial-float", row(trial=1.5), ("trial",)),
    jl("trial-text", row(trial="one"), ("trial",)),
    jl("trial-exponent", row()[:-2] + ', "trial": 1e2}\n', ("trial",)),
    jl("trial-1e400", row()[:-2] + ', "trial": 1e400}\n', ("trial",)),
    jl("id-exponent", '{"item_id": 1e2, "rater_id": "ann", "label": "full_refusal"}\n', ("item_id",)),
    jl("id-leading-zero", '{"item_id": 007, "rater_id": "ann", "label": "full_refusal"}\n',
       ("line 1", "not valid JSON")),
    jl("trial-inf", row()[:-2] + ', "trial": Infinity}\n', ("line 1", ("trial", "Infinity"))),
    jl("messages-text", row(messages="hi", response="r"), ("line 1", "messages")),
    jl("messages-numbers", row(messages=[1, 2], response="r"), ("line 1", "messages")),
    jl("messages-no-role", row(messages=[{"content": "hi"}], response="r"),
       ("line 1", "messages[0] has no 'role'")),
    jl("messages-role-empty", row(messages=[{"role": "", "content": "hi"}], response="r"),
       ("line 1", "messages[0]", "'role' as text")),
    jl("response-object", row(response={"text": "no"}), ("response",)),
    jl("metadata-deep", row()[:-2] + ', "m": ' + DEEP + "}\n", ("line 1",)),
    jl("created-at-text", row(created_at="yesterday"), ("line 1", "created_at")),
    jl("created-at-bool", row(created_at=True), ("line 1", "created_at")),
    jl("status-number", row(status=1), ("status",)),
    jl("kind-unknown", row(rater_kind="robot"), ("rater_kind 'robot'",)),
]

# ----------------------------------------------------------------------------- JSON list
def js(cid: str, content: str | bytes, expect: tuple[str, ...], *extra: str, xfail: str | None = None) -> Case:
    data = text(content) if isinstance(content, str) else content
    return case(cid, "json", "r.json", data, expect, *extra, xfail=xfail)


JSON_CASES = [
    js("empty", b"", ("is empty",)),
    js("object", json.dumps(R), ("JSON list",)),
    js("invalid", '[{"item_id": "a",]', ("invalid JSON", "line 1")),
    js("list-of-numbers", "[1, 2, 3]", (("row 1", "missing column"),)),
    js("list-of-lists", '[["a", "ann", "full_refusal"]]', (("row 1", "missing column"),)),
    js("empty-list", "[]", ("no rows",)),
    js("deep", "[" + DEEP + "]", (("nested too deeply", "recursion depth"),)),
    js("label-nan", '[{"item_id": "a", "rater_id": "ann", "label": NaN}]', (("nan", "NaN"),)),
    js("dup-key", '[{"item_id": "a", "rater_id": "ann", "label": "full_refusal", "rater_id": "bob"}]',
       ("'rater_id'",)),
    js("label-unknown", json.dumps([R, {**R, "item_id": "b", "label": "maybe"}]), ("row 2", "'maybe'")),
    js("latin1", json.dumps([{**R, "note": "caf\xe9"}], ensure_ascii=False).encode("latin-1"), ("UTF-8",)),
]

# ----------------------------------------------------------------------------- Parquet
def pq_case(cid: str, columns: dict, expect: tuple[str, ...], *extra: str, xfail: str | None = None,
            content: bytes | None = None) -> Case:
    return case(cid, "parquet", "r.parquet", content if content is not None else parquet(columns), expect,
                *extra, xfail=xfail)


def _pa():
    import pyarrow as pa

    return pa


def pa_cols(**extra) -> dict:
    pa = _pa()
    base = {"item_id": pa.array(["a", "b"]), "rater_id": pa.array(["ann", "ann"]),
            "label": pa.array(["full_refusal", "full_compliance"])}
    return {**base, **extra}


def parquet_cases() -> list[Case]:
    pa = _pa()
    good = parquet(pa_cols())
    return [
        pq_case("binary-column", pa_cols(blob=pa.array([None, b"\x00\xff"], pa.binary())), ("row 2", "blob")),
        pq_case("struct-label", pa_cols(label=pa.array([{"code": "x"}] * 2, pa.struct([("code", pa.string())]))),
                ("row 1", "label")),
        pq_case("label-unknown", pa_cols(label=pa.array(["full_refusal", "maybe"])), ("row 2", "'maybe'")),
        pq_case("label-nan-wide", {"item_id": pa.array(["a", "b"]),
                                   "ann": pa.array([float("nan"), 0.0], pa.float64())}, ("row 1",),
                "--raters", "ann"),
        pq_case("label-null", pa_cols(label=pa.array([None, "full_refusal"], pa.string())), ("row 1",)),
        pq_case("trial-float", pa_cols(trial=pa.array([0.0, 1.9])), (("row 1", "row 2"), "trial")),
        pq_case("item-id-float", pa_cols(item_id=pa.array([1.0, 1.5])), ("row 1", "item_id")),
        pq_case("rater-id-null", pa_cols(rater_id=pa.array(["ann", None], pa.string())), ("row 2",)),
        pq_case("truncated", {}, (), content=good[: len(good) // 2]),
        pq_case("not-parquet", {}, (), content=text(HEAD + GOOD_ROW)),
        pq_case("no-rows", {"item_id": pa.array([], pa.string()), "rater_id": pa.array([], pa.string()),
                            "label": pa.array([], pa.string())}, ("no rows",)),
        pq_case("no-label-column", {"item_id": pa.array(["a"]), "rater_id": pa.array(["ann"])},
                ("missing column 'label'",)),
    ]


# ----------------------------------------------------------------------------- --items files
def items_case(cid: str, name: str, content: bytes | object, expect: tuple[str, ...],
               xfail: str | None = None, ratings: str = HEAD + GOOD_ROW, names: str | None = None) -> Case:
    return Case(id=f"items-{cid}", kind="items", files={name: content, "r.csv": text(ratings)},
                args=("import", "{case}/r.csv", "--rubric", "refusal", "--items", "{case}/" + name,
                      "--store", "{store}"), expect=expect, xfail=xfail, names=names)


ITEMS_CASES = [
    items_case("missing", "items.jsonl", b"", ("empty",)),
    items_case("folder", "items.jsonl", FOLDER, ()),  # refused by click: "is a directory"
    items_case("broken", "items.jsonl", text('{"item_id": "a", "prompt": "p", "response": "r"}\n{oops\n'),
               ("line 2",)),
    items_case("dup-id", "items.jsonl", jsonl([{"item_id": "a", "prompt": "p", "response": "r"},
                                               {"item_id": "a", "prompt": "q", "response": "r"}]), ("'a'",)),
    items_case("messages-numbers", "items.jsonl", jsonl([{"item_id": "a", "messages": [1, 2], "response": "r"}]),
               ("messages",)),
    items_case("messages-no-role", "items.jsonl",
               jsonl([{"item_id": "a", "messages": [{"role": "user", "content": "hi"}, {"content": "and?"}],
                       "response": "r"}]), ("line 1", "messages[1] has no 'role'")),
    items_case("no-item-id", "items.csv", text("prompt,response\np,r\n"), ("item_id",)),
    items_case("stored-other-text", "items.jsonl",
               jsonl([{"item_id": "i0", "prompt": "a different prompt", "response": "response 0"}]), ("i0",),
               ratings=HEAD + "i0,ann,full_refusal\n", names="r.csv"),
]

CASES: list[Case] = [*CSV_CASES, *JSONL_CASES, *JSON_CASES, *parquet_cases(), *ITEMS_CASES]

VALID = [
    Valid("csv", {"r.csv": text(HEAD + GOOD_ROW)}, imp("r.csv")),
    Valid("csv-wide", {"r.csv": text(WIDE_HEAD + "a,p,r,full_refusal,full_refusal\n")}, imp("r.csv", *WIDE)),
    Valid("jsonl", {"r.jsonl": text(row())}, imp("r.jsonl")),
    Valid("json", {"r.json": text(json.dumps([R]))}, imp("r.json")),
    Valid("parquet", {"r.parquet": lambda _t: parquet(pa_cols())}, imp("r.parquet")),
    Valid("items", {"items.jsonl": jsonl([{"item_id": "a", "prompt": "p", "response": "r"}]),
                    "r.csv": text(HEAD + GOOD_ROW)},
          ("import", "{case}/r.csv", "--rubric", "refusal", "--items", "{case}/items.jsonl", "--store", "{store}")),
]
