"""Writing a table as CSV, safe to open in a spreadsheet.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
formula (or the start of one) by Excel, LibreOffice and Google Sheets: a rationale or metadata
value copied from a model's answer could run ``=HYPERLINK(...)`` or worse when a reviewer opens
the export ("CSV injection"). As OWASP recommends
(https://owasp.org/www-community/attacks/CSV_Injection), such a cell is written with a single
quote before it, which the spreadsheet shows as text. Only CSV output is changed: the store,
JSONL, JSON and Parquet keep every text exactly as written. A number is not a formula: numeric
columns are written as numbers (``-0.5``), and a text cell that is a number in its plain form
(:func:`judgekit.core.values.plain_number`, e.g. ``-0.5``, ``-3``) is left as it is.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.core.values import plain_number

if TYPE_CHECKING:
    import pandas as pd

#: what a cell may not start with in a CSV judgekit writes (OWASP's list)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe_cell(value: Any) -> Any:
    """``value`` with a single quote before it when it is a text that a spreadsheet would read as
    a formula (see the module docstring); anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and plain_number(value) is None:
        return "'" + value
    return value


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` to ``path`` as CSV (no index), its text cells and column names made safe with
    :func:`csv_safe_cell`; ``df`` itself is not changed."""
    import pandas as pd

    out = df.copy(deep=False)
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]):
            out[c] = out[c].map(csv_safe_cell)
    out.columns = [csv_safe_cell(c) for c in out.columns]
    # Python's CSV writer leaves a lone carriage return unquoted, which no reader can tell from a
    # line end: a file with one quotes every text cell, so it reads back exactly
    has_cr = any(
        isinstance(v, str) and "\r" in v
        for c in range(out.shape[1]) if not pd.api.types.is_numeric_dtype(out.iloc[:, c])
        for v in out.iloc[:, c].tolist()
    )
    out.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC if has_cr else csv.QUOTE_MINIMAL)
