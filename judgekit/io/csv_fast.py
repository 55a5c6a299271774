"""The usual CSV file read fast: streamed from disk straight into columns.

:func:`judgekit.io.tables.read_table` tries this first; any file that is not one record per
physical line with every row the header's cells gets ``None`` here and takes the line-by-line
read of :mod:`judgekit.io.tables`, which names the line of the problem.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from judgekit.core.paths import open_input, open_input_text
from judgekit.errors import JudgekitError

#: the most columns judgekit reads from a table (a ratings or items file has an id, the texts,
#: the raters' labels and some metadata: tens, a wide file of many raters hundreds)
MAX_COLUMNS = 10_000
#: the longest header judgekit reads, in characters (its column names and separators)
MAX_HEADER_CHARS = 1_000_000


def read_csv_fast(
    p: Path, sep: str, newline: str
) -> tuple[list[str], dict[str, list[Any]], Sequence[int]] | None:
    """The usual file, streamed: one record per physical line, every row the header's cells;
    ``None`` for anything else (the line-by-line read names the line). Cells go straight into
    their columns, a repeated cell one shared string, so memory is the columns, not the rows."""
    with open_input_text(p, encoding="utf-8-sig", newline=newline) as fh:
        rows = csv.reader(fh, delimiter=sep, strict=True)
        try:
            header = next(rows, None)
            if header is None or len(header) < 2:
                return None
            check_header_size(p, header, 1)
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
    _check_header(p, header, 1)
    return header, dict(zip(header, columns, strict=True)), range(2, n + 2)


def check_header_size(p: Path, header: list[str], header_line: int) -> None:
    """Refuse a header of more than :data:`MAX_COLUMNS` columns or :data:`MAX_HEADER_CHARS`
    characters (one sentence naming the file and line), before any work per column."""
    if len(header) > MAX_COLUMNS:
        raise JudgekitError(
            f"{p} line {header_line}: the header has {len(header):,} columns, and judgekit reads at "
            f"most {MAX_COLUMNS:,} (ids, texts, labels and metadata); remove columns or split the file."
        )
    if sum(map(len, header)) + len(header) - 1 > MAX_HEADER_CHARS:
        raise JudgekitError(
            f"{p} line {header_line}: the header is longer than {MAX_HEADER_CHARS:,} characters, "
            "the most judgekit reads; shorten the column names or check that line 1 is the header."
        )


def _check_header(p: Path, header: list[str], header_line: int) -> None:
    """:func:`check_header_size`, then no column name given twice (the first repeat is named)."""
    check_header_size(p, header, header_line)
    first: dict[str, int] = {}
    for k, name in enumerate(header):
        if name in first:
            raise JudgekitError(
                f"{p} line {header_line}: the header names the column {name!r} twice (columns "
                f"{first[name] + 1} and {k + 1}); rename or remove one."
            )
        first[name] = k


# ------------------------------------------------------------------ line ends
def _header_end(first: bytes, sep: bytes) -> int | None:
    """The offset of the first line end (``\r`` or ``\n``) outside a quoted field in ``first``,
    by the csv module's rules: a double quote opens a quoted field only as a field's first
    character (elsewhere it is a literal character of the cell), ``""`` inside quotes is one
    quote, a lone one closes the field; ``None`` when there is none in the block."""
    specials = re.compile(b'["\r\n' + re.escape(sep) + b"]")
    field_start = 3 if first.startswith(b"\xef\xbb\xbf") else 0
    i = field_start
    while (m := specials.search(first, i)) is not None:
        k, c = m.start(), m.group()
        if c == sep:
            field_start = i = k + 1
        elif c != b'"':
            return k
        elif k != field_start:
            i = k + 1  # a literal quote inside an unquoted cell
        else:  # a quoted field: to its closing quote (a doubled one is an escaped quote)
            j = k + 1
            while True:
                j = first.find(b'"', j)
                if j < 0:
                    return None
                if first[j + 1 : j + 2] == b'"':
                    j += 2
                    continue
                break
            i = j + 1
            field_start = -1  # text after the closing quote belongs to the same cell
    return None


def detect_newline(p: Path, sep: str = ",", block: int = 1 << 20) -> str:
    """The line end a CSV file's records end with: ``"\r"`` (old-Mac files) or ``"\n"`` (``\n``
    and ``\r\n``), read from the file's first line end outside double quotes (the header's; a
    quote opens a quoted field only at the start of a field, as the csv module reads it).

    A header ending in a lone carriage return makes a file of ``\r`` line ends unless the file
    holds a ``\r\n`` somewhere (then it is read as the ``\n`` file it mostly is); a line break
    inside a quoted cell of such a file is a cell's text (kept as written: the readers translate
    no line end). Without a line end in its first megabyte, a file with no ``\n`` and a ``\r``
    has ``\r`` line ends. Reads only the first block of the usual file (the header ends in
    ``\n``); memory stays one block.
    """
    with open_input(p) as fh:
        first = fh.read(block)
        at = _header_end(first, sep.encode())
        end = b"" if at is None else first[at : at + 2]
        if end.startswith(b"\n") or end == b"\r\n":
            return "\n"
        lone_cr = end[:1] == b"\r" and (len(end) == 2 or at is not None and at + 1 < len(first))
        has_lf, has_crlf, has_cr = b"\n" in first, b"\r\n" in first, b"\r" in first
        last = first[-1:]
        while not has_crlf and (chunk := fh.read(block)):
            has_lf = has_lf or b"\n" in chunk
            has_crlf = b"\r\n" in chunk or (last == b"\r" and chunk[:1] == b"\n")
            has_cr = has_cr or b"\r" in chunk
            last = chunk[-1:]
    if lone_cr and not has_crlf:
        return "\r"
    return "\r" if not has_lf and has_cr else "\n"


# ------------------------------------------------------------------ chunks
class NotUsual(Exception):
    """The file is not the usual one (see :func:`read_csv_chunks`): read it whole."""


class CsvChunks:
    """The header and the rows of the usual file (one record per physical line, every row the
    header's cells, header on line 1), ``size`` rows at a time as columns (one tuple per header
    cell, an empty cell ``None``), read as they are iterated: memory is one chunk. Anything else
    raises :class:`NotUsual` (when opened or while reading): the line-by-line read of
    :mod:`judgekit.io.tables` names the line of the problem. A context manager (closes the file).
    """

    def __init__(self, p: Path, sep: str, newline: str, size: int) -> None:
        csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
        self.size = size
        self._fh = open_input_text(p, encoding="utf-8-sig", newline=newline)
        self._rows = csv.reader(self._fh, delimiter=sep, strict=True)
        try:
            header = next(self._rows, None)
            if header is None or len(header) < 2 or self._rows.line_num != 1:
                raise NotUsual
            _check_header(p, header, 1)
        except (csv.Error, UnicodeDecodeError, JudgekitError):
            self._fh.close()
            raise NotUsual from None
        except BaseException:
            self._fh.close()
            raise
        self.header: list[str] = header

    def __enter__(self) -> CsvChunks:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[list[tuple[str | None, ...]]]:
        rows, width, n = self._rows, len(self.header), 0
        gets = [itemgetter(k) for k in range(width)]
        while True:
            try:
                chunk = list(islice(rows, self.size))
            except (csv.Error, UnicodeDecodeError):
                raise NotUsual from None
            if not chunk:
                if n == 0:
                    raise NotUsual  # a header and no rows
                return
            n += len(chunk)
            if rows.line_num != n + 1:
                raise NotUsual  # a record over several lines, a blank line
            if set(map(len, chunk)) != {width}:
                raise NotUsual  # a row of another length
            cols = [tuple(map(get, chunk)) for get in gets]
            del chunk
            # an empty cell is missing
            yield [tuple(v or None for v in c) if "" in c else c for c in cols]
