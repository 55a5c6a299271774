"""The usual CSV file read fast: streamed from disk straight into columns.

:func:`judgekit.io.tables.read_table` tries this first; any file that is not one record per
physical line with every row the header's cells gets ``None`` here and takes the line-by-line
read of :mod:`judgekit.io.tables`, which names the line of the problem.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgekit.errors import JudgekitError


def read_csv_fast(
    p: Path, sep: str, newline: str
) -> tuple[list[str], dict[str, list[Any]], Sequence[int]] | None:
    """The usual file, streamed: one record per physical line, every row the header's cells;
    ``None`` for anything else (the line-by-line read names the line). Cells go straight into
    their columns, a repeated cell one shared string, so memory is the columns, not the rows."""
    with p.open(encoding="utf-8-sig", newline=newline) as fh:
        rows = csv.reader(fh, delimiter=sep, strict=True)
        try:
            header = next(rows, None)
            if header is None or len(header) < 2:
                return None
            width = len(header)
            columns: list[list[Any]] = [[] for _ in header]
            seen: list[dict[str, str]] = [{} for _ in header]
            n = 0
            for row in rows:
                if len(row) != width:
                    return None
                n += 1
                for k, v in enumerate(row):
                    columns[k].append(seen[k].setdefault(v, v) if v else None)  # empty: missing
        except csv.Error:
            return None
        if n == 0 or rows.line_num != n + 1:
            return None
    check_header(p, header, 1)
    return header, dict(zip(header, columns, strict=True)), range(2, n + 2)


def check_header(p: Path, header: list[str], header_line: int) -> None:
    for k, name in enumerate(header):
        first = header.index(name)
        if first != k:
            raise JudgekitError(
                f"{p} line {header_line}: the header names the column {name!r} twice (columns "
                f"{first + 1} and {k + 1}); rename or remove one."
            )
