"""Values kept exactly as written, or refused: ids, trials, timestamps, strict JSON, and the
reference (file and line) an error names.

Every user-written file is untrusted input: an id is text exactly as written (an integer becomes
its digits; a decimal, a bool, white space at either end or a control character is an error), a
trial is a whole number, a timestamp is seconds since 1970 or ISO 8601 with a zone, JSON refuses
duplicate keys and NaN/Infinity. Used by the readers (:mod:`judgekit.io`) and by
:mod:`judgekit.store.data`; imports nothing of theirs.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import numbers
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast, overload

from judgekit.errors import JudgekitError, excerpt

if TYPE_CHECKING:
    import pandas as pd


def row_ref(source: str, index: int, *, csv: bool, lines: Sequence[int] | None = None) -> str:
    """``file.csv line 7`` for a 0-based DataFrame row.

    ``lines`` (from :func:`judgekit.io.tables.read_table`, ``table.attrs["lines"]``) gives each
    row's first physical line, so a row after a quoted multi-line cell or a blank line is named
    by the line an editor shows; without it, CSV rows count from line 2 (header = line 1).
    """
    if lines is not None and 0 <= index < len(lines):
        return f"{source} line {lines[index]}"
    return f"{source} line {index + 2}" if csv else f"{source} row {index + 1}"


# ------------------------------------------------------------------ values kept exactly
#: control characters (Unicode Cc), line/paragraph separators and bidi controls: never in an id
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
Where = str | Callable[[], str]
#: characters no font draws that are not format characters (Unicode category Cf, all refused)
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def invisible_char(value: str) -> str | None:
    """The first character of ``value`` that is invisible — a Unicode format character (category
    Cf: zero-width space and joiners, bidi controls, soft hyphen, BOM, ...) or a filler that no
    font draws (HANGUL FILLER, ...) — or None. ASCII text has none (checked first, fast)."""
    if value.isascii():
        return None
    for ch in value:
        if ch in _INVISIBLE_LETTERS or (ord(ch) > 127 and unicodedata.category(ch) == "Cf"):
            return ch
    return None


def nfc(value: str) -> str:
    """``value`` in Unicode normal form C (precomposed): the form judgekit keeps ids in, so an id
    typed precomposed and one typed decomposed (``é`` as e + U+0301), which are the same text by
    Unicode's canonical equivalence and look the same, are one id."""
    return value if value.isascii() or unicodedata.is_normalized("NFC", value) else unicodedata.normalize("NFC", value)


def where_text(where: Where) -> str:
    return where() if callable(where) else where


def id_problem(value: Any, what: str) -> str | None:
    """Why ``value`` cannot be an id as written (None if it can); see :func:`as_id`."""
    if isinstance(value, bool) or not isinstance(value, str | numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return (f"{what} {excerpt(value)} is a decimal number; an id is text or a whole number "
                    f"(write \"{value}\" in quotes if that is the id)")
        return f"{what} {excerpt(value)} is a {type(value).__name__}; an id is text or a whole number"
    if not isinstance(value, str):
        return None
    if value != value.strip():
        end = "start" if value[:1].isspace() else "end"
        return (f"{what} {excerpt(value)} has white space at the {end}; remove it (it is kept "
                "exactly as written, so 'a' and 'a ' would be two different names)")
    bad = _CONTROL.search(value)
    if bad is not None:
        return f"{what} {excerpt(value)} contains the control character {bad.group()!r}; remove it"
    hidden = invisible_char(value)
    if hidden is not None:
        name = unicodedata.name(hidden, "a format character")
        return (f"{what} {excerpt(value)} contains the invisible character U+{ord(hidden):04X} "
                f"({name}); remove it (an id with it would look the same as one without)")
    return None


def as_id(value: Any, what: str, where: Where) -> str:
    """An item or rater id as written: text in Unicode NFC (:func:`nfc`: a decomposed ``é`` is
    the same id as a precomposed one), a JSON/Parquet integer as its digits (``1`` → ``"1"``). A
    decimal number (``1.0``), text with white space at either end, with control characters or
    with an invisible character (:func:`invisible_char`) is an error naming ``where``; an empty
    value too."""
    if is_missing(value) or (isinstance(value, str) and not value.strip()):
        raise JudgekitError(f"{where_text(where)}: empty {what}; every row needs one.")
    problem = id_problem(value, what)
    if problem:
        raise JudgekitError(f"{where_text(where)}: {problem}.")
    return nfc(value) if isinstance(value, str) else str(int(value))


_UINT = re.compile(r"[0-9]{1,9}")
_MAX_TRIAL = 10**9 - 1


def as_trial(value: Any, where: Where) -> int:
    """A ``trial`` number: a whole number 0, 1, 2, … up to :data:`_MAX_TRIAL` (an empty cell is
    trial 0)."""
    if is_missing(value):
        return 0
    if (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and 0 <= int(value) <= _MAX_TRIAL):
        return int(value)
    if isinstance(value, str) and _UINT.fullmatch(value):
        return int(value)
    raise JudgekitError(
        f"{where_text(where)}: trial {excerpt(value)} is not a whole number; number repeated runs 0, 1, "
        "2, …"
    )


NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


#: the first and last second judgekit reads as a time: 0001-01-01T00:00:00Z and
#: 9999-12-31T23:59:59Z in seconds since 1970 (the years an ISO 8601 time can name), so a number
#: of seconds and an ISO time are bounded alike
_FIRST_TIME = -62_135_596_800.0
_LAST_TIME = 253_402_300_799.0
_BIG_YEAR = re.compile(r"\s*[+-]?\d{5,}-")


def as_timestamp(value: Any, where: Where, default: float) -> float:
    """``created_at`` as seconds since 1970: a number, or an ISO 8601 time with a zone
    (``2024-05-01T10:00:00Z``), in the years 1 to 9999 (:data:`_FIRST_TIME` to
    :data:`_LAST_TIME`, whatever the spelling); an empty cell is ``default`` (the import time)."""
    if is_missing(value):
        return default
    problem = "is not a time"
    outside = "is outside the years 1 to 9999 that judgekit reads"
    number = (isinstance(value, numbers.Real) and not isinstance(value, bool)) or (
        isinstance(value, str) and NUMBER.fullmatch(value.strip()) is not None)
    if number:
        try:
            seconds = float(value)
        except OverflowError:  # an integer beyond a float
            seconds = math.copysign(math.inf, int(value))
            problem = outside
        if math.isfinite(seconds):
            if _FIRST_TIME <= seconds <= _LAST_TIME:
                return seconds
            problem = outside
    elif isinstance(value, str | dt.datetime):
        try:
            when = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value.strip())
        except ValueError:
            if isinstance(value, str) and _BIG_YEAR.match(value):
                problem = outside
        else:
            if when.tzinfo is not None and when.utcoffset() is not None:
                try:
                    when.astimezone(dt.UTC)  # in the years 1 to 9999 once in UTC, else an OverflowError
                    # the last second's fraction: a float rounds 9999-12-31T23:59:59.999999Z up to year 10000
                    seconds = min(when.timestamp(), _LAST_TIME + 0.999)
                except (OverflowError, ValueError):
                    seconds = math.inf
                if _FIRST_TIME <= seconds < _LAST_TIME + 1:  # (its last second's fractions too)
                    return seconds
                problem = outside
            else:
                problem = "has no time zone"
    raise JudgekitError(
        f"{where_text(where)}: created_at {excerpt(value)} {problem}; give seconds since 1970 (e.g. "
        "1714000000) or an ISO 8601 time with its zone (e.g. 2024-05-01T10:00:00Z)."
    )


def check_ids(
    values: Sequence[Any],
    what: str,
    source: str,
    *,
    csv: bool,
    lines: Sequence[int] | None,
    rows: Sequence[int] | None = None,
    allow_missing: bool = False,
) -> list[Any]:
    """``values`` checked and converted with :func:`as_id`; an error names the row's line.

    ``allow_missing`` keeps empty values as None (for :func:`judgekit.io.tables.read_table`,
    which leaves "empty id" to the check that knows what the row is)."""
    def ref(i: int) -> Where:
        return lambda: row_ref(source, i if rows is None else int(rows[i]), csv=csv, lines=lines)

    values = list(values)
    present = [v for v in values if v is not None] if allow_missing else values
    if all(type(v) is str for v in present):  # the usual case: check each distinct id once
        distinct = set(present)
        joined = "".join(distinct)
        if (joined.isascii() and not _CONTROL.search(joined)
                and all(u and u == u.strip() for u in distinct)):
            return values
        bad = {u for u in distinct if not u.strip() or id_problem(u, what)}
        if not bad:
            forms = {u: nfc(u) for u in distinct}
            if all(k == v for k, v in forms.items()):
                return values
            return [None if v is None else forms[v] for v in values]
        first = next(i for i, v in enumerate(values) if v is not None and v in bad)
        as_id(values[first], what, ref(first))  # raises
    return [
        None if allow_missing and is_missing(v) else as_id(v, what, ref(i))
        for i, v in enumerate(values)
    ]


class JSONValueError(ValueError):
    """JSON that parses but is refused: a duplicate key, NaN or Infinity."""


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise JSONValueError(f"the key {excerpt(key, 40)} appears twice in one object")
        obj[key] = value
    return obj


def _json_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a JSON value (write null for a missing value)")


def loads_json_strict(text: str | bytes) -> Any:
    """``json.loads`` that refuses a duplicate key in an object, ``NaN``/``Infinity`` and a lone
    surrogate escape such as ``"\\ud83d"`` (raises :class:`JSONValueError`); invalid JSON raises
    ``json.JSONDecodeError`` and JSON nested too deep for Python ``RecursionError``."""
    data = json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_json_constant)
    if isinstance(text, str) and not _SURROGATE_ESCAPE.search(text):
        return data  # no \uD800-\uDFFF escape in the text: no lone surrogate in the data
    problem = surrogate_problem(data, text)
    if problem is not None:
        raise JSONValueError(problem)
    return data


_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: where a surrogate can come from in JSON text read as UTF-8: a \uD800-\uDFFF escape
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
#: one escape sequence of a JSON string: a \uXXXX escape (group 1: its digits) or another one
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def surrogate_problem(data: Any, text: str | bytes | None = None) -> str | None:
    """Why parsed JSON ``data`` cannot be kept: a string (a key or a value) holding a lone
    surrogate escape (``"\\ud83d"`` without its pair is half a character: it cannot be stored or
    written as UTF-8), naming the key it is under and, given the JSON ``text``, its line; None if
    there is none. Walks the data without recursion (it may be nested deep)."""
    stack: list[tuple[Any, str | None]] = [(data, None)]
    while stack:
        value, key = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return _surrogate_message(value, key, text, is_key=False)
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and _SURROGATE.search(k):
                    return _surrogate_message(k, key, text, is_key=True)
                stack.append((v, k))
        elif isinstance(value, list):
            stack.extend((v, key) for v in value)
    return None


def _surrogate_message(value: str, key: str | None, text: str | bytes | None, *, is_key: bool) -> str:
    where = "a key" if is_key else ("a value" if key is None else f"the value of key {excerpt(key, 40)}")
    if is_key and key is not None:
        where += f" inside key {excerpt(key, 40)}"
    line = _surrogate_line(text)
    at = "" if line is None else f" at line {line}"
    m = _SURROGATE.search(value)
    esc = f"\\u{ord(m.group(0)):04x}" if m else "\\ud800"
    return (f"{where}{at} holds the lone surrogate escape {esc} (half a character, without its "
            "pair); write the character itself or both halves of its pair")


def _surrogate_line(text: str | bytes | None) -> int | None:
    """The line of the first unpaired surrogate escape in JSON ``text`` (None if one line)."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if "\n" not in text.strip():
        return None
    escapes = list(_ESCAPE.finditer(text))
    for i, m in enumerate(escapes):
        digits = m.group(1)
        if digits is None or not 0xD800 <= int(digits, 16) <= 0xDFFF:
            continue
        code = int(digits, 16)
        nxt = escapes[i + 1] if i + 1 < len(escapes) else None
        prv = escapes[i - 1] if i else None
        if code < 0xDC00:
            paired = (nxt is not None and nxt.start() == m.end() and nxt.group(1) is not None
                      and 0xDC00 <= int(nxt.group(1), 16) <= 0xDFFF)
        else:
            paired = (prv is not None and prv.end() == m.start() and prv.group(1) is not None
                      and 0xD800 <= int(prv.group(1), 16) < 0xDC00)
        if not paired:
            return text.count("\n", 0, m.start()) + 1
    return None


def lines_of(df: pd.DataFrame) -> Sequence[int] | None:
    """The physical line of each row of ``df`` as :func:`read_table` returned it; None once rows
    were dropped or reordered (then messages count rows instead). See
    :func:`judgekit.io.tables.read_table`."""
    import pandas as pd  # here: the module itself stays free of pandas

    lines = df.attrs.get("lines")
    index = df.index
    if (lines is None or len(lines) != len(df) or not isinstance(index, pd.RangeIndex)
            or index.start != 0 or index.step != 1):
        return None
    return cast(Sequence[int], lines)


_PLAIN_INT = re.compile(r"-?[0-9]{1,18}")
_PLAIN_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+(e[+-]?[0-9]+)?|-?[0-9]+e[+-]?[0-9]+")


def plain_number(text: str) -> int | float | None:
    """The number a text is in its plain form (the text Python writes for it, so nothing is lost:
    ``7``, ``-3``, ``0.5``, ``1e-05``), else None (``007``, ``+7``, ``7.``, ``1e1``, ``7.50``, ``nan``
    stay text). The CSV reader types a column as numbers by this rule, and a rubric's
    ``alias_ranges`` take a text as a number by it."""
    if _PLAIN_INT.fullmatch(text) and str(int(text)) == text:
        return int(text)
    if _PLAIN_FLOAT.fullmatch(text) and math.isfinite(f := float(text)) and repr(f) == text:
        return f
    return None


class LineNumbers(Sequence[int]):
    """Each row's first physical line (``read_table(...).attrs["lines"]``).

    pandas deep-copies ``attrs`` on every operation; this read-only list is shared instead, so a
    million-row file does not pay for a million-int copy per column access.
    """

    def __init__(self, lines: Sequence[int]) -> None:
        self._lines = lines

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        return self._lines[i]

    def __len__(self) -> int:
        return len(self._lines)

    def __deepcopy__(self, memo: dict[int, Any]) -> LineNumbers:
        return self


def is_missing(value: object) -> bool:
    """True for ``None``, NaN (Python's or numpy's, any float type) and pandas' ``NA``/``NaT``.

    A cell of a table that holds no value. Anything else, including ``""`` and ``0``, is a value.

    >>> [is_missing(v) for v in (None, float("nan"), 0, "", "x")]
    [True, True, False, False, False]
    """
    if value is None:
        return True
    if isinstance(value, numbers.Real):  # float, and numpy's floating and integer types
        return bool(value != value)
    # pandas' missing markers, recognised by type name so this module needs no pandas
    return type(value).__name__ in {"NAType", "NaTType"}
