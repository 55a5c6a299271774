"""Compare what `judgekit demo` writes in two folders, with what legitimately differs between runs
masked (timestamps, the fake provider's port and the judge hash made from it).

The layout change of issue 19 promised identical outputs: run `judgekit demo` in a fresh folder
on the old and on the new commit, then `python scripts/compare_outputs.py OLD/judgekit-demo
NEW/judgekit-demo`. Exit 0 when every JSON, Markdown and HTML file matches, else 1 with the
first lines that differ (the SQLite stores are not compared: they hold creation times).
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?"), "<time>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<hash16>"),
    (re.compile(r"\"seconds\": [0-9.]+"), "\"seconds\": <s>"),
]


def normalised(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
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
            for line in list(difflib.unified_diff(a, b, lineterm="", n=0))[:12]:
                print("   ", line[:160])
    extra = sorted(p.relative_to(new) for p in new.rglob("*") if p.is_file() and p.suffix in (".json", ".md", ".html")
                   and not (old / p.relative_to(new)).exists())
    for rel in extra:
        print(f"only in {new}: {rel}")
    print(f"{len(files)} files compared, {bad} differ, {len(extra)} new")
    return 1 if bad or extra else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
