"""Trust a verdict does not give: an analysis restricted with ``--where`` to a part of the items
no check of the verdict is about, and a verdict naming a source of the judge's ratings it does not
record. Each is refused: exit 2, one sentence naming the verdict file, nothing written (see
:mod:`make_corpus`)."""

from __future__ import annotations

import json
from pathlib import Path

from corpus.base import Case, Valid


def _verdict(template: Path) -> bytes:
    return (template / "verdict.json").read_bytes()


def _other_source(template: Path) -> bytes:
    v = json.loads((template / "verdict.json").read_text())
    v["judges"][0]["source"] = "panel"  # its ratings come from one import, not panel calls
    return json.dumps(v).encode()


ANALYZE = ("analyze", "distribution", "--judge", "j1", "--rubric", "refusal", "--no-forms", "--bootstrap", "0",
           "--verdict", "{case}/verdict.json", "--store", "{store}", "--out", "{out}", "--quiet")
NO_RESULT = ("{out}/distribution.json",)

CASES: list[Case] = [
    Case(id="trust-where-model-no-check-about", kind="verdict", files={"verdict.json": _verdict},
         args=(*ANALYZE, "--where", "model=m0"), expect=("(model=m0)", "no check of the verdict is about model=m0"),
         no_output=NO_RESULT),
    Case(id="trust-where-two-columns", kind="verdict", files={"verdict.json": _verdict},
         args=(*ANALYZE, "--where", "model=m0,m1", "--where", "category=c1"),
         expect=("model=m0,m1; category=c1",), no_output=NO_RESULT),
    Case(id="trust-source-not-recorded", kind="verdict", files={"verdict.json": _other_source},
         args=ANALYZE, expect=("judges[0]", "names the source 'panel'"), no_output=NO_RESULT),
]

VALID: list[Valid] = [
    Valid("trust-whole-population", {"verdict.json": _verdict}, ANALYZE),
]
