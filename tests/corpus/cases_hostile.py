"""Inputs that attack the machine rather than the data.

* ``special`` — a FIFO (no writer: a blocking read never ends) or a link to ``/dev/zero``
  (never ends) or ``/dev/null`` given as every kind of input, and as an output file and a store:
  refused before anything is read or written. These run in a child process, so a regression
  fails on the timeout instead of hanging the corpus.
* ``regex`` — rubric alias patterns with nested repetition (ReDoS).
* ``header`` — a million columns, too many keys, a header line longer than judgekit reads.
* ``ids`` / ``time`` — invisible characters in ids; ``created_at`` beyond the year 9999.
"""

from __future__ import annotations

import json

from corpus.base import FIFO, Case, Link, Valid, text
from corpus.cases_config import (
    CRITERIA_ARGS,
    ITEMS,
    PANEL,
    PANEL_ARGS,
    POLICY_ARGS,
    RUBRIC,
    RUBRIC_ARGS,
    SPEC_ARGS,
)
from corpus.cases_logs import ANALYZE, LS_ARGS

SPECIAL = ("is a FIFO (named pipe), not a regular file", "is a character device, not a regular file")


def special(cid: str, files: dict, args: tuple[str, ...], names: str | None = None) -> Case:
    return Case(id=f"special-{cid}", kind="special", files=files, args=args, expect=(SPECIAL,),
                names=names, subprocess=True)


def imp(name: str, *extra: str) -> tuple[str, ...]:
    return ("import", "{case}/" + name, "--rubric", "refusal", *extra, "--store", "{store}")


SPECIAL_CASES = [
    special("import-fifo", {"r.csv": FIFO}, imp("r.csv")),
    special("import-dev-zero", {"r.csv": Link("/dev/zero")}, imp("r.csv")),
    special("import-jsonl-fifo", {"r.jsonl": FIFO}, imp("r.jsonl")),
    special("items-fifo", {"items.jsonl": FIFO},
            ("import", "{seed}/labels.csv", "--rubric", "refusal", "--raters", "h1", "--items",
             "{case}/items.jsonl", "--store", "{store}")),
    special("rubric-fifo", {"rubric.yaml": FIFO}, RUBRIC_ARGS),
    special("rubrics-show-fifo", {"rubric.yaml": FIFO}, ("rubrics", "{case}/rubric.yaml")),
    special("policy-fifo", {"policy.yaml": FIFO}, POLICY_ARGS),
    special("panel-fifo", {"panel.yaml": FIFO, "items.jsonl": text(ITEMS)}, PANEL_ARGS),
    special("panel-items-fifo", {"panel.yaml": text(PANEL), "items.jsonl": FIFO}, PANEL_ARGS,
            names="items.jsonl"),
    special("criteria-fifo", {"criteria.yaml": FIFO}, CRITERIA_ARGS),
    special("sample-spec-fifo", {"spec.yaml": FIFO}, SPEC_ARGS),
    special("verdict-fifo", {"verdict.json": FIFO}, ANALYZE),
    special("verdict-dev-zero", {"verdict.json": Link("/dev/zero")}, ANALYZE),
    special("ls-export-fifo", {"export.json": FIFO}, tuple(a.replace("%s", "json") for a in LS_ARGS)),
    special("export-out-fifo", {"out.csv": FIFO},
            ("export", "ratings", "--store", "{store}", "--out", "{case}/out.csv")),
    special("export-out-dev-null", {"out.csv": Link("/dev/null")},
            ("export", "ratings", "--store", "{store}", "--out", "{case}/out.csv")),
    special("store-fifo", {"s.db": FIFO}, ("export", "ratings", "--store", "{case}/s.db", "--out", "{out}/r.csv")),
    special("store-dev-null", {"s.db": Link("/dev/null")},
            ("import", "{seed}/labels.csv", "--rubric", "refusal", "--raters", "h1", "--store", "{case}/s.db"),
            names="s.db"),
]


def rubric_with(pattern: str) -> bytes:
    return text(RUBRIC + f"alias_patterns:\n  - {{pattern: '{pattern}', code: full_refusal}}\n")


def slow_label(pattern: str, label: str, cid: str) -> Case:
    """A label the nested pattern does not match: refused as an unknown label, in milliseconds."""
    return Case(id=f"regex-{cid}", kind="regex",
                files={"r.csv": text(f"item_id,rater_id,label\ni0,h1,{label}\n"), "rubric.yaml": rubric_with(pattern)},
                args=("import", "{case}/r.csv", "--rubric", "{case}/rubric.yaml", "--store", "{store}"),
                expect=("line 2", "is not in rubric"))


REGEX_CASES = [
    slow_label("(a+)+b", "a" * 40 + "!", "nested-plus"),
    slow_label(r"^(\w+\s?)*$", " ".join(["word"] * 30) + "!", "words"),
    Case(id="regex-alternation-refused", kind="regex", files={"rubric.yaml": rubric_with("(a|aa)+b")},
         args=RUBRIC_ARGS, expect=("Rubric file", "alias_patterns[0]", "nested repetition")),
]

MILLION = ["item_id", "rater_id", "label"] + [f"c{k}" for k in range(1_000_000)]
HEADER_CASES = [
    Case(id="header-million-columns", kind="header",
         files={"r.csv": text(",".join(MILLION) + "\n" + ",".join(["i0", "h1", "full_refusal"] + ["x"] * 1_000_000) + "\n")},
         args=imp("r.csv"), expect=("line 1", "1,000,003 columns", "at most 10,000")),
    Case(id="header-jsonl-keys", kind="header",
         files={"r.jsonl": text(json.dumps({"item_id": "i0", "rater_id": "h1", "label": "full_refusal",
                                            **{f"c{k}": 1 for k in range(10_000)}}) + "\n")},
         args=imp("r.jsonl"), expect=("10,003 columns",)),
    Case(id="header-line-too-long", kind="header",
         files={"r.csv": text("item_id,rater_id,label," + "n" * 1_000_010 + "\ni0,h1,full_refusal,x\n")},
         args=imp("r.csv"), expect=("line 1", "longer than 1,000,000 characters")),
]

ID_CASES = [
    Case(id="ids-zero-width-item", kind="ids",
         files={"r.csv": text("item_id,rater_id,label\ni0,h1,full_refusal\ni\u200b0,h1,full_refusal\n")},
         args=imp("r.csv"), expect=("line 3", "ZERO WIDTH SPACE")),
    Case(id="ids-bidi-rater", kind="ids",
         files={"r.jsonl": text(json.dumps({"item_id": "i0", "rater_id": "h\u200e1", "label": "full_refusal"}) + "\n")},
         args=imp("r.jsonl"), expect=("line 1", "LEFT-TO-RIGHT MARK")),
    Case(id="time-1e300", kind="time",
         files={"r.csv": text("item_id,rater_id,label,created_at\ni0,h1,full_refusal,1e300\n")},
         args=imp("r.csv"), expect=("line 2", "outside the years 1 to 9999")),
    Case(id="time-year-99999", kind="time",
         files={"r.csv": text("item_id,rater_id,label,created_at\ni0,h1,full_refusal,99999-01-01T00:00:00Z\n")},
         args=imp("r.csv"), expect=("line 2", "outside the years 1 to 9999")),
]

CASES: list[Case] = [*SPECIAL_CASES, *REGEX_CASES, *HEADER_CASES, *ID_CASES]

VALID = [
    Valid("regex-linear", {"r.csv": text("item_id,rater_id,label\ni0,h1,aaab\n"), "rubric.yaml": rubric_with("(a+)+b")},
          ("import", "{case}/r.csv", "--rubric", "{case}/rubric.yaml", "--store", "{store}")),
]
