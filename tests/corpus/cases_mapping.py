"""Bad mappings of ``judgekit import``: --map, --items-map, --key-column,
--flatten, --id-from and --items --join-on, each refused in one sentence naming the file and key."""

from __future__ import annotations

import json

from corpus.base import Case, Valid, jsonl, text

#: a file from another benchmark: its own names for the id and the response, one column per rater
OTHER = "_id,question,Response,ann,bob,behavior_id\nx1,q1,r1,full_refusal,full_refusal,b1\n" \
        "x2,q2,r2,full_compliance,full_refusal,b2\n"
MAP = "item_id=_id,response=Response,prompt=question"
WIDE = ("--raters", "ann,bob")
BEHAVIORS = "behavior_id,category\nb1,cyber\nb2,chem\n"
BY_BEHAVIOR = {"b1": [{"completion": "r1", "ann": "full_refusal"}],
               "b2": [{"completion": "r2", "ann": "full_compliance"}, {"completion": "r3", "ann": "full_refusal"}]}


def imp(name: str, *extra: str) -> tuple[str, ...]:
    return ("import", "{case}/" + name, "--rubric", "refusal", *extra, "--store", "{store}")


def case(cid: str, files: dict[str, bytes], args: tuple[str, ...], expect: tuple, *,
         names: str | None = None) -> Case:
    return Case(id=f"map-{cid}", kind="mapping", files=files, args=args, expect=expect, names=names)


def other(cid: str, expect: tuple, *extra: str, content: str = OTHER, names: str | None = None,
          files: dict[str, bytes] | None = None) -> Case:
    return case(cid, {"other.csv": text(content), **(files or {})}, imp("other.csv", *extra), expect,
                names=names)


def joined(cid: str, expect: tuple, items: str, *extra: str, names: str = "items.csv",
           content: str = OTHER) -> Case:
    return other(cid, expect, "--map", MAP, *WIDE, "--items", "{case}/items.csv", *extra,
                 content=content, names=names, files={"items.csv": text(items)})


CASES = [
    # --map
    other("no-map", ("missing column 'item_id'", "'_id'", "--map item_id=_id"), *WIDE),
    other("unknown-name", ("itemid", "did you mean 'item_id'"), "--map", "itemid=_id", *WIDE),
    other("no-such-column", ("no column 'Respons'", "the closest is 'Response'"),
          "--map", "item_id=_id,response=Respons", *WIDE),
    other("target-twice", ("maps onto 'item_id' twice",), "--map", "item_id=_id,item_id=question", *WIDE),
    other("column-twice", ("'_id' onto both",), "--map", "item_id=_id,prompt=_id", *WIDE),
    other("no-equals", ("is not judgekit_name=file_column",), "--map", "item_id", *WIDE),
    other("shadows-a-column", ("already has a column 'prompt'",), "--map", "item_id=_id,prompt=question",
          *WIDE, content=OTHER.replace("_id,question,", "_id,prompt,", 1).replace(",behavior_id", ",question")),
    other("rater-column-missing", ("missing column 'carl'", "--judges"), "--map", MAP, *WIDE,
          "--judges", "carl"),
    # JSON shapes
    case("key-column-on-csv", {"other.csv": text(OTHER)}, imp("other.csv", "--key-column", "k", *WIDE),
         ("--key-column", "csv")),
    case("key-column-on-list", {"r.json": text(json.dumps([{"item_id": "a", "ann": "full_refusal"}]))},
         imp("r.json", "--key-column", "k", "--raters", "ann"), ("--key-column k", "JSON list")),
    case("key-column-not-lists", {"r.json": text(json.dumps({"b1": {"completion": "r1"}}))},
         imp("r.json", "--key-column", "behavior_id", "--raters", "ann"), ("key 'b1'", "not a list of rows")),
    case("key-column-clash", {"r.json": text(json.dumps({"b1": [{"behavior_id": "b9", "ann": "full_refusal"}]}))},
         imp("r.json", "--key-column", "behavior_id", "--id-from", "row", "--raters", "ann"),
         ("key 'b1', row 1", "behavior_id 'b9'")),
    case("object-of-lists-no-key-column", {"r.json": text(json.dumps(BY_BEHAVIOR))},
         imp("r.json", "--raters", "ann"), ("object of 2 lists", "--key-column")),
    case("one-list-beside-objects", {"r.json": text(json.dumps({"meta": {"v": 1}, "data": [{"item_id": "a"}]}))},
         imp("r.json", "--raters", "ann"), ("the list 'data' beside the object 'meta'",)),
    case("flatten-collision", {"r.jsonl": jsonl([{"item_id": "a", "m.x": 1, "m": {"x": 2}, "ann": "full_refusal"}])},
         imp("r.jsonl", "--flatten", "--raters", "ann"), ("line 1", "'m.x' twice")),
    case("flatten-csv", {"other.csv": text(OTHER)}, imp("other.csv", "--flatten", "--map", MAP, *WIDE),
         ("--flatten",)),
    # --id-from
    other("id-from-with-id", ("--id-from content", "has an item_id column"), "--id-from", "content",
          *WIDE, content=OTHER.replace("_id", "item_id", 1)),
    case("id-from-row-long", {"r.csv": text("rater_id,response,label\nann,r1,full_refusal\n")},
         imp("r.csv", "--id-from", "row"), ("--id-from row", "rater_id")),
    case("id-from-content-same-text", {"r.csv": text("response,ann\nsame,full_refusal\nsame,full_compliance\n")},
         imp("r.csv", "--id-from", "content", "--raters", "ann"), ("line 2 and line 3", "same prompt and response")),
    case("id-from-content-no-response", {"r.csv": text("answer,ann\nr1,full_refusal\n")},
         imp("r.csv", "--id-from", "content", "--raters", "ann"), ("missing column 'response'", "'answer'")),
    case("id-from-content-empty-response", {"r.csv": text("response,ann\nr1,full_refusal\n,full_refusal\n")},
         imp("r.csv", "--id-from", "content", "--raters", "ann"), ("line 3", "empty response")),
    # --items --join-on
    joined("join-key-missing-in-items", ("missing column 'behavior_id'", "--join-on behavior_id=BehaviorID"),
           "BehaviorID,category\nb1,cyber\n", "--join-on", "behavior_id"),
    joined("join-key-missing-in-ratings", ("missing column 'beh_id'", "--join-on"), BEHAVIORS,
           "--join-on", "beh_id=behavior_id", names="other.csv"),
    joined("join-key-twice", ("line 2 and line 3", "behavior_id 'b1' appears twice"),
           "behavior_id,category\nb1,cyber\nb1,chem\nb2,bio\n", "--join-on", "behavior_id"),
    joined("join-key-empty", ("line 2", "empty behavior_id"), "behavior_id,category\n,cyber\nb2,chem\n",
           "--join-on", "behavior_id"),
    joined("join-key-unknown", ("item 'x2' has behavior_id 'b2'", "not in"), "behavior_id,category\nb1,cyber\n",
           "--join-on", "behavior_id", names="other.csv"),
    joined("join-items-has-item-id", ("has an item_id column", "--join-on"),
           "item_id,behavior_id,category\nz,b1,cyber\nw,b2,chem\n", "--join-on", "behavior_id"),
    other("join-without-items", ("--join-on", "--items"), "--map", MAP, *WIDE, "--join-on", "behavior_id"),
    joined("items-map-no-such-column", ("--items-map", "no column 'Behavior'"), BEHAVIORS,
           "--items-map", "prompt=Behavior", "--join-on", "behavior_id"),
]
# (a CSV's join keys are compared as the text written, so a CSV ratings file's 1 meets a JSON
# items file's "1"; the type-strict hint between JSON files is in tests/io/test_import_edge_cases.py)

VALID = [
    Valid("mapping", {"other.csv": text(OTHER), "items.csv": text(BEHAVIORS)},
          imp("other.csv", "--map", MAP, *WIDE, "--items", "{case}/items.csv", "--join-on", "behavior_id")),
    Valid("mapping-object-of-lists", {"r.json": text(json.dumps(BY_BEHAVIOR)), "items.csv": text(BEHAVIORS)},
          imp("r.json", "--key-column", "behavior_id", "--id-from", "content", "--map", "response=completion",
              "--raters", "ann", "--items", "{case}/items.csv", "--join-on", "behavior_id")),
]
