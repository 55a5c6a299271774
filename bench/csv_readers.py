"""judgekit's CSV fast path against pyarrow.csv and pandas (run: .venv/bin/python bench/csv_readers.py).

Not a test: it prints what docs/dependencies.md ("io/csv_fast.py") reports.

1. **What each reader keeps.** Small files the strict ``csv`` reader judgekit uses refuses or reads
   as written, read by ``pyarrow.csv.read_csv`` with every column a string, no null values,
   ``strings_can_be_null=False``, ``newlines_in_values=False``.
2. **Time**, best of three, into what the importer needs (per column a Python list, an empty cell
   ``None``, a repeated cell one shared string), on two 1,000,000-row-class files written here:
   the ratings layout of ``bench/scale.py`` (no quotes) and an items layout with quoted texts:

   * ``read_csv_fast`` (judgekit, the ``csv`` module streamed into columns);
   * pyarrow's reader alone, then converted to those lists (the speed it offers);
   * pyarrow guarded: a pre-pass that refuses whatever pyarrow would read differently from the
     strict reader (a quote, a lone ``\\r``, a blank line or a line break inside quotes in a block
     sends the block through a regular expression of the strict grammar) — the least it takes to
     use pyarrow without reading a malformed cell as something else;
   * ``pandas.read_csv(dtype=str, keep_default_na=False)`` for scale.

The guarded reader's answers are compared with judgekit's on both files (identical).
"""

from __future__ import annotations

import csv
import io
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scale import generate  # noqa: E402

from judgekit.io.csv_fast import read_csv_fast  # noqa: E402

CASES = [
    ("text after a closing quote", b'x,y\na,"b"c\n'),
    ("a space after a closing quote", b'x,y\na,"b" \n'),
    ("a lone carriage return in a cell", b"x,y\na,b\rc,d\n"),
    ("a blank line", b"x,y\na,b\n\nc,d\n"),
    ("a line break inside quotes", b'x,y\na,"b\nc"\n'),
]


def _arrow(source: Any, names: list[str], sep: str = ",", *, ignore_empty: bool = False) -> pa.Table:
    return pacsv.read_csv(
        source,
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=False, ignore_empty_lines=ignore_empty),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[],
                                             strings_can_be_null=False, quoted_strings_can_be_null=False),
    )


def _strict(data: bytes) -> Any:
    try:
        return list(csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="\n"), strict=True))[1:]
    except csv.Error as exc:
        return f"refused ({exc})"


def show_cases() -> None:
    print("What each reader makes of a file the strict reader refuses or reads as written:")
    for what, data in CASES:
        rows: Any
        try:
            rows = [list(r.values()) for r in _arrow(io.BytesIO(data), ["x", "y"]).to_pylist()]
        except pa.ArrowException as exc:
            rows = f"refused ({exc})"
        print(f"  {what}: {data!r}\n    csv strict (judgekit): {_strict(data)}\n    pyarrow:               {rows}")


def _lists(header: list[str], table: pa.Table) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name, col in zip(header, table.columns, strict=True):
        d = col.combine_chunks().dictionary_encode()
        values = [v or None for v in d.dictionary.to_pylist()]
        out.setdefault(name, [values[i] for i in d.indices.to_pylist()])
    return out


def arrow_lists(p: Path) -> tuple[list[str], dict[str, list[Any]]]:
    with p.open(newline="") as fh:
        header = next(csv.reader(fh))
    return header, _lists(header, _arrow(str(p), [f"c{k}" for k in range(len(header))]))


def _grammar(sep: bytes) -> re.Pattern[bytes]:
    s = re.escape(sep)
    field = rb'(?:"(?:[^"\r\n]|"")*"|[^"' + s + rb"\r\n][^" + s + rb"\r\n]*|)"
    line = field + rb"(?:" + s + field + rb")+"
    return re.compile(rb"(?:" + line + rb"\r?\n)*(?:" + line + rb")?")


def _plain(b: bytes) -> bool:
    return (b'"' not in b and b.count(b"\r") == b.count(b"\r\n") and b"\n\n" not in b
            and b"\n\r\n" not in b and not b.startswith((b"\n", b"\r\n")))


def guarded(p: Path) -> tuple[list[str], dict[str, list[Any]]] | None:
    rx, lines, rest = _grammar(b","), 0, b""
    with p.open("rb") as fh:
        while True:
            chunk = fh.read(1 << 24)
            buf = rest + chunk
            cut = len(buf) if not chunk else buf.rfind(b"\n") + 1
            part, rest = buf[:cut], buf[cut:]
            if part and not _plain(part) and not rx.fullmatch(part):
                return None
            lines += part.count(b"\n") + (1 if not chunk and part and not part.endswith(b"\n") else 0)
            if not chunk:
                break
    header, data = arrow_lists(p)
    return (header, data) if len(next(iter(data.values()))) == lines - 1 else None


def items_file(path: Path, n: int) -> None:
    rng = random.Random(1)
    words = ["the", "a", "refuse", "cannot", "help", "with", "that", "request,", "however", "here", "is", "some", "safe", "information"]
    with path.open("w", newline="") as fh:
        fh.write("item_id,prompt,response,model\n")
        for i in range(n):
            prompt = " ".join(rng.choice(words) for _ in range(12))
            response = " ".join(rng.choice(words) for _ in range(30))
            fh.write(f'item-{i:07d},"{prompt}","He said ""{response}""",model_{i % 3}\n')


def best(f: Callable[[], Any], k: int = 3) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(k):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    show_cases()
    with tempfile.TemporaryDirectory() as tmp:
        ratings, items = Path(tmp) / "ratings.csv", Path(tmp) / "items.csv"
        generate(ratings, 1_000_000)
        items_file(items, 300_000)
        for label, p in (("ratings, 1,000,000 rows, no quotes", ratings), ("items, 300,000 rows, quoted texts", items)):
            print(f"\n{label} ({p.stat().st_size / 1e6:.0f} MB), best of 3, seconds:")
            t_jk, jk = best(lambda p=p: read_csv_fast(p, ",", "\n"))
            t_pa, _ = best(lambda p=p: arrow_lists(p))
            t_g, g = best(lambda p=p: guarded(p))
            t_pd, _ = best(lambda p=p: pd.read_csv(p, dtype=str, keep_default_na=False))
            assert jk is not None and g is not None and g[0] == jk[0] and g[1] == jk[1]
            for name, t in (("read_csv_fast (judgekit)", t_jk), ("pyarrow, to lists", t_pa),
                            ("pyarrow guarded, to lists", t_g), ("pandas dtype=str", t_pd)):
                print(f"  {name:28s} {t:6.2f}")


if __name__ == "__main__":
    main()
