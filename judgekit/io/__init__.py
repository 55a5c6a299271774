"""File formats in and out: the ratings import (:func:`import_ratings`, whole file or streamed),
CSV / JSONL / JSON / Parquet tables, Inspect AI logs, column maps and joins, and spreadsheet-safe
CSV output. See docs/import.md.
"""

from judgekit.core.lazy import lazy_exports

# imported from their modules on first use (`import judgekit.<package>` stays cheap)
_LAZY = {
    "ImportOptions": "ratings",
    "ImportSummary": "ratings",
    "import_ratings": "ratings",
    "parse_column_map": "mapping",
    "prepare_ratings": "ratings",
    "read_csv_fast": "csv_fast",
    "read_inspect_log": "inspect",
    "read_items": "tables",
    "read_table": "tables",
    "table_format": "tables",
    "write_table": "tables",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
