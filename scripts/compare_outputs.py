"""Compare what `judgekit demo` writes in two folders, with what legitimately differs between runs
masked (timestamps, the fake provider's port and the judge hash made from it).

The layout change of issue 19 promised identical outputs: run `judgekit demo` in a fresh folder
on the old and on the new commit, then `python scripts/compare_outputs.py OLD/judgekit-demo
NEW/judgekit-demo`. Exit 0 when every JSON, Markdown and HTML file matches, else 1 with the
first lines that differ (the SQLite stores are not compared: they hold creation times).

JSON files are compared by content: a check (a verdict's, a probe row's) by its name, state,
figure, threshold, interval, n, detail and budget (sentence, items, slices), a budget by those
three, and no ``schema_version``: the structural fields a newer verdict schema adds to a check
(its kind, rule, subject, interval method and level, unit, floor) are not differences of what
it found.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import sys
from pathlib import Path

MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?"), "<time>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<hash16>"),
    (re.compile(r"\"seconds\": [0-9.]+"), "\"seconds\": <s>"),
    (re.compile(r" in [0-9]+(?:\.[0-9]+)?s\b"), " in <s>"),
    (re.compile(r"[^\s\"]*/annotations/"), "<checkout>/annotations/"),
]


#: what a check found, as compared
CHECK = ("name", "state", "passed", "figure", "threshold", "ci", "n", "detail", "budget")
#: what a budget says, as compared
BUDGET = ("items", "slices", "sentence")


def content(x: object) -> object:
    """A JSON value with checks and budgets reduced to what they found (module doc)."""
    if isinstance(x, list):
        return [content(v) for v in x]
    if not isinstance(x, dict):
        return x
    if {"name", "state", "threshold", "detail"} <= set(x):
        return {k: content(x.get(k)) for k in CHECK}
    if {"items", "slices", "sentence"} <= set(x):
        return {k: x.get(k) for k in BUDGET}
    return {k: content(v) for k, v in x.items() if k != "schema_version"}


def normalised(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        with contextlib.suppress(json.JSONDecodeError):
            text = json.dumps(content(json.loads(text)), indent=1, ensure_ascii=False, sort_keys=True)
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return text.splitlines()


def main(old: Path, new: Path) -> int:
    files = sorted(p.relative_to(old) for p in old.rglob("*") if p.is_file() and p.suffix in (".json", ".md", ".html", ".csv", ".svg"))
    bad = 0
    for rel in files:
        if not (new / rel).exists():
            print(f"missing in {new}: {rel}")
            bad += 1
            continue
        a, b = normalised(old / rel), normalised(new / rel)
        if a != b:
            bad += 1
            print(f"differs: {rel}")
            for line in list(difflib.unified_diff(a, b, lineterm="", n=0))[:LINES]:
                print("   ", line[:160])
    extra = sorted(p.relative_to(new) for p in new.rglob("*") if p.is_file() and p.suffix in (".json", ".md", ".html")
                   and not (old / p.relative_to(new)).exists())
    for rel in extra:
        print(f"only in {new}: {rel}")
    print(f"{len(files)} files compared, {bad} differ, {len(extra)} new")
    return 1 if bad or extra else 0


#: the differing lines shown per file
LINES = 400

if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
